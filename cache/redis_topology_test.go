package cache

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/redis/go-redis/v9"
)

// edgeLikeRedis builds the client as cmd/dealer-edge does (main.go:
// ClientOptions).
func edgeLikeRedis(t testing.TB, addrs []string, master string, to time.Duration) redis.UniversalClient {
	t.Helper()
	c := redis.NewUniversalClient(ClientOptions(&redis.UniversalOptions{Addrs: addrs, MasterName: master}, to))
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func clusterNodeID(t testing.TB, addr string) string {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	id, err := c.Do(context.Background(), "cluster", "myid").Text()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// errCountHook logs the commands that fail (verbose runs only).
type errCountHook struct{ t testing.TB }

func (h errCountHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h errCountHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if err != nil && err != redis.Nil {
			h.t.Logf("%s %v: %v", time.Now().Format("15:04:05.000"), cmd.Args()[:min(3, len(cmd.Args()))], err)
		}
		return err
	}
}
func (h errCountHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			if e := cmd.Err(); e != nil && e != redis.Nil {
				h.t.Logf("%s pipe %v: %v", time.Now().Format("15:04:05.000"), cmd.Args()[:min(3, len(cmd.Args()))], e)
			}
		}
		return err
	}
}

// TestClusterMigratingSlotLockedFill: while a dealer's slot migrates
// (source MIGRATING, target IMPORTING, as redis-cli --cluster reshard
// leaves it for the whole move), a locked fill of a new entry stores the
// entry and releases its lock without a failed Redis call, so another
// instance reads it from L2 at once (README, Response cache, "Redis
// Cluster resharding"). Redis refuses the two-key setUnlockScript there
// (TRYAGAIN); the single-key SET and unlock follow the ASK redirect.
// Before 2026-11-27 the entry was lost and the lock held for LockTTL.
func TestClusterMigratingSlotLockedFill(t *testing.T) {
	cl := redistest.StartCluster(t)
	const to = 250 * time.Millisecond
	ca := edgeLikeRedis(t, cl.Addrs(), "", to)
	cb := edgeLikeRedis(t, cl.Addrs(), "", to)
	const lockWait = 250 * time.Millisecond // the configs' default
	a := newCache(t, Options{Redis: ca, L1MaxBytes: -1, LockWait: lockWait, LockTTL: 2 * time.Second, RedisTimeout: to})
	b := newCache(t, Options{Redis: cb, L1MaxBytes: -1, LockWait: lockWait, LockTTL: 2 * time.Second, RedisTimeout: to})
	ctx := context.Background()
	const dealer = 42
	pol := Policy{TTL: time.Hour}
	// Generations read (and the scripts loaded) before the migration starts.
	mustGet(t, a, dealer, "/warm", pol, newFiller("warm").fill)
	mustGet(t, b, dealer, "/warm", pol, newFiller("warm").fill)

	cc := ca.(*redis.ClusterClient)
	slot, err := cc.ClusterKeySlot(ctx, a.genKey(dealer)).Result()
	if err != nil {
		t.Fatal(err)
	}
	var src, dst *redistest.Server
	for i, n := range cl.Nodes {
		lo, hi := int64(i*(16384/3)), int64((i+1)*(16384/3)-1)
		if i == 2 {
			hi = 16383
		}
		if slot >= lo && slot <= hi {
			src, dst = n, cl.Nodes[(i+1)%3]
		}
	}
	s := redis.NewClient(&redis.Options{Addr: src.Addr})
	d := redis.NewClient(&redis.Options{Addr: dst.Addr})
	t.Cleanup(func() { _ = s.Close(); _ = d.Close() })
	if err := d.Do(ctx, "cluster", "setslot", slot, "importing", clusterNodeID(t, src.Addr)).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Do(ctx, "cluster", "setslot", slot, "migrating", clusterNodeID(t, dst.Addr)).Err(); err != nil {
		t.Fatal(err)
	}

	before := a.Stats()
	if e, res := mustGet(t, a, dealer, "/v1/vehicles?page=1", pol, newFiller("filled by a").fill); res != Miss || string(e.Body()) != "filled by a" {
		t.Fatalf("a: %v %q", res, e.Body())
	}
	after := a.Stats()
	start := time.Now()
	other := newFiller("filled by b")
	e, res := mustGet(t, b, dealer, "/v1/vehicles?page=1", pol, other.fill)
	waited := time.Since(start)
	t.Logf("b: %v %q after %v, fills %d; a: L2 errors %d", res, e.Body(), waited, other.calls.Load(), after.L2Errors-before.L2Errors)
	if n := after.L2Errors - before.L2Errors; n != 0 {
		t.Errorf("a's locked fill: %d failed Redis calls while the slot migrates, want 0", n)
	}
	if res != Hit || other.calls.Load() != 0 {
		t.Errorf("b: %v after %v (fills %d), want a's entry from L2 at once", res, waited, other.calls.Load())
	}
	var locks []string
	for _, c := range []*redis.Client{s, d} {
		k, _ := c.Keys(ctx, "*{d42}:l*").Result()
		locks = append(locks, k...)
	}
	if len(locks) != 0 {
		t.Errorf("fill locks left after the fill: %v, want none", locks)
	}
}

