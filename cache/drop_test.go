package cache

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
)

// TestDropOn: a fill error that DropOn accepts (the response no longer
// exists) removes the key's entry from L1, the bulk tier and Redis, from a
// background refresh of a stale entry and from a miss of one within
// stale-if-error alike: nothing serves the old body again, and a cache
// sharing the Redis finds nothing. A failure DropOn refuses keeps the
// entry for stale-if-error. Against a real redis-server.
func TestDropOn(t *testing.T) {
	errGone := errors.New("upstream: gone")
	pol := Policy{TTL: time.Second, StaleWhileRevalidate: time.Minute, StaleIfError: time.Hour}
	for _, c := range []struct {
		name    string
		advance time.Duration // past the TTL: within stale-while-revalidate, or past it
		err     error
		gone    bool
	}{
		{"refresh of a stale entry, gone", 2 * time.Second, errGone, true},
		{"miss within stale-if-error, gone", 2 * time.Minute, errGone, true},
		{"refresh of a stale entry, failure", 2 * time.Second, errUpstream, false},
		{"miss within stale-if-error, failure", 2 * time.Minute, errUpstream, false},
	} {
		for _, tiers := range []struct {
			name string
			hot  int64
		}{{"one tier", 0}, {"bulk tier", 1 << 20}} {
			t.Run(c.name+"/"+tiers.name, func(t *testing.T) {
				srv := redistest.Start(t)
				clock := newFakeClock()
				opts := Options{
					Now: clock.Now, RedisTimeout: 5 * time.Second,
					ServeStaleOn: func(err error) bool { return !errors.Is(err, errGone) },
					DropOn:       func(err error) bool { return errors.Is(err, errGone) },
				}
				if tiers.hot > 0 {
					opts.L1MaxBytes, opts.L1HotBytes = 512<<20, tiers.hot
				}
				opts.Redis = newClient(t, srv.Addr)
				a := newCache(t, opts)
				f := newFiller("old")
				mustGet(t, a, 1, "/k", pol, f.fill)
				clock.Advance(c.advance)
				f.set("", c.err)
				ctx := context.Background()
				_, res, err := a.Get(ctx, 1, []byte("/k"), pol, f.fill)
				if c.advance < pol.TTL+pol.StaleWhileRevalidate {
					// Served stale; the refresh runs behind.
					if res != Stale || err != nil {
						t.Fatalf("stale hit: %v %v", res, err)
					}
					waitFor(t, "the refresh", func() bool { return a.Stats().RefreshesInFlight == 0 && f.calls.Load() == 2 })
				} else if c.gone && (res != Miss || !errors.Is(err, errGone)) {
					t.Fatalf("miss: %v %v, want the fill's error", res, err)
				}
				// Another instance on the same Redis, without L1: it finds
				// nothing when the entry was dropped, else the old body
				// (stale within stale-while-revalidate).
				b := newCache(t, Options{Now: clock.Now, RedisTimeout: 5 * time.Second, Redis: newClient(t, srv.Addr), L1MaxBytes: -1})
				g := newFiller("b")
				eb, resB, err := b.Get(ctx, 1, []byte("/k"), pol, g.fill)
				switch {
				case err != nil:
					t.Fatal(err)
				case c.gone && (resB != Miss || string(eb.Body()) != "b"):
					t.Fatalf("another instance: %v %q, want its own fill (Redis still held the entry)", resB, eb.Body())
				case !c.gone && c.advance < pol.TTL+pol.StaleWhileRevalidate && (resB != Stale || string(eb.Body()) != "old"):
					t.Fatalf("another instance after a failure: %v %q, want the stale entry", resB, eb.Body())
				}
				f.set("new", nil)
				e, res, err := a.Get(ctx, 1, []byte("/k"), pol, f.fill)
				if err != nil {
					t.Fatal(err)
				}
				if c.gone {
					if string(e.Body()) == "old" {
						t.Fatalf("after the gone answer: %v %q, the old body again", res, e.Body())
					}
					if got := a.Stats().Dropped; got != 1 {
						t.Errorf("Dropped %d, want 1", got)
					}
				} else if got := a.Stats().Dropped; got != 0 {
					t.Errorf("Dropped %d after a failure, want 0", got)
				}
			})
		}
	}
}
