package cache

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// blockingFill is a FillFunc that counts the fills running at once and
// blocks each until release is closed (or its context ends).
type blockingFill struct {
	release chan struct{}
	running atomic.Int64
	peak    atomic.Int64
	calls   atomic.Int64
}

func (b *blockingFill) fill(ctx context.Context) ([]byte, error) {
	b.calls.Add(1)
	n := b.running.Add(1)
	defer b.running.Add(-1)
	for {
		p := b.peak.Load()
		if n <= p || b.peak.CompareAndSwap(p, n) {
			break
		}
	}
	select {
	case <-b.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return []byte("new"), nil
}

// TestRefreshesBounded: at most Options.MaxRefreshes background refreshes
// run at once (README, Response cache, "refreshed once in the background
// ... at most cache.max_refreshes"). A burst of stale hits over more
// distinct keys than the bound, with fills that hang, is answered stale at
// once; the bound's worth of fills run, the other hits count as skipped and
// start nothing; a miss still fills (foreground fills are not bounded); a
// hit of a key whose refresh runs is not a skip; once the fills end, a
// later stale hit of a skipped key refreshes it. Before the bound every
// stale key started its own fill: 20 upstream calls at once here.
func TestRefreshesBounded(t *testing.T) {
	const (
		bound = 4
		keys  = 20
	)
	pol := Policy{TTL: time.Second, StaleWhileRevalidate: time.Hour, StaleIfError: time.Hour}
	cases := []struct {
		name  string
		redis bool // L1 off, entries in Redis: the stale hits are L2 hits (probeL2)
	}{
		{name: "stale hits from L1"},
		{name: "stale hits from Redis", redis: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			opts := Options{Now: clock.Now, MaxRefreshes: bound, RefreshTimeout: time.Minute}
			if tc.redis {
				_, opts.Redis = newMiniRedis(t)
				opts.L1MaxBytes = -1
			}
			c := newCache(t, opts)
			key := func(i int) string { return fmt.Sprintf("/listing?page=%d", i) }
			for i := range keys {
				if _, res := mustGet(t, c, 1, key(i), pol, newFiller("old").fill); res != Miss {
					t.Fatalf("key %d first get: %v, want MISS", i, res)
				}
			}
			clock.Advance(2 * time.Second) // past the TTL, within stale-while-revalidate

			slow := &blockingFill{release: make(chan struct{})}
			var releaseOnce sync.Once
			release := func() { releaseOnce.Do(func() { close(slow.release) }) }
			defer release()

			// Every stale hit answers at once: none waits for a fill or
			// a slot (the fills hang until released).
			done := make(chan error, 1)
			go func() {
				for i := range keys {
					start := time.Now()
					e, res, err := c.Get(context.Background(), 1, []byte(key(i)), pol, slow.fill)
					if err != nil || res != Stale || string(e.Body()) != "old" {
						done <- fmt.Errorf("key %d: %v, %v, want the stale entry", i, res, err)
						return
					}
					if d := time.Since(start); d > time.Second {
						done <- fmt.Errorf("key %d: the stale answer took %v", i, d)
						return
					}
				}
				done <- nil
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("stale hits blocked behind the hanging refreshes")
			}
			waitFor(t, "the bound's worth of refreshes running", func() bool { return slow.running.Load() >= bound })

			// A hit of a key whose refresh runs joins it: no fill, no skip.
			if _, res := mustGet(t, c, 1, key(0), pol, slow.fill); res != Stale {
				t.Fatalf("key 0 again: %v, want STALE", res)
			}
			// A miss is a foreground fill: neither bounded nor counted.
			if e, res := mustGet(t, c, 2, "/listing?page=1", pol, newFiller("miss").fill); res != Miss || string(e.Body()) != "miss" {
				t.Fatalf("miss while the bound is reached: %v %q, want MISS", res, e.Body())
			}

			st := c.Stats()
			if got := slow.calls.Load(); got != bound {
				t.Errorf("%d refresh fills started, want %d (the bound)", got, bound)
			}
			if st.Refreshes != bound || st.RefreshesSkipped != keys-bound || st.RefreshesInFlight != bound || st.MaxRefreshes != bound {
				t.Errorf("refreshes %d, skipped %d, in flight %d, max %d; want %d, %d, %d, %d",
					st.Refreshes, st.RefreshesSkipped, st.RefreshesInFlight, st.MaxRefreshes, bound, keys-bound, bound, bound)
			}

			release()
			waitRefreshes(t, c)
			waitFor(t, "the slots given back", func() bool { return c.Stats().RefreshesInFlight == 0 })
			if p := slow.peak.Load(); p != bound {
				t.Errorf("%d refresh fills ran at once, want %d", p, bound)
			}

			// The next stale hit of a skipped key refreshes it.
			last := key(keys - 1)
			if _, res := mustGet(t, c, 1, last, pol, slow.fill); res != Stale {
				t.Fatalf("skipped key again: %v, want STALE", res)
			}
			waitRefreshes(t, c)
			if got := slow.calls.Load(); got != bound+1 {
				t.Errorf("%d refresh fills after the skipped key's next hit, want %d", got, bound+1)
			}
			if e, res := mustGet(t, c, 1, last, pol, slow.fill); res != Hit || string(e.Body()) != "new" {
				t.Errorf("skipped key after its refresh: %v %q, want HIT \"new\"", res, e.Body())
			}
			if st := c.Stats(); st.Refreshes != bound+1 || st.RefreshesSkipped != keys-bound {
				t.Errorf("refreshes %d, skipped %d after the fills ended; want %d, %d", st.Refreshes, st.RefreshesSkipped, bound+1, keys-bound)
			}
		})
	}
}

