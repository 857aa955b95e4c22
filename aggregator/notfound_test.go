package aggregator

import (
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// The tests of this file hold the remembered "not found" of the detail
// routes (notfound.go): one set of upstream calls for an unknown id within
// cache.routes.inventory_details.not_found_ttl, the same 404 as a fill's,
// purged with the dealer and by a purge of everything, never remembered
// from an error, never another dealer's.

const unknownVehicle = "/dealer/REWIND/details?id_auto=00000000-0000-4000-8000-000000000000"

// nfClock is a settable clock for the cache of a notFoundEdge.
type nfClock struct{ ns atomic.Int64 }

func (c *nfClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *nfClock) add(d time.Duration)     { c.ns.Add(int64(d)) }
func newNFClock() *nfClock                 { c := &nfClock{}; c.ns.Store(time.Now().UnixNano()); return c }
func (e *indexEdge) invCalls() int64       { return e.fk.Calls(upstream.SvcInventory) }
func (e *indexEdge) medCalls() int64       { return e.fk.Calls(upstream.SvcMedia) }
func (e *indexEdge) calls() (int64, int64) { return e.invCalls(), e.medCalls() }

// notFoundEdge is newIndexEdge with a cache of its own on clock (so a
// test can purge it and move its time) and tune applied to the settings.
func notFoundEdge(t *testing.T, clock *nfClock, tune func(*Settings)) (*indexEdge, *cache.Cache) {
	t.Helper()
	c, err := cache.New(cache.Options{ServeStaleOn: ServeStaleOn, Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return newIndexEdge(t, fake.Options{}, tune, false, func(o *Options) { o.Cache = c }), c
}

// requestID sends uri with key and X-Request-Id id through the handler.
func (e *indexEdge) requestID(uri, key, id string) *fasthttp.RequestCtx {
	var req fasthttp.Request
	req.SetRequestURI(uri)
	req.Header.Set("X-Api-Key", key)
	req.Header.Set("X-Request-Id", id)
	ctx := new(fasthttp.RequestCtx)
	ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP("192.0.2.1"), Port: 40000}, nil)
	e.s.Handler()(ctx)
	return ctx
}

// headersOf returns the response's header lines but Date and X-Cache.
func headersOf(ctx *fasthttp.RequestCtx) string {
	var b strings.Builder
	for k, v := range ctx.Response.Header.All() {
		if ks := string(k); ks != "Date" && ks != "X-Cache" {
			b.WriteString(ks + ": " + string(v) + "\n")
		}
	}
	return b.String()
}

// TestNotFoundRemembered: N requests for one unknown vehicle within the
// TTL make one set of calls (inventory and media once); the remembered
// answer is today's 404 byte for byte (body and headers, for the same
// request id), with X-Cache: HIT; with the TTL at 0 every request calls
// again, and the answer is the same. Before the remembered "not found",
// every request called inventory and media.
func TestNotFoundRemembered(t *testing.T) {
	for _, c := range []struct {
		name     string
		ttl      time.Duration
		wantInv  int64
		wantHits int
	}{
		{"default ttl", DefaultNotFoundTTL, 1, 9},
		{"ttl 0 is off", 0, 10, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, _ := notFoundEdge(t, newNFClock(), func(s *Settings) { s.NotFoundTTL[RouteInventoryDetails] = c.ttl })
			off := newIndexEdge(t, fake.Options{}, func(s *Settings) { s.NotFoundTTL = nil }, false)
			want := off.requestID(unknownVehicle, "demo-key-alpha", "req-404")
			inv0, med0 := e.calls()
			hits := 0
			for i := range 10 {
				ctx := e.requestID(unknownVehicle, "demo-key-alpha", "req-404")
				if ctx.Response.StatusCode() != 404 || string(ctx.Response.Body()) != string(want.Response.Body()) {
					t.Fatalf("request %d: %d %s, want 404 %s", i, ctx.Response.StatusCode(), ctx.Response.Body(), want.Response.Body())
				}
				if got, w := headersOf(ctx), headersOf(want); got != w {
					t.Errorf("request %d: headers\n%s\nwant\n%s", i, got, w)
				}
				switch xc := string(ctx.Response.Header.Peek("X-Cache")); xc {
				case "HIT":
					hits++
				case "":
				default:
					t.Errorf("request %d: X-Cache %q", i, xc)
				}
			}
			inv, med := e.invCalls()-inv0, e.medCalls()-med0
			if inv != c.wantInv || med != c.wantInv || hits != c.wantHits {
				t.Errorf("10 requests: %d inventory, %d media calls, %d HITs; want %d, %d, %d", inv, med, hits, c.wantInv, c.wantInv, c.wantHits)
			}
		})
	}
}

