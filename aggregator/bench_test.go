package aggregator

import (
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/cache/ratelimit"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// newBenchServer wires a Server like cmd/dealer-edge does: fake services
// over loopback, L1+L2 cache and the leasing rate limiter on miniredis.
//
// With localLimiter the limiter has no Redis: the figures are then the
// edge's own cost. With Redis, the limiter leases tokens in batches and a
// refill (one EVALSHA per batch) adds its amortised cost; miniredis runs
// that Lua in this process, so it also shows up in these figures.
func newBenchServer(tb testing.TB, localLimiter bool) *Server {
	tb.Helper()
	fk := fake.NewServer(fake.Options{})
	addr, err := fk.Start("127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(fk.Close)
	up, err := upstream.New(upstream.Options{BaseURL: "http://" + addr})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(up.Close)
	mr := miniredis.RunT(tb)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	tb.Cleanup(func() { _ = rdb.Close() })
	c, err := cache.New(cache.Options{Redis: rdb, ServeStaleOn: ServeStaleOn})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	limRedis := redis.UniversalClient(rdb)
	if localLimiter {
		limRedis = nil
	}
	lim, err := ratelimit.New(ratelimit.Options{Redis: limRedis})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = lim.Close() })
	s, err := New(Options{Backend: up, Cache: c, Limiter: lim, KeySecret: []byte("bench-secret-0123456789")})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// BenchmarkHitPath measures one request answered from the in-process
// cache: request id, auth (cached), rate limit (leased tokens), parameter
// validation, cache key, L1 lookup, response headers and body.
func BenchmarkHitPath(b *testing.B) {
	b.Run("local_limiter", func(b *testing.B) { benchHitPath(b, true) })
	b.Run("redis_limiter", func(b *testing.B) { benchHitPath(b, false) })
}

func benchHitPath(b *testing.B, localLimiter bool) {
	s := newBenchServer(b, localLimiter)
	h := s.Handler()
	for _, c := range []struct{ name, uri, key, acceptEncoding string }{
		{"inventory_listing", "/dealer/REWIND/listing?page=1&page_size=20", "bench-key-000", ""},
		{"inventory_listing_gzip", "/dealer/REWIND/listing?page=1&page_size=20", "bench-key-000", "gzip, deflate, br"},
		{"content_listing_deprecated", "/dealer/content/guides/listing?page=2", "bench-key-001", ""},
		{"search", "/dealer/content/search?q=noleggio", "bench-key-002", ""},
	} {
		b.Run(c.name, func(b *testing.B) {
			var warm fasthttp.RequestCtx
			warm.Request.SetRequestURI(c.uri)
			warm.Request.Header.Set("X-Api-Key", c.key)
			if c.acceptEncoding != "" {
				warm.Request.Header.Set("Accept-Encoding", c.acceptEncoding)
			}
			h(&warm)
			if warm.Response.StatusCode() != 200 {
				b.Fatalf("warm-up: %d %s", warm.Response.StatusCode(), warm.Response.Body())
			}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				var ctx fasthttp.RequestCtx
				ctx.Request.SetRequestURI(c.uri)
				ctx.Request.Header.Set("X-Api-Key", c.key)
				if c.acceptEncoding != "" {
					ctx.Request.Header.Set("Accept-Encoding", c.acceptEncoding)
				}
				for pb.Next() {
					ctx.Response.Reset()
					h(&ctx)
					if ctx.Response.StatusCode() != 200 {
						b.Fatalf("status %d", ctx.Response.StatusCode())
					}
				}
			})
		})
	}
}

// TestHitPathAllocations keeps the allocation budget of the hit path (an
// allocation count, not a timing, so it is stable on any machine).
func TestHitPathAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates; the budget is checked by the plain run")
	}
	s := newBenchServer(t, true)
	h := s.Handler()
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI("/dealer/REWIND/listing?page=1&page_size=20")
	ctx.Request.Header.Set("X-Api-Key", "bench-key-000")
	for i := 0; i < 3; i++ {
		ctx.Response.Reset()
		h(&ctx)
	}
	if got := string(ctx.Response.Header.Peek("X-Cache")); got != "HIT" {
		t.Fatalf("X-Cache %q", got)
	}
	allocs := testing.AllocsPerRun(200, func() {
		ctx.Response.Reset()
		h(&ctx)
	})
	if allocs > 1 {
		t.Errorf("hit path allocates %.1f times per request, budget 1 (issue target 3; measured 0)", allocs)
	}
	t.Logf("hit path: %.1f allocations per request", allocs)

	// The same hit for a client that accepts gzip, once the variant exists.
	ctx.Request.Header.Set("Accept-Encoding", "gzip, deflate, br")
	ctx.Response.Reset()
	h(&ctx)
	if got := string(ctx.Response.Header.Peek("Content-Encoding")); got != "gzip" {
		t.Fatalf("Content-Encoding %q", got)
	}
	allocs = testing.AllocsPerRun(200, func() {
		ctx.Response.Reset()
		h(&ctx)
	})
	if allocs > 1 {
		t.Errorf("gzip hit path allocates %.1f times per request, budget 1", allocs)
	}
	t.Logf("gzip hit path: %.1f allocations per request", allocs)
}
