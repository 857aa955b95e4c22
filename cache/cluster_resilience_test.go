package cache

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/ratelimit"
	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/dealer-edge/dealer-edge/internal/syncbuf"
	"github.com/redis/go-redis/v9"
)

// clusterMasterOf is the index of the StartCluster node owning slot.
func clusterMasterOf(slot int64) int { return min(int(slot)/(16384/3), 2) }

// addClusterReplica starts a cluster-enabled redis-server, joins it to cl
// and makes it a replica of cl.Nodes[master]; it returns once the
// replica's link to its master is up.
func addClusterReplica(t *testing.T, cl *redistest.Cluster, master int) *redistest.Server {
	t.Helper()
	ctx := context.Background()
	m := cl.Nodes[master].Client()
	defer m.Close()
	// The master syncs its new replica at once, not after the default
	// 5 s wait for more replicas (repl-diskless-sync-delay).
	if err := m.ConfigSet(ctx, "repl-diskless-sync-delay", "0").Err(); err != nil {
		t.Fatal(err)
	}
	nodes, err := m.ClusterNodes(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	var bus, id string
	for _, ln := range strings.Split(nodes, "\n") {
		f := strings.Fields(ln)
		if len(f) > 2 && strings.Contains(f[2], "myself") {
			id = f[0]
			bus = f[1][strings.Index(f[1], "@")+1:]
			if i := strings.IndexByte(bus, ','); i >= 0 {
				bus = bus[:i]
			}
		}
	}
	r := redistest.Start(t, "--cluster-enabled", "yes",
		"--cluster-port", strconv.Itoa(redistest.FreePort(t)),
		"--cluster-node-timeout", "2000")
	rc := r.Client()
	defer rc.Close()
	if err := rc.Do(ctx, "cluster", "meet", "127.0.0.1", cl.Nodes[master].Port, bus).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := rc.Do(ctx, "cluster", "replicate", id).Err()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster replicate: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for {
		info, _ := rc.Info(ctx, "replication").Result()
		if strings.Contains(info, "master_link_status:up") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica never synced: %s", info)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Every master must know the replica before a failover can elect it.
	for _, n := range cl.Nodes {
		c := n.Client()
		for {
			s, _ := c.ClusterNodes(ctx).Result()
			if strings.Contains(s, r.Addr) && strings.Contains(s, "slave "+id) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s does not know the replica:\n%s", n.Addr, s)
			}
			time.Sleep(100 * time.Millisecond)
		}
		c.Close()
	}
	return r
}

// TestClusterFailoverFollowed: a master of a three-master Cluster with a
// replica dies; the Cluster promotes the replica. The edge's two caches
// and the rate limiter must use Redis again soon after the promotion, and
// a purge made after that must reach the other instance's L1 (the purge
// subscription was on the dead master: its channel's slot is there).
func TestClusterFailoverFollowed(t *testing.T) {
	cl := redistest.StartCluster(t)
	const to = 100 * time.Millisecond
	ca := edgeLikeRedis(t, cl.Addrs(), "", to)
	cb := edgeLikeRedis(t, cl.Addrs(), "", to)
	var logs syncbuf.Buffer
	lg := slog.New(slog.NewTextHandler(&logs, nil))
	a := newCache(t, Options{Redis: ca, RedisTimeout: to, Logger: lg.With("c", "a")})
	b := newCache(t, Options{Redis: cb, RedisTimeout: to, Logger: lg.With("c", "b")})
	lim, err := ratelimit.New(ratelimit.Options{Redis: ca, RedisTimeout: to, BackgroundProbe: true, Logger: lg.With("c", "limiter")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lim.Close() })
	ctx := context.Background()
	cc := ca.(*redis.ClusterClient)
	slot, err := cc.ClusterKeySlot(ctx, a.channel).Result()
	if err != nil {
		t.Fatal(err)
	}
	dead := clusterMasterOf(slot)
	replica := addClusterReplica(t, cl, dead)
	waitWithin(t, 10*time.Second, "subscriptions", func() bool { return a.Stats().PubSubUp && b.Stats().PubSubUp })

	pol := Policy{TTL: time.Hour}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var gets, getErrs atomic.Int64
	wg.Add(1)
	go func() { // light traffic on dealers of every master
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			d := int64(1 + i%30)
			key := fmt.Sprintf("/load/%d", i%7)
			for _, c := range []*Cache{a, b} {
				gets.Add(1)
				if _, _, err := c.Get(ctx, d, []byte(key), pol, newFiller("x").fill); err != nil {
					getErrs.Add(1)
				}
			}
			lim.Allow(ctx, d, "k", ratelimit.Limit{Rate: 1000, Burst: 1000})
			time.Sleep(5 * time.Millisecond)
		}
	}()
	t.Cleanup(func() { stop.Store(true); wg.Wait() })
	time.Sleep(300 * time.Millisecond)

	cl.Nodes[dead].Stop()
	killed := time.Now()
	rc := replica.Client()
	defer rc.Close()
	waitWithin(t, 20*time.Second, "the replica promoted", func() bool {
		info, _ := rc.Info(ctx, "replication").Result()
		return strings.Contains(info, "role:master")
	})
	promoted := time.Now()
	waitWithin(t, 15*time.Second, "the cluster ok", func() bool {
		info, _ := rc.ClusterInfo(ctx).Result()
		return strings.Contains(info, "cluster_state:ok")
	})
	clusterOK := time.Now()
	type mark struct {
		what string
		ok   func() bool
		at   time.Time
	}
	marks := []*mark{
		{what: "cache a redis up", ok: a.RedisHealthy},
		{what: "cache b redis up", ok: b.RedisHealthy},
		{what: "cache a subscription", ok: func() bool { return a.Stats().PubSubUp }},
		{what: "cache b subscription", ok: func() bool { return b.Stats().PubSubUp }},
		{what: "limiter on redis", ok: func() bool { return !lim.Stats().FallbackActive }},
	}
	limit := time.Now().Add(15 * time.Second)
	for time.Now().Before(limit) {
		all := true
		for _, m := range marks {
			if m.at.IsZero() && m.ok() {
				m.at = time.Now()
			}
			all = all && !m.at.IsZero()
		}
		if all {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("killed -> promoted %v, promoted -> cluster ok %v", promoted.Sub(killed).Round(time.Millisecond), clusterOK.Sub(promoted).Round(time.Millisecond))
	for _, m := range marks {
		if m.at.IsZero() {
			t.Errorf("%s: not within 15 s of the cluster being ok again", m.what)
			continue
		}
		t.Logf("%s: %v after the cluster is ok", m.what, m.at.Sub(clusterOK).Round(time.Millisecond))
	}
	// A purge after the failover reaches the other instance.
	const dealer = 777
	mustGet(t, b, dealer, "/p", pol, newFiller("v1").fill)
	if _, res := mustGet(t, b, dealer, "/p", pol, newFiller("v1").fill); res != Hit {
		t.Fatalf("b: %v", res)
	}
	if err := a.PurgeDealer(ctx, dealer); err != nil {
		t.Errorf("purge after the failover: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	if e, res := mustGet(t, b, dealer, "/p", pol, newFiller("v2").fill); string(e.Body()) != "v2" {
		t.Errorf("b after a's purge: %v %q, want the new fill", res, e.Body())
	}
	// No request failed through the kill, the outage and the promotion:
	// L1 and the fill served while Redis could not.
	if n := getErrs.Load(); n != 0 {
		t.Errorf("%d of %d Gets failed through the failover, want none", n, gets.Load())
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("log:\n%s", logs.String())
	}
}

// TestClusterDownIsDown: a Cluster whose state is "fail" while every
// master answers (a slot left unserved, as a cluster-bus partition or an
// operator's unfinished reshard leaves it: with the default
// cluster-require-full-coverage every node then refuses every key with
// CLUSTERDOWN). The cache marks Redis down at the first CLUSTERDOWN
// (unreachable), but its probe (Ping: PING and AUTH per master, then the
// command check, which takes any error reply as "permitted") says Redis
// can serve, so the cache flips up and down again and again, and
// /readyz and edge_redis_up (the same Ping) say "up" while no key can be
// read or written.
func TestClusterDownIsDown(t *testing.T) {
	cl := redistest.StartCluster(t)
	const to = 100 * time.Millisecond
	rc := edgeLikeRedis(t, cl.Addrs(), "", to)
	var logs syncbuf.Buffer
	a := newCache(t, Options{Redis: rc, RedisTimeout: to, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := context.Background()
	pol := Policy{TTL: time.Hour}
	mustGet(t, a, 1, "/warm", pol, newFiller("w").fill)
	// Unassign one slot of node 2 (no key of the test lives there), on
	// every node.
	for _, nd := range cl.Nodes {
		n := nd.Client()
		if err := n.Do(ctx, "cluster", "delslots", 16383).Err(); err != nil {
			t.Fatal(err)
		}
		n.Close()
	}
	waitWithin(t, 10*time.Second, "the cluster to fail", func() bool {
		for _, nd := range cl.Nodes {
			c := nd.Client()
			info, _ := c.ClusterInfo(ctx).Result()
			c.Close()
			if !strings.Contains(info, "cluster_state:fail") {
				return false
			}
		}
		return true
	})
	if err := rc.Get(ctx, "edge:v1:{d1}:x").Err(); !strings.HasPrefix(fmt.Sprint(err), "CLUSTERDOWN") {
		t.Fatalf("a GET on the failed cluster: %v, want CLUSTERDOWN", err)
	}
	start := time.Now()
	for i := 0; time.Since(start) < 8*time.Second; i++ {
		_, _, _ = a.Get(ctx, int64(1+i%20), []byte("/k"), pol, newFiller("x").fill)
		time.Sleep(5 * time.Millisecond)
	}
	downs := logs.Count("redis unavailable, serving from L1")
	ups := logs.Count("redis available again")
	pingErr := a.Ping(ctx)
	t.Logf("8 s of CLUSTERDOWN: %d down lines, %d up lines, Ping: %v, down events %d", downs, ups, pingErr, a.Stats().RedisDownEvents)
	if pingErr == nil {
		t.Errorf("Ping (readyz, edge_redis_up, the cache's probe) reports a Cluster that refuses every key with CLUSTERDOWN as able to serve")
	}
	if ups > 0 {
		t.Errorf("the cache flaps on a CLUSTERDOWN Cluster: %d \"unavailable\" and %d \"available again\" lines in 8 s\n%s", downs, ups, logs.String())
	}
}

// TestClusterFrozenSubscriptionNodeResubscribes: the master holding the
// purge subscription freezes (SIGSTOP: a hung host, a black-holed
// network; its TCP connections neither answer nor close) and the Cluster
// fails it over to its replica. The README promises that a subscription
// that does not hear its echo "is made again, through the client's
// dialer, on the master of the moment". The subscription is remade only
// when a token was in flight, and tokens are sent only while the
// subscription is up; the PING timeout marks it lost first, so it stays
// on the frozen connection for good, and the instance polls every
// generation every 2 s instead of hearing purges.
func TestClusterFrozenSubscriptionNodeResubscribes(t *testing.T) {
	cl := redistest.StartCluster(t)
	const to = 100 * time.Millisecond
	ca := edgeLikeRedis(t, cl.Addrs(), "", to)
	cb := edgeLikeRedis(t, cl.Addrs(), "", to)
	var logs syncbuf.Buffer
	lg := slog.New(slog.NewTextHandler(&logs, nil))
	a := newCache(t, Options{Redis: ca, RedisTimeout: to, Logger: lg.With("c", "a")})
	b := newCache(t, Options{Redis: cb, RedisTimeout: to, Logger: lg.With("c", "b")})
	ctx := context.Background()
	slot, err := ca.(*redis.ClusterClient).ClusterKeySlot(ctx, a.channel).Result()
	if err != nil {
		t.Fatal(err)
	}
	frozen := clusterMasterOf(slot)
	replica := addClusterReplica(t, cl, frozen)
	waitWithin(t, 10*time.Second, "subscriptions", func() bool { return a.Stats().PubSubUp && b.Stats().PubSubUp })

	pol := Policy{TTL: time.Hour}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // light traffic on dealers of every master
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			d := int64(1 + i%30)
			_, _, _ = a.Get(ctx, d, []byte("/load"), pol, newFiller("x").fill)
			_, _, _ = b.Get(ctx, d, []byte("/load"), pol, newFiller("x").fill)
			time.Sleep(5 * time.Millisecond)
		}
	}()
	t.Cleanup(func() { stop.Store(true); wg.Wait() })
	time.Sleep(300 * time.Millisecond)

	cl.Nodes[frozen].Pause()
	rc := replica.Client()
	defer rc.Close()
	waitWithin(t, 20*time.Second, "the replica promoted", func() bool {
		info, _ := rc.Info(ctx, "replication").Result()
		return strings.Contains(info, "role:master")
	})
	waitWithin(t, 10*time.Second, "both caches on redis again", func() bool { return a.RedisHealthy() && b.RedisHealthy() })
	ok := time.Now()
	for time.Since(ok) < 10*time.Second && !(a.Stats().PubSubUp && b.Stats().PubSubUp) {
		time.Sleep(20 * time.Millisecond)
	}
	if !a.Stats().PubSubUp || !b.Stats().PubSubUp {
		t.Errorf("10 s after the failover: subscription up a=%v b=%v, want both made again on the new master (the old one stays frozen)\n%s",
			a.Stats().PubSubUp, b.Stats().PubSubUp, logs.String())
	} else {
		t.Logf("subscriptions back %v after redis", time.Since(ok).Round(time.Millisecond))
	}
}

// TestOneAddressOfAClusterIsNotUp: redis.addrs with one address is a
// single node (README), but a platform whose Cluster is reached through
// one address (a managed Cluster's configuration endpoint, one seed
// listed) gets a plain client on one master: every key of the other
// masters' slots is refused with MOVED, an error reply, so the cache
// never marks Redis down and misses L2 for two dealers in three, while
// PingRedis (readyz, edge_redis_up, the cache's probe) reports it able to
// serve: nothing tells the operator.
func TestOneAddressOfAClusterIsNotUp(t *testing.T) {
	cl := redistest.StartCluster(t)
	rc := edgeLikeRedis(t, cl.Addrs()[:1], "", 250*time.Millisecond)
	if _, ok := rc.(*redis.Client); !ok {
		t.Fatalf("one address: %T, want a plain client", rc)
	}
	c := newCache(t, Options{Redis: rc, RedisTimeout: 250 * time.Millisecond})
	ctx := context.Background()
	pol := Policy{TTL: time.Hour}
	for d := int64(1); d <= 30; d++ {
		mustGet(t, c, d, "/x", pol, newFiller("x").fill)
	}
	st := c.Stats()
	err := c.Ping(ctx)
	t.Logf("30 dealers: L2 errors %d, redis up %v, Ping %v", st.L2Errors, st.RedisUp, err)
	if st.L2Errors > 0 && err == nil {
		t.Errorf("Ping reports a Cluster node reached as a single node as able to serve, while %d L2 calls failed (MOVED)", st.L2Errors)
	}
}