// TestSetMaxRefreshes: the bound's zero value is the default, a negative
// one means no bound, and a change at run time applies to the next stale
// hit (cache.max_refreshes is reloadable).
func TestSetMaxRefreshes(t *testing.T) {
	cases := []struct {
		name string
		set  int
		want int64
	}{
		{"zero is the default", 0, DefaultMaxRefreshes},
		{"negative is no bound", -5, -1},
		{"one", 1, 1},
		{"many", 100000, 100000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCache(t, Options{MaxRefreshes: tc.set})
			if got := c.Stats().MaxRefreshes; got != tc.want {
				t.Errorf("New with MaxRefreshes %d: bound %d, want %d", tc.set, got, tc.want)
			}
			c2 := newCache(t, Options{MaxRefreshes: 7})
			c2.SetMaxRefreshes(tc.set)
			if got := c2.Stats().MaxRefreshes; got != tc.want {
				t.Errorf("SetMaxRefreshes(%d): bound %d, want %d", tc.set, got, tc.want)
			}
		})
	}

	// Lowered at run time to 1, then raised: the next stale hits follow.
	clock := newFakeClock()
	c := newCache(t, Options{Now: clock.Now, MaxRefreshes: 8})
	pol := Policy{TTL: time.Second, StaleWhileRevalidate: time.Hour}
	for i := range 3 {
		mustGet(t, c, 1, fmt.Sprint(i), pol, newFiller("old").fill)
	}
	clock.Advance(2 * time.Second)
	slow := &blockingFill{release: make(chan struct{})}
	defer close(slow.release)
	c.SetMaxRefreshes(1)
	for i := range 3 {
		mustGet(t, c, 1, fmt.Sprint(i), pol, slow.fill)
	}
	if st := c.Stats(); st.Refreshes != 1 || st.RefreshesSkipped != 2 {
		t.Fatalf("bound 1: refreshes %d, skipped %d; want 1, 2", st.Refreshes, st.RefreshesSkipped)
	}
	c.SetMaxRefreshes(-1)
	for i := range 3 {
		mustGet(t, c, 1, fmt.Sprint(i), pol, slow.fill)
	}
	if st := c.Stats(); st.Refreshes != 3 || st.RefreshesSkipped != 2 || st.RefreshesInFlight != 3 {
		t.Fatalf("no bound: refreshes %d, skipped %d, in flight %d; want 3, 2, 3", st.Refreshes, st.RefreshesSkipped, st.RefreshesInFlight)
	}
}
