package cache

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
)

// TestL2ExpiryFollowsReads holds, on a real redis-server, how long an
// entry's value stays in Redis: a fill writes it to expire at the end of
// its stale-while-revalidate window, so a value nobody reads again is gone
// then (before, it stayed for its whole stale-if-error window); a read
// from Redis (another instance's L2 hit) keeps it for the route's
// stale-if-error window from the read, in the same command, so an
// instance that starts during an outage still serves it stale. The read of
// a background refresh counts: an entry served from one instance's L1
// alone is extended by its refresh's read, so a refresh that fails leaves
// it in Redis for the rest of its stale-if-error window.
func TestL2ExpiryFollowsReads(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client()
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	pol := Policy{TTL: 300 * time.Millisecond, StaleWhileRevalidate: 300 * time.Millisecond, StaleIfError: 5 * time.Second}
	stale := func(error) bool { return true }
	// Three instances sharing Redis, none sharing L1 with another.
	filler := newCache(t, Options{Redis: rdb, ServeStaleOn: stale})
	reader := newCache(t, Options{Redis: rdb, ServeStaleOn: stale, L1MaxBytes: -1})
	late := newCache(t, Options{Redis: rdb, ServeStaleOn: stale, L1MaxBytes: -1})
	const dealer = 7
	body := func(s string) FillFunc { return func(context.Context) ([]byte, error) { return []byte(s), nil } }
	for _, k := range []string{"unread", "read", "hot"} {
		if _, res, err := filler.Get(ctx, dealer, []byte(k), pol, body("v-"+k)); err != nil || res != Miss {
			t.Fatalf("fill %s: %v %v", k, res, err)
		}
	}
	// The windows below are timed from the end of the fills ("hot", the
	// last, was stored just before): timed from before them, a loaded
	// machine's slow fills left "hot" fresh at its first check.
	start := time.Now()
	gen, _ := filler.generation(ctx, dealer)
	pttl := func(k string) time.Duration { return rdb.PTTL(ctx, filler.entryKey(dealer, gen, k)).Val() }
	for _, k := range []string{"unread", "read", "hot"} {
		if d := pttl(k); d <= pol.TTL || d > pol.TTL+pol.StaleWhileRevalidate {
			t.Fatalf("%s: written to expire in %v, want ttl + stale_while_revalidate (%v)", k, d, pol.TTL+pol.StaleWhileRevalidate)
		}
	}
	fills := 0
	if _, res, err := reader.Get(ctx, dealer, []byte("read"), pol, func(context.Context) ([]byte, error) {
		fills++
		return []byte("refilled"), nil
	}); err != nil || res != Hit || fills != 0 {
		t.Fatalf("read from Redis: %v %v, %d fills; want a Hit", res, err, fills)
	}
	if d, want := pttl("read"), pol.TTL+pol.StaleIfError; d <= want-time.Second || d > want {
		t.Fatalf("read: expires in %v after the read, want ttl + stale_if_error (%v)", d, want)
	}
	// The upstream goes down. "hot" is asked for again in the filler, within
	// stale-while-revalidate: served from its L1, its refresh reads Redis
	// (extending the value) and fails.
	down := func(context.Context) ([]byte, error) { return nil, errUpstream }
	time.Sleep(time.Until(start.Add(pol.TTL + 50*time.Millisecond)))
	if e, res, err := filler.Get(ctx, dealer, []byte("hot"), pol, down); err != nil || res != Stale || string(e.Body()) != "v-hot" {
		t.Fatalf("hot, stale in L1: %v %v; want Stale", res, err)
	}
	for deadline := time.Now().Add(2 * time.Second); pttl("hot") <= pol.TTL+pol.StaleWhileRevalidate; {
		if time.Now().After(deadline) {
			t.Fatalf("hot: expires in %v after its refresh read it, want ttl + stale_if_error", pttl("hot"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Past the stale-while-revalidate window (and the PTTL written).
	time.Sleep(time.Until(start.Add(pol.TTL + pol.StaleWhileRevalidate + 300*time.Millisecond)))
	if n := rdb.Exists(ctx, filler.entryKey(dealer, gen, "unread")).Val(); n != 0 {
		t.Errorf("unread: still in Redis (PTTL %v) past ttl + stale_while_revalidate", pttl("unread"))
	}
	// An instance without the entries in L1 serves the ones that were
	// read, stale, from Redis; the other is gone.
	for _, k := range []string{"read", "hot"} {
		e, res, err := late.Get(ctx, dealer, []byte(k), pol, down)
		if err != nil || res != Stale || string(e.Body()) != "v-"+k {
			t.Fatalf("%s, upstream down: %v %v; want the stored body served Stale", k, res, err)
		}
	}
	if _, _, err := late.Get(ctx, dealer, []byte("unread"), pol, down); !errors.Is(err, errUpstream) {
		t.Errorf("unread, upstream down: %v; want the upstream's error (nothing left in Redis)", err)
	}
}

// TestL2ReadExtendsOnEveryTopology: the read that extends an entry's
// expiry (GETEX PX) works on each Redis the edge runs against: the
// embedded miniredis, a single redis-server, a Cluster (a single-key
// command, routed by the key's slot) and Sentinel. A fill is written to
// expire after ttl + stale_while_revalidate, another instance's L2 hit
// extends it to ttl + stale_if_error from the read, and a policy whose
// stale_if_error adds nothing is read with a plain GET.
func TestL2ReadExtendsOnEveryTopology(t *testing.T) {
	for _, tc := range []struct {
		name   string
		client func(t *testing.T) redis.UniversalClient
	}{
		{"miniredis", func(t *testing.T) redis.UniversalClient { _, c := newMiniRedis(t); return c }},
		{"redis-server", func(t *testing.T) redis.UniversalClient {
			c := redistest.Start(t).Client()
			t.Cleanup(func() { _ = c.Close() })
			return c
		}},
		{"cluster", func(t *testing.T) redis.UniversalClient { return redistest.StartCluster(t).Client(t) }},
		{"sentinel", func(t *testing.T) redis.UniversalClient {
			sentinel, master := redistest.StartSentinel(t)
			return sentinelClient(t, sentinel, master)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb := tc.client(t)
			ctx := context.Background()
			var sent cmdLog
			rdb.AddHook(&sent)
			filler := newCache(t, Options{Redis: rdb})
			reader := newCache(t, Options{Redis: rdb, L1MaxBytes: -1})
			const dealer = 11
			fill := func(context.Context) ([]byte, error) { return []byte("v"), nil }
			for _, p := range []struct {
				key     string
				pol     Policy
				written time.Duration // the PTTL the fill writes
				read    time.Duration // the PTTL after a read
				cmd     string        // the read's command
			}{
				{"sie", Policy{TTL: time.Minute, StaleWhileRevalidate: time.Minute, StaleIfError: 10 * time.Minute}, 2 * time.Minute, 11 * time.Minute, "getex"},
				{"floor", Policy{TTL: time.Minute, StaleIfError: 10 * time.Minute}, time.Minute + l2WriteFloor, 11 * time.Minute, "getex"},
				{"swr only", Policy{TTL: time.Minute, StaleWhileRevalidate: time.Minute}, 2 * time.Minute, 2 * time.Minute, "get"},
			} {
				if _, res, err := filler.Get(ctx, dealer, []byte(p.key), p.pol, fill); err != nil || res != Miss {
					t.Fatalf("%s: fill: %v %v", p.key, res, err)
				}
				gen, _ := filler.generation(ctx, dealer)
				rkey := filler.entryKey(dealer, gen, p.key)
				if d := rdb.PTTL(ctx, rkey).Val(); d > p.written || d < p.written-5*time.Second {
					t.Errorf("%s: written to expire in %v, want %v", p.key, d, p.written)
				}
				before := sent.count(p.cmd, rkey)
				if _, res, err := reader.Get(ctx, dealer, []byte(p.key), p.pol, fill); err != nil || res != Hit {
					t.Fatalf("%s: read: %v %v, want a Hit from Redis", p.key, res, err)
				}
				if n := sent.count(p.cmd, rkey) - before; n != 1 {
					t.Errorf("%s: the read sent %d %s of the entry, want 1", p.key, n, p.cmd)
				}
				if d := rdb.PTTL(ctx, rkey).Val(); d > p.read || d < p.read-5*time.Second {
					t.Errorf("%s: expires in %v after the read, want %v", p.key, d, p.read)
				}
			}
		})
	}
}
