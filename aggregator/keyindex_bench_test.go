package aggregator

import (
	"context"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/contracttests/procs"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// BenchmarkKeyIndexSnapshot1M loads a snapshot of one million keys from
// the fake dealers service over loopback HTTP (pages of 10,000) and
// reports the load time (wall, and this process's CPU: the edge's side
// alone) and the heap the index holds afterwards:
//
//	go test -run '^$' -bench KeyIndexSnapshot1M -benchtime 1x -count 3 ./aggregator/
//
// The fake runs as its own process (cmd/fake-upstream --extra-keys), as
// the dealers service does: in this process its million records would be
// marked by every garbage collection of the load and its serving would be
// counted as the edge's CPU. KEYINDEX_BENCH_INPROC=1 runs it in-process.
func BenchmarkKeyIndexSnapshot1M(b *testing.B) {
	n := benchKeys()
	base := ""
	if os.Getenv("KEYINDEX_BENCH_INPROC") == "1" {
		fk := fake.NewServer(fake.Options{ExtraKeys: n})
		addr, err := fk.Start("127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		defer fk.Close()
		base = "http://" + addr
	} else {
		f := procs.StartFake(b, "--extra-keys", strconv.Itoa(n))
		defer f.Kill()
		base = f.URL()
	}
	up, err := upstream.New(upstream.Options{BaseURL: base, Timeouts: map[string]time.Duration{upstream.SvcDealers: 10 * time.Second}})
	if err != nil {
		b.Fatal(err)
	}
	defer up.Close()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := ms.HeapAlloc
		ix := newKeyIndex(up, slog.New(slog.DiscardHandler), time.Now)
		b.StartTimer()
		start, cpu0 := time.Now(), cpuTime()
		if err := ix.syncOnce(context.Background()); err != nil {
			b.Fatal(err)
		}
		load, cpu := time.Since(start), cpuTime()-cpu0
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		if got := ix.size.Load(); got < int64(n) {
			b.Fatalf("%d keys in the index", got)
		}
		b.ReportMetric(float64(ms.HeapAlloc-before)/(1<<20), "index-MB")
		b.ReportMetric(load.Seconds(), "load-s")
		b.ReportMetric(cpu.Seconds(), "load-cpu-s")
		runtime.KeepAlive(ix)
		b.StartTimer()
	}
}

// benchKeys is the index size of BenchmarkKeyIndexSnapshot1M: one million,
// or KEYINDEX_BENCH_KEYS.
func benchKeys() int {
	if v, err := strconv.Atoi(os.Getenv("KEYINDEX_BENCH_KEYS")); err == nil && v > 0 {
		return v
	}
	return 1_000_000
}

// cpuTime is the CPU time of this process (user + system): the load's cost
// on a shared machine, where wall time depends on the neighbours. With
// KEYINDEX_BENCH_INPROC=1 it includes the fake's serving of the pages.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
