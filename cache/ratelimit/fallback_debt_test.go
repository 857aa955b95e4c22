package ratelimit

import (
	"context"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
)

// TestFallbackDebtLostOnRejection: what the fallback admitted is charged
// to the shared bucket by the first call after Redis returns, also when
// that call is refused (README, Rate limiting, "Redis slow or down"), so
// the shared bucket hands out no second burst. Before 2026-11-27 a refused
// first call dropped the debt (the script returned before its SET) while
// the limiter cleared e.unpaid as if it had been charged.
func TestFallbackDebtLostOnRejection(t *testing.T) {
	srv := redistest.Start(t)
	clk := newFakeClock()
	opts := Options{Redis: srv.Client(), Now: clk.Now, ProbeInterval: 500 * time.Millisecond, RedisTimeout: time.Second}
	a := newLimiter(t, opts)
	b := newLimiter(t, opts)
	ctx := context.Background()
	lim := Limit{Rate: 1, Burst: 10} // lease cap 1: exact

	if d := a.Allow(ctx, 1, "k", lim); !d.Allowed || d.Source != SourceRedis {
		t.Fatalf("up: %+v", d)
	}
	srv.Stop()
	local := 0
	for range 12 {
		if a.Allow(ctx, 1, "k", lim).Allowed {
			local++
		}
	}
	if local != 9 {
		t.Fatalf("fallback admitted %d, want 9", local)
	}
	srv.Restart()                       // empty
	clk.Advance(500 * time.Millisecond) // the probe; half a token earned
	if d := a.Allow(ctx, 1, "k", lim); d.Allowed || d.Source != SourceRedis {
		t.Fatalf("first call after return: %+v (want a Redis rejection)", d)
	}
	// The shared bucket is drained (10 admitted within 0.5 s of a 1/s,
	// burst 10 bucket): another instance must get nothing now.
	got := allowN(b, 1, "k", lim, 10)
	clk.Advance(600 * time.Millisecond) // one token earned in all
	got += allowN(a, 1, "k", lim, 10)
	if got > 1 {
		t.Fatalf("after Redis returned, %d more admitted within 1.1 s (want at most 1): the fallback's debt was not charged", got)
	}
}
