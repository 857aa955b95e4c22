package cache

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/redis/go-redis/v9"
)

// BenchmarkGetL1Hit measures the hit path: a fresh entry in L1. Target: 0
// allocations.
func BenchmarkGetL1Hit(b *testing.B) {
	for _, nkeys := range []int{1, 4096} {
		b.Run(fmt.Sprintf("keys=%d", nkeys), func(b *testing.B) {
			c := newCache(b, Options{L1MaxBytes: 256 << 20})
			pol := Policy{TTL: time.Hour, StaleWhileRevalidate: time.Minute}
			body := make([]byte, 16<<10)
			fill := func(context.Context) ([]byte, error) { return body, nil }
			keys := make([][]byte, nkeys)
			for i := range keys {
				keys[i] = fmt.Appendf(nil, "/v1/vehicles?make=fiat&page=%d&per_page=20", i)
				mustGet(b, c, int64(i%50), string(keys[i]), pol, fill)
			}
			b.ReportAllocs()
			b.ResetTimer()
			parallelHits(b, c.Get, keys, 50, pol, fill, nil)
		})
	}
}

// BenchmarkGetBulkHit measures a hit in L1's bulk tier after a hot-tier
// miss (the hot tier is too small to keep these bodies): a copy out of
// fastcache, decoding, the hot tier's admission (which keeps nothing here)
// and, for an identity client of a compressed value, decompression. Bodies
// are listing pages of 20 vehicles (about 9 KB, 1.9 KB compressed). Values
// are plain (no Redis: the bulk tier does not compress on its own) or gzip
// (with Redis, the variant written there).
func BenchmarkGetBulkHit(b *testing.B) {
	for _, mode := range []struct {
		name       string
		gzipValue  bool
		gzipClient bool
	}{
		{"value=plain/client=identity", false, false},
		{"value=gzip/client=gzip", true, true},
		{"value=gzip/client=identity", true, false},
	} {
		b.Run(mode.name, func(b *testing.B) {
			c := bulkOnly(b, Options{L1MaxBytes: 256 << 20})
			c.bulkGzip = mode.gzipValue
			pol := Policy{TTL: time.Hour}
			const nkeys = 4096
			keys := make([][]byte, nkeys)
			for i := range keys {
				keys[i] = fmt.Appendf(nil, "/v1/vehicles?make=fiat&page=%d&per_page=20", i)
				body := listingBody(uint64(i), 20)
				mustGet(b, c, int64(i%50), string(keys[i]), pol, func(context.Context) ([]byte, error) { return body, nil })
			}
			fill := func(context.Context) ([]byte, error) { return nil, fmt.Errorf("no fill expected") }
			get := c.Get
			if mode.gzipClient {
				get = c.GetGzip
			}
			b.ReportAllocs()
			b.ResetTimer()
			// As the aggregator serves: the body of the client's coding,
			// then the lent storage back once it is written.
			serve := func(e *Entry) {
				if mode.gzipClient {
					e.Gzip()
				} else {
					e.Body()
				}
				if l := e.Lent(); l != nil {
					_ = l.Close()
				}
			}
			parallelHits(b, get, keys, 50, pol, fill, serve)
			b.StopTimer()
			if st := c.Stats(); st.BulkHits < uint64(b.N) || st.L1Hits != 0 {
				b.Fatalf("bulk hits %d, hot hits %d of %d", st.BulkHits, st.L1Hits, b.N)
			}
		})
	}
}

// BenchmarkGetL2Hit measures a hit in Redis (miniredis, L1 disabled): decode
// and one round trip.
func BenchmarkGetL2Hit(b *testing.B) {
	_, rc := newMiniRedis(b)
	c := newCache(b, Options{Redis: rc, L1MaxBytes: -1})
	pol := Policy{TTL: time.Hour}
	body := make([]byte, 16<<10)
	fill := func(context.Context) ([]byte, error) { return body, nil }
	key := []byte("/v1/vehicles?page=1")
	mustGet(b, c, 1, string(key), pol, fill)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, res, err := c.Get(context.Background(), 1, key, pol, fill); res != Hit || err != nil {
			b.Fatalf("%v %v", res, err)
		}
	}
}

