package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dealer-edge/dealer-edge/cache/ratelimit"
)

func embeddedClient(t *testing.T, maxBytes int64) (*embeddedRedis, *redis.Client) {
	t.Helper()
	e, err := startEmbeddedRedis(maxBytes, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	c := redis.NewClient(&redis.Options{Addr: e.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	return e, c
}

// pollUntil polls cond every 50 ms for up to d.
func pollUntil(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// TestEmbeddedRedisExpiresOnTheRealClock: keys written with short TTLs
// (PX, PEXPIRE, PEXPIREAT) are gone within a tick of their expiry, and the
// measured key count and bytes fall back.
func TestEmbeddedRedisExpiresOnTheRealClock(t *testing.T) {
	e, c := embeddedClient(t, 64<<20)
	ctx := context.Background()
	val := strings.Repeat("v", 1000)
	// One pipeline, so the writes take milliseconds even on a busy machine.
	p := c.Pipeline()
	for i := range 3000 {
		k := fmt.Sprintf("edge:c1:{d%d}:search:%d", i%7, i)
		switch i % 3 {
		case 0:
			p.Set(ctx, k, val, time.Second)
		case 1:
			p.Set(ctx, k, val, 0)
			p.PExpire(ctx, k, 1200*time.Millisecond)
		case 2:
			p.Set(ctx, k, val, 0)
			p.PExpireAt(ctx, k, time.Now().Add(1400*time.Millisecond))
		}
	}
	p.Set(ctx, "no-ttl", "kept", 0)
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if n := c.DBSize(ctx).Val(); n != 3001 {
		t.Fatalf("DBSIZE %d after the writes", n)
	}
	if !pollUntil(4*time.Second, func() bool { return c.DBSize(ctx).Val() == 1 }) {
		t.Fatalf("DBSIZE %d well after every TTL ran out", c.DBSize(ctx).Val())
	}
	if !pollUntil(time.Second, func() bool { s := e.Stats(); return s.Keys == 1 && s.Bytes < 200 }) {
		t.Fatalf("stats did not fall back: %+v", e.Stats())
	}
	if v := c.Get(ctx, "no-ttl").Val(); v != "kept" {
		t.Fatalf("key without TTL: %q", v)
	}
}

// TestEmbeddedRedisMeasures: the sweep counts keys and bytes.
func TestEmbeddedRedisMeasures(t *testing.T) {
	e, c := embeddedClient(t, 64<<20)
	ctx := context.Background()
	val := strings.Repeat("v", 1000)
	for i := range 1000 {
		c.Set(ctx, fmt.Sprintf("k:%d", i), val, time.Minute)
	}
	if !pollUntil(2*time.Second, func() bool { return e.Stats().Keys == 1000 }) {
		t.Fatalf("sweep did not measure the keys: %+v", e.Stats())
	}
	if b := e.Stats().Bytes; b < 1000*1000 || b > 1000*1200 {
		t.Fatalf("measured %d bytes for 1000 keys of 1000 bytes", b)
	}
}

// TestEmbeddedRedisEvictsOverTheCap: 8 MB written into a 2 MiB store
// (swept by hand, so no sweep runs halfway through the writes) leaves it
// under the cap; the keys closest to expiry go first and keys without a
// TTL last, and writes never fail.
func TestEmbeddedRedisEvictsOverTheCap(t *testing.T) {
	const limit = 2 << 20
	var evicted int
	e, err := newEmbeddedRedis(limit, 0, func(n int) { evicted += n })
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	c := redis.NewClient(&redis.Options{Addr: e.Addr()})
	defer c.Close()
	ctx := context.Background()
	c.Set(ctx, "gen:no-ttl", "1", 0)
	val := strings.Repeat("x", 4000)
	p := c.Pipeline()
	for i := range 2000 {
		ttl := time.Hour
		if i%2 == 0 {
			ttl = 10 * time.Minute
		}
		p.Set(ctx, fmt.Sprintf("k:%d", i), val, ttl)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatalf("writes refused: %v", err)
	}
	e.sweep()
	if b := e.Stats().Bytes; b > limit*9/10 || b < limit/2 {
		t.Fatalf("%d bytes after the sweep, want just under 90%% of %d", b, limit)
	}
	if evicted < 1000 || uint64(evicted) != e.evicted.Load() {
		t.Fatalf("evicted %d keys (counted %d)", evicted, e.evicted.Load())
	}
	short, long := 0, 0
	for i := range 2000 {
		if c.Exists(ctx, fmt.Sprintf("k:%d", i)).Val() == 1 {
			if i%2 == 0 {
				short++
			} else {
				long++
			}
		}
	}
	if short != 0 || long == 0 {
		t.Fatalf("left %d keys with 10 min and %d with 1 h: the nearest expiry goes first", short, long)
	}
	if c.Exists(ctx, "gen:no-ttl").Val() != 1 {
		t.Fatal("a key without TTL was evicted before keys with one")
	}
	if n := c.DBSize(ctx).Val(); n != e.Stats().Keys {
		t.Fatalf("DBSIZE %d, measured %d keys", n, e.Stats().Keys)
	}
}

// TestEmbeddedRedisKeepsRateLimitBuckets: over its cap the embedded Redis
// evicted the keys closest to expiry first, and a rate-limit bucket
// expires when it is full again (seconds), long before any cache entry
// (minutes): every sweep over the cap (one each 250 ms while a flood of
// fills holds the store there) erased every drained bucket, and each key
// was granted its burst again. The buckets go last: a key drained before
// the sweep is still refused after it.
func TestEmbeddedRedisKeepsRateLimitBuckets(t *testing.T) {
	const limit = 1 << 20
	e, err := newEmbeddedRedis(limit, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	c := redis.NewClient(&redis.Options{Addr: e.Addr()})
	defer c.Close()
	ctx := context.Background()
	lim := ratelimit.Limit{Rate: 1, Burst: 5}
	newLim := func() *ratelimit.Limiter {
		l, err := ratelimit.New(ratelimit.Options{Redis: c, RedisTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.Close() })
		return l
	}
	l := newLim()
	for i := range lim.Burst {
		if d := l.Allow(ctx, 7, "drained", lim); !d.Allowed {
			t.Fatalf("request %d of the burst refused: %+v", i, d)
		}
	}
	// Cache fills (minutes of TTL) take the store over its cap.
	val := strings.Repeat("x", 4000)
	p := c.Pipeline()
	for i := range 600 {
		p.Set(ctx, fmt.Sprintf("edge:v1:{d7}:g1:search:%d", i), val, 3*time.Minute)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	e.sweep()
	if b := e.Stats().Bytes; b > limit {
		t.Fatalf("%d bytes after the sweep, over the cap %d", b, limit)
	}
	// Another limiter on the same Redis holds no local state of the key:
	// its answer is the bucket's.
	if d := newLim().Allow(ctx, 7, "drained", lim); d.Allowed {
		t.Fatalf("a drained key admitted again after a sweep over the cap (%+v): its bucket was evicted", d)
	}
}

// TestIsRateLimitBucket: the key forms of both limiters and of the probe
// are buckets; a cache entry or lock whose request text holds "}:rl:" is
// not.
func TestIsRateLimitBucket(t *testing.T) {
	for key, want := range map[string]bool{
		"edge:v1:{d42}:rl:0123abcd":          true,
		"edge:v1:addr:{d513}:rl:0123abcd":    true,
		"edge:v1:{probe}:rl:probe":           true,
		"edge:v1:{d42}:g3e2:search:q=}:rl:x": false,
		"edge:v1:{d42}:l3:listing:}:rl:":     false,
		"edge:v1:purge:epoch":                false,
		"edge:v1:{d42}:gen":                  false,
	} {
		if got := isRateLimitBucket(key); got != want {
			t.Errorf("isRateLimitBucket(%q) = %v, want %v", key, got, want)
		}
	}
}
