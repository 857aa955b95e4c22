package cache

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/redis/go-redis/v9"
)

var errUpstream = errors.New("upstream: service unavailable")

// TestTransitions walks one key through miss, hit, stale (with one background
// refresh), stale-if-error and expiry on a fake clock, with and without L2.
func TestTransitions(t *testing.T) {
	pol := Policy{TTL: 10 * time.Second, StaleWhileRevalidate: 5 * time.Second, StaleIfError: time.Minute}
	type step struct {
		name      string
		advance   time.Duration
		body      string // what the fill returns from now on
		fillErr   error
		want      Result
		wantBody  string
		wantErr   error
		wantFills int64 // fill calls so far, after background refreshes settled
	}
	steps := []step{
		{name: "first get misses", body: "v1", want: Miss, wantBody: "v1", wantFills: 1},
		{name: "fresh hit", advance: 9 * time.Second, want: Hit, wantBody: "v1", wantFills: 1},
		{name: "stale within swr refreshes once", advance: 2 * time.Second, body: "v2", want: Stale, wantBody: "v1", wantFills: 2},
		{name: "refreshed entry hits", want: Hit, wantBody: "v2", wantFills: 2},
		{name: "past swr fill fails: stale-if-error", advance: 20 * time.Second, fillErr: errUpstream, want: Stale, wantBody: "v2", wantFills: 3},
		{name: "still failing within error window", advance: 30 * time.Second, fillErr: errUpstream, want: Stale, wantBody: "v2", wantFills: 4},
		{name: "past error window the error is returned", advance: 30 * time.Second, fillErr: errUpstream, want: Miss, wantErr: errUpstream, wantFills: 5},
		{name: "upstream back: miss", body: "v3", want: Miss, wantBody: "v3", wantFills: 6},
		{name: "hit again", advance: time.Second, want: Hit, wantBody: "v3", wantFills: 6},
	}
	for _, withRedis := range []bool{false, true} {
		t.Run(fmt.Sprintf("redis=%v", withRedis), func(t *testing.T) {
			clock := newFakeClock()
			opts := Options{Now: clock.Now}
			if withRedis {
				_, opts.Redis = newMiniRedis(t)
			}
			c := newCache(t, opts)
			f := newFiller("")
			for _, s := range steps {
				clock.Advance(s.advance)
				f.set(s.body, s.fillErr)
				e, res, err := c.Get(context.Background(), 7, []byte("/v1/vehicles?page=1"), pol, f.fill)
				waitRefreshes(t, c)
				if res != s.want || !errors.Is(err, s.wantErr) {
					t.Fatalf("%s: got %v, %v; want %v, %v", s.name, res, err, s.want, s.wantErr)
				}
				if s.wantErr == nil && string(e.Body()) != s.wantBody {
					t.Fatalf("%s: body %q, want %q", s.name, e.Body(), s.wantBody)
				}
				if got := f.calls.Load(); got != s.wantFills {
					t.Fatalf("%s: %d fills, want %d", s.name, got, s.wantFills)
				}
			}
			st := c.Stats()
			if st.Refreshes != 1 || st.StaleOnError != 2 {
				t.Errorf("stats: %+v", st)
			}
		})
	}
}

func TestBypass(t *testing.T) {
	_, rc := newMiniRedis(t)
	c := newCache(t, Options{Redis: rc})
	f := newFiller("live")
	for i := 0; i < 3; i++ {
		e, res := mustGet(t, c, 1, "/v1/live", Policy{TTL: 0, StaleIfError: time.Hour}, f.fill)
		if res != Bypass || string(e.Body()) != "live" || e.ETag == "" || e.MaxAge(time.Now()) != 0 {
			t.Fatalf("get %d: %v %q %q", i, res, e.Body(), e.ETag)
		}
	}
	if f.calls.Load() != 3 || c.Stats().L1Entries != 0 {
		t.Fatalf("fills %d, stats %+v", f.calls.Load(), c.Stats())
	}
	f.set("", errUpstream)
	if _, res, err := c.Get(context.Background(), 1, []byte("/v1/live"), Policy{}, f.fill); res != Bypass || !errors.Is(err, errUpstream) {
		t.Fatalf("bypass error: %v %v", res, err)
	}
}

