package ratelimit

import (
	"context"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/dealer-edge/dealer-edge/internal/syncbuf"
	"github.com/redis/go-redis/v9"
)

// edgeClusterClient is the cluster client cmd/dealer-edge builds
// (NewUniversalClient with several addresses and cache.ClientOptions),
// redis.timeout to.
func edgeClusterClient(t *testing.T, cl *redistest.Cluster, to time.Duration) *redis.ClusterClient {
	c := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:                 cl.Addrs(),
		DialTimeout:           max(to, 200*time.Millisecond),
		ReadTimeout:           to,
		WriteTimeout:          to,
		MaxRetries:            -1,
		ContextTimeoutEnabled: true,
		DialerRetries:         1,
		MinRetryBackoff:       -1,
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// masterOf is the index of the StartCluster node that owns slot.
func masterOf(slot int64) int { return min(int(slot)/(16384/3), 2) }

// TestClusterOneMasterDownNoFlap: one master of a three-master Cluster is
// killed, in the window before the Cluster fails it over or declares
// itself down (cluster-node-timeout, 15 s by default; the live masters
// keep serving their slots meanwhile). The README says that with one dead
// master "the cache and the rate limiter then work without Redis". The
// limiter's background probe writes "{probe}", a slot of a live master,
// so it answers and the limiter is marked up again, until the next
// request of a dealer on the dead master marks it down: a flap of up and
// down every ProbeInterval, two log lines a cycle, the fallback gauge
// (and its alert's "for: 2m") reset each second.
func TestClusterOneMasterDownNoFlap(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	c := edgeClusterClient(t, cl, 100*time.Millisecond)
	probeSlot, err := c.ClusterKeySlot(ctx, DefaultPrefix+probeKey).Result()
	if err != nil {
		t.Fatal(err)
	}
	// Kill a master that does not hold the probe's slot; keep the
	// production default node timeout on the others, so the Cluster
	// stays "ok" for the live slots during the test.
	dead := (masterOf(probeSlot) + 1) % 3
	for i, n := range cl.Nodes {
		if i != dead {
			if err := n.Client().ConfigSet(ctx, "cluster-node-timeout", "15000").Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Dealers on every master.
	var dealers []int64
	onDead := 0
	for d := int64(1); len(dealers) < 12; d++ {
		s, err := c.ClusterKeySlot(ctx, "d"+strconv.FormatInt(d, 10)).Result()
		if err != nil {
			t.Fatal(err)
		}
		if masterOf(s) == dead {
			onDead++
		}
		dealers = append(dealers, d)
	}
	if onDead == 0 || onDead == len(dealers) {
		t.Fatalf("%d of %d dealers on the dead master", onDead, len(dealers))
	}
	var logs syncbuf.Buffer
	l := newLimiter(t, Options{
		Redis: c, RedisTimeout: 100 * time.Millisecond, BackgroundProbe: true,
		MaxLease: 1, // every request asks Redis: the edge's per-address limiter is close to it (4)
		Logger:   slog.New(slog.NewTextHandler(&logs, nil)),
	})
	lim := Limit{Rate: 1000, Burst: 1000}
	cl.Nodes[dead].Stop()
	start := time.Now()
	last := time.Now()
	rot := 0
	for time.Since(start) < 6*time.Second {
		srcs := map[string]int{}
		// Requests come in any order: rotate which dealer is first.
		for i := range dealers {
			d := dealers[(i+rot)%len(dealers)]
			dd := l.Allow(ctx, d, "k", lim)
			srcs[dd.Source]++
		}
		if time.Since(last) > 500*time.Millisecond {
			last = time.Now()
			t.Logf("%v %+v %v", time.Since(start), l.Stats(), srcs)
		}
		rot++
		time.Sleep(10 * time.Millisecond)
	}
	down := logs.Count("redis unavailable, falling back")
	up := logs.Count("redis available again")
	st := l.Stats()
	t.Logf("in 6 s with one master dead: %d down lines, %d up lines, activations %d, fallback active %v",
		down, up, st.FallbackActivations, st.FallbackActive)
	if down > 1 || up > 0 {
		t.Errorf("the limiter flaps with one master dead: %d \"unavailable\" and %d \"available again\" lines in 6 s (want one outage)\n%s", down, up, logs.String())
	}
}

// TestClusterMigratingSlotLimiter: while a dealer's slot migrates
// (source MIGRATING, target IMPORTING) and after its bucket key moved
// (MIGRATE), the limiter's script keeps answering from Redis: a key still
// on the source, a key new to the slot (ASK to the target, which has not
// loaded the script: NOSCRIPT, then EVAL), and the moved key.
func TestClusterMigratingSlotLimiter(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	c := edgeClusterClient(t, cl, 250*time.Millisecond)
	l := newLimiter(t, Options{Redis: c, RedisTimeout: 250 * time.Millisecond, MaxLease: 1, BackgroundProbe: true})
	lim := Limit{Rate: 1000, Burst: 1000}
	const dealer = 42
	if d := l.Allow(ctx, dealer, "old", lim); d.Source != SourceRedis {
		t.Fatalf("before: %+v", d)
	}
	slot, err := c.ClusterKeySlot(ctx, "d42").Result()
	if err != nil {
		t.Fatal(err)
	}
	src, dst := cl.Nodes[masterOf(slot)], cl.Nodes[(masterOf(slot)+1)%3]
	s, d := src.Client(), dst.Client()
	defer s.Close()
	defer d.Close()
	id := func(c *redis.Client) string { v, _ := c.Do(ctx, "cluster", "myid").Text(); return v }
	if err := d.Do(ctx, "cluster", "setslot", slot, "importing", id(s)).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Do(ctx, "cluster", "setslot", slot, "migrating", id(d)).Err(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"old", "new"} {
		if dd := l.Allow(ctx, dealer, k, lim); dd.Source != SourceRedis {
			t.Errorf("key %s while the slot migrates: %+v", k, dd)
		}
	}
	keys, _ := s.Do(ctx, "cluster", "getkeysinslot", slot, 100).StringSlice()
	for _, k := range keys {
		if err := s.Migrate(ctx, "127.0.0.1", strconv.Itoa(dst.Port), k, 0, time.Second).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"old", "new", "newer"} {
		if dd := l.Allow(ctx, dealer, k, lim); dd.Source != SourceRedis {
			t.Errorf("key %s after MIGRATE: %+v", k, dd)
		}
	}
	for _, n := range []*redis.Client{s, d} {
		if err := n.Do(ctx, "cluster", "setslot", slot, "node", id(d)).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"old", "new", "newest"} {
		if dd := l.Allow(ctx, dealer, k, lim); dd.Source != SourceRedis {
			t.Errorf("key %s after the move: %+v", k, dd)
		}
	}
	if st := l.Stats(); st.RedisErrors != 0 || st.FallbackActivations != 0 {
		t.Errorf("stats: %+v", st)
	}
}
