package cache

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
)

// TestLockTTLBelowOneMillisecond: cache.lock_ttl is validated "positive"
// only, so "500us" passes --check-config; the lock is then taken with
// SET ... PX 0 NX, which Redis refuses ("invalid expire time"): every miss
// counts a Redis error and fills without the cross-instance lock, so
// lock_wait never coalesces anything.
func TestLockTTLBelowOneMillisecond(t *testing.T) {
	srv := redistest.Start(t)
	prefix := "lt" + strconv.Itoa(int(time.Now().UnixNano()%1e9))
	c := newCache(t, Options{Redis: newClient(t, srv.Addr), Prefix: prefix, LockWait: 250 * time.Millisecond, LockTTL: 500 * time.Microsecond})
	ctx := context.Background()
	if _, _, err := c.Get(ctx, 7, []byte("/k"), Policy{TTL: time.Minute}, func(context.Context) ([]byte, error) { return []byte("x"), nil }); err != nil {
		t.Fatal(err)
	}
	if n := c.Stats().L2Errors; n != 0 {
		t.Errorf("one miss with LockTTL 500µs counted %d Redis errors (the fill lock was refused by Redis: PX 0)", n)
	}
}