func TestServeStaleOn(t *testing.T) {
	errNotFound := errors.New("upstream: not found")
	pol := Policy{TTL: time.Second, StaleIfError: time.Hour}
	cases := []struct {
		name    string
		fillErr error
		want    Result
		wantErr error
	}{
		{"server error serves stale", errUpstream, Stale, nil},
		{"not found is not hidden", errNotFound, Miss, errNotFound},
		{"deadline serves stale", context.DeadlineExceeded, Stale, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			c := newCache(t, Options{Now: clock.Now, ServeStaleOn: func(err error) bool { return !errors.Is(err, errNotFound) }})
			f := newFiller("old")
			mustGet(t, c, 1, "/k", pol, f.fill)
			clock.Advance(2 * time.Second)
			f.set("", tc.fillErr)
			e, res, err := c.Get(context.Background(), 1, []byte("/k"), pol, f.fill)
			if res != tc.want || !errors.Is(err, tc.wantErr) {
				t.Fatalf("got %v %v, want %v %v", res, err, tc.want, tc.wantErr)
			}
			if tc.wantErr == nil && string(e.Body()) != "old" {
				t.Fatalf("body %q", e.Body())
			}
		})
	}
}

// TestStaleWhileFillHangs: a waiter whose context ends while the fill hangs
// gets the stale entry within its stale-if-error window.
func TestStaleWhileFillHangs(t *testing.T) {
	clock := newFakeClock()
	c := newCache(t, Options{Now: clock.Now, RefreshTimeout: time.Second})
	pol := Policy{TTL: time.Second, StaleIfError: time.Hour}
	mustGet(t, c, 1, "/k", pol, newFiller("old").fill)
	clock.Advance(2 * time.Second)
	release := make(chan struct{})
	defer close(release)
	hang := func(ctx context.Context) ([]byte, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil, errUpstream
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	e, res, err := c.Get(ctx, 1, []byte("/k"), pol, hang)
	if err != nil || res != Stale || string(e.Body()) != "old" {
		t.Fatalf("got %v %v", res, err)
	}
}

func TestPolicyShortenedAtRuntime(t *testing.T) {
	clock := newFakeClock()
	c := newCache(t, Options{Now: clock.Now})
	f := newFiller("a")
	long := Policy{TTL: time.Hour}
	short := Policy{TTL: 5 * time.Second}
	e, _ := mustGet(t, c, 1, "/k", long, f.fill)
	clock.Advance(10 * time.Second)
	if _, res := mustGet(t, c, 1, "/k", long, f.fill); res != Hit {
		t.Fatalf("long policy: %v", res)
	}
	if got := short.MaxAge(e, clock.Now()); got != 0 {
		t.Fatalf("short MaxAge = %d", got)
	}
	if _, res := mustGet(t, c, 1, "/k", short, f.fill); res != Miss {
		t.Fatalf("shortened policy: %v, want MISS", res)
	}
}

// TestCoalescing: 100 concurrent identical misses make exactly one fill.
func TestCoalescing(t *testing.T) {
	for _, withRedis := range []bool{false, true} {
		t.Run(fmt.Sprintf("redis=%v", withRedis), func(t *testing.T) {
			const n = 100
			opts := Options{}
			if withRedis {
				_, opts.Redis = newMiniRedis(t)
			}
			c := newCache(t, opts)
			var joined sync.WaitGroup
			joined.Add(n)
			c.testHookJoin = joined.Done
			release := make(chan struct{})
			var fills int64
			var mu sync.Mutex
			fill := func(ctx context.Context) ([]byte, error) {
				mu.Lock()
				fills++
				mu.Unlock()
				<-release
				return []byte("body"), nil
			}
			var wg sync.WaitGroup
			entries := make([]*Entry, n)
			errs := make([]error, n)
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					entries[i], _, errs[i] = c.Get(context.Background(), 3, []byte("/v1/news"), Policy{TTL: time.Minute}, fill)
				}()
			}
			joined.Wait() // every caller is in (or waiting on) the one flight
			close(release)
			wg.Wait()
			for i := range n {
				if errs[i] != nil || entries[i] != entries[0] {
					t.Fatalf("caller %d: %v (entry %p vs %p)", i, errs[i], entries[i], entries[0])
				}
			}
			st := c.Stats()
			if fills != 1 || st.Fills != 1 || st.Coalesced != n-1 || st.Misses != n {
				t.Fatalf("fills %d, stats %+v", fills, st)
			}
			t.Logf("%d concurrent misses: %d fill, %d coalesced", n, st.Fills, st.Coalesced)
		})
	}
}

