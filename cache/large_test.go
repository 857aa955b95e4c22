package cache

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkLargeL1 fills an L1 of l1 bytes (1 GiB, split by default in a
// hot tier and the off-heap bulk tier, or 64 MiB, one tier, for the
// reference) from a Zipf(1.0) mix over listing-sized bodies whose working
// set is 12 times L1, then serves 1.2 million more requests of the mix
// from 64 goroutines (the last million measured): hot-tier hits, bulk-tier
// hits, and fills (fresh bodies, as a promotion from Redis or a miss makes
// them) that both tiers' admissions keep or reject; a fill is written to
// the bulk tier as in the edge (plain: there is no Redis here, so nothing
// compresses it). It runs with the runtime's memory limit the edge sets
// for that L1 (MemoryLimitFor) and reports the process's peak RSS, the
// share of CPU the garbage collector took during the measured part, the
// p50 and p99 of a Get and the hit ratios (both tiers, hot tier, bulk
// tier).
//
//	go test -run '^$' -bench LargeL1 -benchtime 1x ./cache/
//
// Each size runs in a child process of its own, so that one's RSS does not
// count in the other's.
func BenchmarkLargeL1(b *testing.B) {
	if size := os.Getenv("LARGE_L1_CHILD"); size != "" {
		l1, _ := strconv.ParseInt(size, 10, 64)
		largeL1Child(b, l1)
		return
	}
	for _, l1 := range []int64{64 << 20, 1 << 30} {
		b.Run(fmt.Sprintf("l1=%dMiB", l1>>20), func(b *testing.B) {
			exe, err := os.Executable()
			if err != nil {
				b.Fatal(err)
			}
			cmd := exec.Command(exe, "-test.run", "^$", "-test.bench", "^BenchmarkLargeL1$", "-test.benchtime", "1x")
			cmd.Env = append(os.Environ(), "LARGE_L1_CHILD="+strconv.FormatInt(l1, 10))
			out, err := cmd.CombinedOutput()
			if err != nil {
				b.Fatalf("child: %v\n%s", err, out)
			}
			for _, line := range strings.Split(string(out), "\n") {
				if i := strings.Index(line, "RESULT "); i >= 0 {
					f := strings.Fields(line[i+len("RESULT "):])
					for j := 0; j+1 < len(f); j += 2 {
						v, _ := strconv.ParseFloat(f[j], 64)
						b.ReportMetric(v, f[j+1])
					}
				}
			}
		})
	}
}

func largeL1Child(b *testing.B, l1 int64) {
	// LARGE_L1_HOT sets Options.L1HotBytes (default 0: the automatic
	// split; -1: one tier, as before the bulk tier).
	hotBytes, _ := strconv.ParseInt(os.Getenv("LARGE_L1_HOT"), 10, 64)
	debug.SetMemoryLimit(MemoryLimitFor(l1, hotBytes))
	c := newCache(b, Options{L1MaxBytes: l1, L1HotBytes: hotBytes})
	const avgBody = 9 << 10
	nkeys := int(12 * l1 / (avgBody + 512))
	sizes := make([]int32, nkeys)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range sizes {
		sizes[i] = int32(600 + r.IntN(2*avgBody-1200)) // 600 B .. 17.8 KB, mean 9 KB
	}
	// Bodies are prefixes of a listing page, which compress as real ones
	// do (about 5:1): the bulk tier keeps them compressed, so a body that
	// compressed much better would flatter it.
	template := listingBody(1, 2*avgBody/400)
	for len(template) < 2*avgBody {
		template = append(template, template...)
	}
	// Zipf(1.0) ranks by inverse CDF of a harmonic sum.
	cdf := make([]float64, nkeys)
	sum := 0.0
	for k := range cdf {
		sum += 1 / float64(k+1)
		cdf[k] = sum
	}
	pol := Policy{TTL: time.Hour}
	fill := func(k int) FillFunc {
		return func(context.Context) ([]byte, error) {
			body := make([]byte, sizes[k])
			copy(body, template)
			return body, nil
		}
	}
	keyOf := func(buf []byte, k int) []byte {
		return strconv.AppendInt(append(buf[:0], "/dealer/REWIND/listing?page="...), int64(k), 10)
	}
	get := func(r *rand.Rand, buf []byte) ([]byte, time.Duration) {
		k, _ := slices.BinarySearch(cdf, r.Float64()*sum)
		k = min(k, nkeys-1)
		buf = keyOf(buf, k)
		t0 := time.Now()
		e, _, err := c.Get(context.Background(), int64(k%97), buf, pol, fill(k))
		d := time.Since(t0)
		if err != nil || len(e.Body()) != int(sizes[k]) {
			b.Errorf("get %d: %v", k, err)
		}
		// As the edge does once the response is written: storage lent
		// for a hit L1's hot tier does not keep goes back.
		if l := e.Lent(); l != nil {
			_ = l.Close()
		}
		return buf, d
	}
	run := func(perWorker int, lat []time.Duration) {
		var wg sync.WaitGroup
		var seed atomic.Uint64
		for w := 0; w < 64; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				r := rand.New(rand.NewPCG(seed.Add(1), 7))
				var buf []byte
				for i := 0; i < perWorker; i++ {
					var d time.Duration
					buf, d = get(r, buf)
					if lat != nil {
						lat[w*perWorker+i] = d
					}
				}
			}(w)
		}
		wg.Wait()
	}
	// Warm up: fill L1 with the most requested keys (what the mix keeps
	// there), then let the mix run over it for a while.
	var kb []byte
	// With a bulk tier, both tiers fill (every fill is written to the
	// bulk tier, as in the edge).
	full := func() bool {
		st := c.Stats()
		return st.L1Bytes+st.BulkBytes >= l1*19/20
	}
	for k := 0; k < nkeys && (k%256 != 0 || !full()); k++ {
		kb = keyOf(kb, k)
		if _, _, err := c.Get(context.Background(), int64(k%97), kb, pol, fill(k)); err != nil {
			b.Fatal(err)
		}
	}
	if os.Getenv("LARGE_L1_DEBUG") != "" {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		st := c.Stats()
		fmt.Fprintf(os.Stderr, "warm: hot %d MiB %d entries, bulk %d MiB %d entries, heap %d MiB, gc %d, rss %d MiB\n",
			st.L1Bytes>>20, st.L1Entries, st.BulkBytes>>20, st.BulkEntries, ms.HeapAlloc>>20, ms.NumGC, peakRSS()>>20)
	}
	run(200_000/64, nil)
	const perWorker = 1_000_000 / 64
	lat := make([]time.Duration, 64*perWorker)
	// CPU time by class (runtime/metrics), read before and after the
	// measured part; [0] is the collector's, [1] the total.
	samples := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/cpu/classes/total:cpu-seconds"},
		{Name: "/cpu/classes/gc/mark/assist:cpu-seconds"}, {Name: "/cpu/classes/gc/mark/dedicated:cpu-seconds"},
		{Name: "/cpu/classes/gc/mark/idle:cpu-seconds"}, {Name: "/cpu/classes/gc/pause:cpu-seconds"},
		{Name: "/cpu/classes/scavenge/total:cpu-seconds"}, {Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/allocs:bytes"}}
	read := func() []float64 {
		metrics.Read(samples)
		v := make([]float64, len(samples))
		for i := range samples {
			if samples[i].Value.Kind() == metrics.KindUint64 {
				v[i] = float64(samples[i].Value.Uint64())
				continue
			}
			v[i] = samples[i].Value.Float64()
		}
		return v
	}
	before := read()
	st0 := c.Stats()
	run(perWorker, lat)
	runtime.GC() // the metrics' CPU classes are exact only after a collection
	after := read()
	gc, all := after[0]-before[0], after[1]-before[1]
	if os.Getenv("LARGE_L1_DEBUG") != "" {
		for i := range samples {
			fmt.Fprintf(os.Stderr, "%s %.3f\n", samples[i].Name, after[i]-before[i])
		}
	}
	slices.Sort(lat)
	st := c.Stats()
	n := float64(len(lat))
	fmt.Printf("RESULT %.1f l1-MiB %.0f entries %.1f bulk-MiB %.0f bulk-entries %.1f peak-rss-MiB %.2f gc-cpu-%% %.1f p50-µs %.1f p99-µs %.3f hit-ratio %.3f hot-hit-ratio %.3f bulk-hit-ratio\n",
		float64(st.L1Bytes)/(1<<20), float64(st.L1Entries), float64(st.BulkBytes)/(1<<20), float64(st.BulkEntries),
		float64(peakRSS())/(1<<20), 100*gc/all, float64(lat[len(lat)/2])/1e3, float64(lat[len(lat)*99/100])/1e3,
		float64(st.Hits-st0.Hits)/n, float64(st.L1Hits-st0.L1Hits)/n, float64(st.BulkHits-st0.BulkHits)/n)
}

// peakRSS is the process's VmHWM (peak resident set) in bytes.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			kb, _ := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