// BenchmarkGetL2HitRedis measures an L2 hit against a real redis-server (L1
// off) with 64 concurrent callers: one round trip per call against the
// batcher, plain values (wire version 1) against compressed ones, and for
// compressed ones an identity caller (Get: the body is inflated) against a
// gzip one (GetGzip: served as stored).
// Entries are listing pages of 30 vehicles (about 10 KB). Besides ns/op it
// reports the CPU of this process and of redis-server per hit (µs, from
// getrusage and /proc/<pid>/stat: on a shared machine CPU per hit says more
// than wall time) and the Redis commands per round trip the client made (a
// hook counts both).
func BenchmarkGetL2HitRedis(b *testing.B) {
	for _, mode := range []struct {
		name   string
		off    bool
		encode func(*Entry) []byte
		gzip   bool
	}{
		{"pipeline=off/value=plain", true, encodeEntryV1, false},
		{"pipeline=on/value=plain", false, encodeEntryV1, false},
		{"pipeline=on/value=gzip", false, encodeEntry, false},
		{"pipeline=on/value=gzip/client=gzip", false, encodeEntry, true},
	} {
		b.Run(mode.name, func(b *testing.B) {
			srv := redistest.Start(b)
			rc := newClient(b, srv.Addr)
			trips := &tripCounter{}
			rc.AddHook(trips)
			c := newCache(b, Options{Redis: rc, L1MaxBytes: -1, NoAutoPipeline: mode.off, RedisTimeout: time.Second})
			pol := Policy{TTL: time.Hour}
			fill := func(context.Context) ([]byte, error) { return nil, fmt.Errorf("no fill expected") }
			ctx := context.Background()
			const nkeys = 4096
			keys := make([][]byte, nkeys)
			// The keys carry the purge epoch (seeded in Redis by the first
			// read): read it first, as a Get does, or every key written
			// here is one no Get looks up.
			c.currentEpoch(ctx)
			for i := range keys {
				keys[i] = fmt.Appendf(nil, "/dealer/REWIND/listing?page=%d&page_size=30", i)
				d := int64(i % 8)
				gen, _ := c.generation(ctx, d)
				e := newEntry(listingBody(uint64(i), 30), time.Now(), pol)
				if err := rc.Set(ctx, c.entryKey(d, gen, string(keys[i])), mode.encode(e), time.Hour).Err(); err != nil {
					b.Fatal(err)
				}
			}
			b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
			b.ReportAllocs()
			trips.reset()
			cpu0, rcpu0 := selfCPU(), procCPU(srv.PID())
			b.ResetTimer()
			get := c.Get
			if mode.gzip {
				get = c.GetGzip
			}
			// As the aggregator serves an identity client: the body, then
			// the lent storage back once it is written.
			serve := func(e *Entry) {
				if mode.gzip {
					if _, _, ok := e.Gzip(); !ok {
						b.Error("no gzip body")
					}
					return
				}
				if e.Body() == nil {
					b.Error("no body")
				}
				if l := e.Lent(); l != nil {
					_ = l.Close()
				}
			}
			parallelHits(b, get, keys, 8, pol, fill, serve)
			b.StopTimer()
			n := float64(b.N)
			b.ReportMetric(float64(selfCPU()-cpu0)/n/1e3, "edge-µs/op")
			b.ReportMetric(float64(procCPU(srv.PID())-rcpu0)/n/1e3, "redis-µs/op")
			if rt := trips.trips.Load(); rt > 0 {
				b.ReportMetric(float64(trips.cmds.Load())/float64(rt), "cmds/roundtrip")
			}
		})
	}
}

// tripCounter is a go-redis hook counting round trips (a command or a
// pipeline) and the commands they carried.
type tripCounter struct{ trips, cmds atomic.Int64 }

func (t *tripCounter) reset() { t.trips.Store(0); t.cmds.Store(0) }

func (t *tripCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (t *tripCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		t.trips.Add(1)
		t.cmds.Add(1)
		return next(ctx, cmd)
	}
}

func (t *tripCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		t.trips.Add(1)
		t.cmds.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// selfCPU is this process's user+system CPU time in nanoseconds.
func selfCPU() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// procCPU is the user+system CPU time of process pid in nanoseconds, from
// /proc/<pid>/stat (fields 14 and 15, in clock ticks of 1/100 s).
func procCPU(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s)
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return (ut + st) * int64(10*time.Millisecond)
}

// parallelHits runs the benchmark's gets from parallel goroutines over
// keys (key k belongs to dealer k % dealers), each goroutine from an offset
// of its own; every get must be a Hit. serve, when set, is given each entry
// as a response writer would use it.
func parallelHits(b *testing.B, get func(context.Context, int64, []byte, Policy, FillFunc) (*Entry, Result, error), keys [][]byte, dealers int, pol Policy, fill FillFunc, serve func(*Entry)) {
	var seed atomic.Int64
	ctx := context.Background()
	b.RunParallel(func(pb *testing.PB) {
		i := int(seed.Add(7919))
		for pb.Next() {
			i++
			k := i % len(keys)
			e, res, err := get(ctx, int64(k%dealers), keys[k], pol, fill)
			if res != Hit || err != nil {
				b.Errorf("%v %v", res, err)
				return
			}
			if serve != nil {
				serve(e)
			}
		}
	})
}

// BenchmarkRefill measures the cache's own work when a fill replaces an
// entry (a background refresh): making the entry and its Redis value, for
// a body that changed (compressed anew) and one that did not (the previous
// entry's compressed bytes kept, adoptGzip). Bodies are listing pages of
// 20 and 100 vehicles.
func BenchmarkRefill(b *testing.B) {
	pol := Policy{TTL: 30 * time.Second, StaleWhileRevalidate: time.Minute}
	for _, n := range []int{20, 100} {
		body := listingBody(1, n)
		same := newEntry(body, time.Now(), pol)
		encodeEntry(same)
		other := newEntry(listingBody(2, n), time.Now(), pol)
		encodeEntry(other)
		for _, mode := range []struct {
			name string
			prev *Entry
		}{{"changed", other}, {"unchanged", same}} {
			b.Run(fmt.Sprintf("vehicles=%d/%s", n, mode.name), func(b *testing.B) {
				b.ReportAllocs()
				var buf []byte
				for i := 0; i < b.N; i++ {
					e := newEntry(body, time.Now(), pol)
					e.adoptGzip(mode.prev)
					buf = appendEntry(buf[:0], e)
				}
			})
		}
	}
}