// TestPurgeAfterGenerationRollback: after Redis comes back with a
// dealer's generation lower than the one the instances hold (a restart
// that loads an older RDB snapshot; a Sentinel or Cluster failover to a
// replica that had not received the last INCRs), a purge that returns nil
// is numbered past what the instances hold, so every instance, the
// purging one included, fills anew (README, Response cache). Before
// 2026-11-27 such a purge dropped nothing anywhere.
func TestPurgeAfterGenerationRollback(t *testing.T) {
	srv := redistest.Start(t)
	a := newCache(t, Options{Redis: newClient(t, srv.Addr)})
	b := newCache(t, Options{Redis: newClient(t, srv.Addr)})
	waitWithin(t, 10*time.Second, "subscriptions", func() bool { return a.Stats().PubSubUp && b.Stats().PubSubUp })
	ctx := context.Background()
	const dealer = 5
	pol := Policy{TTL: time.Hour}
	mustGet(t, a, dealer, "/x", pol, newFiller("v1").fill)
	mustGet(t, b, dealer, "/x", pol, newFiller("v1").fill)
	// The snapshot a restart will load (Redis's own RDB persistence).
	direct := srv.Client()
	if err := direct.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := a.PurgeDealer(ctx, dealer); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "b to take the purge", func() bool { return mustGen(t, b, dealer) == mustGen(t, a, dealer) })
	if e, res := mustGet(t, a, dealer, "/x", pol, newFiller("v2").fill); res != Miss || string(e.Body()) != "v2" {
		t.Fatalf("after the first purge: %v %q", res, e.Body())
	}
	mustGet(t, b, dealer, "/x", pol, newFiller("v2").fill)

	srv.Restart() // loads the snapshot: the generation goes back by one
	waitWithin(t, 20*time.Second, "redis back", func() bool {
		return a.RedisHealthy() && b.RedisHealthy() && a.Stats().PubSubUp && b.Stats().PubSubUp
	})
	// The dealer's data changes again: purge it.
	if err := a.PurgeDealer(ctx, dealer); err != nil {
		t.Fatalf("second purge: %v", err)
	}
	time.Sleep(100 * time.Millisecond) // the message to reach b
	for name, c := range map[string]*Cache{"a (purging instance)": a, "b": b} {
		e, res := mustGet(t, c, dealer, "/x", pol, newFiller("v3").fill)
		if string(e.Body()) != "v3" {
			t.Errorf("%s after a purge that returned nil: %v %q, want a fill (v3); generation %d",
				name, res, e.Body(), mustGen(t, c, dealer))
		}
	}
}

// TestMaxmemoryEviction: against a Redis whose maxmemory policy evicts
// any key (allkeys-random: generation and lock keys too) while large
// entries keep it full, both instances serve the new version after every
// purge.
func TestMaxmemoryEviction(t *testing.T) {
	for _, policy := range []string{"allkeys-random", "allkeys-lru", "volatile-lru"} {
		t.Run(policy, func(t *testing.T) {
			srv := redistest.Start(t, "--maxmemory", "3mb", "--maxmemory-policy", policy)
			a := newCache(t, Options{Redis: newClient(t, srv.Addr), L1MaxBytes: 1 << 20, LockWait: 100 * time.Millisecond})
			b := newCache(t, Options{Redis: newClient(t, srv.Addr), L1MaxBytes: 1 << 20, LockWait: 100 * time.Millisecond})
			waitWithin(t, 10*time.Second, "subscriptions", func() bool { return a.Stats().PubSubUp && b.Stats().PubSubUp })
			ctx := context.Background()
			pol := Policy{TTL: time.Hour}
			var version atomic.Int64
			fill := func(context.Context) ([]byte, error) { return []byte(fmt.Sprint("v", version.Load())), nil }
			big := make([]byte, 64<<10)
			for i := range big {
				big[i] = byte(mrand.Uint32()) // incompressible
			}
			purgeErrs := 0
			for round := 0; round < 40; round++ {
				for k := 0; k < 20; k++ {
					d := int64(1000 + (round*20+k)%300)
					_, _, _ = a.Get(ctx, d, []byte(fmt.Sprint("/big", k)), pol, func(context.Context) ([]byte, error) { return big, nil })
				}
				for _, c := range []*Cache{a, b} {
					if e, _, err := c.Get(ctx, 5, []byte("/x"), pol, fill); err != nil || string(e.Body()) != fmt.Sprint("v", version.Load()) {
						t.Fatalf("round %d: %q %v, want v%d (the version after the last purge)", round, e.Body(), err, version.Load())
					}
				}
				version.Add(1)
				if err := a.PurgeDealer(ctx, 5); err != nil {
					purgeErrs++
					t.Logf("round %d purge: %v", round, err)
				}
				time.Sleep(20 * time.Millisecond)
			}
			info, _ := srv.Client().Info(ctx, "stats").Result()
			for _, l := range strings.Split(info, "\n") {
				if strings.HasPrefix(l, "evicted_keys") {
					t.Log(strings.TrimSpace(l))
				}
			}
			t.Logf("purge errors %d, a %+v", purgeErrs, a.Stats())
		})
	}
}
