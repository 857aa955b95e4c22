package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
	"github.com/redis/go-redis/v9"
)

// redisSnapshot is every key of the server with its value (DUMP), for
// telling whether anything was written between two snapshots.
func redisSnapshot(t *testing.T, c *redis.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		v, err := c.Dump(ctx, k).Result()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	return out
}

// TestShutdownRefreshesWriteNothingAfterStop: background refreshes under
// way when the edge stops (their upstream slow) are cancelled by the
// shutdown (README, Graceful shutdown, step 4: "the cache (its background
// refreshes are cancelled)"): once the edge has exited, none of them
// writes an entry to Redis when its upstream answer arrives, and no fill
// lock of theirs is left in Redis for the other instances to wait on.
// Nor is a Redis outage logged: the refreshes that end after the cache's
// Close meet the Redis client closed after it. About 2.5 s (a TTL of 1 s
// to outlive, then the upstream's 600 ms).
func TestShutdownRefreshesWriteNothingAfterStop(t *testing.T) {
	rs := redistest.Start(t)
	rc := rs.Client()
	defer rc.Close()
	fk := fake.NewServer(fake.Options{})
	faddr, err := fk.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer fk.Close()

	cfg := filepath.Join(t.TempDir(), "edge.json")
	writeConfig(t, cfg, `{"watch_interval": "0s", "server": {"shutdown_grace": "5s"},
		"cache": {"routes": {"inventory_listing": {"ttl": "1s", "stale_while_revalidate": "60s", "stale_if_error": "60s"}}}}`)
	args := []string{"--config", cfg,
		"--redis", rs.Addr, "--upstream", "http://" + faddr}
	e := launchEdge(t, &hooks{}, args...)
	a, signals, exit, stderr := e.app, e.signals, e.exit, e.stderr
	stopped := false
	defer func() {
		if !stopped {
			signals <- syscall.SIGTERM
			<-exit
		}
	}()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{}}
	get := func(path string) (int, string) {
		req, _ := http.NewRequest("GET", "http://"+a.addr+path, nil)
		req.Header.Set("X-Api-Key", "demo-key-alpha")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("X-Cache")
	}
	const pages = 8
	path := func(i int) string { return fmt.Sprintf("/dealer/REWIND/listing?page_size=%d", 1+i) }
	for i := range pages {
		if st, xc := get(path(i)); st != 200 || xc != "MISS" {
			t.Fatalf("first GET %s: %d %s", path(i), st, xc)
		}
	}
	time.Sleep(1100 * time.Millisecond) // past the 1 s TTL: the next hits are stale
	const latency = 600 * time.Millisecond
	fk.SetLatency("", latency)
	for i := range pages {
		if st, xc := get(path(i)); st != 200 || xc != "STALE" {
			t.Fatalf("GET %s after the TTL: %d %s, want 200 STALE", path(i), st, xc)
		}
	}
	if n := a.cache.Stats().RefreshesInFlight; n == 0 {
		t.Fatal("no background refresh under way")
	}
	before := redisSnapshot(t, rc)

	stoppedAt := time.Now()
	signals <- syscall.SIGTERM
	if code := <-exit; code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr.String())
	}
	stopped = true
	// The refreshes' upstream answers arrive latency after they were
	// asked; what they would write is written by then.
	time.Sleep(time.Until(stoppedAt.Add(latency + 300*time.Millisecond)))
	after := redisSnapshot(t, rc)

	var changed, locks []string
	for k, v := range after {
		if before[k] != v {
			changed = append(changed, k)
		}
		if strings.Contains(k, "}:l") { // a fill lock: <prefix>:{d<dealer>}:l<gen>...
			locks = append(locks, k)
		}
	}
	sort.Strings(changed)
	if len(changed) > 0 {
		t.Errorf("%d keys written after the edge stopped (cancelled refreshes): %q", len(changed), changed)
	}
	if len(locks) > 0 {
		t.Errorf("fill locks left in Redis after the edge stopped (other instances' misses wait lock_wait on them): %q", locks)
	}
	// The refreshes end after the cache's Close, on the Redis client
	// closed after it: no Redis outage to report
	// (cache.TestRefreshEndingAfterCloseReportsNoOutage).
	if _, drain, _ := strings.Cut(stderr.String(), `"msg":"shutting down"`); strings.Contains(drain, "redis unavailable") {
		t.Error("a Redis outage logged by the shutdown")
	}
	if t.Failed() {
		t.Logf("stderr:\n%s", stderr.String())
	}
}
