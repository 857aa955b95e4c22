package cache

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
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
			ctx := context.Background()
			var seed atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := int(seed.Add(7919))
				for pb.Next() {
					i++
					k := i % nkeys
					_, res, err := c.Get(ctx, int64(k%50), keys[k], pol, fill)
					if res != Hit || err != nil {
						b.Fatalf("%v %v", res, err)
					}
				}
			})
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
