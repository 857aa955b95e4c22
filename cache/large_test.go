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
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/redis/go-redis/v9"
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
			runLargeL1Child(b, l1)
		})
	}
}

// runLargeL1Child runs BenchmarkLargeL1's child for an L1 of l1 bytes in a
// process of its own, with env added to this one's, and reports the
// figures of its RESULT line as the benchmark's metrics.
func runLargeL1Child(b *testing.B, l1 int64, env ...string) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run", "^$", "-test.bench", "^BenchmarkLargeL1$", "-test.benchtime", "1x")
	cmd.Env = append(append(os.Environ(), "LARGE_L1_CHILD="+strconv.FormatInt(l1, 10)), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("child: %v\n%s", err, out)
	}
	if os.Getenv("LARGE_L1_DEBUG") != "" {
		b.Logf("child:\n%s", out)
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
}

func largeL1Child(b *testing.B, l1 int64) {
	// LARGE_L1_HOT sets Options.L1HotBytes (default 0: the automatic
	// split; -1: one tier, as before the bulk tier).
	hotBytes, _ := strconv.ParseInt(os.Getenv("LARGE_L1_HOT"), 10, 64)
	limit := MemoryLimitFor(l1, hotBytes)
	// LARGE_L1_LIMIT_EXTRA_MIB raises the memory limit by that much (the
	// harness's own slices, about 24 MiB at 1 GiB, count against it).
	if x, _ := strconv.ParseInt(os.Getenv("LARGE_L1_LIMIT_EXTRA_MIB"), 10, 64); x > 0 {
		limit += x << 20
	}
	debug.SetMemoryLimit(limit)
	// LARGE_L1_REDIS (BenchmarkLargeL1Redis): the address of a
	// redis-server that holds every key of the mix, and LARGE_L1_KEYS the
	// size of that mix, the same for every L1 size.
	redisAddr := os.Getenv("LARGE_L1_REDIS")
	opts := Options{L1MaxBytes: l1, L1HotBytes: hotBytes}
	if redisAddr != "" {
		opts.Redis = newClient(b, redisAddr)
	}
	c := newCache(b, opts)
	nkeys := largeL1Keys(l1)
	if n, _ := strconv.Atoi(os.Getenv("LARGE_L1_KEYS")); n > 0 {
		nkeys = n
	}
	sizes, template := largeL1Bodies(nkeys)
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
			if redisAddr != "" {
				return nil, fmt.Errorf("key %d: a fill, but Redis holds every key", k)
			}
			body := make([]byte, sizes[k])
			copy(body, template)
			return body, nil
		}
	}
	keyOf := largeL1Key
	get := func(r *rand.Rand, buf []byte) ([]byte, time.Duration, int) {
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
		return buf, d, k
	}
	// LARGE_L1_YIELD=1: each worker yields after each Get, as a request
	// of the edge parks on the network poller at least once (reading the
	// next request): without it, Gets answered in-process never block, and
	// a Get that waits (for Redis, a lock) is scheduled again only after
	// the goroutines ahead of it block or are preempted (10 ms).
	yield := os.Getenv("LARGE_L1_YIELD") == "1"
	run := func(perWorker int, lat []time.Duration, ranks []int32) {
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
					var k int
					buf, d, k = get(r, buf)
					if yield {
						runtime.Gosched()
					}
					if lat != nil {
						lat[w*perWorker+i] = d
						ranks[w*perWorker+i] = int32(k)
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
	if redisAddr == "" {
		for k := 0; k < nkeys && (k%256 != 0 || !full()); k++ {
			kb = keyOf(kb, k)
			if _, _, err := c.Get(context.Background(), int64(k%97), kb, pol, fill(k)); err != nil {
				b.Fatal(err)
			}
		}
	} else {
		// From Redis, by 64 goroutines (one at a time would wait a round
		// trip per key): the most requested keys first, until L1 is full.
		var next atomic.Int64
		var wg sync.WaitGroup
		for w := 0; w < 64; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var buf []byte
				for {
					k := int(next.Add(1) - 1)
					if k >= nkeys || (k%256 == 0 && full()) {
						next.Store(int64(nkeys))
						return
					}
					buf = keyOf(buf, k)
					e, _, err := c.Get(context.Background(), int64(k%97), buf, pol, fill(k))
					if err != nil || len(e.Body()) != int(sizes[k]) {
						b.Errorf("warm-up get %d: %v", k, err)
						next.Store(int64(nkeys))
						return
					}
					if l := e.Lent(); l != nil {
						_ = l.Close()
					}
				}
			}()
		}
		wg.Wait()
	}
	if os.Getenv("LARGE_L1_DEBUG") != "" {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		st := c.Stats()
		fmt.Fprintf(os.Stderr, "warm: hot %d MiB %d entries, bulk %d MiB %d entries, heap %d MiB, gc %d, rss %d MiB\n",
			st.L1Bytes>>20, st.L1Entries, st.BulkBytes>>20, st.BulkEntries, ms.HeapAlloc>>20, ms.NumGC, peakRSS()>>20)
	}
	run(200_000/64, nil, nil)
	const perWorker = 1_000_000 / 64
	lat := make([]time.Duration, 64*perWorker)
	ranks := make([]int32, 64*perWorker)
	// CPU time by class (runtime/metrics), read before and after the
	// measured part; [0] is the collector's, [1] the total.
	samples := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/cpu/classes/total:cpu-seconds"},
		{Name: "/cpu/classes/gc/mark/assist:cpu-seconds"}, {Name: "/cpu/classes/gc/mark/dedicated:cpu-seconds"},
		{Name: "/cpu/classes/gc/mark/idle:cpu-seconds"}, {Name: "/cpu/classes/gc/pause:cpu-seconds"},
		{Name: "/cpu/classes/scavenge/total:cpu-seconds"}, {Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/allocs:bytes"},
		{Name: "/cpu/classes/idle:cpu-seconds"}}
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
	redisPID, _ := strconv.Atoi(os.Getenv("LARGE_L1_REDIS_PID"))
	var rcpu0 int64
	if redisPID > 0 {
		rcpu0 = procCPU(redisPID)
	}
	// LARGE_L1_PROF=prefix: a CPU profile of the measured part and the
	// allocations since the start, before it (allocs0) and after it
	// (allocs), in prefix-<l1MiB>.{cpu,allocs0,allocs}.pb.gz.
	prof := os.Getenv("LARGE_L1_PROF")
	if prof != "" {
		writeAllocs(b, fmt.Sprintf("%s-%d.allocs0.pb.gz", prof, l1>>20))
		f, err := os.Create(fmt.Sprintf("%s-%d.cpu.pb.gz", prof, l1>>20))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
	}
	before := read()
	st0 := c.Stats()
	run(perWorker, lat, ranks)
	if prof != "" {
		pprof.StopCPUProfile()
		writeAllocs(b, fmt.Sprintf("%s-%d.allocs.pb.gz", prof, l1>>20))
	}
	rcpu := 0.0
	if redisPID > 0 {
		rcpu = float64(procCPU(redisPID) - rcpu0)
	}
	runtime.GC() // the metrics' CPU classes are exact only after a collection
	after := read()
	// The runtime's total is GOMAXPROCS over the wall time, idle
	// included: a run that waits for Redis idles, so the CPU it used is
	// the total less the idle time, and the collector's share is of that.
	gc, all := after[0]-before[0], (after[1]-before[1])-(after[9]-before[9])
	if os.Getenv("LARGE_L1_DEBUG") != "" {
		for i := range samples {
			fmt.Fprintf(os.Stderr, "%s %.3f\n", samples[i].Name, after[i]-before[i])
		}
	}
	if os.Getenv("LARGE_L1_DEBUG") != "" {
		largeL1ByRank(lat, ranks, st0)
	}
	slices.Sort(lat)
	st := c.Stats()
	n := float64(len(lat))
	fmt.Printf("RESULT %.1f l1-MiB %.0f entries %.1f bulk-MiB %.0f bulk-entries %.1f peak-rss-MiB %.2f gc-cpu-%% %.1f p50-µs %.1f p99-µs %.1f p999-µs %.3f hit-ratio %.3f hot-hit-ratio %.3f bulk-hit-ratio %.3f l2-hit-ratio %.1f cpu-µs/get %.1f redis-cpu-µs/get\n",
		float64(st.L1Bytes)/(1<<20), float64(st.L1Entries), float64(st.BulkBytes)/(1<<20), float64(st.BulkEntries),
		float64(peakRSS())/(1<<20), 100*gc/all, float64(lat[len(lat)/2])/1e3, float64(lat[len(lat)*99/100])/1e3,
		float64(lat[len(lat)*999/1000])/1e3,
		float64(st.Hits-st0.Hits)/n, float64(st.L1Hits-st0.L1Hits)/n, float64(st.BulkHits-st0.BulkHits)/n,
		float64(st.L2Hits-st0.L2Hits)/n, all/n*1e6, rcpu/n/1e3)
}

