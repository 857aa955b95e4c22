package cache

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dealer-edge/dealer-edge/cache/ratelimit"
	"github.com/dealer-edge/dealer-edge/cache/redistest"
)

// sentinelClient is a client as the edge builds it in Sentinel mode: a
// universal client with MasterName and the Sentinel addresses.
func sentinelClient(t testing.TB, sentinel, master string) redis.UniversalClient {
	t.Helper()
	c := redis.NewUniversalClient(&redis.UniversalOptions{
		Addrs:                 []string{sentinel},
		MasterName:            master,
		ContextTimeoutEnabled: true,
		DialTimeout:           200 * time.Millisecond,
		ReadTimeout:           200 * time.Millisecond,
		WriteTimeout:          200 * time.Millisecond,
		MaxRetries:            -1,
		DialerRetries:         1,
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestIntegrationSentinel runs the response cache and the rate limiter
// through Sentinel (a real redis-server master and a real Sentinel): the
// client finds the master through the Sentinel, entries are shared between
// two instances, a purge propagates over pub/sub, the limiter's script
// runs and enforces the limit, and the keys land on the master.
func TestIntegrationSentinel(t *testing.T) {
	sentinel, master := redistest.StartSentinel(t)
	ctx := context.Background()

	// Where the Sentinel says the master is: the keys must end up there.
	sc := redis.NewSentinelClient(&redis.Options{Addr: sentinel})
	defer sc.Close()
	hp, err := sc.GetMasterAddrByName(ctx, master).Result()
	if err != nil || len(hp) != 2 {
		t.Fatalf("sentinel get-master-addr-by-name: %v %v", hp, err)
	}
	direct := redis.NewClient(&redis.Options{Addr: net.JoinHostPort(hp[0], hp[1])})
	defer direct.Close()

	rdbA, rdbB := sentinelClient(t, sentinel, master), sentinelClient(t, sentinel, master)
	if _, ok := rdbA.(*redis.Client); !ok {
		t.Fatalf("universal client with MasterName is %T, want the failover *redis.Client", rdbA)
	}
	a := newCache(t, Options{Redis: rdbA, LockWait: time.Second})
	b := newCache(t, Options{Redis: rdbB, LockWait: time.Second})
	waitWithin(t, 10*time.Second, "purge subscriptions through sentinel", func() bool {
		return a.Stats().PubSubUp && b.Stats().PubSubUp
	})

	pol := Policy{TTL: time.Hour}
	if e, res := mustGet(t, a, 7, "/v1/faq?page=1", pol, newFiller("via sentinel").fill); res != Miss || string(e.Body()) != "via sentinel" {
		t.Fatalf("a: %v %q", res, e.Body())
	}
	other := newFiller("wrong")
	if e, res := mustGet(t, b, 7, "/v1/faq?page=1", pol, other.fill); res != Hit || string(e.Body()) != "via sentinel" || other.calls.Load() != 0 {
		t.Fatalf("b did not read a's entry from the master: %v %q (fills %d)", res, e.Body(), other.calls.Load())
	}
	keys, err := direct.Keys(ctx, "*{d7}*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("no entry of dealer 7 on the master: %v %v", keys, err)
	}

	if err := a.PurgeDealer(ctx, 7); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "b to drop dealer 7", func() bool { n, _ := b.l1.lookup(7, []byte("/v1/faq?page=1")); return n == nil })
	if e, res := mustGet(t, b, 7, "/v1/faq?page=1", pol, newFiller("after purge").fill); res != Miss || string(e.Body()) != "after purge" {
		t.Fatalf("b after purge: %v %q", res, e.Body())
	}
	if st := a.Stats(); !st.RedisUp || st.L2Errors != 0 {
		t.Fatalf("cache a through sentinel: %+v", st)
	}

	// The rate limiter, on a controlled clock: burst 3 at 1/s is unleased
	// (exact), so every decision is a script run on the master.
	clk := newFakeClock()
	l, err := ratelimit.New(ratelimit.Options{Redis: rdbA, Now: clk.Now, RedisTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	lim := ratelimit.Limit{Rate: 1, Burst: 3}
	for i := range 3 {
		if d := l.Allow(ctx, 7, "sentinel-key", lim); !d.Allowed || d.Source != ratelimit.SourceRedis {
			t.Fatalf("request %d: %+v", i, d)
		}
	}
	d := l.Allow(ctx, 7, "sentinel-key", lim)
	if d.Allowed || d.Source != ratelimit.SourceRedis || d.RetryAfter != time.Second {
		t.Fatalf("4th request: %+v, want a Redis rejection with RetryAfter 1s", d)
	}
	clk.Advance(time.Second)
	if d := l.Allow(ctx, 7, "sentinel-key", lim); !d.Allowed {
		t.Fatalf("after RetryAfter: %+v", d)
	}
	if st := l.Stats(); st.RedisErrors != 0 || st.FallbackActive || st.RedisCalls != 5 {
		t.Fatalf("limiter through sentinel: %+v", st)
	}
	rl, err := direct.Keys(ctx, "*:rl:sentinel-key").Result()
	if err != nil || len(rl) != 1 || !strings.Contains(rl[0], "{d7}") {
		t.Fatalf("rate-limit bucket on the master: %v %v", rl, err)
	}
}
