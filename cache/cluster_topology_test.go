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

// startSlotMigration marks slot as migrating from the StartCluster node
// owning it to dstNode, nil for the next one (target IMPORTING, then
// source MIGRATING, as redis-cli --cluster reshard does), and returns both
// nodes' clients and the target's id.
func startSlotMigration(t *testing.T, cl *redistest.Cluster, slot int64, dstNode *redistest.Server) (src, dst *redis.Client, srcNode *redistest.Server, dstID string) {
	t.Helper()
	ctx := context.Background()
	srcNode = cl.Nodes[clusterMasterOf(slot)]
	if dstNode == nil {
		dstNode = cl.Nodes[(clusterMasterOf(slot)+1)%3]
	}
	src, dst = srcNode.Client(), dstNode.Client()
	dstID = clusterNodeID(t, dstNode.Addr)
	if err := dst.Do(ctx, "cluster", "setslot", slot, "importing", clusterNodeID(t, srcNode.Addr)).Err(); err != nil {
		t.Fatal(err)
	}
	if err := src.Do(ctx, "cluster", "setslot", slot, "migrating", dstID).Err(); err != nil {
		t.Fatal(err)
	}
	return src, dst, srcNode, dstID
}

// addClusterMaster starts a cluster-enabled redis-server and joins it to
// cl as a master without slots (a scale-out's new shard, an address no
// client was given); it returns once every node knows it.
func addClusterMaster(t *testing.T, cl *redistest.Cluster) *redistest.Server {
	t.Helper()
	ctx := context.Background()
	n := redistest.Start(t, "--cluster-enabled", "yes",
		"--cluster-port", strconv.Itoa(redistest.FreePort(t)),
		"--cluster-node-timeout", "2000")
	nc := n.Client()
	m := cl.Nodes[0].Client()
	nodes, err := m.ClusterNodes(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	var bus string
	for _, ln := range strings.Split(nodes, "\n") {
		if f := strings.Fields(ln); len(f) > 2 && strings.Contains(f[2], "myself") {
			bus = f[1][strings.Index(f[1], "@")+1:]
			if i := strings.IndexByte(bus, ','); i >= 0 {
				bus = bus[:i]
			}
		}
	}
	if err := nc.Do(ctx, "cluster", "meet", "127.0.0.1", cl.Nodes[0].Port, bus).Err(); err != nil {
		t.Fatal(err)
	}
	id := clusterNodeID(t, n.Addr)
	for _, node := range cl.Nodes {
		c := node.Client()
		waitWithin(t, 15*time.Second, node.Addr+" to know the new master", func() bool {
			s, _ := c.ClusterNodes(ctx).Result()
			return strings.Contains(s, id+" "+n.Addr)
		})
	}
	// A master calls its Cluster ok 2 s after it started at the earliest
	// (and refuses keys, MIGRATE's included, before).
	waitWithin(t, 15*time.Second, "the new master's cluster state ok", func() bool {
		info, _ := nc.ClusterInfo(ctx).Result()
		return strings.Contains(info, "cluster_state:ok")
	})
	return n
}

// TestClusterMigratingSlotLockTakenBefore: a locked fill that took its
// lock before its dealer's slot started migrating (the lock is on the
// source) ends while the slot migrates, at the default redis.timeout
// (50 ms). Redis refuses the two-key script that stores the entry and
// releases the lock (TRYAGAIN: the entry's key is not on the source, the
// lock's is) for as long as the migration lasts, and go-redis's Cluster
// client retried it up to MaxRedirects times with its backoff (10-30,
// 10-50, 10-90 ms) in spite of MaxRetries -1: the call outlived its
// budget, the cache marked Redis down for every dealer (each request
// filled upstream until the probe brought it back) and the entry was not
// stored, so the other instance filled again.
func TestClusterMigratingSlotLockTakenBefore(t *testing.T) {
	cl := redistest.StartCluster(t)
	to := 50 * time.Millisecond // the default redis.timeout
	if raceEnabled {
		to = 100 * time.Millisecond
	}
	ca := edgeLikeRedis(t, cl.Addrs(), "", to)
	cb := edgeLikeRedis(t, cl.Addrs(), "", to)
	var logs syncbuf.Buffer
	a := newCache(t, Options{Redis: ca, L1MaxBytes: -1, LockWait: 250 * time.Millisecond, LockTTL: 5 * time.Second, RedisTimeout: to,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	b := newCache(t, Options{Redis: cb, L1MaxBytes: -1, LockWait: 250 * time.Millisecond, LockTTL: 5 * time.Second, RedisTimeout: to})
	ctx := context.Background()
	const dealer = 42
	pol := Policy{TTL: time.Hour}
	mustGet(t, a, dealer, "/warm", pol, newFiller("warm").fill)
	mustGet(t, b, dealer, "/warm", pol, newFiller("warm").fill)
	slot, err := ca.(*redis.ClusterClient).ClusterKeySlot(ctx, a.genKey(dealer)).Result()
	if err != nil {
		t.Fatal(err)
	}

	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan Result, 1)
	go func() {
		_, res, err := a.Get(ctx, dealer, []byte("/v1/vehicles?page=1"), pol, func(context.Context) ([]byte, error) {
			close(started)
			<-release
			return []byte("filled by a"), nil
		})
		if err != nil {
			t.Errorf("a: %v", err)
		}
		done <- res
	}()
	<-started // the lock is taken, on the source
	src, dst, _, _ := startSlotMigration(t, cl, slot, nil)
	before := a.Stats()
	close(release)
	if res := <-done; res != Miss {
		t.Fatalf("a: %v, want its own fill", res)
	}
	after := a.Stats()
	other := newFiller("filled by b")
	e, res := mustGet(t, b, dealer, "/v1/vehicles?page=1", pol, other.fill)
	t.Logf("a: L2 errors %d, down events %d; b: %v %q, fills %d", after.L2Errors-before.L2Errors,
		after.RedisDownEvents-before.RedisDownEvents, res, e.Body(), other.calls.Load())
	if n := after.RedisDownEvents - before.RedisDownEvents; n != 0 || !a.RedisHealthy() {
		t.Errorf("a: Redis marked down %d times by a fill ending while its slot migrates\n%s", n, logs.String())
	}
	if n := after.L2Errors - before.L2Errors; n != 0 {
		t.Errorf("a's locked fill: %d failed Redis calls while the slot migrates, want 0", n)
	}
	if res != Hit || other.calls.Load() != 0 {
		t.Errorf("b: %v (fills %d), want a's entry from L2", res, other.calls.Load())
	}
	var locks []string
	for _, c := range []*redis.Client{src, dst} {
		k, _ := c.Keys(ctx, "*{d42}:l*").Result()
		locks = append(locks, k...)
	}
	if len(locks) != 0 {
		t.Errorf("fill locks left after the fill: %v, want none", locks)
	}
}

// TestClusterBatchTryAgainNotReplayed: a batch of the cache's commands
// on a slot in migration whose first command to the source is the
// two-key script refused with TRYAGAIN. go-redis's Cluster pipeline
// replays a node's whole sub-batch when its first reply is an error it
// retries (TRYAGAIN among them), up to MaxRedirects times: every other
// request's command in it ran again (a fill lock's SET NX found its own
// lock and answered nil, so the request waited lock_wait on itself) and,
// the redirect budget spent, ended with the last round's ASK error (a
// GET read as a failed Redis call, a miss).
func TestClusterBatchTryAgainNotReplayed(t *testing.T) {
	cl := redistest.StartCluster(t)
	rc := edgeLikeRedis(t, cl.Addrs(), "", 250*time.Millisecond)
	c := newCache(t, Options{Redis: rc, RedisTimeout: 250 * time.Millisecond})
	ctx := context.Background()
	const dealer = 42
	ekey, lkey := c.entryKeyAt(dealer, 1, 0, "/a"), c.lockKeyAt(dealer, 1, 0, "/a")
	newLock, onSource := c.lockKeyAt(dealer, 1, 0, "/b"), c.entryKeyAt(dealer, 1, 0, "/c")
	slot, err := rc.(*redis.ClusterClient).ClusterKeySlot(ctx, ekey).Result()
	if err != nil {
		t.Fatal(err)
	}
	// Before the migration: /a's fill lock and /c's entry, on the source;
	// the script known there.
	for k, v := range map[string]string{lkey: "tok", onSource: "entry c"} {
		if err := rc.Set(ctx, k, v, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := setUnlockScript.Load(ctx, rc).Err(); err != nil {
		t.Fatal(err)
	}
	startSlotMigration(t, cl, slot, nil)

	script := redis.NewCmd(ctx, "evalsha", setUnlockScript.Hash(), 2, ekey, lkey, "entry a", 60000, "tok")
	first := scriptCall(script, 2) // as runScript sends it
	lock := redis.NewStatusCmd(ctx, "set", newLock, "tok b", "px", 60000, "nx")
	get := redis.NewStringCmd(ctx, "get", onSource)
	var batch []*batchCall
	for _, cmd := range []redis.Cmder{first, lock, get} {
		batch = append(batch, &batchCall{cmd: cmd})
	}
	c.batch.exec(batch)
	t.Logf("script: %v; lock: %q %v; get: %q %v", script.Err(), lock.Val(), lock.Err(), get.Val(), get.Err())
	if !isTryAgain(script.Err()) {
		t.Errorf("the script: %v, want TRYAGAIN", script.Err())
	}
	if lock.Err() != nil || lock.Val() != "OK" {
		t.Errorf("the fill lock's SET NX in the same batch: %q %v, want OK (taken)", lock.Val(), lock.Err())
	}
	if get.Err() != nil || get.Val() != "entry c" {
		t.Errorf("the GET in the same batch: %q %v, want the entry", get.Val(), get.Err())
	}
}

// clusterLoad is the traffic of the topology tests: two instances' Gets
// (entries read back from L2 by the other, new keys filled under the lock),
// the rate limiter asking Redis on every request (MaxLease 1), and a purge
// of one of the dealers now and then, from workers goroutines until end.
type clusterLoad struct {
	stop                    atomic.Bool
	wg                      sync.WaitGroup
	stall                   atomic.Int64 // the latest a 1 ms sleep woke up, ns
	pingRTT                 atomic.Int64 // the longest PING round trip to a node, ns
	gets, getErrs, notRedis atomic.Int64
	purges, purgeErrs       atomic.Int64
	mu                      sync.Mutex
	errs                    []string
}

// startClusterLoad starts the load on a, b and lim, and the stall
// detector on nodes, the addresses of every redis-server the load reaches.
func startClusterLoad(t *testing.T, a, b *Cache, lim *ratelimit.Limiter, dealers []int64, workers int, nodes []string) *clusterLoad {
	l := &clusterLoad{}
	ctx := context.Background()
	pol := Policy{TTL: time.Hour}
	note := func(format string, args ...any) {
		l.mu.Lock()
		if len(l.errs) < 20 {
			l.errs = append(l.errs, time.Now().Format("15:04:05.000 ")+fmt.Sprintf(format, args...))
		}
		l.mu.Unlock()
	}
	for w := range workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := 0; !l.stop.Load(); i++ {
				d := dealers[(w+i)%len(dealers)]
				key := fmt.Sprintf("/load/%d", i%40)
				if i%4 == 0 {
					key = fmt.Sprintf("/new/%d/%d", w, i) // a miss: lock, fill, store
				}
				for _, c := range []*Cache{a, b} {
					l.gets.Add(1)
					if _, _, err := c.Get(ctx, d, []byte(key), pol, newFiller("x").fill); err != nil {
						l.getErrs.Add(1)
						note("get %d %s: %v", d, key, err)
					}
				}
				if dd := lim.Allow(ctx, d, fmt.Sprint("key", i%10), ratelimit.Limit{Rate: 1e6, Burst: 1e6}); dd.Source != ratelimit.SourceRedis {
					l.notRedis.Add(1)
				}
				if w == 0 && i%25 == 0 {
					l.purges.Add(1)
					if err := a.PurgeDealer(ctx, d); err != nil {
						l.purgeErrs.Add(1)
						note("purge %d: %v", d, err)
					}
				}
				time.Sleep(time.Millisecond)
			}
		}()
	}
	// How busy the box is. A Redis call outlives its budget when
	// redis-server or this process is starved of CPU that long, which
	// marks Redis down, by design: a shared CI box or a -race run beside
	// other packages does that now and then. Two measures, the longer
	// counts (check): how late a 1 ms sleep wakes up here (this process
	// starved) and the round trip of a PING to each node, one at a time
	// on a connection of its own (that node starved: a 1 ms sleep alone
	// missed a redis-server starved past the budget while this process
	// ran, and the limiter's fallback failed a run on a loaded box).
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for !l.stop.Load() {
			t0 := time.Now()
			time.Sleep(time.Millisecond)
			maxInt64(&l.stall, int64(time.Since(t0)-time.Millisecond))
		}
	}()
	for _, addr := range nodes {
		pc := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
		if err := pc.Ping(ctx).Err(); err != nil { // dialled before the load's measure
			t.Fatalf("stall detector: PING %s: %v", addr, err)
		}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			defer pc.Close()
			for !l.stop.Load() {
				t0 := time.Now()
				_ = pc.Ping(ctx).Err() // LOADING, say: a reply all the same
				maxInt64(&l.pingRTT, int64(time.Since(t0)))
				time.Sleep(time.Millisecond)
			}
		}()
	}
	t.Cleanup(l.end)
	return l
}

