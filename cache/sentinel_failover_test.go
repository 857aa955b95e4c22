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

// startReplicaWatched starts a replica of the Sentinel's master and waits
// until the Sentinel lists it (its INFO poll of the master, every 10s).
func startReplicaWatched(t *testing.T, sentinel, master string) (masterAddr string, replica *redistest.Server) {
	t.Helper()
	ctx := context.Background()
	sc := redis.NewSentinelClient(&redis.Options{Addr: sentinel})
	t.Cleanup(func() { _ = sc.Close() })
	hp, err := sc.GetMasterAddrByName(ctx, master).Result()
	if err != nil {
		t.Fatal(err)
	}
	masterAddr = hp[0] + ":" + hp[1]
	replica = redistest.Start(t, "--replicaof", hp[0], hp[1])
	waitWithin(t, 15*time.Second, "the sentinel to know the replica", func() bool {
		rs, err := sc.Replicas(ctx, master).Result()
		if err != nil {
			return false
		}
		for _, r := range rs {
			if r["ip"]+":"+r["port"] == replica.Addr && r["master-link-status"] == "ok" {
				return true
			}
		}
		return false
	})
	return masterAddr, replica
}

// TestSentinelFailoverResubscribes: after a
// Sentinel failover that leaves the old master running (SENTINEL FAILOVER,
// as for maintenance), the purge subscription stays on the old master:
// go-redis's failover client, on +switch-master, drops the pooled
// connections to any address but the new master, not the Pub/Sub
// connection, and the cache never resubscribes (the old connection
// answers its PINGs, so it never counts as lost and no polling starts).
// Purges are published on the new master, which the old one does not
// replicate from until the Sentinel reconfigures it (here more than 10 s;
// never if it stays cut off): b does not learn of a's purge and serves the
// purged entry from L1, while the README bounds a purge's reach at 2 s
// plus a round trip.
func TestSentinelFailoverResubscribes(t *testing.T) {
	sentinel, master := redistest.StartSentinel(t)
	oldAddr, replica := startReplicaWatched(t, sentinel, master)
	ra, rb := sentinelClient(t, sentinel, master), sentinelClient(t, sentinel, master)
	a := newCache(t, Options{Redis: ra, LockWait: time.Second})
	b := newCache(t, Options{Redis: rb, LockWait: time.Second})
	waitWithin(t, 10*time.Second, "subscriptions", func() bool { return a.Stats().PubSubUp && b.Stats().PubSubUp })
	pol := Policy{TTL: time.Hour}
	const dealer = 7
	mustGet(t, a, dealer, "/x", pol, newFiller("v1").fill)
	mustGet(t, b, dealer, "/x", pol, newFiller("v1").fill)

	ctx := context.Background()
	sc := redis.NewSentinelClient(&redis.Options{Addr: sentinel})
	defer sc.Close()
	if err := sc.Failover(ctx, master).Err(); err != nil {
		t.Fatal(err)
	}
	waitWithin(t, 15*time.Second, "the sentinel to switch", func() bool {
		hp, err := sc.GetMasterAddrByName(ctx, master).Result()
		return err == nil && hp[0]+":"+hp[1] == replica.Addr
	})
	waitWithin(t, 15*time.Second, "both caches on the new master", func() bool {
		mustGet(t, a, dealer, "/y", pol, newFiller("y").fill)
		mustGet(t, b, dealer, "/y", pol, newFiller("y").fill)
		return a.RedisHealthy() && b.RedisHealthy() && a.Stats().PubSubUp && b.Stats().PubSubUp
	})
	// Both clients' pools on the new master (go-redis saw +switch-master).
	waitWithin(t, 15*time.Second, "the clients on the new master", func() bool {
		ia, _ := ra.Do(ctx, "client", "info").Text()
		ib, _ := rb.Do(ctx, "client", "info").Text()
		return strings.Contains(ia, "laddr="+replica.Addr+" ") && strings.Contains(ib, "laddr="+replica.Addr+" ")
	})
	oc := redis.NewClient(&redis.Options{Addr: oldAddr})
	defer oc.Close()
	role, _ := oc.Do(ctx, "role").Slice()
	t.Logf("old master role %v; gens a %d b %d", role[0], mustGen(t, a, dealer), mustGen(t, b, dealer))
	if err := a.PurgeDealer(ctx, dealer); err != nil {
		t.Fatalf("purge after failover: %v", err)
	}
	t.Logf("gens after purge a %d b %d", mustGen(t, a, dealer), mustGen(t, b, dealer))
	nc := replica.Client()
	g1, _ := oc.Get(ctx, a.genKey(dealer)).Result()
	g2, _ := nc.Get(ctx, a.genKey(dealer)).Result()
	r2, _ := nc.Do(ctx, "role").Slice()
	r1, _ := oc.Do(ctx, "role").Slice()
	t.Logf("gen on old master (%v) %s, on new master (%v) %s", r1[0], g1, r2[0], g2)
	deadline := time.Now().Add(4 * time.Second) // README: 2 s plus a round trip
	for time.Now().Before(deadline) && mustGen(t, b, dealer) != mustGen(t, a, dealer) {
		time.Sleep(20 * time.Millisecond)
	}
	e, res := mustGet(t, b, dealer, "/x", pol, newFiller("v2").fill)
	m, _ := oc.PubSubNumSub(ctx, a.channel).Result()
	t.Logf("b: %v %q; b's subscription healthy: %v; purge subscribers on the old master: %d", res, e.Body(), b.Stats().PubSubUp, m[a.channel])
	if string(e.Body()) != "v2" {
		t.Errorf("b 4 s after a's purge (made on the new master): %v %q, want v2: the purge did not reach b", res, e.Body())
	}
}

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
	waitWithin(t, 4*time.Second, "b to take the purge", func() bool { return mustGen(t, b, 3) == mustGen(t, a, 3) })
	if e, _ := mustGet(t, b, 3, "/x", pol, newFiller("v2").fill); string(e.Body()) != "v2" {
		t.Errorf("b after the purge: %q", e.Body())
	}
}
