package aggregator

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dealer-edge/dealer-edge/cache/ratelimit"
	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// addrLimiterOn returns an Options mutator giving the edge its own
// per-address limiter on rdb (nil: local only), as cmd/dealer-edge wires
// it.
func addrLimiterOn(t *testing.T, rdb redis.Scripter) func(*Options) {
	return func(o *Options) {
		// A generous Redis timeout: on a loaded test machine the default
		// 50ms would fall back to per-instance counting.
		lim, err := ratelimit.New(ratelimit.Options{Redis: rdb, Prefix: ratelimit.DefaultPrefix + ":addr", MaxLease: 1, RedisTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = lim.Close() })
		o.AddrLimiter = lim
	}
}

func strictFailLimit(s *Settings) {
	s.FailedAuthLimit = ratelimit.Limit{Rate: 0.01, Burst: 10}
	s.OpenAPILimit = ratelimit.Limit{Rate: 0.01, Burst: 5}
	s.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
}

func TestFailedAuthLimitSharedByTwoEdges(t *testing.T) {
	rs := redistest.Start(t)
	rdb := rs.Client()
	a := newIndexEdge(t, fake.Options{}, strictFailLimit, true, addrLimiterOn(t, rdb))
	b := newIndexEdge(t, fake.Options{}, strictFailLimit, true, addrLimiterOn(t, rdb))
	a.sync(t)
	b.sync(t)
	const listing = "/dealer/content/faq/listing"
	// Warm the dealer profiles on both (one call per dealer, whatever the
	// keys), then count.
	for _, e := range []*indexEdge{a, b} {
		if st, _ := e.from("198.51.100.7", listing, "demo-key-alpha"); st != 200 {
			t.Fatalf("valid key: %d", st)
		}
		if st, _ := e.from("192.0.2.200", listing, "demo-key-orphan"); st != 404 {
			t.Fatalf("orphan key: %d", st)
		}
	}
	callsA, callsB := a.fk.Calls(upstream.SvcDealers), b.fk.Calls(upstream.SvcDealers)
	// 6 failures at A, 4 at B from one address: its 10 are spent.
	for i := range 10 {
		e := a
		if i >= 6 {
			e = b
		}
		key := fmt.Sprintf("bad-key-%d", i)
		if i%3 == 0 {
			key = "" // a missing key is a failure too
		}
		if st, _ := e.from("198.51.100.7", listing, key); st != 401 {
			t.Fatalf("failure %d: %d, want 401", i, st)
		}
	}
	for _, e := range []*indexEdge{a, b} {
		st, retry := e.from("198.51.100.7", listing, "bad-key-x")
		if st != 429 || retry == "" {
			t.Fatalf("11th failure: %d Retry-After %q, want 429 with Retry-After; %+v", st, retry, e.s.AuthStats())
		}
		// An orphaned key (404 dealer_not_found) is refused the same way.
		if st, _ := e.from("198.51.100.7", listing, "demo-key-orphan"); st != 429 {
			t.Fatalf("orphan key over the limit: %d", st)
		}
		// A key the edge knows to be valid is never blocked.
		if st, _ := e.from("198.51.100.7", listing, "demo-key-alpha"); st != 200 {
			t.Fatalf("valid key from a limited address: %d", st)
		}
	}
	// The same /64 shares the bucket; other addresses do not.
	if st, _ := a.from("2001:db8:1:2::1", listing, "bad"); st != 401 {
		t.Fatalf("fresh v6 address: %d", st)
	}
	for i := range 10 {
		a.from(fmt.Sprintf("2001:db8:1:2::%x", i+2), listing, "bad")
	}
	if st, _ := b.from("2001:db8:1:2:ffff::1", listing, "bad"); st != 429 {
		t.Fatalf("same /64 at the other edge: %d, want 429", st)
	}
	if st, _ := b.from("198.51.100.8", listing, "bad"); st != 401 {
		t.Fatalf("neighbouring v4 address: %d, want 401", st)
	}
	// From a trusted proxy, the client in X-Forwarded-For is limited, not
	// the proxy; from an untrusted peer the header is ignored.
	for i := range 10 {
		a.from("10.0.0.1", listing, "bad", "X-Forwarded-For", "203.0.113.50")
		_ = i
	}
	if st, _ := b.from("10.0.0.2", listing, "bad", "X-Forwarded-For", "203.0.113.50"); st != 429 {
		t.Fatalf("forwarded client over the limit: %d", st)
	}
	if st, _ := b.from("10.0.0.2", listing, "bad", "X-Forwarded-For", "203.0.113.51"); st != 401 {
		t.Fatalf("another client behind the same proxy: %d", st)
	}
	if st, _ := b.from("203.0.113.77", listing, "bad", "X-Forwarded-For", "203.0.113.50"); st != 401 {
		t.Fatalf("spoofed X-Forwarded-For from an untrusted peer: %d", st)
	}
	if n := a.fk.Calls(upstream.SvcDealers) - callsA + b.fk.Calls(upstream.SvcDealers) - callsB; n != 0 {
		t.Fatalf("%d dealers calls with a fresh index", n)
	}
	if st := a.s.AuthStats(); st.AddrLimited["failed_auth"] == 0 || st.Results["failed_auth_limited"] == 0 {
		t.Fatalf("stats: %+v", st)
	}
	// Redis holds no client address.
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("redis keys: %v %v", keys, err)
	}
	for _, k := range keys {
		for _, addr := range []string{"198.51.100.7", "203.0.113.50", "2001:db8"} {
			if strings.Contains(k, addr) {
				t.Fatalf("redis key %q holds a client address", k)
			}
		}
	}
}