// writeAllocs writes the allocation profile so far to path.
func writeAllocs(b *testing.B, path string) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}

// largeL1ByRank prints to stderr the count, p50 and p99 of the Gets of
// each part of the key space as the warm-up left it (keys by rank, most
// requested first): those the hot tier held (rank below its entries at
// the start of the measured part), those the bulk tier held (the next
// ones) and the rest (Redis, or fills without it). Entries move during
// the run, so the parts are approximately the kinds of hit.
func largeL1ByRank(lat []time.Duration, ranks []int32, st Stats) {
	hot, bulk := int32(st.L1Entries), int32(st.L1Entries+st.BulkEntries)
	parts := [3][]time.Duration{}
	for i, d := range lat {
		switch k := ranks[i]; {
		case k < hot:
			parts[0] = append(parts[0], d)
		case k < bulk:
			parts[1] = append(parts[1], d)
		default:
			parts[2] = append(parts[2], d)
		}
	}
	for i, name := range []string{"hot", "bulk", "beyond L1"} {
		p := parts[i]
		if len(p) == 0 {
			continue
		}
		slices.Sort(p)
		fmt.Fprintf(os.Stderr, "by rank: %s: %d Gets, p50 %v, p99 %v\n", name, len(p), p[len(p)/2], p[len(p)*99/100])
	}
}

