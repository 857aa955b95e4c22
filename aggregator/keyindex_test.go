package aggregator

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// indexEdge is an edge with a key index fed by a fake dealers service over
// loopback.
type indexEdge struct {
	s   *Server
	fk  *fake.Server
	now time.Time
}

func newIndexEdge(t *testing.T, fo fake.Options, tune func(*Settings), withFeed bool, more ...func(*Options)) *indexEdge {
	t.Helper()
	fk := fake.NewServer(fo)
	addr, err := fk.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fk.Close)
	up, err := upstream.New(upstream.Options{BaseURL: "http://" + addr, Breaker: upstream.BreakerSettings{ConsecutiveFailures: 1 << 30}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(up.Close)
	c, err := cache.New(cache.Options{ServeStaleOn: ServeStaleOn})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	st := DefaultSettings()
	if tune != nil {
		tune(st)
	}
	e := &indexEdge{fk: fk}
	opts := Options{Backend: up, Cache: c, KeySecret: []byte("index-test-secret-0123"), Settings: st}
	if withFeed {
		opts.KeyFeed = up
	}
	for _, f := range more {
		f(&opts)
	}
	e.s, err = New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// get requests the FAQ listing with key (none when "") from client
// address 192.0.2.1 and returns the status.
func (e *indexEdge) get(key string) int {
	st, _ := e.from("192.0.2.1", "/dealer/content/faq/listing", key)
	return st
}

// from requests uri with key (none when "") from TCP peer addr, with
// extra headers (name, value pairs); it returns the status and the
// Retry-After header.
func (e *indexEdge) from(addr, uri, key string, hdr ...string) (int, string) {
	var req fasthttp.Request
	req.SetRequestURI(uri)
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	var ctx fasthttp.RequestCtx
	ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP(addr), Port: 40000}, nil)
	e.s.Handler()(&ctx)
	return ctx.Response.StatusCode(), string(ctx.Response.Header.Peek("Retry-After"))
}

func (e *indexEdge) sync(t *testing.T) {
	t.Helper()
	if err := e.s.SyncKeyIndex(context.Background()); err != nil {
		t.Fatalf("sync: %v", err)
	}
}

func TestKeyIndexDecidesWithoutLookups(t *testing.T) {
	e := newIndexEdge(t, fake.Options{}, nil, true)
	e.sync(t)
	if st := e.s.AuthStats(); st.IndexState != IndexFresh || st.IndexKeys != int64(len(fake.DemoKeys)+fake.BenchKeys-1) {
		t.Fatalf("after the snapshot: %+v (want fresh, every active key)", st)
	}
	// Warm the dealer profiles, then count: hits and misses alike cost
	// the dealers service nothing.
	for _, k := range []string{"demo-key-alpha", "demo-key-beta", "demo-key-gamma", "demo-key-orphan"} {
		e.get(k)
	}
	before := e.fk.Calls(upstream.SvcDealers)
	for _, c := range []struct {
		name, key string
		want      int
	}{
		{"active", "demo-key-alpha", 200},
		{"active, future expiry", "demo-key-beta", 200},
		{"bench key", fake.BenchKey(7), 200},
		{"expired", "demo-key-expired", 401},
		{"revoked", "demo-key-revoked", 401},
		{"orphan", "demo-key-orphan", 404},
		{"unknown", "no-such-key-at-all", 401},
	} {
		for range 3 {
			if got := e.get(c.key); got != c.want {
				t.Errorf("%s: %d, want %d", c.name, got, c.want)
			}
		}
	}
	for i := range 1000 {
		if got := e.get(fmt.Sprintf("random-%d", i)); got != 401 {
			t.Fatalf("random key: %d", got)
		}
	}
	if n := e.fk.Calls(upstream.SvcDealers) - before; n != 0 {
		t.Fatalf("%d dealers-service calls for index hits and misses; want 0", n)
	}
	if st := e.s.AuthStats(); st.IndexMisses < 1000 || st.Lookups[LookupNoIndex] != 0 {
		t.Fatalf("stats: %+v", st)
	}
}

func TestKeyIndexChangesWithinOneInterval(t *testing.T) {
	e := newIndexEdge(t, fake.Options{}, nil, true)
	e.sync(t)
	if got := e.get("fresh-key-1"); got != 401 {
		t.Fatalf("before it exists: %d", got)
	}
	if err := e.fk.AddKey("fresh-key-1", 102, fake.PlanDefault, nil); err != nil {
		t.Fatal(err)
	}
	// Revoke one key that the edge has cached as valid, expire another.
	for _, k := range []string{"demo-key-alpha", "demo-key-gamma"} {
		if got := e.get(k); got != 200 {
			t.Fatalf("%s before: %d", k, got)
		}
	}
	e.fk.RevokeKey("demo-key-alpha")
	e.fk.ExpireKey("demo-key-gamma")
	e.sync(t) // the next interval's sync
	for _, c := range []struct {
		key  string
		want int
	}{{"fresh-key-1", 200}, {"demo-key-alpha", 401}, {"demo-key-gamma", 401}, {"demo-key-beta", 200}} {
		if got := e.get(c.key); got != c.want {
			t.Errorf("%s after one sync: %d, want %d", c.key, got, c.want)
		}
	}
	// The change feed's cursor is lost (the service restarted without its
	// log): 410, then a full snapshot; state stays right.
	e.fk.ResetKeyLog()
	e.fk.RevokeKey("fresh-key-1")
	e.sync(t)
	if got, st := e.get("fresh-key-1"), e.s.AuthStats(); got != 401 || st.IndexResync != 1 {
		t.Fatalf("after a 410 resync: %d, %+v", got, st)
	}
}

