package cache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"
)

// bulkOnly is a cache whose hot tier is too small to keep any of these
// tests' bodies (over an eighth of it), so every in-process hit comes from
// the bulk tier.
func bulkOnly(t testing.TB, opts Options) *Cache {
	t.Helper()
	if opts.L1MaxBytes == 0 {
		opts.L1MaxBytes = 40 << 20
	}
	opts.L1HotBytes = 4 << 10
	c := newCache(t, opts)
	if c.bulk == nil {
		t.Fatal("no bulk tier")
	}
	return c
}

func randomBody(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestL1Tiers(t *testing.T) {
	for _, tc := range []struct {
		max, hot        int64
		wantHot, wantBk int64
	}{
		{64 << 20, 0, 64 << 20, 0},                 // default: one tier
		{256 << 20, 0, 256 << 20, 0},               // up to 256 MiB: one tier
		{257 << 20, 0, 16 << 20, 241 << 20},        // above: 16 MiB hot
		{1 << 30, 0, 16 << 20, 1008 << 20},         // the size
		{1 << 30, -1, 1 << 30, 0},                  // tiers off
		{1 << 30, 128 << 20, 128 << 20, 896 << 20}, // explicit share
		{100 << 20, 80 << 20, 100 << 20, 0},        // bulk under 32 MiB: not made
		{100 << 20, 8 << 20, 8 << 20, 92 << 20},    // explicit split of a small L1
		{1 << 30, 2 << 30, 1 << 30, 0},             // hot over the total
		{-1, 0, -1, 0},                             // L1 off
	} {
		hot, bk := L1Tiers(tc.max, tc.hot)
		if hot != tc.wantHot || bk != tc.wantBk {
			t.Errorf("L1Tiers(%d, %d) = %d, %d; want %d, %d", tc.max, tc.hot, hot, bk, tc.wantHot, tc.wantBk)
		}
	}
	if got, want := MemoryLimitFor(64<<20, 0), int64(64<<20+8<<20+160<<20); got != want {
		t.Errorf("MemoryLimitFor(64 MiB) = %d, want %d", got, want)
	}
	if got, want := MemoryLimitFor(1<<30, 0), int64(16<<20+2<<20+1008<<20/32+16<<20+160<<20); got != want {
		t.Errorf("MemoryLimitFor(1 GiB) = %d, want %d (the hot tier's heap, the bulk index, the 16 MiB sketch)", got, want)
	}
}

// TestBulkHit: a fill is written to the bulk tier, and the next lookup,
// which misses the hot tier, is a hit there, for plain and gzip callers and
// for bodies that compress and that do not.
func TestBulkHit(t *testing.T) {
	for _, tc := range []struct {
		name string
		body []byte
		gzip bool
	}{
		{"listing/plain", listingBody(1, 10), false},
		{"listing/gzip", listingBody(2, 10), true},
		{"random/plain", randomBody(3, 3000), false},
		{"random/gzip", randomBody(4, 3000), true},
		{"big/plain", randomBody(5, 300<<10), false}, // over 64 KiB: SetBig
		{"big/gzip", randomBody(6, 100<<10), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := bulkOnly(t, Options{L1MaxBytes: 1 << 30})
			f := newFiller(string(tc.body))
			pol := Policy{TTL: time.Minute}
			get := c.Get
			if tc.gzip {
				get = c.GetGzip
			}
			for i, want := range []Result{Miss, Hit, Hit} {
				e, res, err := get(context.Background(), 7, []byte("/v1/vehicles?page=1"), pol, f.fill)
				if err != nil || res != want {
					t.Fatalf("get %d: %v %v, want %v", i, res, err, want)
				}
				if !bytes.Equal(e.Body(), tc.body) {
					t.Fatalf("get %d: body differs", i)
				}
			}
			st := c.Stats()
			if f.calls.Load() != 1 || st.BulkHits != 2 || st.L1Hits != 0 || st.Hits != 2 || st.BulkEntries == 0 {
				t.Fatalf("fills %d, stats %+v", f.calls.Load(), st)
			}
		})
	}
}

// TestBulkTooBig: a value over a quarter of a bucket's ring is not kept.
func TestBulkTooBig(t *testing.T) {
	c := bulkOnly(t, Options{}) // 40 MiB: 80 KiB per bucket
	body := randomBody(1, 64<<10)
	f := newFiller(string(body))
	pol := Policy{TTL: time.Minute}
	mustGet(t, c, 1, "/big", pol, f.fill)
	if _, res := mustGet(t, c, 1, "/big", pol, f.fill); res != Miss {
		t.Fatalf("second get %v, want Miss (not kept)", res)
	}
	if c.bulk.skipped.Load() != 2 {
		t.Fatalf("skipped %d, want 2", c.bulk.skipped.Load())
	}
}

