package configs

import (
	"strings"
	"testing"
	"time"
)

// TestLockTTLCoversLockWait: cache.lock_ttl is at least cache.lock_wait.
// A waiter polls the holder's lock and fills at once when it is gone (a
// lock released without an entry: the holder's fill failed), and a lock
// that expired is gone the same way: with lock_ttl 100ms and lock_wait 1s
// every waiting instance filled itself after 100 ms of a slow fill, not
// after the 1 s configs/README.md promises, and the cross-instance
// coalescing the operator raised lock_wait for never happened. Before
// 2026-11-29 Validate accepted it.
func TestLockTTLCoversLockWait(t *testing.T) {
	err := validateField(t, func(c *Config) {
		c.Cache.LockTTL, c.Cache.LockWait = Duration(100*time.Millisecond), Duration(time.Second)
	})
	if err == nil || !strings.Contains(err.Error(), "cache.lock_ttl:") {
		t.Errorf("lock_ttl 100ms under lock_wait 1s: err = %v; want an error naming cache.lock_ttl", err)
	}
	for _, c := range []struct{ ttl, wait time.Duration }{
		{time.Second, time.Second},                // equal
		{2 * time.Second, 250 * time.Millisecond}, // the defaults
		{time.Millisecond, 0},                     // no cross-instance lock: lock_ttl is unused
	} {
		if err := validateField(t, func(cfg *Config) { cfg.Cache.LockTTL, cfg.Cache.LockWait = Duration(c.ttl), Duration(c.wait) }); err != nil {
			t.Errorf("lock_ttl %v, lock_wait %v refused: %v", c.ttl, c.wait, err)
		}
	}
}
