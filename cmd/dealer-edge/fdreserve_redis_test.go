package main

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/dealer-edge/dealer-edge/configs"
	"github.com/redis/go-redis/v9"
)

// saturateRedisPools makes rdb (built as the edge builds its client) hold
// as many connections as go-redis lets it: commands and pipelines that
// block in Redis (BLPOP on keys of their own) until released, more of
// each than its pools take on any server. It returns how many connections
// the servers (admins, one per server, used for nothing else) counted
// blocked at the most, once want were or the count stopped at less. push
// is another client of the same Redis.
func saturateRedisPools(t *testing.T, rdb redis.UniversalClient, push redis.Cmdable, admins []*redis.Client, each, want int) int {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	keys := make([]string, 0, 2*each)
	for i := 0; i < each; i++ {
		k, pk := "q:"+strconv.Itoa(i), "p:"+strconv.Itoa(i)
		keys = append(keys, k, pk)
		wg.Add(2)
		go func() { defer wg.Done(); rdb.Do(ctx, "blpop", k, "10") }()
		go func() {
			defer wg.Done()
			_, _ = rdb.Pipelined(ctx, func(p redis.Pipeliner) error { p.Do(ctx, "blpop", pk, "10"); return nil })
		}()
	}
	blocked := func() int {
		n := 0
		for _, a := range admins {
			info := a.Info(ctx, "clients").Val()
			for _, l := range strings.Split(info, "\r\n") {
				if v, ok := strings.CutPrefix(l, "blocked_clients:"); ok {
					b, _ := strconv.Atoi(v)
					n += b
				}
			}
		}
		return n
	}
	most, since := 0, time.Now()
	for most < want && time.Since(since) < 500*time.Millisecond {
		if n := blocked(); n > most {
			most, since = n, time.Now()
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Release every command, those still waiting for a connection too
	// (through another client: rdb's pools are full).
	for _, k := range keys {
		push.LPush(ctx, k, "x")
	}
	wg.Wait()
	return most
}

// TestFDReserveCoversRedisConnections: a derived server.concurrency is the
// file-descriptor limit minus what the edge keeps for, among others, its
// Redis connections (configs/README.md), counted as redis.pool_size. The
// client go-redis builds keeps a pipeline pool of 10 connections besides
// the pool of pool_size, and the cache's batcher, generation reads and
// purges are pipelines: a real redis-server sees pool_size + 10
// connections from one client under load, 10 more than were kept.
func TestFDReserveCoversRedisConnections(t *testing.T) {
	srv := redistest.Start(t)
	cfg := configs.Default()
	cfg.Redis.Addrs = []string{srv.Addr}
	cfg.Redis.PoolSize = 3
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: cfg.Redis.Addrs, PoolSize: cfg.Redis.PoolSize, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	got := saturateRedisPools(t, rdb, srv.Client(), []*redis.Client{srv.Client()}, 20, cfg.Redis.PoolSize+redis.DefaultPipelinePoolSize)
	rs := findRedisServers(rdb, time.Second)
	if kept := redisReserve(cfg, rs); kept < uint64(got) {
		t.Fatalf("pool_size %d: redis-server counted %d connections of the client, the descriptor reserve keeps %d for Redis", cfg.Redis.PoolSize, got, kept)
	}
}

// TestFDReserveCoversDiscoveredMasters: with two seeds of a three-master
// Cluster listed in redis.addrs, go-redis opens pools to all three masters
// it finds; the reserve counted pools for the two addresses listed.
func TestFDReserveCoversDiscoveredMasters(t *testing.T) {
	cl := redistest.StartCluster(t)
	cfg := configs.Default()
	cfg.Redis.Addrs = cl.Addrs()[:2]
	cfg.Redis.PoolSize = 2
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: cfg.Redis.Addrs, PoolSize: cfg.Redis.PoolSize, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	admins := make([]*redis.Client, len(cl.Nodes))
	for i, n := range cl.Nodes {
		admins[i] = n.Client()
	}
	rs := findRedisServers(rdb, time.Second)
	if rs.masters != 3 {
		t.Fatalf("findRedisServers: %+v, want 3 masters", rs)
	}
	got := saturateRedisPools(t, rdb, cl.Client(t), admins, 120, 3*(cfg.Redis.PoolSize+redis.DefaultPipelinePoolSize))
	if kept := redisReserve(cfg, rs); kept < uint64(got) {
		t.Fatalf("2 of 3 masters listed, pool_size %d: the masters counted %d connections of the client, the descriptor reserve keeps %d for Redis", cfg.Redis.PoolSize, got, kept)
	}
}

// openFDs counts the process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	return len(ents)
}

// TestFDReserveCoversEmbeddedRedis: without redis.addrs the edge starts
// its Redis in-process (miniredis) and its client talks to it over
// loopback TCP: each connection of the client's pools is two descriptors
// of the one process, the client's and the server's. The reserve counted
// one for each, as for a Redis elsewhere: a saturated pool took twice the
// descriptors kept for it.
func TestFDReserveCoversEmbeddedRedis(t *testing.T) {
	e, err := newEmbeddedRedis(1<<20, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cfg := configs.Default()
	cfg.Redis.Addrs = []string{e.Addr()} // as start fills them in
	cfg.Redis.PoolSize = 3
	before := openFDs(t)
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: cfg.Redis.Addrs, PoolSize: cfg.Redis.PoolSize, MaxRetries: -1})
	defer rdb.Close()
	ctx := context.Background()
	want := cfg.Redis.PoolSize + redis.DefaultPipelinePoolSize
	var wg sync.WaitGroup
	var keys []string
	for i := 0; i < 2*want; i++ {
		k, pk := "q:"+strconv.Itoa(i), "p:"+strconv.Itoa(i)
		keys = append(keys, k, pk)
		wg.Add(2)
		go func() { defer wg.Done(); rdb.Do(ctx, "blpop", k, "10") }()
		go func() {
			defer wg.Done()
			_, _ = rdb.Pipelined(ctx, func(p redis.Pipeliner) error { p.Do(ctx, "blpop", pk, "10"); return nil })
		}()
	}
	deadline := time.Now().Add(5 * time.Second)
	for e.mr.CurrentConnectionCount() < want && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond) // polling miniredis's own count: no signal to wait on
	}
	conns := e.mr.CurrentConnectionCount()
	used := openFDs(t) - before
	push := redis.NewClient(&redis.Options{Addr: e.Addr()})
	defer push.Close()
	for _, k := range keys {
		push.LPush(ctx, k, "x")
	}
	wg.Wait()
	if conns < want {
		t.Fatalf("the client opened %d connections, want %d", conns, want)
	}
	if kept := redisReserve(cfg, redisServers{embedded: true}); kept < uint64(used) {
		t.Fatalf("embedded Redis, pool_size %d: %d connections of the client took %d descriptors, the reserve keeps %d for Redis", cfg.Redis.PoolSize, conns, used, kept)
	}
}