// TestBulkStates: an entry found in the bulk tier is judged by the same
// windows as one found in L1 or L2.
func TestBulkStates(t *testing.T) {
	pol := Policy{TTL: time.Minute, StaleWhileRevalidate: time.Minute, StaleIfError: time.Hour}
	boom := errors.New("upstream down")
	for _, tc := range []struct {
		name    string
		advance time.Duration
		fillErr error
		want    Result
		body    string // served body
		fills   int64  // fills after the first, once refreshes are done
		hits    uint64 // bulk hits
	}{
		{"fresh", 30 * time.Second, nil, Hit, "v1", 0, 1},
		{"stale", 90 * time.Second, nil, Stale, "v1", 1, 0}, // counted as stale served
		{"stale-if-error", 30 * time.Minute, boom, Stale, "v1", 1, 0},
		{"error-window/fill-ok", 30 * time.Minute, nil, Miss, "v2", 1, 0},
		{"expired", 2 * time.Hour, boom, Miss, "", 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock()
			c := bulkOnly(t, Options{Now: clk.Now})
			f := newFiller("v1" + string(randomBody(1, 1000)))
			mustGet(t, c, 1, "/k", pol, f.fill)
			clk.Advance(tc.advance)
			f.set("v2"+string(randomBody(1, 1000)), tc.fillErr)
			e, res, err := c.Get(context.Background(), 1, []byte("/k"), pol, f.fill)
			waitRefreshes(t, c)
			if res != tc.want {
				t.Fatalf("result %v (%v), want %v", res, err, tc.want)
			}
			if tc.body == "" {
				if err == nil || e != nil {
					t.Fatalf("expired entry served: %v", err)
				}
			} else if err != nil || string(e.Body()[:2]) != tc.body {
				t.Fatalf("body %q..., err %v; want %s", e.Body()[:2], err, tc.body)
			}
			if got := f.calls.Load() - 1; got != tc.fills {
				t.Errorf("fills %d, want %d", got, tc.fills)
			}
			if got := c.Stats().BulkHits; got != tc.hits {
				t.Errorf("bulk hits %d, want %d", got, tc.hits)
			}
		})
	}
}