func (l *clusterLoad) end() { l.stop.Store(true); l.wg.Wait() }

// maxInt64 raises v to n when n is larger.
func maxInt64(v *atomic.Int64, n int64) {
	for {
		o := v.Load()
		if n <= o || v.CompareAndSwap(o, n) {
			return
		}
	}
}

// stalled is the longest the box stalled during the load (see
// startClusterLoad).
func (l *clusterLoad) stalled() time.Duration {
	return time.Duration(max(l.stall.Load(), l.pingRTT.Load()))
}

// clusterInstances makes the load tests' two edge-like instances on cl,
// each with its own client (ca is a's, which the limiter shares), with
// budget to; hook, when not nil, is added to both clients first.
func clusterInstances(t *testing.T, cl *redistest.Cluster, to time.Duration, hook redis.Hook) (ca redis.UniversalClient, a, b *Cache, lim *ratelimit.Limiter) {
	t.Helper()
	ca = edgeLikeRedis(t, cl.Addrs(), "", to)
	cb := edgeLikeRedis(t, cl.Addrs(), "", to)
	if hook != nil {
		ca.AddHook(hook)
		cb.AddHook(hook)
	}
	a = newCache(t, Options{Redis: ca, RedisTimeout: to, LockWait: 250 * time.Millisecond})
	b = newCache(t, Options{Redis: cb, RedisTimeout: to, LockWait: 250 * time.Millisecond})
	lim, err := ratelimit.New(ratelimit.Options{Redis: ca, RedisTimeout: to, MaxLease: 1, BackgroundProbe: true, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lim.Close() })
	return ca, a, b, lim
}