// TestNotFoundCoalesced: concurrent requests for one unknown vehicle make
// one set of calls.
func TestNotFoundCoalesced(t *testing.T) {
	e, _ := notFoundEdge(t, newNFClock(), nil)
	e.fk.SetLatency(upstream.SvcInventory, 50*time.Millisecond)
	inv0, med0 := e.calls()
	var wg sync.WaitGroup
	var bad atomic.Int32
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if st, _ := e.body(t, unknownVehicle, "demo-key-alpha"); st != 404 {
				bad.Add(1)
			}
		}()
	}
	wg.Wait()
	if bad.Load() != 0 {
		t.Fatalf("%d answers were not 404", bad.Load())
	}
	if inv, med := e.invCalls()-inv0, e.medCalls()-med0; inv != 1 || med != 1 {
		t.Errorf("20 concurrent requests: %d inventory, %d media calls; want 1 each", inv, med)
	}
}

// TestNotFoundPurgedAndExpires: a purge of the dealer, a purge of
// everything and the end of the TTL each make the next request call the
// service again; a purge of another dealer does not.
func TestNotFoundPurgedAndExpires(t *testing.T) {
	clock := newNFClock()
	e, c := notFoundEdge(t, clock, nil)
	ctx := context.Background()
	for _, step := range []struct {
		name  string
		do    func()
		calls int64
	}{
		{"first request", func() {}, 1},
		{"remembered", func() {}, 0},
		{"purge of another dealer", func() { _ = c.PurgeDealer(ctx, 102) }, 0},
		{"purge of the dealer", func() { _ = c.PurgeDealer(ctx, 101) }, 1},
		{"remembered again", func() {}, 0},
		{"purge of everything", func() { _ = c.PurgeAll(ctx) }, 1},
		{"just before the ttl ends", func() { clock.add(DefaultNotFoundTTL - time.Millisecond) }, 0},
		{"ttl over", func() { clock.add(time.Millisecond) }, 1},
		{"remembered once more", func() {}, 0},
	} {
		step.do()
		inv0 := e.invCalls()
		if st, body := e.body(t, unknownVehicle, "demo-key-alpha"); st != 404 {
			t.Fatalf("%s: %d %s", step.name, st, body)
		}
		if got := e.invCalls() - inv0; got != step.calls {
			t.Errorf("%s: %d inventory calls, want %d", step.name, got, step.calls)
		}
	}
}

// TestNotFoundNotFromErrors: an inventory service that is down (503 from
// the edge) or answers 500 is never remembered as "not found": the next
// request calls it again, and once it is back the vehicle's 404 is.
func TestNotFoundNotFromErrors(t *testing.T) {
	for _, c := range []struct {
		name        string
		fault, heal func(*fake.Server)
	}{
		{"down", func(f *fake.Server) { f.SetDown(upstream.SvcInventory, true) }, func(f *fake.Server) { f.SetDown(upstream.SvcInventory, false) }},
		{"500", func(f *fake.Server) { f.SetFailRate(upstream.SvcInventory, 1) }, func(f *fake.Server) { f.SetFailRate(upstream.SvcInventory, 0) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, _ := notFoundEdge(t, newNFClock(), nil)
			c.fault(e.fk)
			for i := range 3 {
				if st, body := e.body(t, unknownVehicle, "demo-key-alpha"); st == 404 || st < 500 {
					t.Fatalf("request %d with inventory failing: %d %s", i, st, body)
				}
			}
			c.heal(e.fk)
			inv0 := e.invCalls()
			for range 3 {
				if st, body := e.body(t, unknownVehicle, "demo-key-alpha"); st != 404 {
					t.Fatalf("inventory back: %d %s", st, body)
				}
			}
			if got := e.invCalls() - inv0; got != 1 {
				t.Errorf("inventory back: 3 requests made %d inventory calls, want 1 (the failures remembered nothing)", got)
			}
		})
	}
}

// TestNotFoundIsolation: dealer 101's remembered "not found" of dealer
// 102's vehicle never answers dealer 102, who has it.
func TestNotFoundIsolation(t *testing.T) {
	e, _ := notFoundEdge(t, newNFClock(), nil)
	st, body := e.body(t, "/dealer/REWIND/listing?page_size=1", "demo-key-beta")
	i := strings.Index(body, `"id_auto":"`)
	if st != 200 || i < 0 {
		t.Fatalf("listing: %d %s", st, body)
	}
	uri := "/dealer/REWIND/details?id_auto=" + body[i+len(`"id_auto":"`):][:36]
	for range 2 {
		if st, body := e.body(t, uri, "demo-key-alpha"); st != 404 {
			t.Fatalf("dealer 101: %d %s", st, body)
		}
	}
	if st, body := e.body(t, uri, "demo-key-beta"); st != 200 {
		t.Fatalf("dealer 102, after dealer 101's remembered 404: %d %s", st, body)
	}
}

// TestNotFoundOffer: an NLT offer id the dealer does not have is
// remembered as a vehicle's is: one inventory call for 5 requests.
func TestNotFoundOffer(t *testing.T) {
	e, _ := notFoundEdge(t, newNFClock(), nil)
	inv0 := e.invCalls()
	for range 5 {
		if st, body := e.body(t, "/dealer/NLT/details?id_offerta=999999999", "demo-key-alpha"); st != 404 || !strings.Contains(body, `"code":"offer_not_found"`) {
			t.Fatalf("%d %s", st, body)
		}
	}
	if got := e.invCalls() - inv0; got != 1 {
		t.Errorf("5 requests: %d inventory calls, want 1", got)
	}
}

