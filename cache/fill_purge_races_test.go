package cache

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/redis/go-redis/v9"
)

// TestPurgeDuringFlightNotServedAfter: a request that arrives after
// PurgeDealer returned is never answered with a body whose fill started
// before the purge: its miss starts a fill of its own (flights are keyed
// by the dealer's generation). Before 2026-11-27 it joined the pre-purge
// flight and got the purged body.
func TestPurgeDuringFlightNotServedAfter(t *testing.T) {
	srv := redistest.Start(t)
	rc := newClient(t, srv.Addr)
	c := newCache(t, Options{Redis: rc})
	pol := Policy{TTL: time.Hour}
	// The dealer's generation is known (as on any warm instance).
	mustGet(t, c, 1, "/warm", pol, newFiller("w").fill)

	started, release := make(chan struct{}), make(chan struct{})
	old := func(context.Context) ([]byte, error) {
		close(started)
		<-release
		return []byte("pre-purge"), nil
	}
	joined := make(chan struct{}, 4)
	c.testHookJoin = func() {
		select {
		case joined <- struct{}{}:
		default:
		}
	}
	go func() { _, _, _ = c.Get(context.Background(), 1, []byte("/k"), pol, old) }()
	<-started
	<-joined // the leader's own join
	if err := c.PurgeDealer(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	// After the purge returned: a new request for the key.
	type r struct {
		e   *Entry
		res Result
		err error
	}
	done := make(chan r, 1)
	go func() {
		e, res, err := c.Get(context.Background(), 1, []byte("/k"), pol, newFiller("post-purge").fill)
		done <- r{e, res, err}
	}()
	select {
	case <-joined:
	case <-time.After(2 * time.Second):
	}
	close(release)
	got := <-done
	if got.err != nil {
		t.Fatal(got.err)
	}
	if string(got.e.Body()) != "post-purge" {
		t.Fatalf("a request made after PurgeDealer returned was answered %v with %q, the body of a fill started before the purge", got.res, got.e.Body())
	}
}

// TestRefreshDoesNotOverwriteNewerFillWithoutL1: as in
// TestRefreshDoesNotOverwriteANewerFill, an older background refresh does
// not store its body over a newer fill of the key, also when L1 does not
// hold the newer entry (L1 off, the entry larger than L1 takes, or refused
// by TinyLFU admission): storedSince finds it among the fills under way,
// tracked per key. Real redis-server. Before 2026-11-27 only L1 was
// consulted, and the refresh overwrote the newer fill in Redis.
func TestRefreshDoesNotOverwriteNewerFillWithoutL1(t *testing.T) {
	srv := redistest.Start(t)
	big := strings.Repeat("x", 20<<10) // over an eighth of a 64 KiB L1
	for _, tc := range []struct {
		name string
		l1   int64
		pad  string
		hot  bool // L1 full of hotter entries: TinyLFU refuses the newcomers
	}{
		{"L1 off", -1, "", false},
		{"entry larger than L1 takes", 64 << 10, big, false},
		{"entry refused by TinyLFU admission", 64 << 10, strings.Repeat("y", 1500), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			rc := newClient(t, srv.Addr)
			_ = rc.FlushAll(context.Background()).Err()
			c := newCache(t, Options{Now: clock.Now, Redis: rc, L1MaxBytes: tc.l1})
			pol := Policy{TTL: time.Second, StaleWhileRevalidate: time.Second, StaleIfError: time.Hour}
			if tc.hot {
				long := Policy{TTL: time.Hour}
				for r := 0; r < 20; r++ {
					for i := 0; i < 60; i++ {
						mustGet(t, c, 2, fmt.Sprint("/hot", i), long, newFiller(strings.Repeat("h", 1500)).fill)
					}
				}
			}
			mustGet(t, c, 1, "/k", pol, newFiller("v1"+tc.pad).fill)

			clock.Advance(1500 * time.Millisecond)
			refreshRead, releaseRefresh := make(chan struct{}), make(chan struct{})
			refreshFill := func(context.Context) ([]byte, error) {
				close(refreshRead)
				<-releaseRefresh
				return []byte("v2-read-first" + tc.pad), nil
			}
			if _, res := mustGet(t, c, 1, "/k", pol, refreshFill); res != Stale {
				t.Fatalf("want STALE, got %v", res)
			}
			<-refreshRead
			clock.Advance(time.Second)
			e, res := mustGet(t, c, 1, "/k", pol, func(context.Context) ([]byte, error) {
				return []byte("v3-read-later" + tc.pad), nil
			})
			if res != Miss || !strings.HasPrefix(string(e.Body()), "v3") {
				t.Fatalf("miss: %v %.20q", res, e.Body())
			}
			close(releaseRefresh)
			waitRefreshes(t, c)
			e, res = mustGet(t, c, 1, "/k", pol, newFiller("unused").fill)
			if !strings.HasPrefix(string(e.Body()), "v3") {
				t.Fatalf("after the refresh ended: %v %.20q; the older refresh overwrote the newer fill, want v3", res, e.Body())
			}
		})
	}
}

