package ratelimit

import (
	"testing"
	"time"
)

// TestBudgetFailClosedOnHealthyRedis: Redis answers every call in
// 20 ms, well within a 50 ms RedisTimeout (the default); it is never
// marked down. 30 concurrent requests of one key (burst 100: far under
// quota) must all be admitted. With fail_mode closed, a request that
// spent part of its one budget waiting for other requests' refills and
// then holds the refill itself has its call cut short (errBudget): it,
// and the waiters that find no lease after it, get a fail-closed 429.
func TestBudgetFailClosedOnHealthyRedis(t *testing.T) {
	const delay = 20 * time.Millisecond
	const budget = 50 * time.Millisecond
	l := slowRedisLimiter(t, delay, Options{RedisTimeout: budget, FailMode: FailClosed})
	lim := Limit{Rate: 50, Burst: 100}
	const n = 30
	ds, _ := burst(l, n, lim)
	sources := make([]string, n)
	allowed := make([]bool, n)
	for i, d := range ds {
		sources[i], allowed[i] = d.Source, d.Allowed
	}
	st := l.Stats()
	count := map[string]int{}
	refused := 0
	for i := range n {
		count[sources[i]]++
		if !allowed[i] {
			refused++
		}
	}
	t.Logf("sources %v; refused %d; redis calls %d, errors %d, fallback active %v", count, refused, st.RedisCalls, st.RedisErrors, st.FallbackActive)
	if st.RedisErrors != 0 || st.FallbackActive {
		t.Skip("Redis timed out: machine too loaded")
	}
	if refused > 0 {
		t.Errorf("%d of %d requests of a key under its quota refused (fail-closed) on a Redis answering every call in %v < RedisTimeout %v, never marked down", refused, n, delay, budget)
	}
}
