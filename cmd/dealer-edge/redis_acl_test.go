package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/redis/go-redis/v9"
)

// TestRedisACLPermissionIsAnOutage: the edge's ACL user loses a command the
// cache sends (ACL SETUSER edge -getex: a NOPERM on every L2 read), on a
// real redis-server, under traffic. The cache is marked down at the first
// refusal and stays down (no flapping: its probe asks whether the user
// may run the cache's commands, not only PING and AUTH, which still pass);
// edge_redis_up is 0 and /readyz degraded with redis_error "permission
// denied" for as long as the permission is missing; every request answers
// 200. When the permission is given back, the cache uses Redis again and
// both say "up". Before, the probe found Redis "up" within 0.5-5 s, the
// next read marked it down again, and edge_redis_up and /readyz said "up"
// throughout, so EdgeRedisDown never fired.
func TestRedisACLPermissionIsAnOutage(t *testing.T) {
	const pass = "acl-pass-0123456789"
	const budget = 300 * time.Millisecond
	rds := redistest.Start(t)
	admin := redis.NewClient(&redis.Options{Addr: rds.Addr, PoolSize: 1})
	t.Cleanup(func() { _ = admin.Close() })
	ctx := context.Background()
	if err := admin.Do(ctx, "ACL", "SETUSER", "edge", "on", ">"+pass, "~*", "&*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}

	cfg := filepath.Join(t.TempDir(), "edge.json")
	writeConfig(t, cfg, fmt.Sprintf(`{"redis": {"username": "edge", "password": %q, "timeout": %q},
		"cache": {"l1_max_bytes": 65536},
		"rate_limit": {"plans": {"default": {"rate": 100000, "burst": 100000}}}}`, pass, budget))
	e := startEdge(t, "--demo", "--config", cfg, "--redis", rds.Addr)
	if status, body := e.readyz(); status != 200 || body["redis"] != "up" {
		t.Fatalf("readyz with every permission: %d %v", status, body)
	}

	// Traffic: listings of three dealers (with a 64 KiB L1, most are read
	// from Redis).
	tr := startTraffic(t, e.base, []string{"demo-key-alpha", "demo-key-beta", "demo-key-gamma"}, 2*time.Millisecond,
		func(_ string, i int) string { return fmt.Sprintf("/dealer/NOS/listing?page_size=%d", 1+i%40) })
	time.Sleep(500 * time.Millisecond)
	if up := e.scrape()["edge_redis_up"]; up != 1 {
		t.Fatalf("edge_redis_up with every permission: %v", up)
	}

	// The ACL change: GETEX (every L2 read) refused.
	if err := admin.Do(ctx, "ACL", "SETUSER", "edge", "-getex").Err(); err != nil {
		t.Fatal(err)
	}
	waitLong(t, "cache marked Redis down", func() bool { return !e.app.cache.Stats().RedisUp })
	downEvents := e.app.cache.Stats().RedisDownEvents
	// Longer than the probe's whole backoff (0.5 s doubling to 5 s, from
	// the first refusal): a probe that passed would have brought the cache
	// back, and the next read marked it down again (a second event).
	time.Sleep(6 * time.Second)
	st := e.app.cache.Stats()
	if st.RedisUp || st.RedisDownEvents != downEvents {
		t.Errorf("while GETEX is refused: cache RedisUp %v, down events %d -> %d (it flapped)", st.RedisUp, downEvents, st.RedisDownEvents)
	}
	if up := e.scrape()["edge_redis_up"]; up != 0 {
		t.Errorf("edge_redis_up while the ACL user may not run GETEX: %v, want 0", up)
	}
	if status, body := e.readyz(); status != 200 || body["redis"] != "down" || body["redis_error"] != "permission denied" {
		t.Errorf("readyz while the ACL user may not run GETEX: %d %v, want 200, redis down, permission denied", status, body)
	}

	// The permission back: the probe finds Redis usable again.
	if err := admin.Do(ctx, "ACL", "SETUSER", "edge", "+getex").Err(); err != nil {
		t.Fatal(err)
	}
	waitLong(t, "cache using Redis again", func() bool { return e.app.cache.Stats().RedisUp })
	waitRedisCheck()
	if up := e.scrape()["edge_redis_up"]; up != 1 {
		t.Errorf("edge_redis_up once GETEX is permitted again: %v, want 1", up)
	}
	if status, body := e.readyz(); status != 200 || body["redis"] != "up" {
		t.Errorf("readyz once GETEX is permitted again: %d %v", status, body)
	}
	tr.check(t)
	if log := e.stderr.String(); !strings.Contains(log, `"cause":"permission denied"`) {
		t.Errorf("no log line with cause permission denied:\n%s", log)
	}
	t.Logf("%d requests", tr.requests.Load())
}
