package cache

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
)

// TestReplicaKeepsRedisDown: a Redis address that leads to a replica (a
// failover without Sentinel left the demoted master there) refuses every
// write (READONLY), so the cache stays down, serving from L1 and the fill,
// until the node is a master again, and then comes back by itself. Its
// probe used to be a PING alone, which a replica answers: Redis was marked
// up again at every probe and down again at the next write, two event
// lines and a failed write each time (PingRedis, used by the probe and by
// /readyz, asks ROLE as well).
func TestReplicaKeepsRedisDown(t *testing.T) {
	master := redistest.Start(t)
	replica := redistest.Start(t, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port))
	logs := &logRecorder{}
	c := newCache(t, Options{Redis: newClient(t, replica.Addr), RedisTimeout: 200 * time.Millisecond, Logger: slogNew(logs)})
	pol := Policy{TTL: time.Hour}
	fill := func(context.Context) ([]byte, error) { return []byte("body"), nil }

	mustGet(t, c, 1, "/first", pol, fill)
	waitWithin(t, 2*time.Second, "redis marked down after a refused write", func() bool { return !c.RedisHealthy() })
	// Four probes at least (backoff 500 ms, 1 s, 2 s ... from the first).
	for i := range 50 {
		mustGet(t, c, 1, "/k"+strconv.Itoa(i), pol, fill)
		time.Sleep(50 * time.Millisecond)
	}
	if n := logs.count("redis available again"); n != 0 || c.RedisHealthy() {
		t.Errorf("on a replica: marked up %d times in 2.5 s (healthy now: %v), want never", n, c.RedisHealthy())
	}

	if err := newClient(t, replica.Addr).ReplicaOf(context.Background(), "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	waitWithin(t, 10*time.Second, "redis back once the node is a master", c.RedisHealthy)
}
