package ratelimit

import (
	"context"
	"io"
	"net"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/redis/go-redis/v9"
)

// latencyProxy forwards TCP to target and delays every reply chunk by d
// (constant latency, no throughput limit): a Redis that is slow but never
// slower than d.
func latencyProxy(t *testing.T, target string, d time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			wg.Add(3)
			go func() { defer wg.Done(); _, _ = io.Copy(s, c); _ = s.Close() }()
			type chunk struct {
				b   []byte
				due time.Time
			}
			q := make(chan chunk, 1024)
			go func() {
				defer wg.Done()
				defer close(q)
				for {
					buf := make([]byte, 32<<10)
					n, err := s.Read(buf)
					if n > 0 {
						q <- chunk{buf[:n], time.Now().Add(d)}
					}
					if err != nil {
						return
					}
				}
			}()
			go func() {
				defer wg.Done()
				defer c.Close()
				for ch := range q {
					time.Sleep(time.Until(ch.due))
					if _, err := c.Write(ch.b); err != nil {
						return
					}
				}
			}()
			t.Cleanup(func() { _ = c.Close(); _ = s.Close() })
		}
	}()
	return ln.Addr().String()
}

// TestSlowRedisOneBudget: a Redis whose every reply takes 80 ms,
// under a RedisTimeout of 100 ms, is "not slow" by the limiter's rule (no
// call times out, Redis is never marked down), so no request should wait
// on the limiter much longer than one RedisTimeout. A burst of 30
// concurrent requests of one key of the default plan (50/s burst 100: lease
// cap 6) waits for up to three other requests' refills and then makes its
// own call: up to 4 x the budget.
func TestSlowRedisOneBudget(t *testing.T) {
	const delay = 80 * time.Millisecond
	const budget = 100 * time.Millisecond
	l := slowRedisLimiter(t, delay, Options{RedisTimeout: budget})
	lim := Limit{Rate: 50, Burst: 100}
	const n = 30
	ds, lat := burst(l, n, lim)
	sources := make([]string, n)
	for i, d := range ds {
		sources[i] = d.Source
	}
	st := l.Stats()
	sorted := append([]time.Duration(nil), lat...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	t.Logf("latencies: min %v median %v max %v; redis calls %d, errors %d, fallback active %v",
		sorted[0], sorted[n/2], sorted[n-1], st.RedisCalls, st.RedisErrors, st.FallbackActive)
	if st.RedisErrors != 0 {
		t.Skipf("a call timed out (%d errors): the machine is too loaded for this measurement", st.RedisErrors)
	}
	// One budget plus generous scheduling slack (before: up to four
	// budgets, 330 ms).
	if max := sorted[n-1]; max > budget+budget*4/5 {
		t.Errorf("a request waited %v in the limiter on a Redis that answers every call in %v (RedisTimeout %v, never marked down)", max, delay, budget)
	}
}

// TestFailClosedHeaderNotFullNow: with fail_mode closed and Redis
// down every keyed request is a 429, yet its RateLimit field says
// r=0;t=0: no quota left and the quota full again in 0 seconds, which a
// client pacing itself on the field (as the README invites) reads as
// "retry now", against the Retry-After of the same answer.
func TestFailClosedHeaderNotFullNow(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: blackhole(t), MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	l := newLimiter(t, Options{Redis: rdb, RedisTimeout: 20 * time.Millisecond, FailMode: FailClosed})
	lim := Limit{Rate: 50, Burst: 100}
	var d Decision
	for range 2 {
		d = l.Allow(context.Background(), 1, "k", lim)
	}
	if d.Allowed || d.Source != SourceFailClosed {
		t.Fatalf("want a fail-closed rejection, got %+v", d)
	}
	_, cur := d.AppendHeaders(nil, "default")
	t.Logf("Retry-After: %d, RateLimit: %s", d.RetryAfterSeconds(), cur)
	if d.Reset <= 0 {
		t.Errorf("refused with r=%d but t=0 (RateLimit: %s; Retry-After: %d): the field says the quota is full now", d.Remaining, cur, d.RetryAfterSeconds())
	}
}

// slowRedisLimiter is a limiter on a real redis-server behind
// latencyProxy (every reply delayed by delay), its connection pool warmed
// (each new connection costs a handshake round trip) and the script
// loaded first, with no limiter watching; o.Redis is set.
func slowRedisLimiter(t *testing.T, delay time.Duration, o Options) *Limiter {
	t.Helper()
	srv := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: latencyProxy(t, srv.Addr, delay), MaxRetries: -1, PoolSize: 64})
	t.Cleanup(func() { _ = rdb.Close() })
	var warm sync.WaitGroup
	for range 64 {
		warm.Add(1)
		go func() { defer warm.Done(); _ = rdb.Ping(context.Background()).Err() }()
	}
	warm.Wait()
	if err := gcra.Load(context.Background(), rdb).Err(); err != nil {
		t.Fatal(err)
	}
	o.Redis = rdb
	return newLimiter(t, o)
}

// burst asks l for n requests of one key at once and returns each
// decision and how long it took.
func burst(l *Limiter, n int, lim Limit) ([]Decision, []time.Duration) {
	ds := make([]Decision, n)
	lat := make([]time.Duration, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			t0 := time.Now()
			ds[i] = l.Allow(context.Background(), 1, "hot", lim)
			lat[i] = time.Since(t0)
		}()
	}
	close(start)
	wg.Wait()
	return ds, lat
}