// TestCoalescingWaiterGivesUp: a waiter with a short deadline leaves; the
// fill continues for the others.
func TestCoalescingWaiterGivesUp(t *testing.T) {
	c := newCache(t, Options{})
	release := make(chan struct{})
	started := make(chan struct{})
	fill := func(ctx context.Context) ([]byte, error) {
		close(started)
		<-release
		return []byte("x"), ctx.Err()
	}
	pol := Policy{TTL: time.Minute}
	done := make(chan error, 1)
	go func() {
		_, _, err := c.Get(context.Background(), 1, []byte("/k"), pol, fill)
		done <- err
	}()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, _, err := c.Get(ctx, 1, []byte("/k"), pol, fill); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("impatient waiter: %v", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("first caller: %v", err)
	}
}

// TestCoalescingAcrossInstances: two instances sharing Redis with the fill
// lock make one fill between them.
func TestCoalescingAcrossInstances(t *testing.T) {
	_, rc := newMiniRedis(t)
	const per = 20
	var joined sync.WaitGroup
	joined.Add(2 * per)
	var fills sync.Map
	release := make(chan struct{})
	var caches []*Cache
	for i := 0; i < 2; i++ {
		c := newCache(t, Options{Redis: rc, LockWait: 2 * time.Second, LockTTL: 5 * time.Second})
		c.testHookJoin = joined.Done
		caches = append(caches, c)
	}
	var nfill sync.WaitGroup
	fill := func(ctx context.Context) ([]byte, error) {
		fills.Store(time.Now().UnixNano(), true)
		<-release
		return []byte("shared"), nil
	}
	var wg sync.WaitGroup
	for _, c := range caches {
		for range per {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e, _, err := c.Get(context.Background(), 9, []byte("/v1/faq"), Policy{TTL: time.Minute}, fill)
				if err != nil || string(e.Body()) != "shared" {
					t.Errorf("get: %v", err)
				}
			}()
		}
	}
	joined.Wait()
	time.Sleep(50 * time.Millisecond) // the second instance is now waiting on the lock
	close(release)
	wg.Wait()
	nfill.Wait()
	total := 0
	fills.Range(func(any, any) bool { total++; return true })
	a, b := caches[0].Stats(), caches[1].Stats()
	if total != 1 || a.Fills+b.Fills != 1 || a.LockWaitHits+b.LockWaitHits != 1 {
		t.Fatalf("fills %d; stats a=%+v b=%+v", total, a, b)
	}
}

