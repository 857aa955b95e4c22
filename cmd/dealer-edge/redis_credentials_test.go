package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/redis/go-redis/v9"
)

// TestRedisRefusingCredentialsIsAnOutage: a Redis that refuses the edge's
// credentials (a password rotated with CONFIG SET requirepass) is
// unavailable to the edge exactly as an unreachable one (README,
// Operations: Redis outage): edge_redis_up 0 and /readyz degraded with
// redis_error "authentication failed", the cache marked down (no request
// waits on Redis), the rate limiter on its fallback, a log line that
// names the cause and not the password; when the password is restored the
// background probes find Redis again without a restart. Under traffic
// throughout, every request answers 200 within the Redis budget.
//
// The connections opened before the rotation keep their session: they
// still answer PING, so edge_redis_up and /readyz stayed "up", and a
// WRONGPASS (the handshake of every connection opened afterwards) counted
// as an error Redis replied with, which never marked the cache down.
func TestRedisRefusingCredentialsIsAnOutage(t *testing.T) {
	const pass1, pass2 = "first-pass-0123456789", "rotated-pass-9876543210"
	const budget = 300 * time.Millisecond
	rds := redistest.Start(t, "--requirepass", pass1)
	admin := redis.NewClient(&redis.Options{Addr: rds.Addr, Password: pass1, PoolSize: 1})
	t.Cleanup(func() { _ = admin.Close() })
	ctx := context.Background()
	if err := admin.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}

	cfg := filepath.Join(t.TempDir(), "edge.json")
	writeConfig(t, cfg, fmt.Sprintf(`{"redis": {"password": %q, "timeout": %q},
		"rate_limit": {"plans": {"default": {"rate": 100000, "burst": 100000}}}}`, pass1, budget))
	e := startEdge(t, "--demo", "--config", cfg, "--redis", rds.Addr)
	if status, body := e.readyz(); status != 200 || body["redis"] != "up" {
		t.Fatalf("readyz with the password right: %d %v", status, body)
	}

	// Traffic: three dealers, two listings each (L1 hits) and a new
	// listing query every other request (a miss, which asks Redis).
	paths := []string{"/dealer/NOS/listing?page_size=2", "/dealer/NOS/listing?page_size=3"}
	tr := startTraffic(t, e.base, []string{"demo-key-alpha", "demo-key-beta", "demo-key-gamma"}, 5*time.Millisecond,
		func(key string, i int) string {
			if i%2 == 1 { // a miss: the cache asks Redis (L2)
				return fmt.Sprintf("/dealer/NOS/listing?page_size=2&q=w%s%d", key, i)
			}
			return paths[i%len(paths)]
		})

	time.Sleep(300 * time.Millisecond)
	before := e.scrape()
	if before["edge_redis_up"] != 1 {
		t.Fatalf("edge_redis_up before the rotation: %v", before["edge_redis_up"])
	}

	// The rotation: the edge's pooled connections keep their session.
	if err := admin.ConfigSet(ctx, "requirepass", pass2).Err(); err != nil {
		t.Fatal(err)
	}
	waitRedisCheck()
	if up := e.scrape()["edge_redis_up"]; up != 0 {
		t.Errorf("edge_redis_up once Redis refuses the edge's password: %v, want 0", up)
	}
	if status, body := e.readyz(); status != 200 || body["redis"] != "down" || body["redis_error"] != "authentication failed" ||
		!strings.Contains(fmt.Sprint(body["degraded"]), "redis") {
		t.Errorf("readyz once Redis refuses the edge's password: %d %v, want 200 degraded, redis down, authentication failed", status, body)
	}
	// The edge's connections go (a Redis restart, an idle timeout, a
	// network blip): every new one is refused.
	if err := admin.Do(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	waitLong(t, "cache marked Redis down", func() bool { return !e.app.cache.Stats().RedisUp })
	waitLong(t, "rate limiter on its fallback", func() bool { return e.app.limiter.Stats().FallbackActive })
	time.Sleep(time.Second) // traffic on the fallback, probes refused

	down := e.scrape()
	if down["edge_redis_up"] != 0 {
		t.Errorf("edge_redis_up while Redis refuses the password: %v, want 0", down["edge_redis_up"])
	}
	for _, c := range []string{"cache", "ratelimit"} {
		s := `edge_redis_errors_total{component="` + c + `"}`
		if down[s] <= before[s] {
			t.Errorf("%s did not move while Redis refused the password: %v -> %v", s, before[s], down[s])
		}
	}

	// Restored: the probes find Redis again.
	if err := admin.ConfigSet(ctx, "requirepass", pass1).Err(); err != nil {
		t.Fatal(err)
	}
	waitLong(t, "cache using Redis again", func() bool { return e.app.cache.Stats().RedisUp })
	waitLong(t, "rate limiter on Redis again", func() bool { return !e.app.limiter.Stats().FallbackActive })
	waitRedisCheck()
	if up := e.scrape()["edge_redis_up"]; up != 1 {
		t.Errorf("edge_redis_up once the password is restored: %v, want 1", up)
	}
	if status, body := e.readyz(); status != 200 || body["status"] != "ready" || body["redis"] != "up" {
		t.Errorf("readyz once the password is restored: %d %v", status, body)
	}
	time.Sleep(300 * time.Millisecond)
	tr.check(t)
	// A request waits on Redis for at most the budget per call and never
	// for a dial's retries; far below it on a hit.
	if s := time.Duration(tr.slowest.Load()); s > 3*budget {
		t.Errorf("slowest request %v, want under %v", s, 3*budget)
	}
	t.Logf("%d requests, slowest %v", tr.requests.Load(), time.Duration(tr.slowest.Load()))

	log := e.stderr.String()
	// Each component names the cause: on the outage's line, or (when the
	// kill cut a call in flight first, and the outage began as
	// "unavailable") on the line of the first probe refused.
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`"msg":"cache: redis (unavailable, serving from L1 and fill|still unavailable)","cause":"credentials refused"`),
		regexp.MustCompile(`"msg":"ratelimit: redis unavailable, falling back"`),
		regexp.MustCompile(`"msg":"ratelimit: redis (unavailable, falling back|still unavailable)".*"cause":"credentials refused"`),
		regexp.MustCompile(`cache: redis available again`),
	} {
		if !want.MatchString(log) {
			t.Errorf("the log has no %s:\n%s", want, log)
		}
	}
	for _, p := range []string{pass1, pass2} {
		if strings.Contains(log, p) {
			t.Errorf("a Redis password reached the log")
		}
	}
}

