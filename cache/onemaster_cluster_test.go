package cache

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/redis/go-redis/v9"
)

// TestOneMasterClusterSingleAddressIsUp: a Redis Cluster of one master
// (all 16384 slots on the one node: a small managed Cluster of one shard,
// a dev setup) reached at its one address by a plain client serves every
// key: no MOVED can come, there is no other master. redis.addrs cannot
// list it as a Cluster (two distinct addresses are needed, duplicates are
// refused), so one address is the only way to configure it. PingRedis now
// calls it down (ErrClusterNode) for good: readyz never ready,
// edge_redis_up 0, the cache never uses Redis, although nothing is wrong.
func TestOneMasterClusterSingleAddressIsUp(t *testing.T) {
	bus := redistest.FreePort(t)
	dir := t.TempDir()
	s := redistest.Start(t, "--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(bus),
		"--cluster-config-file", filepath.Join(dir, "nodes.conf"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer rdb.Close()
	if err := rdb.Do(ctx, "cluster", "addslotsrange", 0, 16383).Err(); err != nil {
		t.Fatal(err)
	}
	for {
		info, err := rdb.ClusterInfo(ctx).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("cluster not ok: %v %q", err, info)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for i := range 200 { // every slot's keys are served at this address
		k := "k" + strconv.Itoa(i)
		if err := rdb.Set(ctx, k, "v", time.Minute).Err(); err != nil {
			t.Fatalf("SET %s: %v", k, err)
		}
	}
	if err := PingRedis(ctx, rdb); err != nil {
		t.Fatalf("PingRedis on a one-master Cluster that serves every key at this address: %v", err)
	}
}