func TestFailedAuthLimitStopsLookups(t *testing.T) {
	e := newIndexEdge(t, fake.Options{}, func(s *Settings) {
		strictFailLimit(s)
		s.FailedAuthLimit.Burst = 3
	}, false, addrLimiterOn(t, nil))
	before := e.fk.Calls(upstream.SvcDealers)
	for i := range 3 {
		if st := e.get(fmt.Sprintf("unknown-%d", i)); st != 401 {
			t.Fatalf("lookup %d: %d", i, st)
		}
	}
	if n := e.fk.Calls(upstream.SvcDealers) - before; n != 3 {
		t.Fatalf("%d lookups, want 3", n)
	}
	for i := range 50 {
		if st := e.get(fmt.Sprintf("more-%d", i)); st != 429 {
			t.Fatalf("over the limit: %d", st)
		}
	}
	if n := e.fk.Calls(upstream.SvcDealers) - before; n != 3 {
		t.Fatalf("%d lookups after the limit, want still 3", n)
	}
}

func TestOpenAPILimitPerAddress(t *testing.T) {
	e := newIndexEdge(t, fake.Options{}, strictFailLimit, true, addrLimiterOn(t, nil))
	e.sync(t)
	const doc = "/dealer/openapi.json"
	for i := range 5 {
		if st, _ := e.from("198.51.100.9", doc, ""); st != 200 {
			t.Fatalf("request %d: %d", i, st)
		}
	}
	if st, retry := e.from("198.51.100.9", doc, ""); st != 429 || retry == "" {
		t.Fatalf("over the limit: %d %q", st, retry)
	}
	if st, _ := e.from("198.51.100.10", doc, ""); st != 200 {
		t.Fatalf("another address: %d", st)
	}
	// A key known valid is not anonymous.
	e.from("198.51.100.9", "/dealer/content/faq/listing", "demo-key-beta")
	if st, _ := e.from("198.51.100.9", doc, "demo-key-beta"); st != 200 {
		t.Fatalf("with a known key: %d", st)
	}
	if e.s.AuthStats().AddrLimited["openapi"] != 1 {
		t.Fatalf("stats %+v", e.s.AuthStats().AddrLimited)
	}
}

// TestOpenAPILimitNotSkippedByExpiredKey: the OpenAPI document's
// per-address limit is skipped only for a key the edge knows valid now. An
// expired key (still in the index, so its principal is cached) used to
// skip it for ever (found by an audit); a valid key still does.
func TestOpenAPILimitNotSkippedByExpiredKey(t *testing.T) {
	e := newIndexEdge(t, fake.Options{}, strictFailLimit, true, addrLimiterOn(t, nil))
	e.sync(t)
	const doc = "/dealer/openapi.json"
	limited := func(n int, addr, key string) (k int) {
		for range n {
			if st, _ := e.from(addr, doc, key); st == 429 {
				k++
			}
		}
		return k
	}
	// Control: an unknown key is limited after the burst (5).
	if limited(10, "198.51.100.20", "no-such-key") == 0 {
		t.Fatal("control: unknown key never limited")
	}
	// Put the expired key's principal in the cache (it answers 401).
	if st, _ := e.from("198.51.100.21", "/dealer/content/faq/listing", "demo-key-expired"); st != 401 {
		t.Fatalf("expired key: %d, want 401", st)
	}
	if limited(20, "198.51.100.22", "demo-key-expired") == 0 {
		t.Errorf("20 OpenAPI requests with an expired key from one address: none limited (burst 5)")
	}
	// A valid key the edge has seen passes however often it asks.
	if st, _ := e.from("198.51.100.23", "/dealer/content/faq/listing", "demo-key-alpha"); st != 200 {
		t.Fatalf("valid key: %d, want 200", st)
	}
	for i := range 20 {
		if st, _ := e.from("198.51.100.23", doc, "demo-key-alpha"); st != 200 {
			t.Fatalf("valid key, request %d: %d, want 200", i, st)
		}
	}
}