// TestPurgeAcrossInstances: a purge on A makes B miss too (its L1 is
// dropped through pub/sub), and other dealers are untouched.
func TestPurgeAcrossInstances(t *testing.T) {
	_, rc := newMiniRedis(t)
	a := newCache(t, Options{Redis: rc})
	b := newCache(t, Options{Redis: rc})
	waitFor(t, "subscriptions", func() bool { return a.Stats().PubSubUp && b.Stats().PubSubUp })
	pol := Policy{TTL: time.Hour}
	f := newFiller("v1")
	for _, d := range []int64{1, 2} {
		if _, res := mustGet(t, a, d, "/k", pol, f.fill); res != Miss {
			t.Fatalf("a dealer %d: %v", d, res)
		}
		if _, res := mustGet(t, b, d, "/k", pol, f.fill); res != Hit {
			t.Fatalf("b dealer %d from L2: %v", d, res)
		}
		if _, res := mustGet(t, b, d, "/k", pol, f.fill); res != Hit || b.Stats().L1Hits == 0 {
			t.Fatalf("b dealer %d from L1: %v", d, res)
		}
	}
	f.set("v2", nil)
	if err := a.PurgeDealer(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if e, res := mustGet(t, a, 1, "/k", pol, f.fill); res != Miss || string(e.Body()) != "v2" {
		t.Fatalf("a after purge: %v %q", res, e.Body())
	}
	waitFor(t, "b's L1 to drop dealer 1", func() bool { n, _ := b.l1.lookup(1, []byte("/k")); return n == nil })
	// B now finds A's new entry in L2 under the new generation.
	if e, res := mustGet(t, b, 1, "/k", pol, f.fill); res != Hit || string(e.Body()) != "v2" {
		t.Fatalf("b after purge: %v %q", res, e.Body())
	}
	for _, c := range []*Cache{a, b} {
		if e, res := mustGet(t, c, 2, "/k", pol, f.fill); res != Hit || string(e.Body()) != "v1" {
			t.Fatalf("dealer 2 after purging dealer 1: %v %q", res, e.Body())
		}
	}
}

// TestResyncWithoutPubSub: a generation bumped in Redis without a message
// (lost publish) is picked up by the resync the poll runs while the
// subscription is down.
func TestResyncWithoutPubSub(t *testing.T) {
	_, rc := newMiniRedis(t)
	c := newCache(t, Options{Redis: rc})
	// The resync of the subscription's confirmation must not be the one
	// that finds the bump (it began before dealer 5 was known).
	waitFor(t, "subscription", func() bool { return c.Stats().PubSubUp })
	pol := Policy{TTL: time.Hour}
	mustGet(t, c, 5, "/k", pol, newFiller("x").fill)
	if err := rc.Incr(context.Background(), c.genKey(5)).Err(); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.l1.lookup(5, []byte("/k")); n == nil {
		t.Fatal("entry should still be in L1 before the resync")
	}
	c.resync(context.Background())
	if _, res := mustGet(t, c, 5, "/k", pol, newFiller("y").fill); res != Miss {
		t.Fatalf("after resync: %v", res)
	}
}

// TestPurgeRacesFill: an entry filled under the old generation is not put in
// L1 after the purge.
func TestPurgeRacesFill(t *testing.T) {
	c := newCache(t, Options{})
	started, release := make(chan struct{}), make(chan struct{})
	fill := func(context.Context) ([]byte, error) {
		close(started)
		<-release
		return []byte("pre-purge"), nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Get(context.Background(), 1, []byte("/k"), Policy{TTL: time.Hour}, fill)
	}()
	<-started
	if err := c.PurgeDealer(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	close(release)
	<-done
	if _, res := mustGet(t, c, 1, "/k", Policy{TTL: time.Hour}, newFiller("post").fill); res != Miss {
		t.Fatalf("entry filled before the purge survived it: %v", res)
	}
}

// TestDealerIsolation: the same route of two dealers never shares an entry,
// in L1, in L2, or through a purge.
func TestDealerIsolation(t *testing.T) {
	mr, rc := newMiniRedis(t)
	pol := Policy{TTL: time.Hour}
	a := newCache(t, Options{Redis: rc})
	cases := []struct {
		name   string
		dealer int64
		body   string
	}{
		{"dealer 1", 1, "secret of dealer 1"},
		{"dealer 2", 2, "secret of dealer 2"},
		{"dealer 12 (prefix of none)", 12, "secret of dealer 12"},
		{"dealer -1", -1, "secret of dealer -1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if e, res := mustGet(t, a, tc.dealer, "/v1/inventory?page=1", pol, newFiller(tc.body).fill); res != Miss || string(e.Body()) != tc.body {
				t.Fatalf("first get: %v %q", res, e.Body())
			}
		})
	}
	b := newCache(t, Options{Redis: rc}) // cold L1: reads L2
	for _, c := range []*Cache{a, b} {
		for _, tc := range cases {
			e, res := mustGet(t, c, tc.dealer, "/v1/inventory?page=1", pol, newFiller("must not fill").fill)
			if res != Hit || string(e.Body()) != tc.body {
				t.Fatalf("%s: got %v %q", tc.name, res, e.Body())
			}
		}
	}
	for _, k := range mr.Keys() {
		if strings.HasSuffix(k, ":purge") || k == a.epochKey() {
			continue // the purge channel and epoch: global, no dealer's
		}
		if !strings.HasPrefix(k, "edge:v1:{d") {
			t.Fatalf("key %q has no dealer hash tag", k)
		}
	}
}

