package cache

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/dealer-edge/dealer-edge/internal/testcorpus"
)

// mixPages are n listing pages as the scale mix asks them
// (testcorpus.MixPages).
func mixPages(t testing.TB, n int) [][]byte {
	pages, err := testcorpus.MixPages("../internal/inflate/testdata/listing100.json", n)
	if err != nil {
		t.Fatal(err)
	}
	return pages
}

// encodeLevel6 is encodeEntry with the entry compressed by klauspost at
// level 6 (the default before the shared code).
func encodeLevel6(e *Entry) []byte {
	e.level = 6
	return encodeEntry(e)
}

// BenchmarkGetL2HitMix is BenchmarkGetL2HitRedis's identity client over
// the mix's pages, stored as klauspost compresses them at level 6 and as
// the cache does by default (internal/deflate's shared code), in one run.
func BenchmarkGetL2HitMix(b *testing.B) {
	pages := mixPages(b, 2048)
	for _, mode := range []struct {
		name   string
		encode func(*Entry) []byte
	}{{"klauspost6", encodeLevel6}, {"shared", encodeEntry}} {
		b.Run(mode.name, func(b *testing.B) {
			srv := redistest.Start(b)
			rc := newClient(b, srv.Addr)
			c := newCache(b, Options{Redis: rc, L1MaxBytes: -1, RedisTimeout: time.Second})
			pol := Policy{TTL: time.Hour}
			fill := func(context.Context) ([]byte, error) { return nil, fmt.Errorf("no fill expected") }
			ctx := context.Background()
			c.currentEpoch(ctx)
			keys := make([][]byte, len(pages))
			stored := 0
			for i := range keys {
				keys[i] = fmt.Appendf(nil, "/dealer/REWIND/listing?page=%d&mix", i)
				d := int64(i % 8)
				gen, _ := c.generation(ctx, d)
				v := mode.encode(newEntry(pages[i], time.Now(), pol))
				stored += len(v)
				if err := rc.Set(ctx, c.entryKey(d, gen, string(keys[i])), v, time.Hour).Err(); err != nil {
					b.Fatal(err)
				}
			}
			b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
			b.ReportAllocs()
			cpu0, rcpu0 := selfCPU(), procCPU(srv.PID())
			b.ResetTimer()
			parallelHits(b, c.Get, keys, 8, pol, fill, func(e *Entry) {
				if e.Body() == nil {
					b.Error("no body")
				}
				if l := e.Lent(); l != nil {
					_ = l.Close()
				}
			})
			b.StopTimer()
			n := float64(b.N)
			b.ReportMetric(float64(selfCPU()-cpu0)/n/1e3, "edge-µs/op")
			b.ReportMetric(float64(procCPU(srv.PID())-rcpu0)/n/1e3, "redis-µs/op")
			b.ReportMetric(float64(stored)/float64(len(pages)), "valueB")
		})
	}
}
