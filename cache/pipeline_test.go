package cache

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/redis/go-redis/v9"
)

// These tests run the auto-pipelined L2 path against real redis-server
// processes: concurrent requests share round trips, and every promise of the
// cache holds for queued commands.

// l2Load runs workers goroutines of Gets over keys keys of three dealers
// (L1 is off in the caches these tests use, so every hit comes from Redis)
// until stop is closed. It records failed Gets and the slowest Get.
type l2Load struct {
	gets, failures atomic.Int64
	slowest        atomic.Int64 // ns
	wg             sync.WaitGroup
	stop           chan struct{}
}

func startL2Load(t *testing.T, c *Cache, workers, keys int, pol Policy) *l2Load {
	t.Helper()
	l := &l2Load{stop: make(chan struct{})}
	for w := 0; w < workers; w++ {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := w; ; i += workers {
				select {
				case <-l.stop:
					return
				default:
				}
				k := i % keys
				key := fmt.Sprintf("/v1/vehicles?page=%d", k)
				want := fmt.Sprintf("body %d", k)
				fill := func(context.Context) ([]byte, error) { return []byte(want), nil }
				start := time.Now()
				e, _, err := c.Get(context.Background(), int64(1+k%3), []byte(key), pol, fill)
				d := int64(time.Since(start))
				for {
					old := l.slowest.Load()
					if d <= old || l.slowest.CompareAndSwap(old, d) {
						break
					}
				}
				l.gets.Add(1)
				if err != nil || string(e.Body()) != want {
					l.failures.Add(1)
					t.Errorf("get %s: %v", key, err)
				}
			}
		}()
	}
	return l
}

func (l *l2Load) end() {
	close(l.stop)
	l.wg.Wait()
}

// TestPipelineSharesRoundTrips: with many concurrent L2 hits, commands ride
// shared round trips; with NoAutoPipeline each is a round trip of its own.
func TestPipelineSharesRoundTrips(t *testing.T) {
	srv := redistest.Start(t)
	for _, tc := range []struct {
		name           string
		off            bool
		minCmdsPerTrip float64
		maxCmdsPerTrip float64
	}{
		{"auto-pipelined", false, 2, 1e9},
		{"one call per round trip", true, 1, 1.1}, // purge-subscription resyncs pipeline SETNX+GET
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := newClient(t, srv.Addr)
			trips := &tripCounter{}
			rc.AddHook(trips)
			c := newCache(t, Options{Redis: rc, L1MaxBytes: -1, NoAutoPipeline: tc.off, Prefix: "rt" + fmt.Sprint(tc.off)})
			pol := Policy{TTL: time.Hour}
			warm := startL2Load(t, c, 1, 64, pol)
			waitFor(t, "warm-up", func() bool { return warm.gets.Load() >= 64 })
			warm.end()
			before := c.Stats()
			trips.reset()
			l := startL2Load(t, c, 64, 64, pol)
			waitWithin(t, 10*time.Second, "2000 gets", func() bool { return l.gets.Load() >= 2000 })
			l.end()
			st := c.Stats()
			if l.failures.Load() != 0 {
				t.Fatalf("%d failed gets", l.failures.Load())
			}
			if hits := st.L2Hits - before.L2Hits; hits < uint64(l.gets.Load())*9/10 {
				t.Fatalf("%d L2 hits of %d gets", hits, l.gets.Load())
			}
			per := float64(trips.cmds.Load()) / float64(trips.trips.Load())
			if per < tc.minCmdsPerTrip || per > tc.maxCmdsPerTrip {
				t.Fatalf("%.2f commands per round trip, want [%v, %v]", per, tc.minCmdsPerTrip, tc.maxCmdsPerTrip)
			}
			t.Logf("%.1f commands per round trip", per)
		})
	}
}

// outageUnderLoad runs 64 workers of L2 hits on c, calls fault once the
// load runs, waits for Redis to be marked down and for requests to go on
// without it, calls heal and waits for L2 hits again. No Get may fail;
// it returns the slowest Get from the fault on until requests went on
// without Redis.
func outageUnderLoad(t *testing.T, c *Cache, fault, heal func()) time.Duration {
	t.Helper()
	l := startL2Load(t, c, 64, 200, Policy{TTL: time.Hour})
	waitWithin(t, 30*time.Second, "load", func() bool { return c.Stats().L2Hits > 500 })
	l.slowest.Store(0) // from the fault on
	fault()
	waitWithin(t, 5*time.Second, "redis marked down", func() bool { return !c.RedisHealthy() })
	down := c.Stats()
	waitWithin(t, 10*time.Second, "requests to go on without redis", func() bool { return c.Stats().Fills > down.Fills+100 })
	slowWhileDown := time.Duration(l.slowest.Load())
	heal()
	// Recovery is paced by the probe's backoff, which doubles on every
	// failed probe up to backoffMax and is not reset by a recovery within
	// a minute. On a busy box a probe (or, once back, a hot-path call) can
	// miss its budget although Redis is up, so the next chance may be a
	// whole backoffMax away: recovery is waited for over three probe
	// periods, not a fixed few seconds that a second failed probe (seen:
	// back 8.9s after the fault with the old 10s window) exceeds.
	recovery := 3 * (backoffMax + max(c.redisTimeout, 250*time.Millisecond))
	waitWithin(t, recovery, "redis back", c.RedisHealthy)
	back := c.Stats().L2Hits
	waitWithin(t, recovery, "L2 hits again", func() bool { return c.Stats().L2Hits > back+100 })
	l.end()
	if l.failures.Load() != 0 {
		t.Fatalf("%d of %d gets failed", l.failures.Load(), l.gets.Load())
	}
	return slowWhileDown
}