func TestRedisDownAndBack(t *testing.T) {
	mr, rc := newMiniRedis(t)
	logs := &logRecorder{}
	c := newCache(t, Options{Redis: rc, Logger: slogNew(logs), RedisTimeout: 200 * time.Millisecond})
	pol := Policy{TTL: time.Hour}
	mustGet(t, c, 1, "/warm", pol, newFiller("w").fill)
	mr.Close()
	start := time.Now()
	for i := 0; i < 200; i++ {
		key := fmt.Sprintf("/k%d", i%20)
		if _, _, err := c.Get(context.Background(), 1, []byte(key), pol, newFiller("x").fill); err != nil {
			t.Fatalf("get %d with redis down: %v", i, err)
		}
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("200 gets with redis down took %v", d)
	}
	if c.RedisHealthy() {
		t.Fatal("redis should be marked down")
	}
	if _, res := mustGet(t, c, 1, "/warm", pol, newFiller("w2").fill); res != Hit {
		t.Fatalf("L1 entry lost while redis is down: %v", res)
	}
	if err := mr.Restart(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "redis back", c.RedisHealthy)
	// One line per state change, not per request (200 requests failed over).
	downs := int(c.Stats().RedisDownEvents)
	if n := logs.count("redis unavailable"); n != downs || n < 1 || n > 2 {
		t.Fatalf("logged down %d times for %d transitions", n, downs)
	}
	if n := logs.count("redis available again"); n != downs {
		t.Fatalf("logged up %d times for %d transitions", n, downs)
	}
	// L2 is written again.
	mustGet(t, c, 1, "/after", pol, newFiller("a").fill)
	waitFor(t, "entry in redis", func() bool {
		for _, k := range mr.Keys() {
			if strings.HasSuffix(k, ":/after") {
				return true
			}
		}
		return false
	})
}

// TestRedisTimeoutBudget: a Redis that accepts connections but never answers
// costs one request at most the budget, and the others nothing.
func TestRedisTimeoutBudget(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			cn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, cn) // hold it open, never reply
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		for _, cn := range conns {
			cn.Close()
		}
		mu.Unlock()
	}()
	// A client with no context timeouts and long socket timeouts: the cache
	// must bound the call itself.
	rc := newClientSlow(t, ln.Addr().String())
	c := newCache(t, Options{Redis: rc, RedisTimeout: 30 * time.Millisecond})
	pol := Policy{TTL: time.Hour}
	start := time.Now()
	mustGet(t, c, 1, "/a", pol, newFiller("a").fill)
	if d := time.Since(start); d > 300*time.Millisecond {
		t.Fatalf("first get took %v with a 30ms budget", d)
	}
	start = time.Now()
	for i := 0; i < 50; i++ {
		mustGet(t, c, 1, fmt.Sprintf("/b%d", i), pol, newFiller("b").fill)
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Fatalf("50 gets with redis marked down took %v", d)
	}
}

