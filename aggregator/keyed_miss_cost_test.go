package aggregator

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
	"github.com/redis/go-redis/v9"
)

// The tests of this file hold what one valid key can make the internal
// services and Redis do with requests the cache answers at most briefly
// (a 404 is remembered for not_found_ttl; pages past the end are distinct
// entries) to the bounds the
// README states ("Rate limiting", what one key can cost within its
// budget): a change that makes a miss cost more fails them. The three
// open findings of the 2026-11-27 keyed-abuse audit are closed: a 404
// remembered, pages past the end answered from a cached total, and the
// per-dealer Redis byte budget (TestOneKeyRedisBudget).

// TestUnknownVehicleCost: a detail request for a vehicle id the dealer does
// not have (a random UUID, or another dealer's vehicle) calls inventory and
// media at once, and the inventory service's 404 is remembered for
// cache.routes.inventory_details.not_found_ttl (10 s): n requests within
// it make one inventory and one media call in all, never the catalog.
// Until 2026-11-27 every request made both calls (a 404 was not cached).
func TestUnknownVehicleCost(t *testing.T) {
	e := newIndexEdge(t, fake.Options{}, nil, false)
	// A vehicle of dealer 102 (demo-key-beta), asked for with dealer 101's key.
	st, body := e.body(t, "/dealer/REWIND/listing?page_size=1", "demo-key-beta")
	if st != 200 {
		t.Fatalf("listing: %d %s", st, body)
	}
	var foreign string
	if i := strings.Index(body, `"id_auto":"`); i >= 0 {
		foreign = body[i+len(`"id_auto":"`):][:36]
	}
	const n = 10
	for _, c := range []struct{ name, id string }{
		{"random id", "00000000-0000-4000-8000-000000000000"},
		{"another dealer's vehicle", foreign},
	} {
		t.Run(c.name, func(t *testing.T) {
			inv0, med0, cat0 := e.fk.Calls(upstream.SvcInventory), e.fk.Calls(upstream.SvcMedia), e.fk.Calls(upstream.SvcCatalog)
			for range n {
				if st, body := e.body(t, "/dealer/REWIND/details?id_auto="+c.id, "demo-key-alpha"); st != 404 {
					t.Fatalf("%d %s", st, body)
				}
			}
			inv, med, cat := e.fk.Calls(upstream.SvcInventory)-inv0, e.fk.Calls(upstream.SvcMedia)-med0, e.fk.Calls(upstream.SvcCatalog)-cat0
			t.Logf("%s: %d requests -> inventory %d, media %d, catalog %d calls", c.name, n, inv, med, cat)
			if inv > 1 || med > 1 || cat != 0 {
				t.Errorf("%d requests of 1 token each made %d inventory, %d media and %d catalog calls; the README states one inventory and one media call in all within not_found_ttl", n, inv, med, cat)
			}
		})
	}
}

// TestPagesPastTheEndCost: every page number (up to 2^31-1) and page size
// (1-100) of an inventory listing is an entry of its own, but a page past
// the end of a query whose total a fill of any of its pages learnt is
// answered from that total (pastend.go): no inventory call (one a page
// until 2026-11-27). Content listings cut every page from the cached view:
// no call.
func TestPagesPastTheEndCost(t *testing.T) {
	e := newIndexEdge(t, fake.Options{}, nil, false)
	const n = 20
	for _, c := range []struct {
		path, svc string
		max       int
	}{
		{"/dealer/REWIND/listing", upstream.SvcInventory, 0},
		{"/dealer/content/news/listing", fake.ContentTypeService("news"), 0},
	} {
		if st, body := e.body(t, c.path, "demo-key-alpha"); st != 200 {
			t.Fatalf("%s: %d %s", c.path, st, body)
		}
		before := e.fk.Calls(c.svc)
		for i := range n {
			uri := fmt.Sprintf("%s?page=%d&page_size=%d", c.path, 1000000+i*7919, 1+i%100)
			if st, body := e.body(t, uri, "demo-key-alpha"); st != 200 {
				t.Fatalf("%s: %d %s", uri, st, body)
			}
		}
		calls := e.fk.Calls(c.svc) - before
		t.Logf("%s: %d pages past the end -> %d %s calls", c.path, n, calls, c.svc)
		if calls > int64(c.max) {
			t.Errorf("%s: %d %s calls for %d pages past the end, want at most %d", c.path, calls, c.svc, n, c.max)
		}
	}
}

// contentAnswerBytes returns the length of the fake content service's
// answer for dealer 101's type ct with the query suffix.
func contentAnswerBytes(t *testing.T, e *indexEdge, ct, suffix string) int {
	t.Helper()
	r, err := http.Get("http://" + e.fk.Addr() + "/content/v1/dealers/101/" + ct + suffix)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("fake content %s: %d %v", ct, r.StatusCode, err)
	}
	return len(b)
}

