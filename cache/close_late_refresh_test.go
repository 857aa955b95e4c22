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

// TestRefreshEndingAfterCloseReportsNoOutage: a background refresh that
// Close cancelled but that ends after it (its upstream call had not seen
// the cancellation yet), once the Redis client is closed too, as
// cmd/dealer-edge closes it right after the cache, says nothing about
// Redis. Its last Redis call (the release of its fill lock) failed with
// "redis: client is closed", which marked Redis down: every edge shutdown
// with refreshes under way logged "cache: redis unavailable, serving from
// L1 and fill" (WARN) after its drain, or after its "stopped" line, and
// counted a Redis outage that never was.
func TestRefreshEndingAfterCloseReportsNoOutage(t *testing.T) {
	srv := redistest.Start(t)
	for _, noAuto := range []bool{false, true} {
		t.Run("NoAutoPipeline="+strconv.FormatBool(noAuto), func(t *testing.T) {
			var logs syncbuf.Buffer
			clk := newFakeClock()
			rc := newClient(t, srv.Addr)
			a := newCache(t, Options{Redis: rc, Prefix: "closelate" + strconv.FormatBool(noAuto), NoAutoPipeline: noAuto,
				Now: clk.Now, LockWait: 2 * time.Second, LockTTL: time.Minute,
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			pol := Policy{TTL: time.Second, StaleWhileRevalidate: time.Hour}
			mustGet(t, a, 5, "/k", pol, newFiller("old").fill)
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
			_ = a.Close()
			_ = rc.Close() // as cmd/dealer-edge does after the cache's Close
			close(proceed)
			waitFor(t, "the refresh to end", func() bool { return a.Stats().RefreshesInFlight == 0 })
			if n := a.Stats().RedisDownEvents; n != 0 {
				t.Errorf("%d Redis outages counted after Close, want 0", n)
			}
			if strings.Contains(logs.String(), "redis unavailable") {
				t.Errorf("an outage logged after Close:\n%s", logs.String())
			}
		})
	}
}