// TestClusterRefusingCredentialsIsAnOutage: with a Redis Cluster, a master
// that refuses the edge's password makes edge_redis_up 0 and /readyz
// "authentication failed", as a dead master does (every key of its slots
// fails on a new connection); once the master takes the password again
// (here: it needs none, CONFIG SET requirepass ""), both say "up".
func TestClusterRefusingCredentialsIsAnOutage(t *testing.T) {
	const pass1, pass2 = "cluster-pass-0123456789", "rotated-pass-9876543210"
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	admins := make([]*redis.Client, len(cl.Nodes))
	for i, n := range cl.Nodes {
		admins[i] = redis.NewClient(&redis.Options{Addr: n.Addr, PoolSize: 1})
		t.Cleanup(func() { _ = admins[i].Close() })
		if err := admins[i].ConfigSet(ctx, "requirepass", pass1).Err(); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(t.TempDir(), "edge.json")
	writeConfig(t, cfg, fmt.Sprintf(`{"redis": {"password": %q, "timeout": "300ms"}}`, pass1))
	e := startEdge(t, "--demo", "--config", cfg, "--redis", strings.Join(cl.Addrs(), ","))
	if r := e.get("/dealer/NOS/listing?page_size=2", "demo-key-alpha"); r.status != 200 {
		t.Fatalf("listing: %d %s", r.status, r.body)
	}
	if status, body := e.readyz(); status != 200 || body["redis"] != "up" {
		t.Fatalf("readyz with the password right: %d %v", status, body)
	}
	if up := e.scrape()["edge_redis_up"]; up != 1 {
		t.Fatalf("edge_redis_up with the password right: %v", up)
	}

	if err := admins[1].ConfigSet(ctx, "requirepass", pass2).Err(); err != nil {
		t.Fatal(err)
	}
	waitRedisCheck()
	if status, body := e.readyz(); status != 200 || body["redis"] != "down" || body["redis_error"] != "authentication failed" {
		t.Errorf("readyz with one master refusing the password: %d %v, want redis down, authentication failed", status, body)
	}
	if up := e.scrape()["edge_redis_up"]; up != 0 {
		t.Errorf("edge_redis_up with one master refusing the password: %v, want 0", up)
	}

	if err := admins[1].ConfigSet(ctx, "requirepass", "").Err(); err != nil {
		t.Fatal(err)
	}
	waitRedisCheck()
	if status, body := e.readyz(); status != 200 || body["redis"] != "up" {
		t.Errorf("readyz once the master takes the password again: %d %v, want redis up", status, body)
	}
	if up := e.scrape()["edge_redis_up"]; up != 1 {
		t.Errorf("edge_redis_up once the master takes the password again: %v, want 1", up)
	}
	if strings.Contains(e.stderr.String(), pass1) {
		t.Error("the Redis password reached the log")
	}
}
