package aggregator

import (
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/cache"
)

// BenchmarkMiss measures whole requests that miss the response cache (the
// route's own cache off), through the handler, against the fake services
// over loopback (so ns/op and cpu-ns/op include the fake answering from
// its pre-encoded bodies, in this process): vehicle listings of 20 and 100
// items, an NLT offer listing of 20; the hub (six sections of 5) with the content views fresh (content listings cached, so no upstream call) and
// cold (content listings uncached: every section is read and decoded).
func BenchmarkMiss(b *testing.B) {
	cases := []struct {
		name, uri string
		settings  func(*Settings)
	}{
		{"vehicles_20", "/dealer/REWIND/listing?page=1&page_size=20", func(s *Settings) { delete(s.Cache, RouteInventoryListing) }},
		{"vehicles_100", "/dealer/REWIND/listing?page=1&page_size=100", func(s *Settings) { delete(s.Cache, RouteInventoryListing) }},
		{"offers_20", "/dealer/NLT/listing?page=1&page_size=20", func(s *Settings) { delete(s.Cache, RouteInventoryListing) }},
		{"hub/fresh_views", "/dealer/content/hub?page_size=5", func(s *Settings) { delete(s.Cache, RouteContentHub) }},
		{"hub/cold", "/dealer/content/hub?page_size=5", func(s *Settings) {
			delete(s.Cache, RouteContentHub)
			delete(s.Cache, RouteContentListing)
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			s := newBenchServer(b, true)
			st := DefaultSettings()
			c.settings(st)
			if err := s.UpdateSettings(st); err != nil {
				b.Fatal(err)
			}
			h := s.Handler()
			var ctx fasthttp.RequestCtx
			ctx.Request.SetRequestURI(c.uri)
			ctx.Request.Header.Set("X-Api-Key", "bench-key-000")
			for i := 0; i < 3; i++ { // the key, and the views where they are cached
				ctx.Response.Reset()
				h(&ctx)
			}
			if sc, xc := ctx.Response.StatusCode(), string(ctx.Response.Header.Peek("X-Cache")); sc != 200 || xc != "BYPASS" {
				b.Fatalf("%s: %d X-Cache %q", c.uri, sc, xc)
			}
			b.ReportAllocs()
			cpu0 := benchCPU()
			for b.Loop() {
				ctx.Response.Reset()
				h(&ctx)
				if ctx.Response.StatusCode() != 200 {
					b.Fatalf("status %d", ctx.Response.StatusCode())
				}
				// What the server does once it has written the response
				// (Request.Reset): close the user values, which gives a
				// pooled fill body back.
				ctx.ResetUserValues()
			}
			b.ReportMetric(float64(benchCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// benchCPU is the process's CPU time (user and system, every thread, the
// garbage collector's work included): cpu-ns/op is less sensitive than
// ns/op to other processes sharing the machine.
func benchCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRefill measures a listing's refill (the route's cache on, the
// entry past stale-while-revalidate, within stale-if-error: the request
// waits for the fill, which replaces the entry; for a content listing the
// view it is cut from, expired, is refilled first) when the upstream answer
// is the one the entry was built from (revalidated: the entry is stored
// again, nothing is built) and when it is the same data in other bytes
// (rebuilt: decoded, mapped and encoded; the body being the same, its
// compressed copy is kept). Both go through a proxy in front of the fake,
// which copies every answer (and pads it by a space for rebuilt), so the
// two differ only in the edge's work.
func BenchmarkRefill(b *testing.B) {
	for _, page := range []struct {
		name, uri string
		step      time.Duration // past the route's TTL + stale-while-revalidate, within stale-if-error
	}{
		{"vehicles_20", "/dealer/REWIND/listing?page=1&page_size=20", 61 * time.Second},
		{"vehicles_100", "/dealer/REWIND/listing?page=1&page_size=100", 61 * time.Second},
		// A content listing whose view has expired too: the listing is
		// cut from the refilled view either way; the view is revalidated
		// or built from the content service's answer.
		{"content_view", "/dealer/content/news/listing", 361 * time.Second},
	} {
		for _, mode := range []string{"revalidated", "rebuilt"} {
			b.Run(page.name+"/"+mode, func(b *testing.B) {
				clock := &stepClock{t: time.Now()}
				proxy := &padProxy{copyAll: true}
				proxy.pad.Store(mode == "rebuilt")
				s := newBenchServerVia(b, true, nil, cache.Options{Now: clock.now}, func(addr string) string { return proxy.start(b, addr) })
				h := s.Handler()
				var ctx fasthttp.RequestCtx
				ctx.Request.SetRequestURI(page.uri)
				ctx.Request.Header.Set("X-Api-Key", "bench-key-000")
				serve := func() {
					ctx.Response.Reset()
					h(&ctx)
					if sc, xc := ctx.Response.StatusCode(), string(ctx.Response.Header.Peek("X-Cache")); sc != 200 || xc != "MISS" {
						b.Fatalf("%s: %d X-Cache %q", page.uri, sc, xc)
					}
					ctx.ResetUserValues()
				}
				serve()
				b.ReportAllocs()
				cpu0 := benchCPU()
				for b.Loop() {
					clock.add(page.step)
					serve()
				}
				b.ReportMetric(float64(benchCPU()-cpu0)/float64(b.N), "cpu-ns/op")
				st := s.cache.(*cache.Cache).Stats()
				if mode == "revalidated" && st.FillsRevalidated < uint64(b.N) || mode == "rebuilt" && st.FillsUnchanged < uint64(b.N) {
					b.Fatalf("%s: %+v", mode, st)
				}
			})
		}
	}
}
