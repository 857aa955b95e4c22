package ratelimit

import (
	"context"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
)

// costBackends are the backends the cost tests run on: the in-process
// GCRA, miniredis and a real redis-server (leases and the script).
func costBackends(t *testing.T) []struct {
	name    string
	limiter func(t *testing.T, clk *fakeClock) *Limiter
} {
	srv := redistest.Start(t)
	return []struct {
		name    string
		limiter func(t *testing.T, clk *fakeClock) *Limiter
	}{
		{"local", func(t *testing.T, clk *fakeClock) *Limiter { return newLimiter(t, Options{Now: clk.Now}) }},
		{"miniredis", func(t *testing.T, clk *fakeClock) *Limiter {
			_, c := startMini(t)
			return newLimiter(t, Options{Redis: c, Now: clk.Now})
		}},
		{"redis-server", func(t *testing.T, clk *fakeClock) *Limiter {
			return newLimiter(t, Options{Redis: srv.Client(), Now: clk.Now})
		}},
	}
}

// TestCostSpendsTokens: a request of cost c spends c tokens, all or none,
// on every backend and through leases: the tokens admitted never pass the
// bucket's bound (Burst + Rate x T), and stay within the cost of one
// waiting request (plus a lease's leftovers) below it.
func TestCostSpendsTokens(t *testing.T) {
	tests := []struct {
		name  string
		lim   Limit
		costs []int // cycled, one request per step
		every time.Duration
		dur   time.Duration
	}{
		{"10/s burst 20, searches of 5 between listings", Limit{Rate: 10, Burst: 20}, []int{5, 1, 1, 1}, time.Millisecond, 2 * time.Second},
		{"10/s burst 20, only searches", Limit{Rate: 10, Burst: 20}, []int{5}, time.Millisecond, 2 * time.Second},
		{"1000/s burst 100 (leases of 20), cost 7", Limit{Rate: 1000, Burst: 100}, []int{7}, 250 * time.Microsecond, time.Second},
		{"1000/s burst 100 (leases of 20), mixed", Limit{Rate: 1000, Burst: 100}, []int{3, 1, 7, 1, 1}, 250 * time.Microsecond, time.Second},
		{"cost above the burst is the burst", Limit{Rate: 2, Burst: 3}, []int{10}, 10 * time.Millisecond, 3 * time.Second},
	}
	for _, b := range costBackends(t) {
		for ti, tt := range tests {
			t.Run(b.name+"/"+tt.name, func(t *testing.T) {
				clk := newFakeClock()
				l := b.limiter(t, clk)
				key := "cost" + string(rune('a'+ti))
				tokens, admitted, maxCost := 0, 0, 0
				i := 0
				for at := time.Duration(0); at <= tt.dur; at += tt.every {
					c := tt.costs[i%len(tt.costs)]
					i++
					d := l.AllowN(context.Background(), 9, key, tt.lim, c)
					want := min(c, tt.lim.Burst)
					maxCost = max(maxCost, want)
					if d.Cost != want {
						t.Fatalf("cost %d charged as %d, want %d", c, d.Cost, want)
					}
					if d.Allowed {
						tokens += d.Cost
						admitted++
					} else if d.RetryAfter <= 0 {
						t.Fatalf("rejected with RetryAfter %v", d.RetryAfter)
					}
					clk.Advance(tt.every)
				}
				bound := tt.lim.Burst + int(tt.lim.Rate*tt.dur.Seconds())
				slack := maxCost - 1 + 2*(l.leaseCap(tt.lim)-1)
				if tokens > bound || tokens < bound-slack {
					t.Fatalf("spent %d tokens in %d admissions, want between %d and %d", tokens, admitted, bound-slack, bound)
				}
				t.Logf("%d tokens in %d admissions (bound %d), %d Redis calls", tokens, admitted, bound, l.Stats().RedisCalls)
			})
		}
	}
}

// TestCostRetryAfterExact: a rejected request of cost c may retry exactly
// when c tokens exist (not a microsecond earlier), and a cached rejection
// of an expensive request does not hold back a cheap one that fits.
func TestCostRetryAfterExact(t *testing.T) {
	lim := Limit{Rate: 10, Burst: 10} // one token per 100ms
	for _, b := range costBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			clk := newFakeClock()
			l := b.limiter(t, clk)
			ctx := context.Background()
			for range 2 {
				if d := l.AllowN(ctx, 1, "k", lim, 5); !d.Allowed {
					t.Fatalf("full bucket refused cost 5: %+v", d)
				}
			}
			d := l.AllowN(ctx, 1, "k", lim, 5)
			if d.Allowed || d.RetryAfter != 500*time.Millisecond {
				t.Fatalf("empty bucket, cost 5: %+v, want RetryAfter 500ms", d)
			}
			clk.Advance(100 * time.Millisecond) // one token
			if d := l.AllowN(ctx, 1, "k", lim, 5); d.Allowed || d.RetryAfter != 400*time.Millisecond {
				t.Fatalf("one token, cost 5: %+v, want RetryAfter 400ms", d)
			}
			if d := l.AllowN(ctx, 1, "k", lim, 1); !d.Allowed {
				t.Fatalf("one token, cost 1 held back by the cached cost-5 rejection: %+v", d)
			}
			d = l.AllowN(ctx, 1, "k", lim, 3)
			if d.Allowed || d.RetryAfter != 300*time.Millisecond {
				t.Fatalf("no token, cost 3: %+v, want RetryAfter 300ms", d)
			}
			clk.Advance(d.RetryAfter - time.Microsecond)
			if d := l.AllowN(ctx, 1, "k", lim, 3); d.Allowed || d.RetryAfter != time.Microsecond {
				t.Fatalf("1µs early: %+v", d)
			}
			clk.Advance(time.Microsecond)
			if d := l.AllowN(ctx, 1, "k", lim, 3); !d.Allowed || d.Remaining != 0 {
				t.Fatalf("at RetryAfter: %+v", d)
			}
		})
	}
}

// TestCostLocalRemaining: the in-process GCRA counts Remaining and
// RetryAfter in tokens.
func TestCostLocalRemaining(t *testing.T) {
	clk := newFakeClock()
	l := newLimiter(t, Options{Now: clk.Now})
	lim := Limit{Rate: 1, Burst: 12}
	for i, want := range []int{7, 2} {
		d := l.AllowN(context.Background(), 1, "k", lim, 5)
		if !d.Allowed || d.Remaining != want {
			t.Fatalf("request %d: %+v, want remaining %d", i, d, want)
		}
	}
	if d := l.AllowN(context.Background(), 1, "k", lim, 5); d.Allowed || d.RetryAfter != 3*time.Second {
		t.Fatalf("third: %+v, want RetryAfter 3s", d)
	}
}
