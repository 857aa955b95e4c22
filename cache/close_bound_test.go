package cache

import (
	"context"
	"testing"
	"time"
)

// TestCloseBoundedByRefreshTimeout: Close waits for the background
// refreshes it cancels, and says it waits at most the refresh timeout for
// one whose fill does not honour its context. It waited without a bound:
// a refresh whose fill ignored the cancellation (an upstream call blocked
// past its context) kept Close, and so cmd/dealer-edge's shutdown after
// its grace period, from returning until the fill ended, if ever. The
// fill here ignores its context until the test ends; Close must return
// meanwhile, once RefreshTimeout has passed.
func TestCloseBoundedByRefreshTimeout(t *testing.T) {
	clk := newFakeClock()
	a := newCache(t, Options{Now: clk.Now, RefreshTimeout: 50 * time.Millisecond, L1MaxBytes: 8 << 20})
	pol := Policy{TTL: time.Second, StaleWhileRevalidate: time.Hour}
	mustGet(t, a, 5, "/k", pol, newFiller("old").fill)
	clk.Advance(2 * time.Second)
	started, release := make(chan struct{}), make(chan struct{})
	defer close(release) // the fill ends with the test
	if _, res := mustGet(t, a, 5, "/k", pol, func(context.Context) ([]byte, error) {
		close(started)
		<-release // ignores its context
		return []byte("new"), nil
	}); res != Stale {
		t.Fatalf("second Get: %v, want a stale hit", res)
	}
	<-started
	closeDone := make(chan struct{})
	go func() {
		_ = a.Close()
		close(closeDone)
	}()
	select {
	case <-closeDone:
	case <-time.After(10 * time.Second): // a failure guard, 200 times the bound
		t.Fatal("Close has not returned 10 s after it was called: it waits without bound for a refresh whose fill ignores its context")
	}
}
