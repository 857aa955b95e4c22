package cache

import (
	"context"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/redis/go-redis/v9"
)

// A master of a Cluster that holds no slot, while one other master holds
// all 16384 (a one-master Cluster being scaled out: the new master joined,
// no slot moved yet), reports cluster_state:ok and cluster_size:1 too, yet
// every key sent to it is refused with MOVED. PingRedis must not call it up.
func TestEmptyMasterOfOneMasterClusterIsNotUp(t *testing.T) {
	var bus int
	start := func() (*redistest.Server, *redis.Client) {
		bus = redistest.FreePort(t)
		s := redistest.Start(t, "--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(bus),
			"--cluster-config-file", filepath.Join(t.TempDir(), "nodes.conf"))
		r := redis.NewClient(&redis.Options{Addr: s.Addr})
		t.Cleanup(func() { r.Close() })
		return s, r
	}
	_, a := start()
	sb, b := start()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := a.Do(ctx, "cluster", "addslotsrange", 0, 16383).Err(); err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(sb.Addr)
	if err := a.Do(ctx, "cluster", "meet", host, port, bus).Err(); err != nil {
		t.Fatal(err)
	}
	for {
		info, err := b.ClusterInfo(ctx).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_size:1\r\n") {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("cluster not ok at b: %v %q", err, info)
		}
		time.Sleep(50 * time.Millisecond)
	}
	setErr := b.Set(ctx, "k1", "v", time.Minute).Err()
	t.Logf("SET at the empty master: %v", setErr)
	if err := PingRedis(ctx, b); err == nil && setErr != nil {
		t.Errorf("PingRedis calls an empty master up while its keys are refused: %v", setErr)
	}
}
