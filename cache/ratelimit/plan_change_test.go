package ratelimit

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
)

// TestPlanChangeNoLongLockout: a key's bucket is one TAT in Redis
// (and locally), kept across a change of the key's limit (a plan change by
// the dealers service, or rate_limit.plans reloaded). A key that drained a
// plan with a long refill window (3600 requests an hour: rate 1, burst
// 3600, valid: refill <= 7 days) and is then moved to a plan that refills
// in 2 s (the built-in default, 50/s burst 100) must not be locked out for
// the old plan's hour: under the new limit a drained bucket is full again
// after Burst/Rate = 2 s.
func TestPlanChangeNoLongLockout(t *testing.T) {
	ctx := context.Background()
	old, nu := Limit{Rate: 1, Burst: 3600}, Limit{Rate: 50, Burst: 100}
	check := func(t *testing.T, l *Limiter, clk *fakeClock) {
		// One search-like request of cost = burst drains the old plan.
		if d := l.AllowN(ctx, 1, "k", old, old.Burst); !d.Allowed {
			t.Fatalf("drain under the old plan: %+v", d)
		}
		clk.Advance(time.Second)
		d := l.Allow(ctx, 1, "k", nu)
		if d.Allowed {
			return
		}
		// At worst the bucket is empty under the new plan: the first
		// token is one new interval away, the bucket full in its window.
		if d.RetryAfter > nu.Window() || d.Reset > nu.Window() {
			t.Fatalf("after the plan change to %+v (window %v): rejected with Retry-After %ds, RateLimit t=%ds (%s)",
				nu, nu.Window(), d.RetryAfterSeconds(), ceilSeconds(d.Reset), d.Source)
		}
		clk.Advance(d.RetryAfter)
		if d := l.Allow(ctx, 1, "k", nu); !d.Allowed {
			t.Fatalf("a retry after Retry-After: %+v", d)
		}
	}
	t.Run("redis", func(t *testing.T) {
		srv := redistest.Start(t)
		clk := newFakeClock()
		check(t, newLimiter(t, Options{Redis: srv.Client(), Now: clk.Now, RedisTimeout: time.Second}), clk)
	})
	t.Run("local", func(t *testing.T) {
		clk := newFakeClock()
		check(t, newLimiter(t, Options{Now: clk.Now}), clk)
	})
}

// TestDebtChargedOnceByConcurrentCalls: call reads the key's unpaid
// fallback admissions before its round trip and subtracts what it read
// after. A refill and the direct calls of requests that lost maxRounds
// waits run call concurrently for one key, so each subtracts the same
// count and unpaid goes negative. The next outage's fallback admissions
// then only bring it back towards zero: no call after that outage sends
// the debt, and a Redis that came back empty hands out a second burst
// (what TestFallbackDebtLostOnRejection guards against, by another path).
func TestDebtChargedOnceByConcurrentCalls(t *testing.T) {
	srv := redistest.Start(t)
	clk := newFakeClock()
	opts := Options{Redis: srv.Client(), Now: clk.Now, ProbeInterval: 500 * time.Millisecond, RedisTimeout: 2 * time.Second}
	a := newLimiter(t, opts)
	b := newLimiter(t, opts)
	ctx := context.Background()
	lim := Limit{Rate: 1, Burst: 10} // lease cap 1: exact

	if d := a.Allow(ctx, 1, "k", lim); !d.Allowed || d.Source != SourceRedis {
		t.Fatalf("up: %+v", d)
	}
	// Outage 1: the fallback admits the rest of the burst.
	srv.Stop()
	if n := allowN(a, 1, "k", lim, 12); n != 9 {
		t.Fatalf("outage 1: fallback admitted %d, want 9", n)
	}
	srv.Restart()
	clk.Advance(time.Second)
	// Redis is back: three calls of the key at once (a refill and two
	// requests gone direct), each bounded by its own budget.
	_, e := a.entry(1, "k", a.now())
	srv.Pause()
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			now := a.now()
			if _, err := a.call(ctx, e, lim, 1, 1, now, now+int64(2*time.Second)); err != nil {
				t.Errorf("call: %v", err)
			}
		}()
	}
	time.Sleep(100 * time.Millisecond) // all three sent
	srv.Resume()
	wg.Wait()
	if u := e.unpaid.Load(); u < 0 {
		t.Logf("unpaid after the concurrent calls: %d", u)
	}
	// Much later (every bucket full again), outage 2: the fallback
	// admits a burst, and Redis comes back empty.
	clk.Advance(time.Minute)
	srv.Stop()
	if n := allowN(a, 1, "k", lim, 12); n != 10 {
		t.Fatalf("outage 2: fallback admitted %d, want 10", n)
	}
	srv.Restart()
	clk.Advance(500 * time.Millisecond)
	a.Allow(ctx, 1, "k", lim) // the first call after the return: it must carry the debt
	got := allowN(b, 1, "k", lim, 10)
	if got > 1 {
		t.Fatalf("after outage 2 another instance was admitted %d more within 0.5 s of a 1/s burst 10 bucket that outage 2 drained (want at most 1): the fallback's debt was not charged (unpaid %d)", got, e.unpaid.Load())
	}
}
