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

	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// BenchmarkKeyIndexSnapshot1M loads a snapshot of one million keys from
// the fake over loopback HTTP (pages of 10,000) and reports the load time
// and the heap the index holds afterwards (the fake's own data is in the
// heap before and after, so it cancels out):
//
//	go test -run '^$' -bench KeyIndexSnapshot1M -benchtime 1x -count 3 ./aggregator/
func BenchmarkKeyIndexSnapshot1M(b *testing.B) {
	n := benchKeys()
	fk := fake.NewServer(fake.Options{ExtraKeys: n})
	addr, err := fk.Start("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer fk.Close()
	up, err := upstream.New(upstream.Options{BaseURL: "http://" + addr, Timeouts: map[string]time.Duration{upstream.SvcDealers: 10 * time.Second}})
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
// on a shared machine, where wall time depends on the neighbours. It
// includes the in-process fake's serving of the pages.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
