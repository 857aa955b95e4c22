package cache

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/dealer-edge/dealer-edge/internal/syncbuf"
	"github.com/redis/go-redis/v9"
)

// startSlotMigration marks slot as migrating from the StartCluster node
// owning it to the next one (target IMPORTING, then source MIGRATING, as
// redis-cli --cluster reshard does) and returns both nodes' clients and
// the target's id.
func startSlotMigration(t *testing.T, cl *redistest.Cluster, slot int64) (src, dst *redis.Client, srcNode, dstNode *redistest.Server, dstID string) {
	t.Helper()
	ctx := context.Background()
	srcNode, dstNode = cl.Nodes[clusterMasterOf(slot)], cl.Nodes[(clusterMasterOf(slot)+1)%3]
	src, dst = srcNode.Client(), dstNode.Client()
	dstID = clusterNodeID(t, dstNode.Addr)
	if err := dst.Do(ctx, "cluster", "setslot", slot, "importing", clusterNodeID(t, srcNode.Addr)).Err(); err != nil {
		t.Fatal(err)
	}
	if err := src.Do(ctx, "cluster", "setslot", slot, "migrating", dstID).Err(); err != nil {
		t.Fatal(err)
	}
	return src, dst, srcNode, dstNode, dstID
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
	const to = 50 * time.Millisecond // the default redis.timeout
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
	src, dst, _, _, _ := startSlotMigration(t, cl, slot)
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
	startSlotMigration(t, cl, slot)

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
