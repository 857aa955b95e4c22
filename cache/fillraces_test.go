package cache

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestWaiterGivingUpServesStaleFromRedis: an entry within its
// stale-if-error window that this instance found only in Redis is served
// STALE to a caller whose context ends while the refill hangs, as the same
// entry held in L1 is (TestStaleWhileFillHangs). It was not: probeL2 kept
// it for the flight only, not as the caller's fallback (found by an audit).
func TestWaiterGivingUpServesStaleFromRedis(t *testing.T) {
	for _, l1 := range []int64{-1, 0} {
		clock := newFakeClock()
		_, rc := newMiniRedis(t)
		filler := newCache(t, Options{Now: clock.Now, Redis: rc, L1MaxBytes: l1})
		c := newCache(t, Options{Now: clock.Now, Redis: rc, L1MaxBytes: l1, RefreshTimeout: time.Second})
		pol := Policy{TTL: time.Second, StaleIfError: time.Hour}
		mustGet(t, filler, 1, "/k", pol, newFiller("old").fill)
		clock.Advance(2 * time.Second)
		release := make(chan struct{})
		hang := func(ctx context.Context) ([]byte, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil, errUpstream
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		e, res, err := c.Get(ctx, 1, []byte("/k"), pol, hang)
		cancel()
		close(release)
		if err != nil || res != Stale || string(e.Body()) != "old" {
			t.Errorf("L1MaxBytes=%d: got %v %v; want the Redis entry within stale-if-error served STALE", l1, res, err)
		}
	}
}

// TestFlightOutlivesTheLeadersDeadline: a shared fill is not bound by the
// deadline of the caller that happened to start it: a follower with more
// time (here none at all) gets the result after the leader's deadline
// ended. It failed with the leader's deadline (found by an audit).
func TestFlightOutlivesTheLeadersDeadline(t *testing.T) {
	c := newCache(t, Options{})
	joined := make(chan struct{}, 2)
	c.testHookJoin = func() { joined <- struct{}{} }
	release := make(chan struct{})
	started := make(chan struct{})
	var once sync.Once
	fill := func(ctx context.Context) ([]byte, error) {
		once.Do(func() { close(started) })
		select {
		case <-release:
			return []byte("body"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	pol := Policy{TTL: time.Minute}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		_, _, _ = c.Get(ctx, 1, []byte("/k"), pol, fill)
	}()
	<-started
	<-joined
	done := make(chan error, 1)
	go func() {
		_, _, err := c.Get(context.Background(), 1, []byte("/k"), pol, fill)
		done <- err
	}()
	<-joined
	time.AfterFunc(200*time.Millisecond, func() { close(release) })
	if err := <-done; err != nil {
		t.Fatalf("follower without a deadline failed with the leader's deadline: %v", err)
	}
}

// TestRefreshDoesNotOverwriteANewerFill: a background refresh (tracked in
// Cache.refreshing, not in the flights group) and a miss flight of the same
// key can run at once in one instance when the entry leaves its
// stale-while-revalidate window while the refresh is under way. The
// refresh, whose upstream answer was read first and ends last, must not
// store it over the newer entry the miss made (it did, in L1 and Redis;
// found by an audit): it finds that entry (storedSince) and stores nothing.
func TestRefreshDoesNotOverwriteANewerFill(t *testing.T) {
	clock := newFakeClock()
	_, rc := newMiniRedis(t)
	c := newCache(t, Options{Now: clock.Now, Redis: rc})
	pol := Policy{TTL: time.Second, StaleWhileRevalidate: time.Second, StaleIfError: time.Hour}
	mustGet(t, c, 1, "/k", pol, newFiller("v1").fill)

	clock.Advance(1500 * time.Millisecond) // stale: served, refreshed in the background
	refreshRead := make(chan struct{})
	releaseRefresh := make(chan struct{})
	refreshFill := func(context.Context) ([]byte, error) {
		close(refreshRead) // the refresh has read upstream: "v2" (older)
		<-releaseRefresh
		return []byte("v2-read-first"), nil
	}
	if _, res := mustGet(t, c, 1, "/k", pol, refreshFill); res != Stale {
		t.Fatalf("want STALE, got %v", res)
	}
	<-refreshRead
	clock.Advance(time.Second) // past stale-while-revalidate: a miss
	e, res := mustGet(t, c, 1, "/k", pol, func(context.Context) ([]byte, error) {
		return []byte("v3-read-later"), nil
	})
	if res != Miss || string(e.Body()) != "v3-read-later" {
		t.Fatalf("miss: %v %q", res, e.Body())
	}
	close(releaseRefresh)
	waitRefreshes(t, c)
	e, res = mustGet(t, c, 1, "/k", pol, newFiller("unused").fill)
	if string(e.Body()) != "v3-read-later" {
		t.Fatalf("after the refresh ended: %v %q; the newer fill was overwritten by the older refresh (2 upstream calls for one key in one instance)", res, e.Body())
	}
}
