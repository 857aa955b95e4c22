package upstream

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestCallTooLargeNotABreakerFailure: a service's 414 or 431 refuses the
// size of one call, which a client's parameters can cause; it is
// unavailable for that call but not counted against the service's
// breaker, which every dealer shares. Until 2026-11-29 three such calls
// opened it.
func TestCallTooLargeNotABreakerFailure(t *testing.T) {
	for _, sc := range []int{414, 431} {
		ts := newTestServer(t)
		c := newTestClient(t, ts, func(o *Options) {
			o.Breaker = BreakerSettings{ConsecutiveFailures: 3, OpenFor: time.Minute, HalfOpenRequests: 1}
		})
		ts.set(sc, `{}`, 0)
		for i := 0; i < 10; i++ {
			if _, err := c.Vehicle(context.Background(), 1, "REWIND", "x"); !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrCircuitOpen) {
				t.Fatalf("status %d, call %d: %v, want unavailable, breaker closed", sc, i, err)
			}
		}
		if st := c.BreakerStates()[SvcInventory]; st != BreakerClosed {
			t.Errorf("ten %d answers left the breaker %s", sc, st)
		}
	}
}