// TestBulkPurge: a purge makes the dealer's bulk entries unreachable at
// once (they are still in the ring, under the old generation), and leaves
// other dealers' alone.
func TestBulkPurge(t *testing.T) {
	c := bulkOnly(t, Options{})
	pol := Policy{TTL: time.Hour}
	f := newFiller(string(randomBody(1, 2000)))
	for _, d := range []int64{1, 2} {
		mustGet(t, c, d, "/k", pol, f.fill)
		if _, res := mustGet(t, c, d, "/k", pol, f.fill); res != Hit {
			t.Fatalf("dealer %d: %v before the purge, want a bulk hit", d, res)
		}
	}
	old, _ := c.generation(context.Background(), 1)
	if err := c.PurgeDealer(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if c.bulk.get(1, old, 0, []byte("/k"), true, nil) == nil {
		t.Fatal("the old entry should still be in the ring (unreachable, not deleted)")
	}
	hits := c.Stats().BulkHits
	if _, res := mustGet(t, c, 1, "/k", pol, f.fill); res != Miss {
		t.Fatalf("purged dealer: %v, want Miss", res)
	}
	if _, res := mustGet(t, c, 2, "/k", pol, f.fill); res != Hit {
		t.Fatalf("other dealer: %v, want Hit", res)
	}
	if got := c.Stats().BulkHits - hits; got != 1 {
		t.Fatalf("bulk hits after the purge %d, want 1 (the other dealer)", got)
	}
}

// TestBulkCorrupt: a value that does not decode, or whose compressed body
// does not inflate to its hash, is never served: it is dropped and the key
// filled.
func TestBulkCorrupt(t *testing.T) {
	body := listingBody(1, 10)
	good := func() []byte {
		return append(make([]byte, bulkValHeader), encodeEntry(newEntry(body, time.Now(), Policy{TTL: time.Hour}))...)
	}
	for _, tc := range []struct {
		name  string
		value func() []byte
		gzip  bool // GetGzip: a payload is served compressed, unchecked
	}{
		{"short", func() []byte { return []byte{1, 2, 3} }, false},
		{"garbage", func() []byte { return randomBody(1, 500) }, false},
		{"bad-wire-version", func() []byte { v := good(); v[bulkValHeader] = 9; return v }, false},
		{"truncated", func() []byte { v := good(); return v[:len(v)-10] }, false},
		{"deflate-corrupt/plain", func() []byte {
			v := good()
			for i := bulkValHeader + wireHeader + 20; i < bulkValHeader+wireHeader+40; i++ {
				v[i] ^= 0x5a
			}
			return v
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := bulkOnly(t, Options{})
			gen, _ := c.generation(context.Background(), 1)
			k := appendBulkKey(nil, 1, gen, 0, "/k")
			v := tc.value()
			c.bulk.fc.Set(k, v)
			f := newFiller(string(body))
			e, res := mustGet(t, c, 1, "/k", Policy{TTL: time.Hour}, f.fill)
			if res != Miss || f.calls.Load() != 1 || !bytes.Equal(e.Body(), body) {
				t.Fatalf("%v, %d fills: the corrupt value was served", res, f.calls.Load())
			}
			if st := c.Stats(); st.BulkErrors != 1 || st.BulkHits != 0 {
				t.Fatalf("stats %+v, want one bulk error", st)
			}
			if _, res := mustGet(t, c, 1, "/k", Policy{TTL: time.Hour}, f.fill); res != Hit {
				t.Fatalf("after the fill: %v, want a bulk hit of the new value", res)
			}
		})
	}
}

// TestBulkReinsert: an entry hit in the older half of the ring is written
// again, so it survives writes that evict entries not asked for.
func TestBulkReinsert(t *testing.T) {
	c := bulkOnly(t, Options{})
	pol := Policy{TTL: time.Hour}
	hot := newFiller(string(randomBody(1, 2000)))
	mustGet(t, c, 1, "/hot", pol, hot.fill)
	// Write about 2.5 times the ring of one-off entries, asking for the
	// hot one between them.
	for i := 0; c.bulk.written.Load() < c.bulk.capacity*5/2; i++ {
		body := randomBody(uint64(i), 4000)
		mustGet(t, c, 2, fmt.Sprintf("/cold/%d", i), pol, func(context.Context) ([]byte, error) { return body, nil })
		if i%500 == 0 {
			if _, res := mustGet(t, c, 1, "/hot", pol, hot.fill); res != Hit {
				t.Fatalf("after %d cold writes: hot key %v", i, res)
			}
		}
	}
	if c.bulk.reinserts.Load() == 0 || hot.calls.Load() != 1 {
		t.Fatalf("reinserts %d, hot fills %d", c.bulk.reinserts.Load(), hot.calls.Load())
	}
	if _, res := mustGet(t, c, 2, "/cold/0", pol, hot.fill); res != Miss {
		t.Fatalf("oldest cold key: %v, want Miss (evicted)", res)
	}
}

// TestBulkFromRedis: an entry read from Redis enters the bulk tier, and is
// then served from it without asking Redis; a purge elsewhere reaches it.
func TestBulkFromRedis(t *testing.T) {
	_, rc := newMiniRedis(t)
	a := newCache(t, Options{Redis: rc})
	b := bulkOnly(t, Options{Redis: rc})
	waitFor(t, "subscriptions", func() bool { return a.Stats().PubSubUp && b.Stats().PubSubUp })
	pol := Policy{TTL: time.Hour}
	body := listingBody(3, 20)
	f := newFiller(string(body))
	mustGet(t, a, 5, "/k", pol, f.fill)
	for i, want := range []struct {
		res          Result
		l2, bulkHits uint64
	}{{Hit, 1, 0}, {Hit, 1, 1}, {Hit, 1, 2}} {
		e, res := mustGet(t, b, 5, "/k", pol, f.fill)
		st := b.Stats()
		if res != want.res || st.L2Hits != want.l2 || st.BulkHits != want.bulkHits || !bytes.Equal(e.Body(), body) {
			t.Fatalf("get %d: %v, L2 hits %d, bulk hits %d; want %+v", i, res, st.L2Hits, st.BulkHits, want)
		}
	}
	if err := a.PurgeDealer(context.Background(), 5); err != nil {
		t.Fatal(err)
	}
	genA, _ := a.generation(context.Background(), 5)
	waitFor(t, "the purge to reach b", func() bool { g, _ := b.generation(context.Background(), 5); return g == genA })
	f.set("new", nil)
	if e, res := mustGet(t, b, 5, "/k", pol, f.fill); res != Miss || string(e.Body()) != "new" {
		t.Fatalf("after the purge: %v %q, want a fill", res, e.Body())
	}
}

// TestBulkConcurrent runs Gets (plain and gzip), purges and refreshes of
// many keys through a small hot tier and the bulk tier from many
// goroutines (with -race it checks the locking); every body served must be
// the key's.
func TestBulkConcurrent(t *testing.T) {
	clk := newFakeClock()
	c := newCache(t, Options{L1MaxBytes: 40 << 20, L1HotBytes: 256 << 10, Now: clk.Now})
	const keys = 400
	bodies := make([][]byte, keys)
	for i := range bodies {
		bodies[i] = append(fmt.Appendf(nil, "%d:", i), listingBody(uint64(i), 1+i%12)...)
	}
	pol := Policy{TTL: time.Minute, StaleWhileRevalidate: time.Minute}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 9))
			for i := 0; i < 3000; i++ {
				k := int(r.ExpFloat64()*40) % keys
				d := int64(k % 5)
				get := c.Get
				if i%2 == 1 {
					get = c.GetGzip
				}
				e, _, err := get(context.Background(), d, fmt.Appendf(nil, "/k/%d", k), pol, func(context.Context) ([]byte, error) { return bodies[k], nil })
				if err != nil || !bytes.Equal(e.Body(), bodies[k]) {
					t.Errorf("key %d: %v", k, err)
					return
				}
				switch {
				case w == 0 && i%700 == 0:
					_ = c.PurgeDealer(context.Background(), d)
				case w == 1 && i%500 == 0:
					clk.Advance(40 * time.Second)
				}
			}
		}()
	}
	wg.Wait()
	waitRefreshes(t, c)
	st := c.Stats()
	if st.BulkHits == 0 || st.L1Hits == 0 || st.BulkErrors != 0 {
		t.Fatalf("stats %+v", st)
	}
	t.Logf("hot hits %d, bulk hits %d, fills %d", st.L1Hits, st.BulkHits, st.Fills)
}

