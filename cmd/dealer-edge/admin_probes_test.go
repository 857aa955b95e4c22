package main

import (
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/dealer-edge/dealer-edge/aggregator/ops"
)

// the probes must keep answering while clients that
// need no token hold idle keep-alive connections to the admin listener.
// 64 connections, each after one /healthz (an open endpoint), left idle
// for the admin's 60 s IdleTimeout, fill fasthttp's Concurrency of 64:
// /healthz and /readyz then answer fasthttp's plain-text 503, so the
// kubelet restarts the pod and takes it out of the Service.
func TestAdminProbesSurviveIdleConnections(t *testing.T) {
	e := startEdge(t, "--demo")
	addr := strings.TrimPrefix(e.admin, "http://")
	holdIdleConns(t, addr, 64)
	time.Sleep(50 * time.Millisecond)
	for _, p := range []string{"/healthz", "/readyz"} {
		r := e.do("GET", e.admin+p)
		if r.status != 200 {
			t.Errorf("GET %s with 64 idle admin connections open: %d %q, want 200", p, r.status, r.body)
		}
	}
}

// /readyz needs no token, also on an admin listener
// bound beyond loopback, and each call runs the full Redis check
// (cache.Cache.Ping: PING, AUTH, ROLE and two pipelined batches of 7 and
// 4 commands, writes among them: SET, INCR and INCRBY of one shared
// generation probe key every instance writes). Nothing bounds how often:
// any client that reaches the admin port turns one small HTTP request
// into a dozen Redis commands, concurrently up to the admin's 64
// connections, on the Redis every instance shares (the README counts
// "three commands a second per pod" from the chart's 2 s probe period).
func TestReadyzRedisChecksBounded(t *testing.T) {
	mr := miniredis.RunT(t)
	e := startEdge(t, "--demo", "--redis", mr.Addr())
	e.readyz()
	before := mr.CommandCount()
	const n = 100
	start := time.Now()
	for i := 0; i < n; i++ {
		if st, _ := e.readyz(); st != 200 {
			t.Fatalf("readyz %d", st)
		}
	}
	el := time.Since(start)
	got := mr.CommandCount() - before
	t.Logf("%d unauthenticated /readyz in %v: %d Redis commands", n, el, got)
	// One check a second (plus one) would be at most ~12 commands a
	// second of the burst.
	if limit := 12 * (int(el/time.Second) + 2); got > limit {
		t.Errorf("%d /readyz calls in %v sent %d commands to Redis, want at most %d: an open endpoint amplifies into Redis writes without bound", n, el, got, limit)
	}
}

// waitRedisCheck waits out the reuse of the last Redis check's result
// (ops.RedisCheckReuse), for a test that has just changed Redis and reads
// /readyz, the status page or edge_redis_up.
func waitRedisCheck() { time.Sleep(ops.RedisCheckReuse + 100*time.Millisecond) }