// TestPipelineRedisKilled kills redis-server under 64 concurrent L2 hits: no
// Get fails or waits much beyond the budget, Redis is marked down (once, or
// twice with a stale connection after the restart), and after a restart the
// cache goes back to L2 by itself.
func TestPipelineRedisKilled(t *testing.T) {
	srv := redistest.Start(t)
	// Generous: under -race with other packages' tests on two cores a
	// healthy round trip can take a tenth of a second.
	const budget = 400 * time.Millisecond
	c := newCache(t, Options{Redis: newClient(t, srv.Addr), L1MaxBytes: -1, RedisTimeout: budget})
	slowWhileDown := outageUnderLoad(t, c, srv.Stop, srv.Restart)
	// From the kill until requests go on without Redis, a Get meets at most
	// two Redis calls (its lookup, the write of the flight it joins), each
	// abandoned at the budget; the rest is scheduling of 64 goroutines on a
	// box that may be shared (seen: 0.9s at a load average of 20 on 2 cores).
	if slowWhileDown > 2*budget+2*time.Second {
		t.Fatalf("slowest get %v with a %v budget while redis was down", slowWhileDown, budget)
	}
	// Marked down at the kill; a second mark is allowed: a connection
	// the pool held through the outage can fail once more right after the
	// restart (seen once in CI under -race). What matters is that no Get
	// failed and that the cache came back to L2 by itself (checked above).
	if ev := c.Stats().RedisDownEvents; ev < 1 || ev > 2 {
		t.Fatalf("%d redis-down events, want 1 (or 2 with one more after the restart)", ev)
	}
}

// TestPipelineQueuedCommandsTimeout stalls redis-server (SIGSTOP) under 64
// concurrent L2 hits: commands already written and commands queued behind
// them are abandoned at the budget, no Get fails, Redis is marked down so
// nothing more is queued, and the cache comes back when Redis does.
func TestPipelineQueuedCommandsTimeout(t *testing.T) {
	srv := redistest.Start(t)
	const budget = 250 * time.Millisecond
	// Socket timeouts far above the budget: the budget alone must bound
	// each caller's wait for a queued command.
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second, MaxRetries: -1})
	t.Cleanup(func() { _ = rc.Close() })
	c := newCache(t, Options{Redis: rc, L1MaxBytes: -1, RedisTimeout: budget})
	slowWhileDown := outageUnderLoad(t, c, srv.Pause, srv.Resume)
	// Without the budget a caller would wait for the socket timeout (5s).
	// A miss may meet two Redis calls before Redis is marked down (its
	// lookup, and the write of the flight it joins), each abandoned at the
	// budget.
	if slowWhileDown > 2*budget+2*time.Second {
		t.Fatalf("slowest get %v with a %v budget and a stalled redis", slowWhileDown, budget)
	}
}

// TestPipelineCluster: on the three-master Cluster the auto-pipelined path
// serves every dealer's entries (slots on all three masters) with shared
// round trips, and a master killed under load fails no Get.
func TestPipelineCluster(t *testing.T) {
	cl := redistest.StartCluster(t)
	cc := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:                 cl.Addrs(),
		ContextTimeoutEnabled: true,
		DialTimeout:           200 * time.Millisecond,
		ReadTimeout:           time.Second,
		WriteTimeout:          time.Second,
		MaxRedirects:          1,
	})
	t.Cleanup(func() { _ = cc.Close() })
	trips := &tripCounter{}
	cc.AddHook(trips)
	c := newCache(t, Options{Redis: cc, L1MaxBytes: -1, RedisTimeout: time.Second})
	pol := Policy{TTL: time.Hour}
	// Dealers 1..30 spread over the three masters.
	body := func(d int64) []byte { return bytes.Repeat([]byte(fmt.Sprint(d)), 100) }
	for d := int64(1); d <= 30; d++ {
		mustGet(t, c, d, "/v1/dealer", pol, func(context.Context) ([]byte, error) { return body(d), nil })
	}
	trips.reset()
	var wg sync.WaitGroup
	var hits atomic.Int64
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				d := int64(1 + (w+i)%30)
				e, res, err := c.Get(context.Background(), d, []byte("/v1/dealer"), pol, func(context.Context) ([]byte, error) { return body(d), nil })
				if err != nil || !bytes.Equal(e.Body(), body(d)) {
					t.Errorf("dealer %d: %v %v", d, res, err)
					return
				}
				if res == Hit {
					hits.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	// Under -race on a busy box a round trip may exceed the budget now and
	// then (a miss, filled); nearly all must be hits.
	if h := hits.Load(); h < 64*50*9/10 {
		t.Fatalf("%d hits of %d gets", h, 64*50)
	}
	if per := float64(trips.cmds.Load()) / float64(trips.trips.Load()); per < 2 {
		t.Fatalf("%.2f commands per round trip on the cluster", per)
	}

	l := startL2Load(t, c, 64, 200, pol)
	waitWithin(t, 10*time.Second, "load", func() bool { return l.gets.Load() > 500 })
	cl.Nodes[1].Stop()
	waitWithin(t, 5*time.Second, "redis marked down", func() bool { return !c.RedisHealthy() })
	n := l.gets.Load()
	waitWithin(t, 5*time.Second, "gets go on", func() bool { return l.gets.Load() > n+500 })
	l.end()
	if l.failures.Load() != 0 {
		t.Fatalf("%d of %d gets failed", l.failures.Load(), l.gets.Load())
	}
}
