package aggregator

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// The tests of this file try to make the remembered "not found"
// (notfound.go) answer what it must not: a fact from an error of another
// service or of the call, a fact that hides a vehicle after a purge of
// its dealer, a 404 that differs from a fill's, a wait across instances.

// faultyBackend is a Backend whose Vehicle, VehicleMedia and Equipment
// answers a test can replace: hidden makes Vehicle answer the inventory
// service's 404 for idAuto (a vehicle not yet in stock, or sold), and
// vehErr, mediaErr, catErr replace those calls' answers when set.
type faultyBackend struct {
	Backend
	mu                       sync.Mutex
	hidden                   map[string]bool
	vehErr, mediaErr, catErr error
	vehicleCalls, mediaCalls atomic.Int64
}

func (b *faultyBackend) hide(id string, h bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.hidden == nil {
		b.hidden = map[string]bool{}
	}
	b.hidden[id] = h
}

func (b *faultyBackend) set(veh, media, cat error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.vehErr, b.mediaErr, b.catErr = veh, media, cat
}

func (b *faultyBackend) Vehicle(ctx context.Context, dealerID int64, service, idAuto string) (upstream.Vehicle, error) {
	b.vehicleCalls.Add(1)
	b.mu.Lock()
	hidden, err := b.hidden[idAuto], b.vehErr
	b.mu.Unlock()
	if err != nil {
		return upstream.Vehicle{}, err
	}
	if hidden {
		return upstream.Vehicle{}, fmt.Errorf("upstream inventory: %w", upstream.ErrNotFound)
	}
	return b.Backend.Vehicle(ctx, dealerID, service, idAuto)
}

func (b *faultyBackend) VehicleMedia(ctx context.Context, dealerID int64, idAuto string) (upstream.Media, error) {
	b.mediaCalls.Add(1)
	b.mu.Lock()
	err := b.mediaErr
	b.mu.Unlock()
	if err != nil {
		return upstream.Media{}, err
	}
	return b.Backend.VehicleMedia(ctx, dealerID, idAuto)
}

func (b *faultyBackend) Equipment(ctx context.Context, dealerID int64, versionCode string) (upstream.Equipment, error) {
	b.mu.Lock()
	err := b.catErr
	b.mu.Unlock()
	if err != nil {
		return upstream.Equipment{}, err
	}
	return b.Backend.Equipment(ctx, dealerID, versionCode)
}

// faultyEdge is notFoundEdge with its backend wrapped in a faultyBackend.
func faultyEdge(t *testing.T, clock *nfClock, copts cache.Options) (*indexEdge, *faultyBackend, *cache.Cache) {
	t.Helper()
	copts.ServeStaleOn, copts.DropOn = ServeStaleOn, DropOn
	if clock != nil {
		copts.Now = clock.now
	}
	c, err := cache.New(copts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	fb := &faultyBackend{}
	e := newIndexEdge(t, fake.Options{}, nil, false, func(o *Options) {
		o.Cache = c
		fb.Backend = o.Backend
		o.Backend = fb
	})
	return e, fb, c
}

// knownVehicle returns the details URI of the first REWIND vehicle of
// key's dealer and its id_auto.
func knownVehicle(t *testing.T, e *indexEdge, key string) (string, string) {
	t.Helper()
	st, body := e.body(t, "/dealer/REWIND/listing?page_size=1", key)
	i := strings.Index(body, `"id_auto":"`)
	if st != 200 || i < 0 {
		t.Fatalf("listing: %d %s", st, body)
	}
	id := body[i+len(`"id_auto":"`):][:36]
	return "/dealer/REWIND/details?id_auto=" + id, id
}

// TestNotFoundReviewNotFromOtherAnswers: only the inventory service's 404
// for the id is remembered: a timeout, a breaker refusal, a 404 of the
// media or of the catalog service (the vehicle exists), a media failure
// (a partial answer) leave nothing that answers the next request 404.
func TestNotFoundReviewNotFromOtherAnswers(t *testing.T) {
	timeout := fmt.Errorf("upstream inventory: %w: %w", upstream.ErrUnavailable, context.DeadlineExceeded)
	open := fmt.Errorf("upstream inventory: %w: %w", upstream.ErrUnavailable, upstream.ErrCircuitOpen)
	mediaNF := fmt.Errorf("upstream media: %w", upstream.ErrNotFound)
	catNF := fmt.Errorf("upstream catalog: %w", upstream.ErrNotFound)
	media500 := fmt.Errorf("upstream media: %w: 500", upstream.ErrUnavailable)
	for _, c := range []struct {
		name              string
		veh, media, cat   error
		wantFault, wantSt int
	}{
		{"inventory timeout", timeout, nil, nil, 503, 200},
		{"breaker open", open, nil, nil, 503, 200},
		{"media 404", nil, mediaNF, nil, 200, 200},
		{"catalog 404", nil, nil, catNF, 200, 200},
		{"media 500 (partial)", nil, media500, nil, 200, 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, fb, _ := faultyEdge(t, newNFClock(), cache.Options{})
			uri, _ := knownVehicle(t, e, "demo-key-alpha")
			fb.set(c.veh, c.media, c.cat)
			if st, body := e.body(t, uri, "demo-key-alpha"); st != c.wantFault {
				t.Fatalf("with the fault: %d %s, want %d", st, body, c.wantFault)
			}
			fb.set(nil, nil, nil)
			if st, body := e.body(t, uri, "demo-key-alpha"); st != c.wantSt {
				t.Fatalf("fault gone: %d %s, want %d (a fault was remembered as not found?)", st, body, c.wantSt)
			}
		})
	}
}

