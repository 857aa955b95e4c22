package configs

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// validateField changes the defaults (with an upstream) as a file would
// and returns Validate's error.
func validateField(t *testing.T, mutate func(c *Config)) error {
	t.Helper()
	c := Default()
	c.Upstream.BaseURL = "http://127.0.0.1:9"
	mutate(c)
	return c.Validate()
}

// TestRedisPoolSizeBounded: redis.pool_size is checked for "not
// negative" only. --check-config passes 1e12, and the start then panics
// in go-redis ("PoolSize value 1000000000000 exceeds maximum allowed value
// 2147483647"); 100000000 (and 2147483647) pass too and the start dies
// with "fatal error: runtime: out of memory" (go-redis v9.23 makes a
// channel of 5 x PoolSize hand-off requests for its maintenance
// notifications up front, in maintnotifications.newHandoffWorkerManager).
func TestRedisPoolSizeBounded(t *testing.T) {
	for _, n := range []int{1_000_000_000_000, 100_000_000} {
		err := validateField(t, func(c *Config) { c.Redis.PoolSize = n })
		if err != nil && strings.Contains(err.Error(), "redis.pool_size") {
			continue
		}
		if n <= 1<<31 { // not built: out of memory kills the test binary
			t.Errorf("redis.pool_size %d is accepted (err %v); the start dies out of memory", n, err)
			continue
		}
		var panicked any
		func() {
			defer func() { panicked = recover() }()
			rc := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{"127.0.0.1:9"}, PoolSize: n})
			_ = rc.Close()
		}()
		t.Errorf("redis.pool_size %d is accepted (err %v); building the Redis client then panics: %v", n, err, panicked)
	}
}

// TestIndexIntervalFloor: auth.index_interval (reloadable) must only
// be positive, so "1ns" or "1us" pass --check-config and a reload. The key
// index then syncs back to back: with the dealers service refusing
// connections, an edge started with index_interval 1us made 975,958 syncs
// (edge_auth_index_syncs_total) in about 7 s, one core busy (514 of 500
// CPU ticks in 5 s; 0 with the default 5s). watch_interval, the other
// polling period, has a floor (10ms) for the same reason.
func TestIndexIntervalFloor(t *testing.T) {
	for _, d := range []time.Duration{time.Nanosecond, time.Microsecond} {
		err := validateField(t, func(c *Config) { c.Auth.IndexInterval = Duration(d) })
		if err == nil || !strings.Contains(err.Error(), "auth.index_interval") {
			t.Errorf("auth.index_interval %v accepted (err %v): the key index polls the dealers service in a busy loop", d, err)
		}
	}
}

// TestLockTTLSubMillisecond: cache.lock_ttl must only be positive;
// the lock is taken with SET ... PX <lock_ttl in whole ms> NX, so anything
// under 1ms is PX 0, which Redis refuses ("invalid expire time"): every
// miss counts a Redis error and fills without the cross-instance lock
// (cache.TestLockTTLBelowOneMillisecond).
func TestLockTTLSubMillisecond(t *testing.T) {
	err := validateField(t, func(c *Config) { c.Cache.LockTTL = Duration(500 * time.Microsecond) })
	if err == nil || !strings.Contains(err.Error(), "cache.lock_ttl") {
		t.Errorf("cache.lock_ttl 500us accepted (err %v): Redis refuses SET PX 0", err)
	}
}

// TestRequestBudgetOverflow: server.request_timeout must be longer
// than the longest chain of upstream timeouts (twice dealers, ...), so
// that a hung service trips its breaker. UpstreamChain adds and doubles
// durations without a bound: a dealers timeout above 1281023h (2 x
// wraps negative) makes the chain 1.3s and a 2s budget passes, though
// every dealers call is then cut by the request deadline and never
// counted by its breaker: the very case the check exists to refuse.
func TestRequestBudgetOverflow(t *testing.T) {
	for _, tc := range []struct{ svc, d string }{{"dealers", "2000000h"}} {
		d, _ := time.ParseDuration(tc.d)
		err := validateField(t, func(c *Config) { c.Upstream.Timeouts[tc.svc] = Duration(d) })
		if err == nil {
			t.Errorf("upstream.timeouts.%s %s with server.request_timeout 2s accepted (UpstreamChain = %v)", tc.svc, tc.d, UpstreamChain(map[string]Duration{tc.svc: Duration(d)}))
		}
	}
}

// TestRedisAddrs: redis.addrs (and --redis) are not validated at
// all, unlike listen and admin_listen: an address without a port
// ("127.0.0.1"), an empty one (go-redis then dials its default,
// localhost:6379) or the same address twice (two addresses: the edge
// takes Redis Cluster mode) pass --check-config; the edge starts with
// Redis down for good ("missing port in address", /readyz degraded) or
// talks to a Redis nobody configured.
func TestRedisAddrs(t *testing.T) {
	for _, addrs := range [][]string{{"127.0.0.1"}, {""}, {"10.0.0.1:6379", "10.0.0.1:6379"}, {"10.0.0.1:99999"}} {
		err := validateField(t, func(c *Config) { c.Redis.Addrs = addrs })
		if err == nil || !strings.Contains(err.Error(), "redis.addrs") {
			t.Errorf("redis.addrs %s accepted (err %v)", fmt.Sprintf("%q", addrs), err)
		}
	}
}