// waitOnRedis waits until a, b and lim are on Redis, before the strict
// tests take the Stats their checks count from: a call of the setup (the
// entries stored before the load, a subscription) that a busy box held
// past the budget marks Redis down until the probe brings it back (0.5 s
// on), and the load that began meanwhile counted purges deferred for an
// outage that ended before the snapshot, with no down event after it.
func waitOnRedis(t *testing.T, a, b *Cache, lim *ratelimit.Limiter) {
	t.Helper()
	waitWithin(t, 10*time.Second, "both instances and the limiter on Redis", func() bool {
		return a.RedisHealthy() && b.RedisHealthy() && !lim.Stats().FallbackActive
	})
}

// redisErrors is a go-redis hook that keeps the first error texts its
// commands got and whether one was CLUSTERDOWN.
type redisErrors struct {
	clusterDown atomic.Bool
	mu          sync.Mutex
	texts       []string
}

func (r *redisErrors) note(cmds ...redis.Cmder) {
	for _, c := range cmds {
		err := c.Err()
		if err == nil || err == redis.Nil || strings.HasPrefix(err.Error(), "NOSCRIPT") {
			continue
		}
		if strings.Contains(err.Error(), "CLUSTERDOWN") {
			r.clusterDown.Store(true)
		}
		r.mu.Lock()
		if len(r.texts) < 5 {
			r.texts = append(r.texts, c.Name()+": "+err.Error())
		}
		r.mu.Unlock()
	}
}