// TestOneKeyRedisFootprint: a fill is written to Redis until the end of its
// stale-while-revalidate window (a content listing 5 min + 1 min, a search
// 2 min + 1 min, an inventory listing 30 s + 30 s); only a read from Redis
// keeps it for its stale-if-error window (TestL2ExpiryFollowsReads in
// cache). Until 2026-11-27 every fill was written for its whole
// stale-if-error window (5 min + 1 h, 2 min + 30 min, 30 s + 10 min),
// whether or not it was ever asked for again. Nothing bounds what one
// dealer or key holds there. Distinct queries that all match (every
// substring of a title word is a q of its own) are 1 token each (a search
// 5). The test fills pages of 100 items with distinct q's, holds every
// entry's expiry in Redis to the route's ttl + stale_while_revalidate (no
// longer), and logs what one key keeps in Redis at once at the default
// plan (50 tokens a second) with q's never asked for again: the README's
// figures. The embedded Redis holds 64 MiB in all and evicts the keys
// closest to expiry first (volatile-ttl).
func TestOneKeyRedisFootprint(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	// A generous Redis budget: under -race on a loaded machine the
	// embedded server can miss the default 50 ms, and a Redis marked down
	// stores nothing, which is not what this test measures.
	c, err := cache.New(cache.Options{Redis: rdb, ServeStaleOn: ServeStaleOn, RedisTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	e := newIndexEdge(t, fake.Options{}, nil, false, func(o *Options) { o.Cache = c })
	const rate = 50 // tokens a second of the default plan
	for _, r := range []struct {
		name, uri string
		cost      int
		life      time.Duration // ttl + stale_while_revalidate of the route's default policy
	}{
		{"content listing", "/dealer/content/news/listing?page_size=100&q=", 1, 6 * time.Minute},
		{"inventory listing", "/dealer/REWIND/listing?page_size=100&q=", 1, time.Minute},
		{"search", "/dealer/content/search?page_size=20&q=", 5, 3 * time.Minute},
	} {
		t.Run(r.name, func(t *testing.T) {
			mr.FlushAll()
			// q's that match: substrings of a common word, each its own key.
			qs := []string{"a", "e", "i", "o", "r", "n", "t", "l", "s", "c", "au", "to", "ar", "an", "er", "re", "on", "in", "co", "la"}
			if r.cost > 1 {
				qs = []string{"au", "to", "ar", "an", "er", "re", "on", "in", "co", "la"}
			}
			for _, q := range qs {
				if st, body := e.body(t, r.uri+q, "demo-key-alpha"); st != 200 {
					t.Fatalf("%s%s: %d %s", r.uri, q, st, body)
				}
			}
			var bytes, entries int
			var minTTL time.Duration = -1
			for _, k := range mr.Keys() {
				if !entryKey.MatchString(k) || strings.Contains(k, "content_view") {
					continue
				}
				v, err := mr.Get(k)
				if err != nil {
					continue
				}
				entries++
				bytes += len(k) + len(v) + 96 // the embedded Redis's count per key
				if ttl := mr.TTL(k); minTTL < 0 || ttl < minTTL {
					minTTL = ttl
				}
			}
			if entries != len(qs) {
				t.Fatalf("%d response entries in Redis for %d requests", entries, len(qs))
			}
			per := bytes / entries
			held := int64(per) * rate / int64(r.cost) * int64(r.life/time.Second)
			t.Logf("%s: %d bytes a request in Redis, kept %v; at %d tokens/s one key holds %d entries, %.0f MiB",
				r.name, per, minTTL.Round(time.Second), rate, rate/r.cost*int(r.life/time.Second), float64(held)/(1<<20))
			if minTTL > r.life || minTTL < r.life-10*time.Second {
				t.Errorf("%s entries expire from Redis after %v, want the route's ttl + stale_while_revalidate, %v", r.name, minTTL, r.life)
			}
		})
	}
}

// entryKey matches the Redis key of a response entry (cache/doc.go).
var entryKey = regexp.MustCompile(`:\{d[0-9]+\}:g[0-9]+(e[0-9]+)?:`)

// TestOneKeyRedisBudget: one key asking for distinct content listings of
// 100 items (a new q each time, each its own entry) through an edge on a
// real redis-server whose cache has a per-dealer budget of a few entries:
// every request is answered 200, the dealer's entries in Redis stay within
// the budget, and the writes it refused are counted. Without the budget
// (TestOneKeyRedisFootprint) each of them is in Redis.
func TestOneKeyRedisBudget(t *testing.T) {
	srv := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = rdb.Close() })
	const budget = 24 << 10
	c, err := cache.New(cache.Options{Redis: rdb, ServeStaleOn: ServeStaleOn, RedisTimeout: 5 * time.Second, RedisDealerBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	e := newIndexEdge(t, fake.Options{}, nil, false, func(o *Options) { o.Cache = c })
	qs := []string{"a", "e", "i", "o", "r", "n", "t", "l", "s", "c", "au", "to", "ar", "an", "er", "re", "on", "in", "co", "la"}
	for _, q := range qs {
		if st, body := e.body(t, "/dealer/content/news/listing?page_size=100&q="+q, "demo-key-alpha"); st != 200 {
			t.Fatalf("q=%s: %d %s", q, st, body)
		}
	}
	ctx := t.Context()
	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	var entries int
	var bytes int64
	for _, k := range keys {
		if !entryKey.MatchString(k) {
			continue
		}
		n, err := rdb.StrLen(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		entries++
		bytes += int64(len(k)) + n
	}
	skips := c.Stats().RedisBudgetSkips
	t.Logf("%d requests: %d entries, %d bytes in Redis (budget %d), %d writes refused", len(qs), entries, bytes, budget, skips)
	if bytes > budget || entries == 0 || skips == 0 || entries+int(skips) < len(qs) {
		t.Fatalf("%d entries, %d bytes in Redis, %d refused: want at most %d bytes, some of each, every request's entry one or the other", entries, bytes, skips, budget)
	}
}
