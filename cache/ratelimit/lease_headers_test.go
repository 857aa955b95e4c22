package ratelimit

import (
	"context"
	"testing"
	"time"
)

// TestLeaseRemainingFollowsRefill: a decision from a lease reports the
// tokens Redis's bucket has refilled since the grant, so the RateLimit
// field's r and t agree: t (seconds until full) is 0 only with r at the
// burst, and r never falls behind the bucket while t counts down. Before
// 2026-11-27 r stayed at its value at the grant: a key that paused after a
// burst read r=45;t=0 from its lease (and r=98;t=0 on the demo).
func TestLeaseRemainingFollowsRefill(t *testing.T) {
	clk := newFakeClock()
	l := backend{redis: true}.limiter(t, clk, Options{MaxLease: 20})
	lim := Limit{Rate: 1000, Burst: 100} // a token every millisecond
	ctx := context.Background()
	// At one instant, until the lease has grown to its cap and was just
	// refilled: the next decisions come from a lease with tokens to spare.
	var d Decision
	for i := 0; ; i++ {
		if i == 80 {
			t.Fatalf("no fresh lease in 80 requests: %+v", d)
		}
		if d = l.Allow(ctx, 1, "k", lim); !d.Allowed {
			t.Fatalf("refused: %+v", d)
		}
		if i >= 40 && d.Source == SourceRedis {
			break
		}
	}
	for _, c := range []struct {
		name  string
		after time.Duration
	}{
		{"at once", 0},
		{"5 ms later: five tokens back, not full", 5 * time.Millisecond},
		{"100 ms later: Redis's bucket full again", 95 * time.Millisecond},
	} {
		clk.Advance(c.after)
		prev := d
		d = l.Allow(ctx, 1, "k", lim)
		if d.Source != SourceLease {
			t.Fatalf("%s: want a decision from the lease, got %+v", c.name, d)
		}
		_, cur := d.AppendHeaders(nil, "p")
		refilled := int(c.after / time.Millisecond)
		if want := min(prev.Remaining+refilled-1, lim.Burst); d.Remaining < want {
			t.Errorf("%s: RateLimit %s after r=%d: want r >= %d", c.name, cur, prev.Remaining, want)
		}
		if full := d.Reset <= 0; full != (d.Remaining >= lim.Burst) {
			t.Errorf("%s: RateLimit %s: t says full=%v, r says %d of %d", c.name, cur, full, d.Remaining, lim.Burst)
		}
	}
}
