package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
	"github.com/redis/go-redis/v9"
)

// goroutineStacks returns the count and a sorted summary of the stacks
// of the process' goroutines (the first frame below the goroutine line,
// which names where each waits).
func goroutineStacks() (int, []string) {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		lines := strings.Split(strings.TrimSpace(g), "\n")
		// The creating frame ("created by ...") names the goroutine's
		// origin best; the first frame where it waits.
		first, created := "", ""
		if len(lines) > 1 {
			first = lines[1]
		}
		for i, l := range lines {
			if strings.HasPrefix(l, "created by ") && i+1 < len(lines) {
				created = l + " @ " + strings.TrimSpace(lines[i+1])
			}
		}
		out = append(out, first+" | "+created)
	}
	sort.Strings(out)
	return len(out), out
}

// selfEnding are goroutines that outlive a shutdown by design and end on
// their own, holding no socket: an idle worker of internal/workers (exits
// after its idle time, up to 10 s), an idle fasthttp server worker (of a
// test's fake services; likewise), fasthttp's worker-pool cleaner (sleeps
// out MaxIdleWorkerDuration after Stop), a fasthttp HostClient's cleaner of
// idle connections (sleeps out MaxIdleConnDuration once its connections
// are closed), and fasthttp's process-wide date updater and DNS cache
// cleaner (one each per process, started once). Each is matched by where
// it waits and who created it, so a worker still running a job, or any
// other goroutine, counts.
func selfEnding(stack string) bool {
	first, created, _ := strings.Cut(stack, " | ")
	switch {
	case strings.HasPrefix(first, "github.com/dealer-edge/dealer-edge/internal/workers.(*Pool).run("):
		return true // idle: waiting in run's select, no job
	case strings.HasPrefix(first, "time.Sleep(") && strings.Contains(created, "fasthttp.(*workerPool).Start"):
		return true
	case strings.HasPrefix(first, "github.com/valyala/fasthttp.(*workerPool).workerFunc("):
		return true // idle: waiting in workerFunc for its next connection (ends after MaxIdleWorkerDuration)
	case strings.HasPrefix(first, "time.Sleep(") && strings.Contains(created, "fasthttp.(*HostClient).AcquireConn"):
		return true // connsCleaner
	case strings.Contains(created, "fasthttp.updateServerDate"), strings.Contains(created, "fasthttp.(*TCPDialer).startTCPAddrsClean"):
		return true
	}
	return false
}

// ownGoroutines is the count of goroutines and their summaries, without
// the self-ending ones (selfEnding) and those ignore (when not nil) names.
func ownGoroutines(ignore ...func(string) bool) (int, []string) {
	_, all := goroutineStacks()
	var out []string
next:
	for _, s := range all {
		if selfEnding(s) {
			continue
		}
		for _, ig := range ignore {
			if ig(s) {
				continue next
			}
		}
		out = append(out, s)
	}
	return len(out), out
}

