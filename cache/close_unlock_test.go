package cache

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
)

// TestCloseMidFillReleasesLock: an instance is closed (shutdown) while a
// fill of its own holds the key's fill lock, and the fill then fails (its
// upstream closed too). Its release ran under the cache's context, which
// Close had cancelled: unpipelined (cache.redis_auto_pipeline: false) the
// DEL was never sent, and the lock stayed in Redis for the rest of
// lock_ttl; every other instance's miss of the key waited lock_wait on
// it. Pipelined, the EVALSHA was sent (the batcher sends what it queued)
// but not the EVAL after a NOSCRIPT. The release must reach Redis after
// Close as well.
func TestCloseMidFillReleasesLock(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	pol := Policy{TTL: time.Minute}
	for _, noAuto := range []bool{true, false} {
		t.Run("NoAutoPipeline="+strconv.FormatBool(noAuto), func(t *testing.T) {
			prefix := "closeunlock" + strconv.FormatBool(noAuto)
			a := newCache(t, Options{Redis: newClient(t, srv.Addr), Prefix: prefix, NoAutoPipeline: noAuto,
				LockWait: 2 * time.Second, LockTTL: time.Minute})
			mustGet(t, a, 5, "/warm", pol, newFiller("warm").fill) // generation and epoch read
			gen, _ := a.generation(ctx, 5)
			lkey := a.lockKey(5, gen, "/k")
			rc := newClient(t, srv.Addr)
			filling, closed := make(chan struct{}), make(chan struct{})
			done := make(chan error, 1)
			go func() {
				_, _, err := a.Get(ctx, 5, []byte("/k"), pol, func(context.Context) ([]byte, error) {
					close(filling)
					<-closed
					return nil, errors.New("upstream closed")
				})
				done <- err
			}()
			<-filling
			if rc.Exists(ctx, lkey).Val() != 1 {
				t.Fatalf("the fill does not hold the lock %s: %q", lkey, rc.Keys(ctx, prefix+"*").Val())
			}
			// Redis does not know the release script (restarted or
			// flushed since it last ran it): pipelined, the EVAL sent after
			// NOSCRIPT was the release's second command.
			if err := rc.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			_ = a.Close()
			close(closed)
			<-done
			waitFor(t, "the fill lock released", func() bool { return rc.Exists(ctx, lkey).Val() == 0 })
		})
	}
}

// TestCloseReleasesLocksOfRunningFills: Close releases the fill locks of
// the fills still running (a background refresh, which Close cancels but
// whose upstream call has not ended yet; a request the listener's drain
// outlived). The release a fill makes when it ends came after Close had
// returned, and cmd/dealer-edge closes the Redis client right after the
// cache: the release failed ("client is closed") and the lock stayed for
// the rest of lock_ttl, every other instance's miss of the key waiting
// lock_wait on it.
func TestCloseReleasesLocksOfRunningFills(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	for _, noAuto := range []bool{false, true} {
		t.Run("NoAutoPipeline="+strconv.FormatBool(noAuto), func(t *testing.T) {
			clk := newFakeClock()
			rc := newClient(t, srv.Addr)
			a := newCache(t, Options{Redis: rc, Prefix: "closerefresh" + strconv.FormatBool(noAuto), NoAutoPipeline: noAuto,
				Now: clk.Now, LockWait: 2 * time.Second, LockTTL: time.Minute})
			pol := Policy{TTL: time.Second, StaleWhileRevalidate: time.Hour}
			mustGet(t, a, 5, "/k", pol, newFiller("old").fill)
			gen, _ := a.generation(ctx, 5)
			lkey := a.lockKey(5, gen, "/k")
			clk.Advance(2 * time.Second)
			filling, proceed := make(chan struct{}), make(chan struct{})
			if _, res := mustGet(t, a, 5, "/k", pol, func(context.Context) ([]byte, error) {
				close(filling)
				<-proceed // an upstream call that has not seen the cancellation yet
				return nil, errors.New("upstream closed")
			}); res != Stale {
				t.Fatalf("second Get: %v, want a stale hit", res)
			}
			<-filling
			admin := newClient(t, srv.Addr)
			if admin.Exists(ctx, lkey).Val() != 1 {
				t.Fatalf("the refresh does not hold the lock %s", lkey)
			}
			// Close waits for the refresh (TestCloseWaitsForRefreshes);
			// the lock is released before that wait, while the fill
			// still runs.
			closed := make(chan struct{})
			go func() {
				_ = a.Close()
				close(closed)
			}()
			waitFor(t, "the refresh's fill lock released while its fill runs", func() bool { return admin.Exists(ctx, lkey).Val() == 0 })
			close(proceed)
			<-closed
			_ = rc.Close() // as cmd/dealer-edge does after the cache's Close
			if admin.Exists(ctx, lkey).Val() != 0 {
				t.Errorf("the refresh's fill lock is still held after Close")
			}
		})
	}
}