func TestL1Eviction(t *testing.T) {
	const maxBytes = 64 << 10
	c := newCache(t, Options{L1MaxBytes: maxBytes})
	pol := Policy{TTL: time.Hour}
	body := strings.Repeat("x", 1000)
	hot := "/hot"
	for i := 0; i < 500; i++ {
		mustGet(t, c, 1, hot, pol, newFiller(body).fill)
		mustGet(t, c, int64(i%7), fmt.Sprintf("/cold/%d", i), pol, newFiller(body).fill)
	}
	st := c.Stats()
	if st.L1Bytes > maxBytes || st.Evictions == 0 || st.L1Entries == 0 {
		t.Fatalf("stats %+v", st)
	}
	if _, res := mustGet(t, c, 1, hot, pol, newFiller(body).fill); res != Hit {
		t.Fatalf("hot entry evicted: %v", res)
	}
	big := strings.Repeat("y", maxBytes/4)
	mustGet(t, c, 1, "/big", pol, newFiller(big).fill)
	if n, _ := c.l1.lookup(1, []byte("/big")); n != nil {
		t.Fatal("an entry larger than an eighth of L1 was kept")
	}
	c.l1.dropDealer(1)
	for i := range c.l1.shards {
		for _, n := range c.l1.shards[i].ring {
			if n.dealer == 1 {
				t.Fatal("dropDealer left an entry in the ring")
			}
		}
	}
}

func TestL1Disabled(t *testing.T) {
	c := newCache(t, Options{L1MaxBytes: -1})
	f := newFiller("a")
	mustGet(t, c, 1, "/k", Policy{TTL: time.Hour}, f.fill)
	if _, res := mustGet(t, c, 1, "/k", Policy{TTL: time.Hour}, f.fill); res != Miss || f.calls.Load() != 2 {
		t.Fatalf("L1 disabled and no redis: %v after %d fills", res, f.calls.Load())
	}
}

func TestEntry(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	e := newEntry([]byte("hello"), now, Policy{TTL: 90 * time.Second, StaleWhileRevalidate: 10 * time.Second, StaleIfError: 5 * time.Second})
	want := fmt.Sprintf("\"%016x\"", xxhash.Sum64String("hello"))
	if e.ETag != want {
		t.Fatalf("etag %s, want %s", e.ETag, want)
	}
	if !e.ErrorUntil.Equal(e.StaleUntil) {
		t.Fatalf("stale-if-error shorter than swr must not end before it: %v %v", e.ErrorUntil, e.StaleUntil)
	}
	ages := []struct {
		at   time.Duration
		want int
	}{{0, 90}, {500 * time.Millisecond, 89}, {90 * time.Second, 0}, {time.Hour, 0}}
	for _, a := range ages {
		if got := e.MaxAge(now.Add(a.at)); got != a.want {
			t.Errorf("MaxAge(+%v) = %d, want %d", a.at, got, a.want)
		}
	}
	d, err := decodeEntry(encodeEntry(e), true)
	if err != nil || string(d.Body()) != "hello" || d.ETag != e.ETag || !d.FreshUntil.Equal(e.FreshUntil) || !d.ErrorUntil.Equal(e.ErrorUntil) {
		t.Fatalf("round trip: %+v %v", d, err)
	}
	bad := encodeEntry(e)
	bad[len(bad)-1] ^= 1
	for _, b := range [][]byte{nil, {1, 2, 3}, bad} {
		if _, err := decodeEntry(b, true); err == nil {
			t.Errorf("decodeEntry(%q) accepted", b)
		}
	}
	for r, s := range map[Result]string{Hit: "HIT", Miss: "MISS", Stale: "STALE", Bypass: "BYPASS"} {
		if r.String() != s {
			t.Errorf("%d.String() = %q", r, r.String())
		}
	}
}

func TestOptionsValidation(t *testing.T) {
	cases := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{"zero value", Options{}, ""},
		{"prefix with brace", Options{Prefix: "edge:{v1}"}, "Prefix"},
		{"negative redis timeout", Options{RedisTimeout: -1}, "RedisTimeout"},
		{"negative lock wait", Options{LockWait: -time.Second}, "LockWait"},
		{"negative refresh timeout", Options{RefreshTimeout: -1}, "RefreshTimeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(tc.opts)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				c.Close()
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want mention of %s", err, tc.wantErr)
			}
		})
	}
}

