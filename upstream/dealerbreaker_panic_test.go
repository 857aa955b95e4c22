package upstream

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// panicOut is a body whose decoding panics (a decoder bug met on one
// dealer's records).
type panicOut struct{}

func (*panicOut) UnmarshalJSON([]byte) error { panic("decoder bug") }

// TestDealerBreakerTrialPanicEndsTrial: a dealer's trial call (its breaker
// half-open) that panics (a decoder bug on that dealer's records; the
// aggregator's guard recovers the panic and answers that request 500) is a
// failed trial, as the service breaker counts it. It was never recorded:
// the trial stayed "in flight" for ever, so every later call of that
// dealer to the service was refused (ErrCircuitOpen) until a restart, the
// open period passed or not, and prune kept the guard.
func TestDealerBreakerTrialPanicEndsTrial(t *testing.T) {
	fs := newDealerFailServer(t)
	c, err := New(Options{BaseURL: "http://" + fs.addr, Breaker: BreakerSettings{ConsecutiveFailures: 3, OpenFor: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	now := time.Now()
	var clock atomic.Int64
	c.inventory.track.now = func() time.Time { return now.Add(time.Duration(clock.Load())) }
	ctx := context.Background()
	list := func(dealer int64) error {
		_, err := c.ListVehicles(ctx, dealer, VehicleQuery{Service: "REWIND"})
		return err
	}
	if err := list(1); err != nil {
		t.Fatalf("dealer 1: %v", err)
	}
	fs.failTwo.Store(true)
	for range 3 {
		_ = list(2)
	}
	if err := list(2); !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("dealer 2 after 3 failures: %v, want its breaker's refusal", err)
	}
	// The trial, past the open period: the service answers, the decoding
	// panics.
	fs.failTwo.Store(false)
	clock.Store(int64(61 * time.Second))
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the trial's decoding did not panic")
			}
		}()
		_ = c.getFor(ctx, c.inventory, 2, c.begin("/inventory/v1/dealers/2/vehicles"), &panicOut{})
	}()
	// A failed trial: refused for another open period, then tried again.
	clock.Store(int64(122 * time.Second))
	if err := list(2); err != nil {
		t.Fatalf("dealer 2 after the panicked trial and another open period: %v, want its call made and served", err)
	}
}