// largeL1Keys is the size of BenchmarkLargeL1's mix for an L1 of l1
// bytes: a working set of plain bodies 12 times L1.
func largeL1Keys(l1 int64) int { return int(12 * l1 / (largeL1AvgBody + 512)) }

const largeL1AvgBody = 9 << 10

// largeL1Bodies returns the body sizes of the mix's nkeys keys (600 B to
// 17.8 KB, mean 9 KB) and the template a body is a prefix of: a listing
// page, which compresses as real ones do (about 5:1): the bulk tier keeps
// bodies compressed, so a body that compressed much better would flatter it.
func largeL1Bodies(nkeys int) ([]int32, []byte) {
	sizes := make([]int32, nkeys)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range sizes {
		sizes[i] = int32(600 + r.IntN(2*largeL1AvgBody-1200))
	}
	template := listingBody(1, 2*largeL1AvgBody/400)
	for len(template) < 2*largeL1AvgBody {
		template = append(template, template...)
	}
	return sizes, template
}

// largeL1Key appends the mix's key k to buf[:0].
func largeL1Key(buf []byte, k int) []byte {
	return strconv.AppendInt(append(buf[:0], "/dealer/REWIND/listing?page="...), int64(k), 10)
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

// BenchmarkLargeL1Redis runs BenchmarkLargeL1's mix as the scale
// mix has it: every key in Redis (a real redis-server, filled first with
// the compressed values the edge writes) and one mix for both sizes, the
// one of the 1 GiB L1 (about 1.3 million keys, 12 GiB of plain bodies),
// so the two children differ only in the L1 they are given: what L1 does
// not answer is an L2 hit, as in the edge, not a fill made in-process for
// free. It reports the same figures as BenchmarkLargeL1 plus the share of
// Gets answered by Redis and the CPU per Get of this process (the
// redis-server's during the measured part, per Get).
//
//	go test -run '^$' -bench LargeL1Redis -benchtime 1x -timeout 30m ./cache/
func BenchmarkLargeL1Redis(b *testing.B) {
	if os.Getenv("LARGE_L1_CHILD") != "" {
		b.Skip("a child of BenchmarkLargeL1")
	}
	srv := redistest.Start(b)
	rc := newClient(b, srv.Addr)
	nkeys := largeL1Keys(1 << 30)
	if n, _ := strconv.Atoi(os.Getenv("LARGE_L1_KEYS")); n > 0 {
		nkeys = n
	}
	t0 := time.Now()
	largeL1Populate(b, rc, nkeys)
	b.Logf("redis-server filled with %d entries in %v", nkeys, time.Since(t0).Round(time.Second))
	for _, l1 := range []int64{64 << 20, 1 << 30} {
		b.Run(fmt.Sprintf("l1=%dMiB", l1>>20), func(b *testing.B) {
			runLargeL1Child(b, l1, "LARGE_L1_REDIS="+srv.Addr, "LARGE_L1_REDIS_PID="+strconv.Itoa(srv.PID()),
				"LARGE_L1_KEYS="+strconv.Itoa(nkeys))
		})
	}
}

// largeL1Populate writes the Redis value of every key of the mix, as the
// edge writes a fill's (compressed), with pipelines of 1,000 SETs. Bodies
// of one size are the same bytes, so each size is encoded once.
func largeL1Populate(b *testing.B, rc *redis.Client, nkeys int) {
	ctx := context.Background()
	c := newCache(b, Options{Redis: rc, L1MaxBytes: -1})
	sizes, template := largeL1Bodies(nkeys)
	pol := Policy{TTL: time.Hour}
	now := time.Now()
	values := map[int32][]byte{}
	gens := map[int64]uint64{}
	var buf []byte
	// The keys carry the purge epoch (seeded in Redis by the first read):
	// read it first, as a Get does, or no Get finds what is written here.
	c.currentEpoch(ctx)
	pipe := rc.Pipeline()
	for k := 0; k < nkeys; k++ {
		v, ok := values[sizes[k]]
		if !ok {
			v = encodeEntry(newEntry(slices.Clone(template[:sizes[k]]), now, pol))
			values[sizes[k]] = v
		}
		d := int64(k % 97)
		gen, ok := gens[d]
		if !ok {
			gen, _ = c.generation(ctx, d)
			gens[d] = gen
		}
		buf = largeL1Key(buf, k)
		pipe.Set(ctx, c.entryKey(d, gen, string(buf)), v, 2*time.Hour)
		if pipe.Len() == 1000 || k == nkeys-1 {
			if _, err := pipe.Exec(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
}