func TestPurgeWithoutRedis(t *testing.T) {
	c := newCache(t, Options{})
	f := newFiller("a")
	mustGet(t, c, 1, "/k", Policy{TTL: time.Hour}, f.fill)
	if err := c.PurgeDealer(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if _, res := mustGet(t, c, 1, "/k", Policy{TTL: time.Hour}, f.fill); res != Miss {
		t.Fatalf("after purge: %v", res)
	}
}

// TestPurgeDeferred: a purge while Redis is down works locally, reports
// ErrPurgeDeferred and reaches Redis (and the other instance) once it is back.
func TestPurgeDeferred(t *testing.T) {
	mr, rc := newMiniRedis(t)
	a := newCache(t, Options{Redis: rc})
	b := newCache(t, Options{Redis: rc})
	waitFor(t, "subscriptions", func() bool { return a.Stats().PubSubUp && b.Stats().PubSubUp })
	pol := Policy{TTL: time.Hour}
	mustGet(t, a, 1, "/k", pol, newFiller("old").fill)
	mustGet(t, b, 1, "/k", pol, newFiller("old").fill)
	mr.Close()
	err := a.PurgeDealer(context.Background(), 1)
	if !errors.Is(err, ErrPurgeDeferred) {
		t.Fatalf("purge with redis down: %v", err)
	}
	if e, _ := mustGet(t, a, 1, "/k", pol, newFiller("new").fill); string(e.Body()) != "new" {
		t.Fatalf("local purge did not take: %q", e.Body())
	}
	if err := mr.Restart(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "b to see the deferred purge", func() bool {
		n, _ := b.l1.lookup(1, []byte("/k"))
		return n == nil
	})
}

// TestFillLockReleasedWithStore: a fill that took the cross-instance lock
// stores its entry and releases the lock in one script (setUnlockScript),
// on a real redis-server and on miniredis: the entry is there and the lock
// is gone after the fill; a Redis that lost its scripts (SCRIPT FLUSH, a
// restart) is sent the script itself, not counted as an error; a lock that
// expired and was taken by another instance is left to it; a fill that
// stores nothing (an error) releases the lock alone.
func TestFillLockReleasedWithStore(t *testing.T) {
	backends := []struct {
		name string
		rc   func(t *testing.T) *redis.Client
	}{
		{"redis-server", func(t *testing.T) *redis.Client { return redistest.Start(t).Client() }},
		{"miniredis", func(t *testing.T) *redis.Client { _, rc := newMiniRedis(t); return rc }},
	}
	pol := Policy{TTL: time.Minute}
	ctx := context.Background()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			rc := be.rc(t)
			var sent cmdLog
			rc.AddHook(&sent)
			c := newCache(t, Options{Redis: rc, LockWait: time.Second, LockTTL: 5 * time.Second})
			gen, _ := c.generation(ctx, 3)
			var stolen string // a token another instance put on the lock during the fill
			fill := func(key string) FillFunc {
				return func(context.Context) ([]byte, error) {
					lk := c.lockKey(3, gen, key)
					if tok, err := rc.Get(ctx, lk).Result(); err != nil || tok == "" {
						t.Errorf("the lock is not held during the fill: %v", err)
					}
					if stolen != "" {
						rc.Set(ctx, lk, stolen, time.Minute)
					}
					if key == "/err" {
						return nil, errors.New("upstream down")
					}
					return []byte(`{"k":"` + key + `"}`), nil
				}
			}
			check := func(key string, wantLock string, wantEntry bool) {
				t.Helper()
				tok, err := rc.Get(ctx, c.lockKey(3, gen, key)).Result()
				if (wantLock == "" && !errors.Is(err, redis.Nil)) || (wantLock != "" && tok != wantLock) {
					t.Fatalf("%s: lock %q (%v), want %q", key, tok, err, wantLock)
				}
				if n := rc.Exists(ctx, c.entryKey(3, gen, key)).Val(); (n == 1) != wantEntry {
					t.Fatalf("%s: entry stored %v, want %v", key, n == 1, wantEntry)
				}
			}
			get := func(key string) error {
				_, _, err := c.Get(ctx, 3, []byte(key), pol, fill(key))
				return err
			}
			if err := get("/a"); err != nil {
				t.Fatal(err)
			}
			check("/a", "", true)
			if err := rc.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			if err := get("/b"); err != nil {
				t.Fatal(err)
			}
			check("/b", "", true)
			if err := get("/err"); err == nil {
				t.Fatal("the failed fill succeeded")
			}
			check("/err", "", false)
			stolen = "another-instance"
			if err := get("/c"); err != nil {
				t.Fatal(err)
			}
			check("/c", stolen, true)
			if st := c.Stats(); st.L2Errors != 0 {
				t.Fatalf("%d redis errors counted", st.L2Errors)
			}
			// The entries went with the lock's release: no SET of an
			// entry, no release of its own after a stored fill.
			if n := sent.count("set", c.entryKey(3, gen, "")); n != 0 {
				t.Fatalf("%d entries stored by SET", n)
			}
			// One EVALSHA a fill; EVAL after NOSCRIPT: the first store
			// (/a), the store after the flush (/b), the first release alone (/err).
			if n, m := sent.count("evalsha", ""), sent.count("eval", ""); n != 4 || m != 3 {
				t.Fatalf("%d EVALSHA and %d EVAL sent, want 4 and 3: %v", n, m, sent.names())
			}
		})
	}
}

