package main

import (
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/redis/go-redis/v9"
)

// TestFailedStartLeavesNothing: a start that fails after much has begun
// (the admin port taken: Redis pools, the cache's loops, the key index,
// the embedded services and the public listener's parker are running;
// the public port taken) exits 1 and leaves no goroutine of its own and
// no Redis connection behind (start's deferred closeAll). Checked to fail
// when the public listener is left open on the admin port's failure (its
// parker goroutine stays). About 0.3 s.
func TestFailedStartLeavesNothing(t *testing.T) {
	rs := redistest.Start(t)
	c := rs.Client()
	defer c.Close()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, tc := range []struct{ name, listen, admin string }{
		{"admin port taken", "127.0.0.1:0", taken.Addr().String()},
		{"public port taken", taken.Addr().String(), "127.0.0.1:0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkFailedStart(t, []*redis.Client{c}, "--demo", "--listen", tc.listen, "--admin-listen", tc.admin, "--redis", rs.Addr)
		})
	}
}

// checkFailedStart runs the edge with args, which must fail to start, and
// fails if goroutines of its own or connections on nodes (each with one
// connection of the test's) are left.
func checkFailedStart(t *testing.T, nodes []*redis.Client, args ...string) {
	for _, c := range nodes {
		_ = c.Ping(t.Context()).Err()
	}
	runtime.GC()
	before, beforeStacks := ownGoroutines()
	stderr := &syncBuffer{}
	code := run(args, io.Discard, stderr, &hooks{signals: make(chan os.Signal, 1)})
	if code == 0 {
		t.Fatal("start succeeded")
	}
	if n, stacks := waitGoroutines(before, 3*time.Second); n > before {
		t.Errorf("%d goroutines after the failed start, %d before; left over:\n%s", n, before, strings.Join(diffStacks(beforeStacks, stacks), "\n"))
	}
	for i, c := range nodes {
		if n := redisClients(t, c); n != 1 {
			list, _ := c.ClientList(t.Context()).Result()
			t.Errorf("node %d: %d connections after the failed start:\n%s", i, n, list)
		}
	}
	if !strings.Contains(stderr.String(), "address already in use") {
		t.Errorf("not the failure meant:\n%s", stderr.String())
	}
}