// TestBulkClose: Close empties the bulk tier (its memory is outside the
// heap), and Get keeps working after it.
func TestBulkClose(t *testing.T) {
	c := bulkOnly(t, Options{})
	pol := Policy{TTL: time.Hour}
	f := newFiller(string(randomBody(1, 2000)))
	mustGet(t, c, 1, "/k", pol, f.fill)
	if _, res := mustGet(t, c, 1, "/k", pol, f.fill); res != Hit {
		t.Fatalf("before Close: %v", res)
	}
	_ = c.Close()
	for i, want := range []Result{Miss, Hit} {
		if e, res := mustGet(t, c, 1, "/k", pol, f.fill); res != want || len(e.Body()) != 2000 {
			t.Fatalf("after Close, get %d: %v, want %v", i, res, want)
		}
	}
}

// TestBulkHitLent: a bulk-tier hit the hot tier does not take (here every
// page is larger than the 4 KiB hot tier) is copied out into storage lent
// from a pool, handed over once by Lent; storage given back is lent again,
// and every hit still gets its own body, plain or gzip. Entries many
// goroutines get at once keep their bodies until each gives them back.
func TestBulkHitLent(t *testing.T) {
	c, bodies, pol, noFill := filledBulk(t, false)
	var last *byte
	reused := 0
	for round := range 3 {
		for i, want := range bodies {
			e, res := mustGet(t, c, 1, fmt.Sprintf("/k%d", i), pol, noFill)
			if res != Hit || !bytes.Equal(e.Body(), want) {
				t.Fatalf("round %d key %d: %v, body equal %v", round, i, res, bytes.Equal(e.Body(), want))
			}
			l := e.Lent()
			if l == nil {
				t.Fatalf("round %d key %d: a bulk hit the hot tier does not take was not lent storage", round, i)
			}
			if p := &e.Body()[0]; p == last {
				reused++
			} else {
				last = p
			}
			_ = l.Close()
		}
	}
	if reused == 0 {
		t.Error("storage given back was never lent again")
	}
	if st := c.Stats(); st.L1Hits != 0 || st.BulkHits < 48 {
		t.Fatalf("hot hits %d, bulk hits %d", st.L1Hits, st.BulkHits)
	}
	lendUnderConcurrency(t, c, bodies, pol, noFill)
}