// cmdLog is a go-redis hook that records the commands a client sends,
// pipelined ones included.
type cmdLog struct {
	mu   sync.Mutex
	cmds [][]any
}

func (l *cmdLog) DialHook(next redis.DialHook) redis.DialHook { return next }

func (l *cmdLog) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		l.add(cmd)
		return next(ctx, cmd)
	}
}

func (l *cmdLog) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			l.add(c)
		}
		return next(ctx, cmds)
	}
}

func (l *cmdLog) add(cmd redis.Cmder) {
	l.mu.Lock()
	l.cmds = append(l.cmds, cmd.Args())
	l.mu.Unlock()
}

// count is the number of commands name sent whose first key (or, for a
// script, any key) starts with prefix.
func (l *cmdLog) count(name, prefix string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, a := range l.cmds {
		if fmt.Sprint(a[0]) != name {
			continue
		}
		if prefix == "" || (len(a) > 1 && strings.HasPrefix(fmt.Sprint(a[1]), prefix)) {
			n++
		}
	}
	return n
}

func (l *cmdLog) names() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var s []string
	for _, a := range l.cmds {
		s = append(s, fmt.Sprint(a[0]))
	}
	return s
}

// TestFreshAt: a hit judged at the caller's reading of the real clock, and
// at the cache's own clock when it was given one (a caller's time.Now must
// not stand in for a test's or a simulation's clock).
func TestFreshAt(t *testing.T) {
	pol := Policy{TTL: time.Minute}
	key := []byte("/k")
	fill := func(context.Context) ([]byte, error) { return []byte(`{"a":1}`), nil }
	real := newCache(t, Options{})
	if _, _, err := real.Get(context.Background(), 1, key, pol, fill); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		at   time.Time
		want bool
	}{
		{"now", time.Now(), true},
		{"zero: the cache's clock", time.Time{}, true},
		{"past the TTL", time.Now().Add(2 * time.Minute), false},
	} {
		if _, ok := real.FreshAt(1, key, pol, false, tc.at); ok != tc.want {
			t.Errorf("real clock, %s: fresh %v, want %v", tc.name, ok, tc.want)
		}
	}
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	own := newCache(t, Options{Now: func() time.Time { return clock }})
	if _, _, err := own.Get(context.Background(), 1, key, pol, fill); err != nil {
		t.Fatal(err)
	}
	if _, ok := own.FreshAt(1, key, pol, true, time.Now()); !ok {
		t.Error("own clock: a real-clock reading (years later) was used instead of the cache's clock")
	}
	clock = clock.Add(2 * time.Minute)
	if _, ok := own.FreshAt(1, key, pol, true, clock.Add(-2*time.Minute)); ok {
		t.Error("own clock: an earlier reading was used instead of the cache's clock")
	}
}