func TestKeyIndexRunLoop(t *testing.T) {
	e := newIndexEdge(t, fake.Options{}, func(s *Settings) { s.IndexInterval = 20 * time.Millisecond; s.IndexStaleAfter = time.Second }, true)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.s.RunKeyIndex(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	_ = e.fk.AddKey("loop-key", 101, "", nil)
	deadline := time.Now().Add(10 * time.Second)
	for e.get("loop-key") != 200 {
		if time.Now().After(deadline) {
			t.Fatalf("key added at the fake never accepted: %+v", e.s.AuthStats())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestDealersDownAtStartFallsBackUnderBudget(t *testing.T) {
	e := newIndexEdge(t, fake.Options{}, func(s *Settings) { s.LookupRate = 0.001; s.LookupBurst = 5 }, true)
	e.fk.SetDown(upstream.SvcDealers, true)
	if err := e.s.SyncKeyIndex(context.Background()); err == nil {
		t.Fatal("sync with the dealers service down succeeded")
	}
	if st := e.s.AuthStats(); st.IndexState != IndexLoading {
		t.Fatalf("state %q", st.IndexState)
	}
	e.fk.SetDown(upstream.SvcDealers, false)
	before := e.fk.Calls(upstream.SvcDealers)
	// A valid key resolves by lookup (key + dealer profile: 2 calls).
	if got := e.get("demo-key-alpha"); got != 200 {
		t.Fatalf("valid key by lookup: %d", got)
	}
	// Unknown keys spend the rest of the budget (4 lookups), then get 503
	// with no lookup at all.
	codes := map[int]int{}
	for i := range 200 {
		codes[e.get(fmt.Sprintf("spray-%d", i))]++
	}
	if codes[401] != 4 || codes[503] != 196 {
		t.Fatalf("spray answers %v; want 4x401 then 503", codes)
	}
	if n := e.fk.Calls(upstream.SvcDealers) - before; n != 2+4 {
		t.Fatalf("%d dealers calls; want 6", n)
	}
	// The known-valid key keeps working with the budget spent.
	if got := e.get("demo-key-alpha"); got != 200 {
		t.Fatalf("known key over budget: %d", got)
	}
	if st := e.s.AuthStats(); st.Lookups[LookupBudgetExceeded] != 196 || st.Lookups[LookupNoIndex] != 5 {
		t.Fatalf("lookup stats %+v", st.Lookups)
	}
}

func TestDealersDownLaterKeepsIndexThenFallsBack(t *testing.T) {
	e := newIndexEdge(t, fake.Options{}, func(s *Settings) {
		s.IndexInterval = time.Second
		s.IndexStaleAfter = 2 * time.Second
		s.AuthStale = 3 * time.Second
	}, true)
	now := time.Now()
	e.s.now, e.s.realClock = func() time.Time { return now }, false
	e.s.index.now = e.s.now
	e.sync(t)
	if got := e.get("demo-key-beta"); got != 200 {
		t.Fatalf("warm: %d", got)
	}
	e.fk.SetDown(upstream.SvcDealers, true)
	step := func(d time.Duration, wantState string) {
		t.Helper()
		now = now.Add(d)
		if err := e.s.SyncKeyIndex(context.Background()); err == nil {
			t.Fatal("sync succeeded with the service down")
		}
		if st := e.s.AuthStats(); st.IndexState != wantState {
			t.Fatalf("after %v: state %q, want %q", d, st.IndexState, wantState)
		}
	}
	step(time.Second, IndexFresh) // within the bound: the index still decides
	if e.get("demo-key-beta") != 200 || e.get("unknown-1") != 401 {
		t.Fatal("fresh index with the service down")
	}
	step(2*time.Second, IndexStale) // 3s old: stale
	if got := e.get("demo-key-beta"); got != 200 {
		t.Fatalf("stale index hit: %d", got)
	}
	if got := e.get("unknown-2"); got != 503 {
		t.Fatalf("stale index miss with the service down: %d (a lookup that failed)", got)
	}
	if st := e.s.AuthStats(); st.Lookups[LookupIndexStale] != 1 {
		t.Fatalf("lookups %+v", st.Lookups)
	}
	step(3*time.Second, IndexGone) // 6s: beyond stale_after + auth.stale
	e.fk.SetDown(upstream.SvcDealers, false)
	if got := e.get("demo-key-gamma"); got != 200 {
		t.Fatalf("by lookup with the index expired: %d", got)
	}
	e.sync(t)
	if st := e.s.AuthStats(); st.IndexState != IndexFresh {
		t.Fatalf("after recovery: %q", st.IndexState)
	}
}