// TestNotFoundReviewAppears: a vehicle the inventory service did not have
// is answered 404 within not_found_ttl after it appears (the README's
// cost), and 200 at once after a purge of its dealer or of everything,
// or once not_found_ttl is over.
func TestNotFoundReviewAppears(t *testing.T) {
	for _, c := range []struct {
		name string
		do   func(*cache.Cache, *nfClock)
	}{
		{"purge of the dealer", func(c *cache.Cache, _ *nfClock) { _ = c.PurgeDealer(context.Background(), 101) }},
		{"purge of everything", func(c *cache.Cache, _ *nfClock) { _ = c.PurgeAll(context.Background()) }},
		{"not_found_ttl over", func(_ *cache.Cache, k *nfClock) { k.add(DefaultNotFoundTTL) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := newNFClock()
			e, fb, cc := faultyEdge(t, clock, cache.Options{})
			uri, id := knownVehicle(t, e, "demo-key-alpha")
			fb.hide(id, true)
			for range 2 {
				if st, body := e.body(t, uri, "demo-key-alpha"); st != 404 {
					t.Fatalf("hidden: %d %s", st, body)
				}
			}
			fb.hide(id, false) // it appears
			if st, _ := e.body(t, uri, "demo-key-alpha"); st != 404 {
				t.Fatalf("appeared, within not_found_ttl: %d, want the remembered 404", st)
			}
			c.do(cc, clock)
			if st, body := e.body(t, uri, "demo-key-alpha"); st != 200 {
				t.Fatalf("after %s: %d %s, want 200", c.name, st, body)
			}
		})
	}
}

// TestNotFoundReviewSoldWhileStale: a vehicle whose cached response is
// stale (past its ttl, within stale-if-error) and that the service now
// answers 404 for (sold): the refill's 404 wins over the stale 200, and is
// remembered (the README's "Remembered not found").
func TestNotFoundReviewSoldWhileStale(t *testing.T) {
	clock := newNFClock()
	e, fb, _ := faultyEdge(t, clock, cache.Options{})
	uri, id := knownVehicle(t, e, "demo-key-alpha")
	if st, _ := e.body(t, uri, "demo-key-alpha"); st != 200 {
		t.Fatal("first request not 200")
	}
	fb.hide(id, true) // sold
	pol := DefaultSettings().Cache[RouteInventoryDetails]
	clock.add(pol.TTL + pol.StaleWhileRevalidate + time.Second) // within stale-if-error
	if st, body := e.body(t, uri, "demo-key-alpha"); st != 404 {
		t.Fatalf("sold, response within stale-if-error: %d %s, want 404", st, body)
	}
	calls := fb.vehicleCalls.Load()
	if ctx := e.request(uri, "demo-key-alpha"); ctx.Response.StatusCode() != 404 || string(ctx.Response.Header.Peek("X-Cache")) != "HIT" {
		t.Fatalf("again: %d X-Cache %q, want the remembered 404", ctx.Response.StatusCode(), ctx.Response.Header.Peek("X-Cache"))
	}
	if got := fb.vehicleCalls.Load() - calls; got != 0 {
		t.Errorf("the remembered 404 made %d inventory calls", got)
	}
}