// TestL1BoundWithLazyVariants: L1 stays within cache.l1_max_bytes, a
// coding made after an entry entered it included (configs/README.md:
// "making one evicts others if L1 no longer fits"): entries read from Redis
// enter L1 with their gzip variant only, and the plain body an identity
// client's hit inflates (Entry.Body) makes L1 evict. Before 2026-11-27
// nothing evicted for it and a 256 KiB L1 reached 2.1 MB.
func TestL1BoundWithLazyVariants(t *testing.T) {
	srv := redistest.Start(t)
	rc := newClient(t, srv.Addr)
	const l1Max = 256 << 10
	filler := newCache(t, Options{Redis: rc, L1MaxBytes: -1})
	c := newCache(t, Options{Redis: rc, L1MaxBytes: l1Max})
	pol := Policy{TTL: time.Hour}
	rnd := rand.New(rand.NewPCG(1, 2))
	body := func(i int) []byte {
		var b bytes.Buffer
		for j := 0; j < 200; j++ {
			fmt.Fprintf(&b, `{"id":%d,"make":"Fiat","model":"Panda","price":%d},`, i*1000+j, rnd.IntN(50000))
		}
		return b.Bytes()
	}
	const n = 200
	for i := 0; i < n; i++ {
		b := body(i)
		if _, _, err := filler.Get(context.Background(), 1, []byte(fmt.Sprint("/k", i)), pol, func(context.Context) ([]byte, error) { return b, nil }); err != nil {
			t.Fatal(err)
		}
	}
	// Gzip clients: entries enter L1 compressed (about a fifth).
	for round := 0; round < 3; round++ {
		for i := 0; i < n; i++ {
			if _, _, err := c.GetGzip(context.Background(), 1, []byte(fmt.Sprint("/k", i)), pol, newFiller("x").fill); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := c.Stats()
	// Identity clients now hit the same entries in L1.
	for i := 0; i < n; i++ {
		if _, _, err := c.Get(context.Background(), 1, []byte(fmt.Sprint("/k", i)), pol, newFiller("x").fill); err != nil {
			t.Fatal(err)
		}
	}
	after := c.Stats()
	t.Logf("L1 before identity hits: %d bytes %d entries; after: %d bytes %d entries (max %d)", before.L1Bytes, before.L1Entries, after.L1Bytes, after.L1Entries, l1Max)
	if after.L1Bytes > l1Max+l1Max/8 {
		t.Fatalf("L1 holds %d bytes, %.1fx its %d-byte budget, after identity hits; want at most the budget and an eighth", after.L1Bytes, float64(after.L1Bytes)/l1Max, l1Max)
	}
}

var _ sync.Mutex

func edgeLikeClient(t testing.TB, addr string, to time.Duration) *redis.Client {
	rc := redis.NewClient(&redis.Options{
		Addr: addr, DialTimeout: max(to, 200*time.Millisecond), ReadTimeout: to, WriteTimeout: to,
		MaxRetries: -1, ContextTimeoutEnabled: true, DialerRetries: 1,
	})
	t.Cleanup(func() { _ = rc.Close() })
	return rc
}

// TestBulkStaleHitInHitsTotal: edge_cache_bulk_hits_total counts fresh
// answers of the bulk tier and is part of edge_cache_hits_total; a stale
// answer from the tier counts in edge_cache_stale_served_total only
// (README, Metrics). Before 2026-11-27 a stale one counted as a bulk hit
// and as stale but not as a hit, so bulk hits exceeded the hits total's
// non-L1 share.
func TestBulkStaleHitInHitsTotal(t *testing.T) {
	clk := newFakeClock()
	c := bulkOnly(t, Options{Now: clk.Now})
	pol := Policy{TTL: time.Minute, StaleWhileRevalidate: time.Minute}
	mustGet(t, c, 1, "/k", pol, newFiller("v1"+string(randomBody(1, 1000))).fill)
	clk.Advance(90 * time.Second)
	if _, res := mustGet(t, c, 1, "/k", pol, newFiller("v2").fill); res != Stale {
		t.Fatalf("want STALE, got %v", res)
	}
	waitRefreshes(t, c)
	s := c.Stats()
	if s.BulkHits > s.Hits-s.L1Hits {
		t.Fatalf("bulk hits %d, but hits total %d (L1 %d): a bulk hit not counted in edge_cache_hits_total (stale %d)", s.BulkHits, s.Hits, s.L1Hits, s.Stale)
	}
}