func (r *redisErrors) sample() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.texts, "; ")
}

func (r *redisErrors) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *redisErrors) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		r.note(cmd)
		return err
	}
}

func (r *redisErrors) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		r.note(cmds...)
		return err
	}
}

// sawClusterDown reports whether a noted failure was Redis's CLUSTERDOWN.
func (l *clusterLoad) sawClusterDown() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.errs {
		if strings.Contains(e, "CLUSTERDOWN") {
			return true
		}
	}
	return false
}

// watchClusterState polls CLUSTER INFO of every node until the test ends
// and reports, when called, whether any said cluster_state:fail after it
// had said ok.
func watchClusterState(t *testing.T, nodes []*redistest.Server) func() bool {
	var failed, stop atomic.Bool
	var wg sync.WaitGroup
	clients := make([]*redis.Client, len(nodes))
	for i, n := range nodes {
		clients[i] = n.Client()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		ctx := context.Background()
		ok := make([]bool, len(clients)) // a node counts once it said ok (a new replica starts at fail)
		for !stop.Load() {
			for i, c := range clients {
				s, err := c.ClusterInfo(ctx).Result()
				switch {
				case err != nil:
				case strings.Contains(s, "cluster_state:ok"):
					ok[i] = true
				case ok[i] && strings.Contains(s, "cluster_state:fail"):
					failed.Store(true)
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	t.Cleanup(func() {
		stop.Store(true)
		wg.Wait()
		for _, c := range clients {
			_ = c.Close()
		}
	})
	return failed.Load
}

// check ends the load and reports what failed during it: no Get ever; no
// purge, Redis call, down event or limiter fallback either when strict
// (false: Redis itself stalled past the budget, an outage by design) and
// the box did not stall for half of budget (see startClusterLoad).
func (l *clusterLoad) check(t *testing.T, a, b *Cache, lim *ratelimit.Limiter, sa, sb Stats, sl ratelimit.Stats, strict bool, budget time.Duration) {
	t.Helper()
	l.end()
	t.Logf("stalls: a 1 ms sleep woke up %v late, the longest PING took %v",
		time.Duration(l.stall.Load()).Round(time.Millisecond), time.Duration(l.pingRTT.Load()).Round(time.Millisecond))
	if stall := l.stalled(); stall > budget/2 {
		t.Logf("the box stalled for %v (budget %v): only the checks that hold through an outage apply", stall.Round(time.Millisecond), budget)
		strict = false
	}
	ea, eb, el := a.Stats(), b.Stats(), lim.Stats()
	t.Logf("%d gets (%d failed), %d purges (%d failed), %d limiter decisions not from Redis; a: L2 errors %d, down %d; b: L2 errors %d, down %d; limiter: errors %d, fallbacks %d",
		l.gets.Load(), l.getErrs.Load(), l.purges.Load(), l.purgeErrs.Load(), l.notRedis.Load(),
		ea.L2Errors-sa.L2Errors, ea.RedisDownEvents-sa.RedisDownEvents, eb.L2Errors-sb.L2Errors, eb.RedisDownEvents-sb.RedisDownEvents,
		el.RedisErrors-sl.RedisErrors, el.FallbackActivations-sl.FallbackActivations)
	if len(l.errs) > 0 {
		t.Logf("failures:\n%s", strings.Join(l.errs, "\n"))
	}
	if l.getErrs.Load() != 0 {
		t.Errorf("%d Gets failed, want none", l.getErrs.Load())
	}
	if !strict {
		return
	}
	if l.purgeErrs.Load() != 0 || l.notRedis.Load() != 0 {
		t.Errorf("failed: %d purges; %d limiter decisions without Redis", l.purgeErrs.Load(), l.notRedis.Load())
	}
	if n, m := ea.L2Errors-sa.L2Errors, eb.L2Errors-sb.L2Errors; n != 0 || m != 0 {
		t.Errorf("failed Redis calls: a %d, b %d, want none", n, m)
	}
	if n, m := ea.RedisDownEvents-sa.RedisDownEvents, eb.RedisDownEvents-sb.RedisDownEvents; n != 0 || m != 0 {
		t.Errorf("Redis marked down: a %d, b %d times, want never", n, m)
	}
	if n := el.FallbackActivations - sl.FallbackActivations; n != 0 {
		t.Errorf("the limiter fell back %d times, want never", n)
	}
}

// purgeInstances makes the two instances purgeReaches runs on after a
// topology change: on clients of their own that learned the Cluster's
// slots before the change (the same state the load's instances are in),
// subscribed and holding the generations of dealers, at a generous budget.
// Whether a purge reaches the other instance after the change (the
// subscription kept, the generation key and the entries found where they
// moved) does not depend on the budget, and at the load's tight one a
// purge or an L2 read held past it by a busy box (redis-server starved
// for a moment) marked Redis down and failed the run; what holds at the
// tight budget is the load's to show (clusterLoad.check).
func purgeInstances(t *testing.T, cl *redistest.Cluster, dealers ...int64) (pa, pb *Cache) {
	t.Helper()
	mk := func() *Cache {
		return newCache(t, Options{Redis: edgeLikeRedis(t, cl.Addrs(), "", time.Second), RedisTimeout: time.Second, LockWait: 250 * time.Millisecond})
	}
	pa, pb = mk(), mk()
	waitWithin(t, 10*time.Second, "the purge instances' subscriptions", func() bool { return pa.Stats().PubSubUp && pb.Stats().PubSubUp })
	for _, d := range dealers {
		for _, c := range []*Cache{pa, pb} {
			if _, st := c.generation(context.Background(), d); !st.verified.Load() {
				t.Fatalf("dealer %d's generation was not read from Redis before the change", d)
			}
		}
	}
	return pa, pb
}

// purgeReaches purges dealer on a and checks that b serves a new fill of
// key afterwards, and that b reads a's entries of the new generation from
// L2.
func purgeReaches(t *testing.T, a, b *Cache, dealer int64, key string) {
	t.Helper()
	ctx := context.Background()
	pol := Policy{TTL: time.Hour}
	mustGet(t, b, dealer, key, pol, newFiller("old").fill)
	if err := a.PurgeDealer(ctx, dealer); err != nil {
		t.Fatalf("purge: %v", err)
	}
	waitWithin(t, 5*time.Second, "b to take the purge", func() bool { return purgeTaken(t, a, b, dealer, key) })
	if e, _ := mustGet(t, a, dealer, key, pol, newFiller("new").fill); string(e.Body()) != "new" {
		t.Errorf("a after its purge: %q", e.Body())
	}
	other := newFiller("b's own")
	if e, res := mustGet(t, b, dealer, key, pol, other.fill); string(e.Body()) != "new" || other.calls.Load() != 0 {
		t.Errorf("b after a's purge: %v %q (fills %d), want a's new entry from L2", res, e.Body(), other.calls.Load())
	}
}

// TestClusterSlotMigrationUnderLoad: a dealer's slot is moved to a new
// master (a scale-out: a node no client was given, found through the
// redirects) as redis-cli --cluster reshard moves it (IMPORTING,
// MIGRATING, MIGRATE of its keys in batches, SETSLOT NODE on every node) while
// two instances serve its entries, fill new ones under the lock, purge it
// and rate-limit its keys, every command in shared pipelines: ASK and
// TRYAGAIN during the move, MOVED after it. At the default redis.timeout
// nothing fails, Redis is never marked down, and afterwards a purge
// reaches the other instance, which reads the new entries from L2 on the
// new master (a pair whose clients, as the loaded pair's, learned the
// slots before the move: purgeInstances). Before ClientOptions set
// MinRetryBackoff -1, go-redis slept 10-30 ms before following a
// pipeline's redirects: both instances marked Redis down during the move,
// and a purge was deferred.
func TestClusterSlotMigrationUnderLoad(t *testing.T) {
	cl := redistest.StartCluster(t)
	to := 50 * time.Millisecond // the default redis.timeout
	if raceEnabled {
		to = 100 * time.Millisecond
	}
	ca, a, b, lim := clusterInstances(t, cl, to, nil)
	ctx := context.Background()
	const dealer = 42
	slot, err := ca.(*redis.ClusterClient).ClusterKeySlot(ctx, a.genKey(dealer)).Result()
	if err != nil {
		t.Fatal(err)
	}
	pa, pb := purgeInstances(t, cl, dealer)
	dstNode := addClusterMaster(t, cl)
	waitWithin(t, 10*time.Second, "subscriptions", func() bool { return a.Stats().PubSubUp && b.Stats().PubSubUp })
	pol := Policy{TTL: time.Hour}
	for i := range 40 { // entries on the source, for the migration to move
		mustGet(t, a, dealer, fmt.Sprintf("/load/%d", i), pol, newFiller("x").fill)
	}
	waitOnRedis(t, a, b, lim)
	sa, sb, sl := a.Stats(), b.Stats(), lim.Stats()
	load := startClusterLoad(t, a, b, lim, []int64{dealer}, 4, append(cl.Addrs(), dstNode.Addr))
	waitWithin(t, 5*time.Second, "traffic", func() bool { return load.gets.Load() > 200 })

	src, dst, _, dstID := startSlotMigration(t, cl, slot, dstNode)
	// The generation key moves first: an instance that starts now reads it
	// (its SETNX+GET pipeline) through ASK, and must not seed another one
	// on the source (MIGRATE below would then fail: BUSYKEY).
	if err := src.Migrate(ctx, "127.0.0.1", strconv.Itoa(dstNode.Port), a.genKey(dealer), 0, 5*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	genOnTarget := func() uint64 {
		var get *redis.StringCmd
		if _, err := dst.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Do(ctx, "asking")
			get = p.Get(ctx, a.genKey(dealer))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		g, _ := get.Uint64()
		return g
	}
	g0 := genOnTarget()
	c := newCache(t, Options{Redis: edgeLikeRedis(t, cl.Addrs(), "", time.Second)}) // the routing matters here, not the budget
	gc := mustGen(t, c, dealer)
	if g1 := genOnTarget(); gc < g0 || gc > g1 || !c.gens.get(dealer).verified.Load() {
		t.Errorf("an instance started during the migration holds generation %d (verified %v), want the moved key's (%d..%d)",
			gc, c.gens.get(dealer).verified.Load(), g0, g1)
	}
	moved := 0
	for {
		keys, err := src.Do(ctx, "cluster", "getkeysinslot", slot, 10).StringSlice()
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) == 0 {
			break
		}
		args := []any{"migrate", "127.0.0.1", dstNode.Port, "", 0, 5000, "keys"}
		for _, k := range keys {
			args = append(args, k)
		}
		if err := src.Do(ctx, args...).Err(); err != nil {
			t.Fatal(err)
		}
		moved += len(keys)
		n := load.gets.Load() // traffic between the batches
		waitWithin(t, 5*time.Second, "traffic", func() bool { return load.gets.Load() > n+10 })
	}
	for _, c := range []*redis.Client{dst, src} {
		if err := c.Do(ctx, "cluster", "setslot", slot, "node", dstID).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range cl.Nodes {
		if err := n.Client().Do(ctx, "cluster", "setslot", slot, "node", dstID).Err(); err != nil {
			t.Fatal(err)
		}
	}
	waitWithin(t, 5*time.Second, "PingRedis to count the new master", func() bool { return PingRedis(ctx, ca) == nil })
	n := load.gets.Load()
	waitWithin(t, 5*time.Second, "traffic after the move", func() bool { return load.gets.Load() > n+200 })
	t.Logf("%d keys migrated", moved)
	load.check(t, a, b, lim, sa, sb, sl, true, to)
	if k, _ := dst.Do(ctx, "cluster", "countkeysinslot", slot).Int(); k == 0 {
		t.Errorf("no key of the slot on the new master after the move")
	}
	waitWithin(t, 10*time.Second, "every instance on Redis, subscribed", func() bool {
		return a.RedisHealthy() && b.RedisHealthy() && a.Stats().PubSubUp && b.Stats().PubSubUp &&
			pa.RedisHealthy() && pb.RedisHealthy() && pa.Stats().PubSubUp && pb.Stats().PubSubUp
	})
	purgeReaches(t, pa, pb, dealer, "/after")
}

// TestClusterManualFailoverUnderLoad: CLUSTER FAILOVER (an operator's or
// a managed service's planned switch, for an upgrade) of the master that
// holds a dealer's slot and the purge channel's, while two instances serve
// the dealer, fill, purge and rate-limit it: the demoted master answers
// MOVED, the clients follow. Nothing fails, Redis is never marked down,
// the limiter never falls back, the subscriptions stay (a Cluster's
// PUBLISH reaches the subscribers of every node) and a purge after the
// switch reaches the other instance (purgeInstances).
func TestClusterManualFailoverUnderLoad(t *testing.T) {
	cl := redistest.StartCluster(t)
	// Redis pauses the old master's writes until the replica has taken
	// over, tens of milliseconds: at the default 50 ms budget a command
	// caught in the pause may time out, which is a short outage (L1 and
	// fill until the probe, 0.5 s), as for any stall.
	const to = 250 * time.Millisecond
	// What Redis itself answered: a CLUSTERDOWN (see below) is an outage
	// Redis declares.
	var seen redisErrors
	ca, a, b, lim := clusterInstances(t, cl, to, &seen)
	ctx := context.Background()
	cc := ca.(*redis.ClusterClient)
	slot, err := cc.ClusterKeySlot(ctx, a.channel).Result()
	if err != nil {
		t.Fatal(err)
	}
	m := clusterMasterOf(slot)
	var dealers []int64 // on the master that is switched
	for d := int64(1); len(dealers) < 3; d++ {
		if s, _ := cc.ClusterKeySlot(ctx, a.genKey(d)).Result(); clusterMasterOf(s) == m {
			dealers = append(dealers, d)
		}
	}
	pa, pb := purgeInstances(t, cl, dealers[0])
	replica := addClusterReplica(t, cl, m)
	waitWithin(t, 10*time.Second, "subscriptions", func() bool { return a.Stats().PubSubUp && b.Stats().PubSubUp })
	waitOnRedis(t, a, b, lim)
	sa, sb, sl := a.Stats(), b.Stats(), lim.Stats()
	load := startClusterLoad(t, a, b, lim, dealers, 4, append(cl.Addrs(), replica.Addr))
	waitWithin(t, 5*time.Second, "traffic", func() bool { return load.gets.Load() > 200 })

	rc, old := replica.Client(), cl.Nodes[m].Client()
	// Redis may report the Cluster down for a moment while the roles swap
	// (CLUSTERDOWN: a node's view of the slots' owners lags the switch; seen
	// about once in seven runs on a quiet box): an outage Redis declares,
	// which marks Redis down by design, so the strict checks do not apply
	// then. Every node's cluster_state is watched through the switch.
	nodes := append(append([]*redistest.Server(nil), cl.Nodes...), replica)
	clusterFailed := watchClusterState(t, nodes)
	start := time.Now()
	if err := rc.Do(ctx, "cluster", "failover").Err(); err != nil {
		t.Fatal(err)
	}
	waitWithin(t, 10*time.Second, "the switch", func() bool {
		ri, _ := rc.Info(ctx, "replication").Result()
		oi, _ := old.Info(ctx, "replication").Result()
		return strings.Contains(ri, "role:master") && strings.Contains(oi, "role:slave")
	})
	took := time.Since(start)
	n := load.gets.Load()
	waitWithin(t, 5*time.Second, "traffic after the switch", func() bool { return load.gets.Load() > n+300 })
	// A switch that outlasted the budget paused the old master's writes as
	// long (a busy box delays the replica's election): calls time out and
	// Redis is marked down for a moment, by design. No Get fails anyway.
	t.Logf("the switch took %v", took.Round(time.Millisecond))
	down := clusterFailed() || load.sawClusterDown() || seen.clusterDown.Load()
	if down {
		t.Logf("a node reported the Cluster down during the switch (cluster_state:fail or CLUSTERDOWN)")
	}
	if e := seen.sample(); e != "" {
		t.Logf("Redis errors during the load: %s", e)
	}
	load.check(t, a, b, lim, sa, sb, sl, took < to && !down, to)
	// A node may still report the Cluster down for a moment after the
	// switch (see above): a purge then is deferred, as Redis declares an
	// outage. The purge after the switch is checked once every node says
	// ok again (a loaded box caught a node still answering CLUSTERDOWN).
	var infos []*redis.Client
	for _, n := range nodes {
		infos = append(infos, n.Client())
	}
	waitWithin(t, 10*time.Second, "every node's cluster_state ok", func() bool {
		for _, c := range infos {
			if s, err := c.ClusterInfo(ctx).Result(); err != nil || !strings.Contains(s, "cluster_state:ok") {
				return false
			}
		}
		return true
	})
	waitWithin(t, 10*time.Second, "every instance on Redis, subscribed", func() bool {
		return a.RedisHealthy() && b.RedisHealthy() && a.Stats().PubSubUp && b.Stats().PubSubUp &&
			pa.RedisHealthy() && pb.RedisHealthy() && pa.Stats().PubSubUp && pb.Stats().PubSubUp
	})
	purgeReaches(t, pa, pb, dealers[0], "/after")
}

// TestClusterMasterLoading: one master of the Cluster loads its data
// again for seconds (DEBUG RELOAD, as a master restarted with persistence
// does), refusing every command with LOADING, while two instances and the
// rate limiter serve dealers of every master. No request fails: the cache
// marks Redis down (one master unable to serve counts as an outage, as a
// dead one does), serves from L1 and fills, and once the master has
// loaded both instances come back by themselves with their subscriptions,
// the limiter too, and a purge reaches the other instance (of a pair that
// went down and came back as well: purgeInstances).
func TestClusterMasterLoading(t *testing.T) {
	// µs per key while loading; the loading node answers (LOADING) between
	// chunks of 1 KiB.
	cl := redistest.StartCluster(t, "--enable-debug-command", "yes", "--key-load-delay", "2000", "--loading-process-events-interval-bytes", "1024")
	const to = 100 * time.Millisecond
	ca, a, b, lim := clusterInstances(t, cl, to, nil)
	ctx := context.Background()
	cc := ca.(*redis.ClusterClient)
	const loading = 0 // the master that reloads
	var dealers []int64
	var onLoading int64
	for d := int64(1); len(dealers) < 6; d++ {
		s, _ := cc.ClusterKeySlot(ctx, a.genKey(d)).Result()
		if clusterMasterOf(s) == loading && onLoading == 0 {
			onLoading = d
		}
		dealers = append(dealers, d)
	}
	if onLoading == 0 {
		t.Fatal("no dealer on the loading master")
	}
	pa, pb := purgeInstances(t, cl, onLoading)
	direct := cl.Nodes[loading].Client()
	pipe := direct.Pipeline()
	for i := range 1000 { // what it loads: ~2 s
		pipe.Set(ctx, fmt.Sprintf("filler{d%d}:%d", onLoading, i), "x", 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	waitWithin(t, 10*time.Second, "subscriptions", func() bool { return a.Stats().PubSubUp && b.Stats().PubSubUp })
	sa, sb, sl := a.Stats(), b.Stats(), lim.Stats()
	load := startClusterLoad(t, a, b, lim, dealers, 2, cl.Addrs())
	waitWithin(t, 5*time.Second, "traffic", func() bool { return load.gets.Load() > 100 })

	go func() {
		c := redis.NewClient(&redis.Options{Addr: cl.Nodes[loading].Addr, ReadTimeout: 30 * time.Second})
		defer c.Close()
		t.Logf("debug reload: %v", c.Do(ctx, "debug", "reload").Err())
	}()
	seen := false
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline) && !seen; time.Sleep(10 * time.Millisecond) {
		err := direct.Ping(ctx).Err()
		seen = err != nil && strings.HasPrefix(err.Error(), "LOADING")
	}
	if !seen {
		t.Skip("the master did not answer LOADING")
	}
	// The purge instances go through the outage too: a Get of the loading
	// master's dealer answered LOADING marks Redis down at any budget.
	pol := Policy{TTL: time.Hour}
	waitWithin(t, 5*time.Second, "the purge instances to mark Redis down", func() bool {
		for _, c := range []*Cache{pa, pb} {
			if c.RedisHealthy() {
				_, _, _ = c.Get(ctx, onLoading, []byte("/during"), pol, newFiller("x").fill)
			}
		}
		return !pa.RedisHealthy() && !pb.RedisHealthy()
	})
	waitWithin(t, 5*time.Second, "a to mark Redis down", func() bool { return !a.RedisHealthy() })
	if err := PingRedis(ctx, ca); err == nil {
		t.Errorf("PingRedis (readyz, edge_redis_up) while a master answers LOADING: nil")
	}
	waitWithin(t, 30*time.Second, "every instance and the limiter back", func() bool {
		return a.RedisHealthy() && b.RedisHealthy() && a.Stats().PubSubUp && b.Stats().PubSubUp && !lim.Stats().FallbackActive &&
			pa.RedisHealthy() && pb.RedisHealthy() && pa.Stats().PubSubUp && pb.Stats().PubSubUp
	})
	load.check(t, a, b, lim, sa, sb, sl, false, to)
	purgeReaches(t, pa, pb, onLoading, "/after")
}
