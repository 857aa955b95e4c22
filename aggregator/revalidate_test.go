package aggregator

import (
	"bytes"
	"net"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/cache"
)

// stepClock is a clock a test moves.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *stepClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// padProxy forwards to the fake; while pad is set it appends one space,
// then two, then one... to the answers' bodies: the same data in other
// bytes than the answer before. With copyAll it copies every body, padded
// or not (so that both cost the same).
type padProxy struct {
	pad     atomic.Bool
	n       atomic.Int64
	copyAll bool
}

func (p *padProxy) start(t testing.TB, fakeAddr string) string {
	t.Helper()
	hc := &fasthttp.HostClient{Addr: fakeAddr}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		req := &ctx.Request
		req.SetHost(fakeAddr)
		if err := hc.Do(req, &ctx.Response); err != nil {
			ctx.Error(err.Error(), fasthttp.StatusBadGateway)
			return
		}
		if pad := p.pad.Load(); pad || p.copyAll {
			b := bytes.Clone(ctx.Response.Body())
			if pad {
				b = append(b, "  "[:1+p.n.Add(1)%2]...)
			}
			ctx.Response.SetBody(b)
		}
	}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return ln.Addr().String()
}

// serveOK serves uri with the bench key through h and returns the body
// and X-Cache, failing the test unless the status is 200.
func serveOK(t *testing.T, h fasthttp.RequestHandler, uri string) ([]byte, string) {
	t.Helper()
	ctx := new(fasthttp.RequestCtx)
	ctx.Request.SetRequestURI(uri)
	ctx.Request.Header.Set("X-Api-Key", "bench-key-000")
	h(ctx)
	if sc := ctx.Response.StatusCode(); sc != 200 {
		t.Fatalf("%s: status %d: %s", uri, sc, ctx.Response.Body())
	}
	return bytes.Clone(ctx.Response.Body()), string(ctx.Response.Header.Peek("X-Cache"))
}