// TestBulkGzipHitLentPlain: with Redis, the bulk tier holds compressed
// values; an identity client's hit that the hot tier does not take gets
// its plain body made in lent storage that goes back, with the compressed
// copy, when the one closer Lent hands over is closed: the body is the
// key's until then, storage given back is lent again, and a hit allocates
// far less than the body (which it used to allocate each time).
func TestBulkGzipHitLentPlain(t *testing.T) {
	c, bodies, pol, noFill := filledBulk(t, true)
	seen := map[*byte]int{}
	for round := range 3 {
		for i, want := range bodies {
			e, res := mustGet(t, c, 1, fmt.Sprintf("/k%d", i), pol, noFill)
			if res != Hit || !bytes.Equal(e.Body(), want) {
				t.Fatalf("round %d key %d: %v, body equal %v", round, i, res, bytes.Equal(e.Body(), want))
			}
			if gz, _, ok := e.Gzip(); !ok || len(gz) == 0 {
				t.Fatalf("round %d key %d: the value is not compressed in the bulk tier", round, i)
			}
			l := e.Lent()
			if l == nil {
				t.Fatalf("round %d key %d: no lent storage", round, i)
			}
			seen[&e.Body()[0]]++
			_ = l.Close()
		}
	}
	reused := 0
	for _, n := range seen {
		if n > 1 {
			reused++
		}
	}
	if reused == 0 {
		t.Error("the storage of plain bodies given back was never lent again")
	}
	if st := c.Stats(); st.L1Hits != 0 || st.BulkErrors != 0 {
		t.Fatalf("hot hits %d, bulk errors %d", st.L1Hits, st.BulkErrors)
	}
	// Bytes allocated per hit, once the pool is warm: well under a body.
	// (The race detector makes sync.Pool drop a share of what is put back,
	// so the count means nothing there.)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	const hits = 200
	for i := range hits {
		e, _ := mustGet(t, c, 1, fmt.Sprintf("/k%d", i%len(bodies)), pol, noFill)
		_ = e.Body()
		if l := e.Lent(); l != nil {
			_ = l.Close()
		}
	}
	runtime.ReadMemStats(&m1)
	if per := (m1.TotalAlloc - m0.TotalAlloc) / hits; !raceEnabled && per > uint64(len(bodies[0]))/2 {
		t.Errorf("%d bytes allocated per identity bulk hit, the body is %d", per, len(bodies[0]))
	}
	lendUnderConcurrency(t, c, bodies, pol, noFill)
}

// lendUnderConcurrency has eight goroutines get the keys /k0.. of bodies,
// read each body while others get, lend and give back storage, and give
// it back: a body must not change before it is given back.
func lendUnderConcurrency(t *testing.T, c *Cache, bodies [][]byte, pol Policy, noFill func(context.Context) ([]byte, error)) {
	t.Helper()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				k := (w + i) % len(bodies)
				e, _, err := c.Get(context.Background(), 1, []byte(fmt.Sprintf("/k%d", k)), pol, noFill)
				if err != nil {
					t.Error(err)
					return
				}
				l := e.Lent()
				body := e.Body()
				runtime.Gosched() // others get, lend and give back meanwhile
				if !bytes.Equal(body, bodies[k]) {
					t.Errorf("key %d: body changed before it was given back", k)
					return
				}
				if l != nil {
					_ = l.Close()
				}
			}
		}()
	}
	wg.Wait()
}

// filledBulk is a cache with only a bulk tier (compressed values when
// gzipValues, as with Redis) holding 16 listing pages under /k0../k15,
// their bodies, the policy they were stored with and a fill that fails.
func filledBulk(t *testing.T, gzipValues bool) (*Cache, [][]byte, Policy, func(context.Context) ([]byte, error)) {
	t.Helper()
	c := bulkOnly(t, Options{})
	c.bulkGzip = gzipValues
	pol := Policy{TTL: time.Hour}
	bodies := make([][]byte, 16)
	for i := range bodies {
		bodies[i] = listingBody(uint64(i), 20)
		mustGet(t, c, 1, fmt.Sprintf("/k%d", i), pol, func(context.Context) ([]byte, error) { return bodies[i], nil })
	}
	noFill := func(context.Context) ([]byte, error) { return nil, errors.New("no fill expected") }
	return c, bodies, pol, noFill
}
