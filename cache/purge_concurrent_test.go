package cache

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
)

// TestConcurrentPurgesOverAGuess: two purges of one dealer reach Redis
// together while the dealer holds a guessed generation (a purge Redis did
// not take, pending). Both INCRs are taken and published, and the first to
// finish clears the guess; the second found it cleared and answered
// ErrPurgeDeferred ("the dealer's local generation moved on"): a 503
// "purge not taken by Redis" for a purge Redis had taken, a needless
// local bump (L2 unused for the dealer until the next flush) and one more
// INCR later. Seen as TestClusterSlotMigrationUnderLoad's purgeReaches
// failing under load: its purge ran while the probe, Redis back, flushed
// the purges deferred during a stall. Here the overlap is made certain:
// Redis holds both purges' writes (CLIENT PAUSE WRITE) until both wait.
func TestConcurrentPurgesOverAGuess(t *testing.T) {
	srv := redistest.Start(t)
	c := newCache(t, Options{Redis: edgeLikeRedis(t, []string{srv.Addr}, "", 5*time.Second), RedisTimeout: 5 * time.Second})
	ctx := context.Background()
	const dealer = 7
	g0 := mustGen(t, c, dealer)
	st := c.gens.get(dealer)
	// What a purge that found Redis down leaves behind (PurgeDealer).
	c.bumpLocal(dealer, st)
	c.pendingMu.Lock()
	c.pending[dealer] = struct{}{}
	c.pendingMu.Unlock()
	if st.guess.Load() == 0 {
		t.Fatal("no guess after a local bump")
	}

	admin := srv.Client()
	if err := admin.Do(ctx, "client", "pause", 10000, "write").Err(); err != nil {
		t.Fatal(err)
	}
	unpaused := false
	unpause := func() {
		if !unpaused {
			unpaused = true
			if err := admin.Do(ctx, "client", "unpause").Err(); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(unpause)
	// Clients held by the pause (flags=b); the instance's own background
	// writes may be among them, so counted before the purges start.
	blocked := func() int {
		list, err := admin.ClientList(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(list, " flags=b ")
	}
	before := blocked()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.PurgeDealer(ctx, dealer)
		}()
	}
	// Both purges' SETNX+INCR are held by the pause: each has read the
	// guess it covers.
	waitWithin(t, 5*time.Second, "both purges waiting on Redis", func() bool {
		return blocked() >= before+2
	})
	unpause()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("purge %d: %v (deferred: %v), want taken", i, err, errors.Is(err, ErrPurgeDeferred))
		}
	}
	if g := st.guess.Load(); g != 0 {
		t.Errorf("guess %d left after both purges reached Redis", g)
	}
	remote, err := admin.Get(ctx, c.genKey(dealer)).Uint64()
	if err != nil || remote < g0+2 {
		t.Errorf("generation in Redis %d (%v), want at least %d (two INCRs past %d)", remote, err, g0+2, g0)
	}
	if got := st.gen.Load(); got != remote {
		t.Errorf("local generation %d, Redis %d", got, remote)
	}
}