// TestNotFoundReviewKeyVariants: case variants of one id_auto are one
// id (the edge lowercases it, and asks the service for the lowercase
// one), so one fact answers both; the same id under another service is
// another question and is asked.
func TestNotFoundReviewKeyVariants(t *testing.T) {
	e, fb, _ := faultyEdge(t, newNFClock(), cache.Options{})
	const id = "0000000a-0000-4000-8000-00000000000b"
	for _, c := range []struct {
		name  string
		uri   string
		calls int64
	}{
		{"lowercase", "/dealer/REWIND/details?id_auto=" + id, 1},
		{"uppercase", "/dealer/REWIND/details?id_auto=" + strings.ToUpper(id), 0},
		{"percent-encoded", "/dealer/REWIND/details?id_auto=%30" + id[1:], 0},
		{"another service", "/dealer/NOS/details?id_auto=" + id, 1},
	} {
		n := fb.vehicleCalls.Load()
		if st, body := e.body(t, c.uri, "demo-key-alpha"); st != 404 {
			t.Fatalf("%s: %d %s", c.name, st, body)
		}
		if got := fb.vehicleCalls.Load() - n; got != c.calls {
			t.Errorf("%s: %d inventory calls, want %d", c.name, got, c.calls)
		}
	}
}

// rawRequest sends a request with method, uri, key and extra headers
// (name, value pairs) through the handler.
func (e *indexEdge) rawRequest(method, uri, key string, hdr ...string) *fasthttp.RequestCtx {
	var req fasthttp.Request
	req.Header.SetMethod(method)
	req.SetRequestURI(uri)
	req.Header.Set("X-Api-Key", key)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	ctx := new(fasthttp.RequestCtx)
	ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP("192.0.2.1"), Port: 40000}, nil)
	e.s.Handler()(ctx)
	return ctx
}

// TestNotFoundReviewSameBytes: a remembered 404 is a fill's 404 byte for
// byte (status, body, every header but Date and X-Cache) for HEAD and for
// a GET with If-None-Match too; rate limit headers included.
func TestNotFoundReviewSameBytes(t *testing.T) {
	for _, c := range []struct {
		name   string
		method string
		hdr    []string
	}{
		{"GET", "GET", nil},
		{"HEAD", "HEAD", nil},
		{"If-None-Match *", "GET", []string{"If-None-Match", "*"}},
		{"If-None-Match etag", "GET", []string{"If-None-Match", `"abc"`}},
		{"gzip", "GET", []string{"Accept-Encoding", "gzip"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, _ := notFoundEdge(t, newNFClock(), nil)
			off := newIndexEdge(t, fake.Options{}, func(s *Settings) { s.NotFoundTTL = nil }, false)
			hdr := append([]string{"X-Request-Id", "req-same"}, c.hdr...)
			want := off.rawRequest(c.method, unknownVehicle, "demo-key-alpha", hdr...)
			e.rawRequest(c.method, unknownVehicle, "demo-key-alpha", hdr...) // the fill
			got := e.rawRequest(c.method, unknownVehicle, "demo-key-alpha", hdr...)
			if xc := string(got.Response.Header.Peek("X-Cache")); xc != "HIT" {
				t.Fatalf("X-Cache %q, want HIT", xc)
			}
			if got.Response.StatusCode() != want.Response.StatusCode() || string(got.Response.Body()) != string(want.Response.Body()) {
				t.Errorf("%d %s, want %d %s", got.Response.StatusCode(), got.Response.Body(), want.Response.StatusCode(), want.Response.Body())
			}
			if g, w := headersOf(got), headersOf(want); g != w {
				t.Errorf("headers\n%s\nwant\n%s", g, w)
			}
			if h := got.Response.Header.Peek("Etag"); h != nil {
				t.Errorf("ETag %q on a remembered 404", h)
			}
		})
	}
}

