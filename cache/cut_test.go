package cache

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/redis/go-redis/v9"
)

// cutClusterClient is the Cluster client cmd/dealer-edge builds
// (ClientOptions), its connections dialled through cut.
func cutClusterClient(t testing.TB, cl *redistest.Cluster, cut *redistest.Cutter, to time.Duration) redis.UniversalClient {
	t.Helper()
	rc := redis.NewUniversalClient(ClientOptions(&redis.UniversalOptions{Addrs: cl.Addrs(), Dialer: cut.Dial}, to))
	t.Cleanup(func() { _ = rc.Close() })
	return rc
}

// countCmds counts the commands named name among cmds.
func countCmds(cmds [][]string, name string) int {
	n := 0
	for _, c := range cmds {
		if c[0] == name {
			n++
		}
	}
	return n
}

// TestClusterFillLockNotReplayedAfterCut: the connection that carried a
// fill lock's SET NX is dropped after Redis ran it and before its reply
// was read (a CLIENT KILL, a restarted node, a proxy's cut: the client
// reads EOF). go-redis's Cluster client sends a command again after such
// an error, alone (Process) and in a pipeline (the node's whole share),
// whatever MaxRetries says: its redirect loop (MaxRedirects) retries it.
// The replayed SET NX found the lock the first one had taken, answered
// nil, and the request took the lock for another instance's: it waited
// lock_wait polling its own lock (EXISTS) before it filled, and every
// instance's miss of the key waited for it too until lock_ttl. The lock
// must be sent once: its failure is a Redis error (fill without the lock,
// Redis marked down, the lock released by the probe as an orphan).
func TestClusterFillLockNotReplayedAfterCut(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	for _, noAuto := range []bool{false, true} {
		t.Run("NoAutoPipeline="+strconv.FormatBool(noAuto), func(t *testing.T) {
			cut := &redistest.Cutter{}
			rc := cutClusterClient(t, cl, cut, 250*time.Millisecond)
			c := newCache(t, Options{
				Redis: rc, RedisTimeout: 250 * time.Millisecond, NoAutoPipeline: noAuto,
				Prefix:   "cut" + strconv.FormatBool(noAuto),
				LockWait: 300 * time.Millisecond, LockTTL: 10 * time.Second,
			})
			const dealer = 7
			pol := Policy{TTL: time.Minute}
			mustGet(t, c, dealer, "/warm", pol, newFiller("warm").fill) // generation and epoch read
			gen, _ := c.generation(ctx, dealer)
			lkey := c.lockKey(dealer, gen, "/cut")
			cut.Arm(lkey)
			fills := 0
			e, _, err := c.Get(ctx, dealer, []byte("/cut"), pol, func(context.Context) ([]byte, error) {
				fills++
				return []byte("body"), nil
			})
			if err != nil || string(e.Body()) != "body" || fills != 1 {
				t.Fatalf("Get: %v, %d fills", err, fills)
			}
			cmds := cut.Commands(lkey)
			t.Logf("commands on the lock key: %q", cmds)
			if n := countCmds(cmds, "set"); n != 1 {
				t.Errorf("the fill lock's SET NX was sent %d times, want once", n)
			}
			if n := countCmds(cmds, "exists"); n != 0 {
				t.Errorf("the request polled its own fill lock %d times (waitL2): it took the lock for another instance's", n)
			}
			// The lock the cut SET NX took is released once the probe
			// finds Redis back (an orphan), long before its lock_ttl.
			waitFor(t, "the cut fill lock released", func() bool { return rc.Exists(ctx, lkey).Val() == 0 })
		})
	}
}

// TestClusterBatchNotReplayedAfterCut: as TestClusterFillLockNotReplayedAfterCut,
// for a batch of several requests' commands (one pipeline): the node's
// share that held the fill lock's SET NX is not sent again after the
// connection dropped before the replies were read, its commands fail
// (no lock taken, a miss) instead of the SET NX answering nil.
func TestClusterBatchNotReplayedAfterCut(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	cut := &redistest.Cutter{}
	rc := cutClusterClient(t, cl, cut, 250*time.Millisecond)
	c := newCache(t, Options{Redis: rc, RedisTimeout: 250 * time.Millisecond, Prefix: "cutbatch"})
	const dealer = 9
	ekey, lkey := c.entryKeyAt(dealer, 1, 0, "/a"), c.lockKeyAt(dealer, 1, 0, "/b")
	if err := rc.Set(ctx, ekey, "entry a", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	get := redis.NewStringCmd(ctx, "get", ekey)
	lock := c.lockCmd(ctx, lkey, "tok")
	cut.Arm(lkey)
	c.batch.exec([]*batchCall{{cmd: get}, {cmd: lock}})
	t.Logf("get: %q %v; lock: %v", get.Val(), get.Err(), lock.Err())
	cmds := cut.Commands(lkey)
	if n := countCmds(cmds, "set"); n != 1 {
		t.Errorf("the fill lock's SET NX was sent %d times, want once", n)
	}
	if errors.Is(lock.Err(), redis.Nil) {
		t.Errorf("the fill lock's SET NX answered nil (held elsewhere): the lock is this batch's own")
	}
}
