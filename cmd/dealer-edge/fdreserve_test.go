package main

import (
	"runtime"
	"testing"

	"github.com/dealer-edge/dealer-edge/configs"
)

// TestConcurrencyReserveZeroMaxConns: configs/README.md says a 0 for
// upstream.max_conns_per_host means its default (256 per service, as
// upstream.New applies it), and that a derived server.concurrency is the
// file-descriptor limit minus what the edge keeps for its upstream pools.
// Two configs meaning the same pools must derive the same cap.
func TestConcurrencyReserveZeroMaxConns(t *testing.T) {
	def := configs.Default() // max_conns_per_host 256
	zero := configs.Default()
	zero.Upstream.MaxConnsPerHost = 0 // "means that field's default"
	want, _ := concurrency(def, 65536, 5, redisServers{})
	got, note := concurrency(zero, 65536, 5, redisServers{})
	if got != want {
		t.Fatalf("upstream.max_conns_per_host 0 (the default pools, 5x256 connections) derives concurrency %d, the explicit default %d: "+
			"the reserve counts no upstream connection (%s)", got, want, note)
	}
}

// TestConcurrencyReserveDefaultRedisPool: redis.pool_size 0 is
// go-redis' default, 10 per GOMAXPROCS (configs/README.md), and the derived
// server.concurrency keeps the Redis pool's descriptors aside; the reserve
// assumes 40 whatever the processor count.
func TestConcurrencyReserveDefaultRedisPool(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(32))
	zero := configs.Default() // pool_size 0: go-redis opens up to 10 x 32 = 320
	explicit := configs.Default()
	explicit.Redis.PoolSize = 10 * runtime.GOMAXPROCS(0)
	want, _ := concurrency(explicit, 65536, 5, redisServers{})
	got, note := concurrency(zero, 65536, 5, redisServers{})
	if got != want {
		t.Fatalf("redis.pool_size 0 at GOMAXPROCS 32 derives concurrency %d, an explicit pool of %d derives %d (%s)", got, explicit.Redis.PoolSize, want, note)
	}
}