// TestNotFoundPolicy: not_found_ttl is clamped to the route's TTL (a
// route whose cache is off remembers nothing), has no stale windows, and
// is refused negative or on a route that does not remember.
func TestNotFoundPolicy(t *testing.T) {
	for _, c := range []struct {
		name     string
		ttl, nf  time.Duration
		route    string
		want     time.Duration
		validErr bool
	}{
		{"default", time.Minute, DefaultNotFoundTTL, RouteInventoryDetails, DefaultNotFoundTTL, false},
		{"clamped to the route's ttl", 5 * time.Second, DefaultNotFoundTTL, RouteInventoryDetails, 5 * time.Second, false},
		{"route cache off", 0, DefaultNotFoundTTL, RouteInventoryDetails, 0, false},
		{"off", time.Minute, 0, RouteInventoryDetails, 0, false},
		{"negative", time.Minute, -time.Second, RouteInventoryDetails, -time.Second, true},
		{"a route that does not remember", time.Minute, time.Second, RouteInventoryListing, time.Second, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := DefaultSettings()
			s.Cache[c.route] = cache.Policy{TTL: c.ttl, StaleWhileRevalidate: time.Minute, StaleIfError: time.Hour}
			s.NotFoundTTL = map[string]time.Duration{c.route: c.nf}
			if got := s.NotFoundPolicy(c.route); got != (cache.Policy{TTL: c.want}) {
				t.Errorf("policy %+v, want TTL %v alone", got, c.want)
			}
			if err := s.Validate(); (err != nil) != c.validErr {
				t.Errorf("Validate: %v, want error %v", err, c.validErr)
			}
		})
	}
}

// TestNotFoundThroughRedis: a "not found" one instance remembered answers
// another instance that shares its Redis (X-Cache: HIT, no call), looked
// up by the response's fill after the response's own Redis lookup
// missed; a vehicle served from Redis is still a 200.
func TestNotFoundThroughRedis(t *testing.T) {
	mr := miniredis.RunT(t)
	mk := func() *indexEdge {
		rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		t.Cleanup(func() { _ = rdb.Close() })
		c, err := cache.New(cache.Options{Redis: rdb, ServeStaleOn: ServeStaleOn, RedisTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return newIndexEdge(t, fake.Options{}, nil, false, func(o *Options) { o.Cache = c })
	}
	a, b := mk(), mk()
	if st, body := a.body(t, unknownVehicle, "demo-key-alpha"); st != 404 {
		t.Fatalf("a: %d %s", st, body)
	}
	facts := 0
	for _, k := range mr.Keys() {
		if strings.Contains(k, notFoundKeyPrefix) {
			facts++
			v, _ := mr.Get(k)
			t.Logf("the fact in Redis: %d bytes (key %d, value %d), expires in %v", len(k)+len(v), len(k), len(v), mr.TTL(k))
			if ttl := mr.TTL(k); ttl <= 0 || ttl > DefaultNotFoundTTL {
				t.Errorf("the fact expires from Redis in %v, want within not_found_ttl %v", ttl, DefaultNotFoundTTL)
			}
		}
	}
	if facts != 1 {
		t.Fatalf("%d facts in Redis, want 1", facts)
	}
	inv0, med0 := b.calls()
	for i, want := range []string{"HIT", "HIT"} { // from Redis, then from b's L1
		ctx := b.request(unknownVehicle, "demo-key-alpha")
		if st, xc := ctx.Response.StatusCode(), string(ctx.Response.Header.Peek("X-Cache")); st != 404 || xc != want {
			t.Fatalf("b, request %d: %d X-Cache %q, want 404 %q", i, st, xc, want)
		}
	}
	if inv, med := b.invCalls()-inv0, b.medCalls()-med0; inv != 0 || med != 0 {
		t.Errorf("b made %d inventory and %d media calls for a remembered not found", inv, med)
	}
	st, body := a.body(t, "/dealer/REWIND/listing?page_size=1", "demo-key-alpha")
	i := strings.Index(body, `"id_auto":"`)
	if st != 200 || i < 0 {
		t.Fatalf("listing: %d %s", st, body)
	}
	known := "/dealer/REWIND/details?id_auto=" + body[i+len(`"id_auto":"`):][:36]
	if st, body := a.body(t, known, "demo-key-alpha"); st != 200 {
		t.Fatalf("a, known vehicle: %d %s", st, body)
	}
	if ctx := b.request(known, "demo-key-alpha"); ctx.Response.StatusCode() != 200 || string(ctx.Response.Header.Peek("X-Cache")) != "HIT" {
		t.Errorf("b, known vehicle from Redis: %d X-Cache %q", ctx.Response.StatusCode(), ctx.Response.Header.Peek("X-Cache"))
	}
}
