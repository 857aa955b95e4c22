package ratelimit

import (
	"context"
	"testing"
	"time"
)

// The cached rejection of a refill (fromLease) keeps the exact time of the
// bucket's first token, which is past when the bucket holds some tokens but
// fewer than the refused cost. Until 2026-11-27 it was clamped to now, and
// every answer from it overstated the wait by up to cost-1 intervals: a
// cheaper request the bucket could pay was refused, and a retry after the
// Retry-After given was refused again with a longer one (found by an
// audit; the tests below failed).

// threeLeft is a limiter on miniredis with a fake clock whose key "k" has
// spent 7 of lim's burst of 10 and then been refused a request of cost 5
// (3 tokens left); it returns that refusal.
func threeLeft(t *testing.T, lim Limit) (*Limiter, *fakeClock, Decision) {
	t.Helper()
	ctx := context.Background()
	clk := newFakeClock()
	_, c := startMini(t)
	l := newLimiter(t, Options{Redis: c, Now: clk.Now})
	for i := range 7 {
		if !l.AllowN(ctx, 1, "k", lim, 1).Allowed {
			t.Fatalf("request %d refused", i)
		}
	}
	d := l.AllowN(ctx, 1, "k", lim, 5)
	if d.Allowed {
		t.Fatal("cost 5 with 3 tokens admitted")
	}
	return l, clk, d
}

// TestCachedRejectionLetsCheaperThrough: a rejection of a cost-5 request
// while the bucket holds 3 tokens does not refuse a cost-3 request.
func TestCachedRejectionLetsCheaperThrough(t *testing.T) {
	lim := Limit{Rate: 10, Burst: 10} // T = 100ms, leases of 1
	l, _, _ := threeLeft(t, lim)
	if d := l.AllowN(context.Background(), 1, "k", lim, 3); !d.Allowed {
		t.Errorf("cost-3 request refused with 3 tokens in the bucket: RetryAfter=%v source=%s", d.RetryAfter, d.Source)
	}
}

// TestCachedRejectionRetryAfterExact: after a cost-5 rejection whose
// Retry-After says 200ms, a second cost-5 request 10ms later is told less,
// and one is admitted once 200ms have passed.
func TestCachedRejectionRetryAfterExact(t *testing.T) {
	ctx := context.Background()
	lim := Limit{Rate: 10, Burst: 10}
	l, clk, d := threeLeft(t, lim)
	first := d.RetryAfter
	clk.Advance(10 * time.Millisecond)
	d2 := l.AllowN(ctx, 1, "k", lim, 5)
	if d2.Allowed {
		t.Fatal("admitted early")
	}
	if d2.RetryAfter > first {
		t.Errorf("second RetryAfter %v larger than the first %v (10ms later)", d2.RetryAfter, first)
	}
	clk.Advance(first - 10*time.Millisecond)
	if d3 := l.AllowN(ctx, 1, "k", lim, 5); !d3.Allowed {
		t.Errorf("cost-5 refused after the advertised Retry-After %v: RetryAfter=%v source=%s", first, d3.RetryAfter, d3.Source)
	}
}

// TestRetryAfterHeaderRetrySucceeds: on a 1/s, burst 10 plan with 3 tokens
// left, a cost-5 request is told Retry-After: 2 (seconds), and a retry
// after 2 s is admitted (it was refused, told 3 s more).
func TestRetryAfterHeaderRetrySucceeds(t *testing.T) {
	lim := Limit{Rate: 1, Burst: 10}
	l, clk, d := threeLeft(t, lim)
	secs := d.RetryAfterSeconds()
	clk.Advance(time.Duration(secs) * time.Second)
	if d2 := l.AllowN(context.Background(), 1, "k", lim, 5); !d2.Allowed {
		t.Errorf("retry after Retry-After: %d refused, new Retry-After: %d (source %s)", secs, d2.RetryAfterSeconds(), d2.Source)
	}
}

// TestRejectionReportsTheTokensThere: a request refused for its cost while
// the bucket holds fewer tokens reports those tokens as remaining (the
// RateLimit header's r), from Redis and from the cached rejection alike, so
// a client can send a cheaper request it can afford (r was 0).
func TestRejectionReportsTheTokensThere(t *testing.T) {
	ctx := context.Background()
	lim := Limit{Rate: 10, Burst: 10}
	l, clk, d := threeLeft(t, lim)
	if d.Remaining != 3 {
		t.Fatalf("cost 5 with 3 tokens: remaining %d, want 3", d.Remaining)
	}
	clk.Advance(10 * time.Millisecond)
	if d := l.AllowN(ctx, 1, "k", lim, 5); d.Allowed || d.Remaining != 3 || d.Source != SourceLease {
		t.Fatalf("cached rejection: allowed %v, remaining %d, source %s, want refused with 3 from the lease", d.Allowed, d.Remaining, d.Source)
	}
	clk.Advance(100 * time.Millisecond) // one more token
	if d := l.AllowN(ctx, 1, "k", lim, 5); d.Allowed || d.Remaining != 4 {
		t.Fatalf("a token later: allowed %v, remaining %d, want refused with 4", d.Allowed, d.Remaining)
	}
}
