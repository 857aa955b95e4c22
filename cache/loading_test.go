package cache

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/redis/go-redis/v9"
)

// TestLoadingIsDownThenUp: a Redis restarted from an RDB that takes
// seconds to load answers LOADING: the cache counts it as down, serves from
// L1 and fill, and comes back by itself once loading ends, with its purge
// subscription.
func TestLoadingIsDownThenUp(t *testing.T) {
	srv := redistest.Start(t, "--key-load-delay", "2000", "--loading-process-events-interval-bytes", "1024", "--enable-debug-command", "yes") // µs per key while loading
	ctx := context.Background()
	direct := srv.Client()
	for i := range 1500 {
		direct.Set(ctx, fmt.Sprintf("filler:%d", i), "x", 0)
	}
	a := newCache(t, Options{Redis: newClient(t, srv.Addr)})
	b := newCache(t, Options{Redis: newClient(t, srv.Addr)})
	waitWithin(t, 10*time.Second, "subscriptions", func() bool { return a.Stats().PubSubUp && b.Stats().PubSubUp })
	pol := Policy{TTL: time.Hour}
	mustGet(t, a, 3, "/x", pol, newFiller("v1").fill)
	mustGet(t, b, 3, "/x", pol, newFiller("v1").fill)
	// DEBUG RELOAD: save and load the RDB again, ~3 s of LOADING.
	go func() {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: 30 * time.Second})
		defer c.Close()
		t.Logf("debug reload: %v", c.Do(ctx, "debug", "reload").Err())
	}()
	time.Sleep(50 * time.Millisecond)
	loading := false
	for range 50 {
		mustGet(t, a, 3, "/other", pol, newFiller("o").fill)
		if err := direct.Ping(ctx).Err(); err != nil && strings.HasPrefix(err.Error(), "LOADING") {
			loading = true
			if !a.RedisHealthy() {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("loading seen %v, a healthy %v, ping err %v", loading, a.RedisHealthy(), PingRedis(ctx, a.rdb))
	if !loading {
		t.Skip("redis did not stay loading long enough")
	}
	if a.RedisHealthy() {
		t.Errorf("a loading Redis is not marked down")
	}
	waitWithin(t, 15*time.Second, "both back with subscriptions", func() bool {
		mustGet(t, a, 3, "/other", pol, newFiller("o").fill)
		mustGet(t, b, 3, "/other", pol, newFiller("o").fill)
		return a.RedisHealthy() && b.RedisHealthy() && a.Stats().PubSubUp && b.Stats().PubSubUp
	})
	if err := a.PurgeDealer(ctx, 3); err != nil {
		t.Fatal(err)
	}
	// Not the generation alone: b adopts it before dropDealer reaches the key's shard (TestGenerationSeenBeforeL1Dropped).
	waitWithin(t, 4*time.Second, "b to take the purge", func() bool { return purgeTaken(t, a, b, 3, "/x") })
	if e, _ := mustGet(t, b, 3, "/x", pol, newFiller("v2").fill); string(e.Body()) != "v2" {
		t.Errorf("b after the purge: %q", e.Body())
	}
}