// TestListingRefreshRevalidates: a stale inventory listing or offer detail
// whose refill gets the same upstream answer is stored again without being
// built (cache.Stats.FillsRevalidated), and is served with the same body; an answer in other bytes is built again
// (and, the body being the same, keeps its compressed copy); a route
// with its cache off never revalidates.
func TestListingRefreshRevalidates(t *testing.T) {
	clock := &stepClock{t: time.Now()}
	var proxy padProxy
	s := newBenchServerVia(t, true, nil, cache.Options{Now: clock.now}, func(addr string) string { return proxy.start(t, addr) })
	h := s.Handler()
	get := func(uri string) ([]byte, string) { t.Helper(); return serveOK(t, h, uri) }
	stats := func() cache.Stats { return s.cache.(*cache.Cache).Stats() }
	// waitFor waits until the background refreshes have counted what cond
	// asks for.
	waitFor := func(what string, cond func(cache.Stats) bool) cache.Stats {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			st := stats()
			if cond(st) {
				return st
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %+v", what, st)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	uris := []string{
		"/dealer/REWIND/listing?page=1&page_size=20",
		"/dealer/NLT/listing?page=1&page_size=20",
	}
	// And the detail of the first offer listed. Each step below moves the
	// clock 61 s: listings (30 s + 30 s of stale-while-revalidate) are then
	// refilled within stale-if-error while the request waits (X-Cache
	// MISS), details (60 s + 60 s) refreshed behind a STALE answer.
	offers, _ := get("/dealer/NLT/listing?page=1&page_size=1")
	m := regexp.MustCompile(`"id_offerta":(\d+)`).FindSubmatch(offers)
	if m == nil {
		t.Fatalf("no offer: %s", offers)
	}
	detail := "/dealer/NLT/details?id_offerta=" + string(m[1])
	uris = append(uris, detail)
	want := map[string][]byte{}
	for _, u := range uris {
		body, xc := get(u)
		if xc != "MISS" {
			t.Fatalf("%s: %s", u, xc)
		}
		want[u] = body
	}
	base := stats()

	n := uint64(len(uris))
	// Each refill finds the same answer.
	clock.add(61 * time.Second)
	for _, u := range uris {
		if body, xc := get(u); xc != "STALE" && xc != "MISS" || !bytes.Equal(body, want[u]) {
			t.Fatalf("%s: %s", u, xc)
		}
	}
	st := waitFor("every refill revalidated", func(st cache.Stats) bool {
		return st.FillsRevalidated-base.FillsRevalidated == n
	})
	if st.Fills-base.Fills != n || st.FillErrors != base.FillErrors || st.FillsUnchanged != base.FillsUnchanged {
		t.Fatalf("fills %d, errors %d, rebuilt unchanged %d; want %d, 0, 0", st.Fills-base.Fills, st.FillErrors-base.FillErrors, st.FillsUnchanged-base.FillsUnchanged, n)
	}
	for _, u := range uris {
		if body, xc := get(u); xc != "HIT" || !bytes.Equal(body, want[u]) {
			t.Fatalf("%s after the refresh: %s, same body %v", u, xc, bytes.Equal(body, want[u]))
		}
	}

	// Other bytes, the same data: built again, the same body.
	proxy.pad.Store(true)
	clock.add(61 * time.Second)
	for _, u := range uris {
		get(u)
	}
	st2 := waitFor("every refill rebuilt", func(st2 cache.Stats) bool {
		return st2.FillsUnchanged-st.FillsUnchanged == n
	})
	if st2.FillsRevalidated != st.FillsRevalidated || st2.Fills-st.Fills != n {
		t.Fatalf("padded answers: revalidated %d, unchanged bodies %d; want 0, all",
			st2.FillsRevalidated-st.FillsRevalidated, st2.FillsUnchanged-st.FillsUnchanged)
	}
	for _, u := range uris {
		if body, xc := get(u); xc != "HIT" || !bytes.Equal(body, want[u]) {
			t.Fatalf("%s after a rebuild: %s", u, xc)
		}
	}
}

// TestViewRefillRevalidates: a content view has no stale windows; when it
// has expired, the refill of a content listing reads the content service
// again, and with the same answer the view L1 still holds is stored again
// without being built (cache.Stats.FillsRevalidated).
func TestViewRefillRevalidates(t *testing.T) {
	clock := &stepClock{t: time.Now()}
	s := newBenchServerWith(t, true, nil, cache.Options{Now: clock.now})
	h := s.Handler()
	get := func(uri string) ([]byte, string) { t.Helper(); return serveOK(t, h, uri) }
	stats := func() cache.Stats { return s.cache.(*cache.Cache).Stats() }
	const uri = "/dealer/content/faq/listing"
	want, xc := get(uri)
	if xc != "MISS" {
		t.Fatalf("first: %s", xc)
	}
	base := stats()
	// Content listings and views live 5 minutes; the listing then has a
	// minute of stale-while-revalidate, the view none.
	clock.add(301 * time.Second)
	if body, xc := get(uri); xc != "STALE" || !bytes.Equal(body, want) {
		t.Fatalf("stale: %s", xc)
	}
	deadline := time.Now().Add(5 * time.Second)
	for stats().FillsRevalidated == base.FillsRevalidated {
		if time.Now().After(deadline) {
			t.Fatalf("the view was not revalidated: %+v", stats())
		}
		time.Sleep(2 * time.Millisecond)
	}
	for {
		if body, xc := get(uri); xc == "HIT" {
			if !bytes.Equal(body, want) {
				t.Fatal("the refreshed listing differs")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the listing was not refreshed")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestRefreshAcrossBuilds: with no L1, every refill replaces an entry read
// from Redis, whose source digest came with it: the same build revalidates
// it; a build that runs other code (another buildSeed: another release, or
// another instance's mapping) builds the body again, the same body here.
func TestRefreshAcrossBuilds(t *testing.T) {
	clock := &stepClock{t: time.Now()}
	s := newBenchServerWith(t, true, nil, cache.Options{Now: clock.now, L1MaxBytes: -1})
	h := s.Handler()
	stats := func() cache.Stats { return s.cache.(*cache.Cache).Stats() }
	const uri = "/dealer/REWIND/listing?page=1&page_size=20"
	want, xc := serveOK(t, h, uri)
	if xc != "MISS" {
		t.Fatalf("first: %s", xc)
	}
	step := func(what string, revalidated, rebuilt uint64) {
		t.Helper()
		base := stats()
		clock.add(61 * time.Second) // past stale-while-revalidate: the refill is the request's
		if body, xc := serveOK(t, h, uri); xc != "MISS" || !bytes.Equal(body, want) {
			t.Fatalf("%s: %s, same body %v", what, xc, bytes.Equal(body, want))
		}
		st := stats()
		if st.FillsRevalidated-base.FillsRevalidated != revalidated || st.FillsUnchanged-base.FillsUnchanged != rebuilt {
			t.Fatalf("%s: revalidated %d, rebuilt with the same body %d; want %d, %d", what,
				st.FillsRevalidated-base.FillsRevalidated, st.FillsUnchanged-base.FillsUnchanged, revalidated, rebuilt)
		}
	}
	step("same build", 1, 0)
	old := buildSeed
	t.Cleanup(func() { buildSeed = old })
	other := old() + 1
	buildSeed = func() uint64 { return other }
	step("another build", 0, 1)
	step("the other build's own entry", 1, 0)
}
