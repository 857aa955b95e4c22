package cache

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
)

// countAfter is a go-redis hook that counts the commands sent once closed
// is set.
type countAfter struct {
	closed *atomic.Bool
	n      *atomic.Int64
	names  *atomic.Value // the last command counted, for the failure
}

func (h countAfter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h countAfter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.closed.Load() {
			h.n.Add(1)
			h.names.Store(cmd.String())
		}
		return next(ctx, cmd)
	}
}
func (h countAfter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if h.closed.Load() {
			h.n.Add(int64(len(cmds)))
			h.names.Store(cmds[0].String())
		}
		return next(ctx, cmds)
	}
}

// TestCloseWaitsForRefreshes: Close cancels the background refreshes but
// returned without waiting for them; cmd/dealer-edge closes the Redis
// client right after the cache. A refresh whose fill had its body when the
// cancellation came (an upstream answer already read) then stored it in L1,
// the bulk tier and Redis after Close had returned, on the closed client
// ("redis: client is closed"), and refilled the bulk tier Close had just
// emptied. Close now waits for them: when it returns no refresh runs, and
// the Redis client sees no command from the cache after it. Run with
// -race too (the refresh's writes against Close's).
func TestCloseWaitsForRefreshes(t *testing.T) {
	srv := redistest.Start(t)
	for _, noAuto := range []bool{false, true} {
		t.Run("NoAutoPipeline="+strconv.FormatBool(noAuto), func(t *testing.T) {
			clk := newFakeClock()
			var closed atomic.Bool
			var after atomic.Int64
			var last atomic.Value
			rc := newClient(t, srv.Addr)
			rc.AddHook(countAfter{&closed, &after, &last})
			a := newCache(t, Options{Redis: rc, Prefix: "closewait" + strconv.FormatBool(noAuto), NoAutoPipeline: noAuto,
				Now: clk.Now, LockWait: 2 * time.Second, LockTTL: time.Minute, L1MaxBytes: 8 << 20})
			pol := Policy{TTL: time.Second, StaleWhileRevalidate: time.Hour}
			mustGet(t, a, 5, "/k", pol, newFiller("old").fill)
			clk.Advance(2 * time.Second)
			cancelled, release, fillDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
			if _, res := mustGet(t, a, 5, "/k", pol, func(ctx context.Context) ([]byte, error) {
				defer close(fillDone)
				<-ctx.Done() // Close's cancellation
				close(cancelled)
				<-release // the body was read before the cancellation was seen
				return []byte("new"), nil
			}); res != Stale {
				t.Fatalf("second Get: %v, want a stale hit", res)
			}
			closeDone := make(chan int64)
			go func() {
				_ = a.Close()
				n := a.Stats().RefreshesInFlight
				closed.Store(true)
				closeDone <- n
			}()
			<-cancelled
			// An unfixed Close returns now, with the refresh blocked;
			// a fixed one waits for the refresh, which release lets end.
			// The wait only gives an unfixed Close time to show itself:
			// the fixed one passes whatever the timing.
			var inFlight int64
			returned := false
			select {
			case inFlight = <-closeDone:
				returned = true
			case <-time.After(200 * time.Millisecond):
			}
			close(release)
			if !returned {
				inFlight = <-closeDone
			}
			<-fillDone
			waitRefreshes(t, a) // an unfixed Close: let the refresh store
			_ = rc.Close()      // as cmd/dealer-edge does after the cache's Close
			if inFlight != 0 {
				t.Errorf("Close returned with %d refresh(es) still running", inFlight)
			}
			if n := after.Load(); n != 0 {
				t.Errorf("%d Redis command(s) sent by the cache after its Close returned (the last: %v)", n, last.Load())
			}
		})
	}
}
