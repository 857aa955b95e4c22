package main

import (
	"testing"

	"github.com/dealer-edge/dealer-edge/configs"
)

// TestConcurrencyReserveClusterPools: configs/README.md says a
// derived server.concurrency is the file-descriptor limit minus what the
// edge keeps for its upstream pools, "Redis pool" and admin listener;
// redis.addrs with several entries is Redis Cluster, where go-redis keeps
// a pool of redis.pool_size connections per node (ClusterClient: one
// Client per node). fdReserve counts one pool whatever the mode, so a
// 3-node cluster's pools (3 x 2,000) are kept only a third.
func TestConcurrencyReserveClusterPools(t *testing.T) {
	single := configs.Default()
	single.Redis.Addrs = []string{"10.0.0.1:6379"}
	single.Redis.PoolSize = 2000
	cluster := configs.Default()
	cluster.Redis.Addrs = []string{"10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"}
	cluster.Redis.PoolSize = 2000
	one := fdReserve(single, 5, redisServers{})
	three := fdReserve(cluster, 5, redisServers{})
	if three < one+2*2000 {
		t.Fatalf("fdReserve: single node %d, 3-node cluster %d: the cluster's two more pools of 2000 are not kept", one, three)
	}
}
