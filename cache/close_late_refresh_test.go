package cache

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/dealer-edge/dealer-edge/internal/syncbuf"
)

// TestRefreshEndingAfterCloseReportsNoOutage: a fill that ends after
// Close (Close waits for the background refreshes it cancels, not for a
// request's own fill that the drain outlived, whose upstream call has not
// seen the cancellation yet), once the Redis client is closed too, as
// cmd/dealer-edge closes it right after the cache, says nothing about
// Redis. Its last Redis call (the release of its fill lock) failed with
// "redis: client is closed", which marked Redis down: an edge shutdown
// with fills under way logged "cache: redis unavailable, serving from L1
// and fill" (WARN) after its drain, or after its "stopped" line, and
// counted a Redis outage that never was. (Until Close waited for them,
// background refreshes ended after it the same way.)
func TestRefreshEndingAfterCloseReportsNoOutage(t *testing.T) {
	srv := redistest.Start(t)
	for _, noAuto := range []bool{false, true} {
		t.Run("NoAutoPipeline="+strconv.FormatBool(noAuto), func(t *testing.T) {
			var logs syncbuf.Buffer
			rc := newClient(t, srv.Addr)
			a := newCache(t, Options{Redis: rc, Prefix: "closelate" + strconv.FormatBool(noAuto), NoAutoPipeline: noAuto,
				LockWait: 2 * time.Second, LockTTL: time.Minute,
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			pol := Policy{TTL: time.Minute}
			filling, proceed, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
			go func() {
				defer close(done)
				_, _, _ = a.Get(context.Background(), 5, []byte("/k"), pol, func(context.Context) ([]byte, error) {
					close(filling)
					<-proceed // an upstream call that has not seen the cancellation yet
					return nil, errors.New("upstream closed")
				})
			}()
			<-filling
			_ = a.Close()
			_ = rc.Close() // as cmd/dealer-edge does after the cache's Close
			close(proceed)
			<-done
			if n := a.Stats().RedisDownEvents; n != 0 {
				t.Errorf("%d Redis outages counted after Close, want 0", n)
			}
			if strings.Contains(logs.String(), "redis unavailable") {
				t.Errorf("an outage logged after Close:\n%s", logs.String())
			}
		})
	}
}