// TestNotFoundReviewLockWait: an instance that finds another's fill lock
// on an unknown id does not wait cache.lock_wait for a response entry
// that never comes: the other's fill ends with a 404 and stores the fact
// (no response), and the waiter answers from the fact as soon as the lock
// is released, with no call of its own.
func TestNotFoundReviewLockWait(t *testing.T) {
	srv := redistest.Start(t)
	const lockWait = 2 * time.Second
	prefix := fmt.Sprintf("nflw%d", time.Now().UnixNano()%1e9)
	mk := func() (*indexEdge, *faultyBackend) {
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
		t.Cleanup(func() { _ = rdb.Close() })
		e, fb, _ := faultyEdge(t, nil, cache.Options{Redis: rdb, Prefix: prefix, LockWait: lockWait, RedisTimeout: 5 * time.Second})
		return e, fb
	}
	a, _ := mk()
	b, fbB := mk()
	// Both know the dealer's generation from Redis before the race.
	for _, e := range []*indexEdge{a, b} {
		if st, body := e.body(t, "/dealer/REWIND/details?id_auto=11111111-1111-4111-8111-111111111111", "demo-key-alpha"); st != 404 {
			t.Fatalf("warm-up: %d %s", st, body)
		}
	}
	a.fk.SetLatency(upstream.SvcInventory, 300*time.Millisecond)
	done := make(chan int)
	go func() { st, _ := a.body(t, unknownVehicle, "demo-key-alpha"); done <- st }()
	time.Sleep(100 * time.Millisecond) // a holds the fill lock, in its inventory call
	calls := fbB.vehicleCalls.Load()
	start := time.Now()
	ctx := b.request(unknownVehicle, "demo-key-alpha")
	took := time.Since(start)
	if st := <-done; st != 404 {
		t.Fatalf("a: %d", st)
	}
	t.Logf("b waited %v (lock_wait %v)", took, lockWait)
	if ctx.Response.StatusCode() != 404 {
		t.Fatalf("b: %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
	if got := fbB.vehicleCalls.Load() - calls; got != 0 {
		t.Errorf("b made %d inventory calls", got)
	}
	if took >= lockWait {
		t.Errorf("b took %v: it waited out lock_wait (%v) for a response a's 404 never stores", took, lockWait)
	}
}

// TestNotFoundReviewSoldAcrossInstances: a vehicle sold while its
// response is stale within stale-while-revalidate, on two instances over
// one Redis. The instance whose refresh learns the 404 answers the
// remembered 404 from then on; the other answers it as soon as its own
// refresh (started by its next stale answer) has found the fact in Redis
// (and kept it in L1), not only once the response's stale-while-revalidate
// window ends.
func TestNotFoundReviewSoldAcrossInstances(t *testing.T) {
	srv := redistest.Start(t)
	prefix := fmt.Sprintf("nfsold%d", time.Now().UnixNano()%1e9)
	clock := newNFClock()
	mk := func() (*indexEdge, *faultyBackend) {
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
		t.Cleanup(func() { _ = rdb.Close() })
		e, fb, _ := faultyEdge(t, clock, cache.Options{Redis: rdb, Prefix: prefix, RedisTimeout: 5 * time.Second})
		return e, fb
	}
	a, fbA := mk()
	b, fbB := mk()
	uri, id := knownVehicle(t, a, "demo-key-alpha")
	for name, e := range map[string]*indexEdge{"a": a, "b": b} {
		if st, _ := e.body(t, uri, "demo-key-alpha"); st != 200 {
			t.Fatalf("%s: first request %d", name, st)
		}
	}
	fbA.hide(id, true)
	fbB.hide(id, true)
	pol := DefaultSettings().Cache[RouteInventoryDetails]
	clock.add(pol.TTL + pol.StaleWhileRevalidate/2) // stale, within stale-while-revalidate
	// until waits for e to answer 404 (its background refresh ran), and
	// returns the statuses it answered before.
	until := func(name string, e *indexEdge) []int {
		var seen []int
		deadline := time.Now().Add(3 * time.Second)
		for time.Now().Before(deadline) {
			st, _ := e.body(t, uri, "demo-key-alpha")
			if st == 404 {
				return seen
			}
			seen = append(seen, st)
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("%s: no 404 within 3 s of real time (still within stale-while-revalidate): %v", name, seen)
		return nil
	}
	t.Logf("a answered %v before the 404", until("a", a))
	calls := fbB.vehicleCalls.Load()
	t.Logf("b answered %v before the 404", until("b", b))
	if got := fbB.vehicleCalls.Load() - calls; got != 0 {
		t.Errorf("b made %d inventory calls: its refresh did not find a's fact", got)
	}
}

// TestNotFoundReviewReloadOff: a reload that sets not_found_ttl to 0
// stops the remembered 404s at once (the next request calls the service),
// and one that shortens it below a fact's age ends that fact at once too.
func TestNotFoundReviewReloadOff(t *testing.T) {
	for _, c := range []struct {
		name  string
		ttl   time.Duration
		age   time.Duration
		calls int64
	}{
		{"0s", 0, 0, 1},
		{"shorter than the fact's age", 2 * time.Second, 3 * time.Second, 1},
		{"longer than the fact's age", 5 * time.Second, 3 * time.Second, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := newNFClock()
			e, _ := notFoundEdge(t, clock, nil)
			for range 2 {
				if st, _ := e.body(t, unknownVehicle, "demo-key-alpha"); st != 404 {
					t.Fatal("not 404")
				}
			}
			clock.add(c.age)
			st := DefaultSettings()
			st.NotFoundTTL[RouteInventoryDetails] = c.ttl
			if err := e.s.UpdateSettings(st); err != nil {
				t.Fatal(err)
			}
			inv0 := e.invCalls()
			if st, _ := e.body(t, unknownVehicle, "demo-key-alpha"); st != 404 {
				t.Fatal("not 404 after the reload")
			}
			if got := e.invCalls() - inv0; got != c.calls {
				t.Errorf("after the reload: %d inventory calls, want %d", got, c.calls)
			}
		})
	}
}

// TestNotFoundReviewSoldStaysGone: a sold vehicle whose response is
// within stale-while-revalidate is served stale once (the window's
// promise: a stale answer first, its refresh behind it), and from the
// moment that refresh finds the 404 never again: not after the
// remembered "not found" ends (the stale 200 used to come back then, once
// per not_found_ttl, until the windows ran out), not with not_found_ttl
// off, not from Redis (the entry is deleted there too, so another
// instance or a restart does not find it). Subtests: with and without a
// remembered "not found", with L1 alone and with Redis.
func TestNotFoundReviewSoldStaysGone(t *testing.T) {
	for _, c := range []struct {
		name       string
		notFoundOn bool
		redis      bool
	}{
		{"remembered not found", true, false},
		{"not_found_ttl 0", false, false},
		{"remembered not found, Redis", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := newNFClock()
			var copts cache.Options
			if c.redis {
				srv := redistest.Start(t)
				rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
				t.Cleanup(func() { _ = rdb.Close() })
				copts.Redis, copts.RedisTimeout = rdb, 5*time.Second
				copts.Prefix = fmt.Sprintf("nfsg%d", time.Now().UnixNano()%1e9)
			}
			e, fb, cc := faultyEdge(t, clock, copts)
			if !c.notFoundOn {
				st := DefaultSettings()
				st.NotFoundTTL[RouteInventoryDetails] = 0
				if err := e.s.UpdateSettings(st); err != nil {
					t.Fatal(err)
				}
			}
			uri, id := knownVehicle(t, e, "demo-key-alpha")
			if st, _ := e.body(t, uri, "demo-key-alpha"); st != 200 {
				t.Fatal("first request not 200")
			}
			fb.hide(id, true) // sold
			pol := DefaultSettings().Cache[RouteInventoryDetails]
			clock.add(pol.TTL + time.Second) // within stale-while-revalidate
			var seen []int
			next := func() int {
				st, _ := e.body(t, uri, "demo-key-alpha")
				seen = append(seen, st)
				return st
			}
			deadline := time.Now().Add(3 * time.Second)
			for next() != 404 { // the stale answer, until its refresh ends
				if time.Now().After(deadline) {
					t.Fatalf("no 404: %v", seen)
				}
				time.Sleep(10 * time.Millisecond)
			}
			// The fill records the fact before it returns, and the cache
			// drops the entry once it has: the 404 above may come from the
			// fact while the refresh is still dropping the entry (its Redis
			// DEL under -race). Wait for the refresh to end.
			for st := cc.Stats(); st.Dropped == 0 || st.RefreshesInFlight > 0; st = cc.Stats() {
				if time.Now().After(deadline) {
					t.Fatalf("the refresh did not drop the entry: %+v", st)
				}
				time.Sleep(5 * time.Millisecond)
			}
			for range 3 {
				clock.add(DefaultNotFoundTTL) // the fact ends; the response would be within stale-while-revalidate
				for range 3 {
					if st := next(); st != 404 {
						t.Fatalf("answers %v: a 200 after the 404 (the stale entry served again)", seen)
					}
				}
			}
			if got := cc.Stats().Dropped; got == 0 {
				t.Errorf("Dropped %d, want at least 1", got)
			}
		})
	}
}
