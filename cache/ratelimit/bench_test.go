package ratelimit

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
)

// BenchmarkAllow measures Allow from many goroutines against miniredis.
//
//   - lease/one-key, lease/1024-keys: pure lease path (huge lease, long
//     window: Redis is all but never called), the target of 0 allocs.
//   - defaults/...: default options and the bench plan's limit (leases of
//     20): the amortised cost including the Redis refills, against
//     miniredis (slow Lua) and a real redis-server.
//   - rejected/one-key: an over-limit key answered from the cached
//     rejection.
//   - local/1024-keys: no Redis, in-process GCRA.
func BenchmarkAllow(b *testing.B) {
	big := Limit{Rate: 1e6, Burst: 1 << 29}
	bench := Limit{Rate: 1e6, Burst: 1e6}
	cases := []struct {
		name  string
		redis bool
		opts  Options
		lim   Limit
		keys  int
		warm  int
	}{
		{"lease/one-key", true, Options{MaxLease: 1 << 20, LeaseWindow: time.Hour}, big, 1, 1 << 21},
		{"lease/1024-keys", true, Options{MaxLease: 1 << 20, LeaseWindow: time.Hour}, big, 1024, 1 << 12},
		{"defaults/one-key", true, Options{}, bench, 1, 100},
		{"defaults/one-key/redis-server", true, Options{}, bench, 1, 100},
		{"defaults/1024-keys/redis-server", true, Options{}, bench, 1024, 100},
		{"rejected/one-key", true, Options{}, Limit{Rate: 1e-3, Burst: 1}, 1, 2},
		{"local/1024-keys", false, Options{}, big, 1024, 1},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			opts := bc.opts
			switch {
			case strings.HasSuffix(bc.name, "redis-server"):
				opts.Redis = redistest.Start(b).Client()
			case bc.redis:
				_, c := startMini(b)
				opts.Redis = c
			}
			l := newLimiter(b, opts)
			ctx := context.Background()
			keys := make([]string, bc.keys)
			for i := range keys {
				keys[i] = "0123456789abcdef0123456789abcdef" + strconv.Itoa(i)
				allowN(l, 42, keys[i], bc.lim, bc.warm)
			}
			before := l.Stats()
			var next atomic.Uint32
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := int(next.Add(7919))
				for pb.Next() {
					i++
					l.Allow(ctx, 42, keys[i%len(keys)], bc.lim)
				}
			})
			b.StopTimer()
			after := l.Stats()
			b.ReportMetric(float64(after.RedisCalls-before.RedisCalls)/float64(b.N), "redis/op")
		})
	}
}

func BenchmarkAppendHeaders(b *testing.B) {
	d := Decision{Allowed: true, Limit: Limit{Rate: 50, Burst: 100}, Remaining: 99, Reset: 20 * time.Millisecond}
	buf := make([]byte, 0, 128)
	b.ReportAllocs()
	for b.Loop() {
		p, c := d.AppendHeaders(buf[:0], "default")
		if len(p) == 0 || len(c) == 0 {
			b.Fatal("empty")
		}
	}
}
