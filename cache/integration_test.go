package cache

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/redis/go-redis/v9"
)

// These tests run against real redis-server processes (skipped when it is
// not installed, failing under CI=true).

func waitWithin(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestIntegrationRedisRestart kills redis-server under load and starts it
// again: no Get fails, both instances go back to L2 by themselves, and
// purges propagate again.
func TestIntegrationRedisRestart(t *testing.T) {
	srv := redistest.Start(t)
	logs := &logRecorder{}
	mk := func() *Cache {
		return newCache(t, Options{Redis: newClient(t, srv.Addr), RedisTimeout: 100 * time.Millisecond, Logger: slogNew(logs)})
	}
	a, b := mk(), mk()
	waitFor(t, "subscriptions", func() bool { return a.Stats().PubSubUp && b.Stats().PubSubUp })
	pol := Policy{TTL: time.Hour, StaleIfError: time.Hour}
	fill := func(context.Context) ([]byte, error) { return []byte("body"), nil }

	var gets, failures atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		c := a
		if w%2 == 1 {
			c = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("/v1/vehicles?page=%d", i%50)
				if _, _, err := c.Get(context.Background(), int64(1+i%3), []byte(key), pol, fill); err != nil {
					failures.Add(1)
					t.Errorf("get failed: %v", err)
				}
				gets.Add(1)
				time.Sleep(100 * time.Microsecond)
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	srv.Stop()
	waitWithin(t, 2*time.Second, "redis marked down", func() bool { return !a.RedisHealthy() && !b.RedisHealthy() })
	time.Sleep(300 * time.Millisecond)
	srv.Restart()
	waitWithin(t, 10*time.Second, "redis back in both instances", func() bool { return a.RedisHealthy() && b.RedisHealthy() })
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	if failures.Load() != 0 {
		t.Fatalf("%d of %d gets failed", failures.Load(), gets.Load())
	}
	t.Logf("%d gets across the outage, 0 failed; down events a=%d b=%d", gets.Load(), a.Stats().RedisDownEvents, b.Stats().RedisDownEvents)
	// One line per state change, however many requests ran meanwhile.
	downs := int(a.Stats().RedisDownEvents + b.Stats().RedisDownEvents)
	if n := logs.count("redis unavailable"); n != downs || n < 2 || n > 4 {
		t.Errorf("down logged %d times for %d transitions in two instances", n, downs)
	}
	if n := logs.count("redis available again"); n != downs {
		t.Errorf("up logged %d times for %d transitions", n, downs)
	}

	// L2 is shared again.
	if _, res := mustGet(t, a, 10, "/after", pol, fill); res != Miss {
		t.Fatalf("a: %v", res)
	}
	if _, res := mustGet(t, b, 10, "/after", pol, fill); res != Hit {
		t.Fatalf("b reads a's entry from redis after the restart: %v", res)
	}
	// Purges propagate again.
	waitWithin(t, 10*time.Second, "subscriptions back", func() bool { return a.Stats().PubSubUp && b.Stats().PubSubUp })
	if err := a.PurgeDealer(context.Background(), 10); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "b to drop dealer 10", func() bool { n, _ := b.l1.lookup(10, []byte("/after")); return n == nil })
}

// TestIntegrationCluster runs the shared-cache behaviour on a three-master
// Redis Cluster: keys of a dealer share one slot, entries are shared, purges
// propagate and the fill lock coalesces across instances.
func TestIntegrationCluster(t *testing.T) {
	cl := redistest.StartCluster(t)
	newCC := func() *redis.ClusterClient {
		cc := redis.NewClusterClient(&redis.ClusterOptions{
			Addrs:                 cl.Addrs(),
			ContextTimeoutEnabled: true,
			DialTimeout:           200 * time.Millisecond,
			ReadTimeout:           200 * time.Millisecond,
			WriteTimeout:          200 * time.Millisecond,
		})
		t.Cleanup(func() { _ = cc.Close() })
		return cc
	}
	a := newCache(t, Options{Redis: newCC(), LockWait: 2 * time.Second})
	b := newCache(t, Options{Redis: newCC(), LockWait: 2 * time.Second})
	waitFor(t, "subscriptions", func() bool { return a.Stats().PubSubUp && b.Stats().PubSubUp })
	ctx := context.Background()
	pol := Policy{TTL: time.Hour}

	t.Run("one slot per dealer", func(t *testing.T) {
		cc := newCC()
		keys := []string{a.genKey(42), a.entryKey(42, 7, "/v1/faq?lang=it"), a.lockKey(42, 7, "/v1/news")}
		var slots []int64
		for _, k := range keys {
			s, err := cc.ClusterKeySlot(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			slots = append(slots, s)
		}
		if slots[0] != slots[1] || slots[1] != slots[2] {
			t.Fatalf("keys of one dealer in slots %v", slots)
		}
	})

	t.Run("shared entries across slots", func(t *testing.T) {
		for d := int64(1); d <= 30; d++ {
			body := fmt.Sprintf("dealer %d", d)
			if _, res := mustGet(t, a, d, "/v1/dealer", pol, newFiller(body).fill); res != Miss {
				t.Fatalf("a dealer %d: %v", d, res)
			}
			if e, res := mustGet(t, b, d, "/v1/dealer", pol, newFiller("wrong").fill); res != Hit || string(e.Body()) != body {
				t.Fatalf("b dealer %d: %v %q", d, res, e.Body())
			}
		}
	})

	t.Run("purge propagates", func(t *testing.T) {
		if err := a.PurgeDealer(ctx, 3); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "b to drop dealer 3", func() bool { n, _ := b.l1.lookup(3, []byte("/v1/dealer")); return n == nil })
		if _, res := mustGet(t, b, 3, "/v1/dealer", pol, newFiller("new").fill); res != Miss {
			t.Fatalf("b dealer 3 after purge: %v", res)
		}
		if _, res := mustGet(t, b, 4, "/v1/dealer", pol, newFiller("wrong").fill); res != Hit {
			t.Fatalf("b dealer 4 after purging 3: %v", res)
		}
	})

	t.Run("per-dealer budget with the fill lock", func(t *testing.T) {
		// An instance with a budget of about two 4 KB entries fills eight
		// keys of one dealer: two reach Redis (the other instance, without
		// L1 lookups of its own, finds them), six are refused and leave no
		// fill lock behind (the other instance fills them at once instead
		// of waiting out its 2 s lock wait).
		c := newCache(t, Options{Redis: newCC(), LockWait: 2 * time.Second, RedisDealerBudget: 10 << 10})
		body := make([]byte, 4<<10)
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range body {
			body[i] = byte(rng.Uint32()) // does not compress
		}
		for i := 0; i < 8; i++ {
			if _, res := mustGet(t, c, 77, fmt.Sprintf("/budget/%d", i), pol, newFiller(string(body)).fill); res != Miss {
				t.Fatalf("key %d: %v", i, res)
			}
		}
		skips := c.Stats().RedisBudgetSkips
		hits := 0
		for i := 0; i < 8; i++ {
			start := time.Now()
			_, res := mustGet(t, b, 77, fmt.Sprintf("/budget/%d", i), pol, newFiller("b").fill)
			if d := time.Since(start); d > time.Second {
				t.Fatalf("key %d: the other instance waited %v (a fill lock left behind)", i, d)
			}
			if res == Hit {
				hits++
			}
		}
		if skips == 0 || hits == 0 || uint64(hits)+skips != 8 {
			t.Fatalf("%d writes refused, %d of 8 keys found by the other instance: want some of each, adding up to 8", skips, hits)
		}
	})

	t.Run("fill lock coalesces across instances", func(t *testing.T) {
		var fills atomic.Int64
		fill := func(context.Context) ([]byte, error) {
			fills.Add(1)
			time.Sleep(100 * time.Millisecond)
			return []byte("once"), nil
		}
		var wg sync.WaitGroup
		for i := 0; i < 20; i++ {
			c := a
			if i%2 == 1 {
				c = b
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if e, _, err := c.Get(ctx, 77, []byte("/v1/glossary"), pol, fill); err != nil || string(e.Body()) != "once" {
					t.Errorf("get: %v", err)
				}
			}()
		}
		wg.Wait()
		if fills.Load() != 1 {
			t.Fatalf("%d fills across two instances, want 1", fills.Load())
		}
	})
	if !a.RedisHealthy() || !b.RedisHealthy() {
		t.Fatal("cluster marked down")
	}
}

// TestIntegrationBulkTier runs L1's bulk tier against a real redis-server:
// an entry read from Redis enters the bulk tier and is served from it
// without Redis, also while Redis is down; after Redis is back a purge on
// another instance reaches this one's bulk tier (the new generation makes
// the old entry unreachable) at once.
func TestIntegrationBulkTier(t *testing.T) {
	srv := redistest.Start(t)
	a := newCache(t, Options{Redis: newClient(t, srv.Addr), RedisTimeout: 100 * time.Millisecond})
	b := bulkOnly(t, Options{Redis: newClient(t, srv.Addr), RedisTimeout: 100 * time.Millisecond})
	waitFor(t, "subscriptions", func() bool { return a.Stats().PubSubUp && b.Stats().PubSubUp })
	pol := Policy{TTL: time.Hour}
	body := listingBody(7, 20)
	fill := func(context.Context) ([]byte, error) { return body, nil }
	mustGet(t, a, 3, "/v1/vehicles?page=1", pol, fill)
	for i, want := range []struct{ l2, bulk uint64 }{{1, 0}, {1, 1}} {
		e, res := mustGet(t, b, 3, "/v1/vehicles?page=1", pol, func(context.Context) ([]byte, error) {
			return nil, fmt.Errorf("no fill expected")
		})
		if st := b.Stats(); res != Hit || st.L2Hits != want.l2 || st.BulkHits != want.bulk || string(e.Body()) != string(body) {
			t.Fatalf("get %d: %v, L2 hits %d, bulk hits %d; want %+v", i, res, st.L2Hits, st.BulkHits, want)
		}
	}
	if b.bulk.get(3, mustGen(t, b, 3), b.epoch.gen.Load(), []byte("/v1/vehicles?page=1"), false, nil) == nil {
		t.Fatal("not in the bulk tier")
	}

	srv.Stop()
	for i := 0; i < 20; i++ {
		if _, res := mustGet(t, b, 3, "/v1/vehicles?page=1", pol, fill); res != Hit {
			t.Fatalf("redis down, get %d: %v, want a bulk hit", i, res)
		}
	}
	srv.Restart()
	waitWithin(t, 10*time.Second, "redis back", func() bool {
		return a.RedisHealthy() && b.RedisHealthy() && a.Stats().PubSubUp && b.Stats().PubSubUp
	})
	if err := a.PurgeDealer(context.Background(), 3); err != nil {
		t.Fatal(err)
	}
	genA := mustGen(t, a, 3)
	waitWithin(t, 5*time.Second, "the purge to reach b", func() bool {
		return mustGen(t, b, 3) == genA && purgeTaken(t, a, b, 3, "/v1/vehicles?page=1")
	})
	fresh := []byte(`{"items":[]}`)
	e, res := mustGet(t, b, 3, "/v1/vehicles?page=1", pol, func(context.Context) ([]byte, error) { return fresh, nil })
	if res != Miss || string(e.Body()) != string(fresh) {
		t.Fatalf("after the purge: %v %q, want a fill", res, e.Body())
	}
}

func mustGen(t testing.TB, c *Cache, dealer int64) uint64 {
	t.Helper()
	g, _ := c.generation(context.Background(), dealer)
	return g
}