// waitGoroutines waits up to within for the process to be back to at
// most want goroutines, self-ending ones left out (selfEnding) (goroutines that end on their own, such as a
// closed connection's reader, take a moment) and returns the stacks
// left over when it is not.
func waitGoroutines(want int, within time.Duration, ignore ...func(string) bool) (int, []string) {
	deadline := time.Now().Add(within)
	for {
		n, stacks := ownGoroutines(ignore...)
		if n <= want || time.Now().After(deadline) {
			return n, stacks
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestShutdownLeavesNoGoroutinesOrRedisConnections: an edge run in a
// process (run, as main does) under a few requests (hits and misses, so
// fills, refreshes, the limiters and the key index all ran) leaves, once it
// has stopped, no goroutine of its own and no connection on its Redis:
// everything it started, the embedded fake services of --demo included, is
// closed by the shutdown (README, Graceful shutdown, step 4). With a real
// redis-server, a real three-master Cluster (every node's CLIENT LIST), and
// the embedded Redis. About 0.3 s each, plus the Cluster's start.
func TestShutdownLeavesNoGoroutinesOrRedisConnections(t *testing.T) {
	t.Run("redis-server", func(t *testing.T) {
		rs := redistest.Start(t)
		c := rs.Client()
		defer c.Close()
		checkShutdownLeaves(t, []*redis.Client{c}, "--redis", rs.Addr)
	})
	t.Run("cluster", func(t *testing.T) {
		cl := redistest.StartCluster(t)
		var nodes []*redis.Client
		for _, n := range cl.Nodes {
			c := n.Client()
			defer c.Close()
			nodes = append(nodes, c)
		}
		checkShutdownLeaves(t, nodes, "--redis", strings.Join(cl.Addrs(), ","))
	})
	t.Run("embedded", func(t *testing.T) {
		checkShutdownLeaves(t, nil)
	})
}

// checkShutdownLeaves starts a --demo edge with args, sends it requests,
// stops it with SIGTERM and fails if goroutines of its own are left or if
// any of nodes (the Redis servers it uses, each with one connection of the
// test's own) still holds a connection of the edge.
func checkShutdownLeaves(t *testing.T, nodes []*redis.Client, args ...string) {
	ctx := context.Background()
	for _, c := range nodes {
		if err := c.Ping(ctx).Err(); err != nil { // the test's connection: the one left
			t.Fatal(err)
		}
	}
	runtime.GC()
	before, beforeStacks := ownGoroutines()

	args = append([]string{"--demo"}, args...)
	e := launchEdge(t, &hooks{}, args...)
	a, signals, exit, stderr := e.app, e.signals, e.exit, e.stderr

	tr := &http.Transport{}
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	get := func(base, path, key string) int {
		req, _ := http.NewRequest("GET", base+path, nil)
		if key != "" {
			req.Header.Set("X-Api-Key", key)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	base, adminBase := "http://"+a.addr, "http://"+a.adminAddr
	for i := range 20 {
		get(base, fmt.Sprintf("/dealer/NOS/listing?page_size=%d", 1+i%5), "demo-key-alpha")
	}
	get(base, "/dealer/content/hub", "demo-key-alpha")
	get(base, "/dealer/NOS/listing?page_size=1", "no-such-key")
	get(adminBase, "/readyz", "")
	get(adminBase, "/metrics", "")
	edgeConns := 0
	for _, c := range nodes {
		edgeConns += redisClients(t, c) - 1
	}
	if len(nodes) > 0 && edgeConns < len(nodes) {
		t.Fatalf("%d Redis connections of the edge on %d nodes while it runs: the test sees not all of them", edgeConns, len(nodes))
	}
	tr.CloseIdleConnections()

	signals <- syscall.SIGTERM
	select {
	case code := <-exit:
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("edge did not stop")
	}

	if n, stacks := waitGoroutines(before, 3*time.Second); n > before {
		t.Errorf("%d goroutines after the shutdown, %d before the start; left over:\n%s",
			n, before, strings.Join(diffStacks(beforeStacks, stacks), "\n"))
	}
	for i, c := range nodes {
		deadline := time.Now().Add(2 * time.Second)
		for {
			n := redisClients(t, c)
			if n == 1 {
				break
			}
			if time.Now().After(deadline) {
				list, _ := c.ClientList(ctx).Result()
				t.Errorf("node %d: %d Redis connections after the shutdown, want 1 (the test's):\n%s", i, n, list)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// redisClients is the number of connections on the server (CLIENT LIST),
// the asking one included.
func redisClients(t *testing.T, c *redis.Client) int {
	t.Helper()
	list, err := c.ClientList(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(strings.TrimSpace(list), "\n") + 1
}

// diffStacks lists the stacks in after beyond those in before (as
// multisets).
func diffStacks(before, after []string) []string {
	seen := map[string]int{}
	for _, s := range before {
		seen[s]++
	}
	var out []string
	for _, s := range after {
		if seen[s] > 0 {
			seen[s]--
			continue
		}
		out = append(out, s)
	}
	return out
}

// TestShutdownWithHungUpstreamLeavesNothing: SIGTERM while requests wait
// on an upstream that has stopped answering (the fake's latency beyond
// every service timeout). Each request in flight is answered in full
// (503 within upstream's timeout, which the request budget bounds, with
// Connection: close), the edge exits 0 within the grace, and once the
// calls the cancelled waits left behind have reached their deadline no
// goroutine of the edge and no Redis connection remains. About 2 s.
func TestShutdownWithHungUpstreamLeavesNothing(t *testing.T) {
	rs := redistest.Start(t)
	rc := rs.Client()
	defer rc.Close()
	fk := fake.NewServer(fake.Options{})
	faddr, err := fk.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer fk.Close()
	if err := rc.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	before, beforeStacks := ownGoroutines()

	cfg := filepath.Join(t.TempDir(), "edge.json")
	writeConfig(t, cfg, `{"watch_interval": "0s", "server": {"shutdown_grace": "5s"}}`)
	args := []string{"--config", cfg,
		"--redis", rs.Addr, "--upstream", "http://" + faddr}
	e := launchEdge(t, &hooks{}, args...)
	a, signals, exit, stderr := e.app, e.signals, e.exit, e.stderr
	tr := &http.Transport{}
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	get := func(path string) (*http.Response, error) {
		req, _ := http.NewRequest("GET", "http://"+a.addr+path, nil)
		req.Header.Set("X-Api-Key", "demo-key-alpha")
		resp, err := client.Do(req)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		return resp, err
	}
	// A first search, until one succeeds (under -race a cold start's
	// calls may outlast their timeouts).
	for i := 0; ; i++ {
		r, err := get(fmt.Sprintf("/dealer/content/search?q=warm%d", i))
		if err == nil && r.StatusCode == 200 {
			break
		}
		if i == 10 {
			t.Fatalf("before: %v %v", r, err)
		}
	}
	fk.ResetCalls()
	fk.SetLatency("", 1500*time.Millisecond) // beyond every service timeout (800 ms at most)

	const inFlight = 6
	type result struct {
		status int
		close  bool
		err    error
	}
	results := make(chan result, inFlight)
	for i := range inFlight {
		go func() {
			r, err := get(fmt.Sprintf("/dealer/content/search?q=hung%d", i))
			if err != nil {
				results <- result{err: err}
				return
			}
			results <- result{status: r.StatusCode, close: r.Close}
		}()
	}
	// The searches are in flight once the fake has been asked their
	// first calls (one a content type, made at once).
	deadline := time.Now().Add(5 * time.Second)
	for fk.Calls("content") < int64(inFlight*len(upstream.ContentTypes)) {
		if time.Now().After(deadline) {
			t.Fatalf("the searches did not reach the upstream: %d calls", fk.Calls("content"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	signals <- syscall.SIGTERM
	for range inFlight {
		r := <-results
		if r.err != nil || r.status != 503 || !r.close {
			t.Errorf("request in flight at SIGTERM: status %d, Connection: close %v, error %v; want a complete 503 with Connection: close", r.status, r.close, r.err)
		}
	}
	if code := <-exit; code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr.String())
	}
	if t.Failed() {
		t.Logf("stderr:\n%s", stderr.String())
	}
	tr.CloseIdleConnections()
	// The fake's timer goroutine, started with its first delayed answer,
	// is the test's: the fake runs until the test ends.
	fakeDelays := func(s string) bool { return strings.Contains(s, "upstream/fake.(*delays)") }
	if n, stacks := waitGoroutines(before, 3*time.Second, fakeDelays); n > before {
		t.Errorf("%d goroutines after the shutdown, %d before the start; left over:\n%s",
			n, before, strings.Join(diffStacks(beforeStacks, stacks), "\n"))
	}
	if n := redisClients(t, rc); n != 1 {
		list, _ := rc.ClientList(context.Background()).Result()
		t.Errorf("%d Redis connections after the shutdown, want 1 (the test's):\n%s", n, list)
	}
}
