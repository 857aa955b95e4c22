package ratelimit

import (
	"context"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/redis/go-redis/v9"
)

// TestClusterChargeNotReplayedAfterCut: the connection that carried a
// request's EVALSHA of the limiter's script is dropped after Redis ran it
// and before its reply was read (a CLIENT KILL, a restarted node, a
// proxy's cut: the client reads EOF). go-redis's Cluster client sends a
// command again after such an error whatever MaxRetries says (its
// redirect loop, MaxRedirects): the script ran twice and the client was
// charged twice for one request (a lease: twice its tokens). The script
// must be sent once; the dropped reply is a Redis failure (the request is
// decided locally, Redis marked down).
func TestClusterChargeNotReplayedAfterCut(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()
	cut := &redistest.Cutter{}
	rc := redis.NewUniversalClient(cache.ClientOptions(&redis.UniversalOptions{Addrs: cl.Addrs(), Dialer: cut.Dial}, 250*time.Millisecond))
	t.Cleanup(func() { _ = rc.Close() })
	l := newLimiter(t, Options{Redis: rc, RedisTimeout: 250 * time.Millisecond, MaxLease: 1})
	lim := Limit{Rate: 1, Burst: 100}
	const dealer = 3
	key := DefaultPrefix + ":{d3}:rl:cut"
	if d := l.Allow(ctx, dealer, "cut", lim); !d.Allowed || d.Source != "redis" { // the script loaded, the connection open
		t.Fatalf("first request: %+v", d)
	}
	scripts := func() int {
		n := 0
		for _, c := range cut.Commands(key) {
			if c[0] == "evalsha" || c[0] == "eval" {
				n++
			}
		}
		return n
	}
	before := scripts()
	cut.Arm(key)
	d := l.Allow(ctx, dealer, "cut", lim)
	t.Logf("the request cut: %+v", d)
	if n := scripts() - before; n != 1 {
		t.Errorf("the script was sent %d times for one request, want once", n)
	}
	// The bucket in Redis: one token a request.
	v, err := rc.Get(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	res, err := take(ctx, rc, key, lim, 1, 1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("bucket %q; %d tokens left after a third", v, res.remaining)
	if res.remaining < int64(lim.Burst)-3 {
		t.Errorf("%d tokens left after three requests of one token (burst %d): a request was charged twice", res.remaining, lim.Burst)
	}
}
