package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
)

// TestReadinessSeesAClusterMasterDown: with a Redis Cluster, /readyz and
// edge_redis_up say what the cache and the rate limiter see, which is
// every master (README, Admin endpoints: "degraded when Redis is down";
// the cache probes every master before it uses Redis again). One dead
// master of three used to leave both at "up": the PING went to one node
// of the cluster, and a live one answered it, while every key of the dead
// master's slots failed, the cluster went to state fail (CLUSTERDOWN for
// every key), and the cache and the limiter served without Redis. When
// the master is back, both say "up" again without a restart.
func TestReadinessSeesAClusterMasterDown(t *testing.T) {
	cl := redistest.StartCluster(t)
	e := startEdge(t, "--demo", "--redis", strings.Join(cl.Addrs(), ","))

	if status, body := e.readyz(); status != 200 || body["status"] != "ready" || body["redis"] != "up" {
		t.Fatalf("readyz with the cluster up: %d %v", status, body)
	}

	cl.Nodes[2].Stop()
	waitRedisCheck()
	status, body := e.readyz()
	if status != 200 || body["redis"] != "down" || !strings.Contains(fmt.Sprint(body["degraded"]), "redis") {
		t.Errorf("readyz with one of three masters dead: %d %v, want 200 degraded with redis down", status, body)
	}
	if up := e.scrape()["edge_redis_up"]; up != 0 {
		t.Errorf("edge_redis_up with one of three masters dead: %v, want 0", up)
	}

	cl.Nodes[2].Restart()
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, body = e.readyz()
		if body["redis"] == "up" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz 10 s after the master came back: %d %v, want redis up", status, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if up := e.scrape()["edge_redis_up"]; up != 1 {
		t.Errorf("edge_redis_up after the master came back: %v, want 1", up)
	}
}

// TestReadinessSeesAReadOnlyReplica: an edge whose Redis address leads to a
// replica (a failover without Sentinel left the old master demoted behind
// the address) is degraded with redis_error "read only", as the README's
// readiness line lists, and edge_redis_up is 0: every write of the cache
// and the rate limiter fails there (READONLY), so both serve without
// Redis. A PING alone used to pass on a replica, leaving the edge "ready"
// with redis "up" and the "read only" kind unreachable. Once the node is
// promoted, both say "up" again without a restart.
func TestReadinessSeesAReadOnlyReplica(t *testing.T) {
	master := redistest.Start(t)
	replica := redistest.Start(t, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port))
	e := startEdge(t, "--demo", "--redis", replica.Addr)

	status, body := e.readyz()
	if status != 200 || body["redis"] != "down" || body["redis_error"] != "read only" || !strings.Contains(fmt.Sprint(body["degraded"]), "redis") {
		t.Errorf("readyz on a replica: %d %v, want 200 degraded with redis down, redis_error read only", status, body)
	}
	if up := e.scrape()["edge_redis_up"]; up != 0 {
		t.Errorf("edge_redis_up on a replica: %v, want 0", up)
	}

	if err := replica.Client().ReplicaOf(context.Background(), "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	waitRedisCheck()
	if status, body := e.readyz(); status != 200 || body["redis"] != "up" {
		t.Errorf("readyz once the replica is promoted: %d %v, want redis up", status, body)
	}
	if up := e.scrape()["edge_redis_up"]; up != 1 {
		t.Errorf("edge_redis_up once the replica is promoted: %v, want 1", up)
	}
}
