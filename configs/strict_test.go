package configs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeConfigFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "edge.json")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTrailingContentRejected: anything after the top-level object is an
// error, as unknown fields are (configs/README.md), so an object closed one
// brace too early cannot silently drop the fields after it. Before
// 2026-11-27 Load decoded the first JSON value and ignored the rest.
func TestTrailingContentRejected(t *testing.T) {
	for _, body := range []string{
		`{"server": {"request_timeout": "1s"}}, "rate_limit": {"fail_mode": "closed"}}`,
		`{"log": {"level": "warn"}} {"rate_limit": {"fail_mode": "no-such-mode"}}`,
		`{} garbage`,
	} {
		c, err := Load(writeConfigFile(t, body))
		if err == nil {
			t.Errorf("%s\n  loaded without error (rate_limit.fail_mode in force: %q); want an error about content after the top-level object", body, c.RateLimit.FailMode)
		}
	}
}

// TestNullMapKeepsDefaults: a null for a map or a map entry is an error
// (configs/README.md: "it would wipe a map of defaults"), and were one
// accepted it would have to keep the defaults (maps "merge key by key").
// Before 2026-11-27 it was accepted and wiped the built-in entries: every
// route uncached, the "limited" plan lifted to the default limit.
func TestNullMapKeepsDefaults(t *testing.T) {
	def := Default()
	for _, tc := range []struct {
		body string
		ok   func(c *Config) bool
	}{
		{`{"cache": {"routes": null}}`, func(c *Config) bool { return len(c.Cache.Routes) == len(def.Cache.Routes) }},
		{`{"cache": {"routes": {"content_hub": null}}}`, func(c *Config) bool { return c.Cache.Routes["content_hub"] == def.Cache.Routes["content_hub"] }},
		{`{"rate_limit": {"plans": null}}`, func(c *Config) bool { return len(c.RateLimit.Plans) == len(def.RateLimit.Plans) }},
		{`{"rate_limit": {"costs": null}}`, func(c *Config) bool { return len(c.RateLimit.Costs) == len(def.RateLimit.Costs) }},
	} {
		c, err := Load(writeConfigFile(t, tc.body))
		if err != nil {
			continue // rejected: fine
		}
		if !tc.ok(c) {
			t.Errorf("%s accepted without error and wiped the defaults: routes %d, content_hub %+v, plans %v, costs %v",
				tc.body, len(c.Cache.Routes), c.Cache.Routes["content_hub"], c.RateLimit.Plans, c.RateLimit.Costs)
		}
	}
}

// TestDuplicateAndCaseVariantKeys: a key given twice in one object and a
// field name in another letter case ("Rate_Limit") are errors
// (configs/README.md). Before 2026-11-27 both were accepted silently, and
// a hand-edited file with a field twice ran on whichever came last.
func TestDuplicateAndCaseVariantKeys(t *testing.T) {
	for _, body := range []string{
		`{"rate_limit": {"fail_mode": "closed", "fail_mode": "open"}}`,
		`{"rate_limit": {"fail_mode": "closed"}, "Rate_Limit": {"Fail_Mode": "open"}}`,
	} {
		if c, err := Load(writeConfigFile(t, body)); err == nil {
			t.Errorf("%s\n  accepted (fail_mode in force %q); want an error", body, c.RateLimit.FailMode)
		}
	}
}

// TestRequestTimeoutCoversUpstreamTimeouts: server.request_timeout must
// be longer than the longest chain of upstream timeouts (configs/README.md):
// a call cut by the request's deadline is not counted by its service's
// breaker, so a shorter budget would keep a hung service's breaker closed.
// Before 2026-11-27 such a budget was accepted.
func TestRequestTimeoutCoversUpstreamTimeouts(t *testing.T) {
	_, err := Load(writeConfigFile(t, `{"server": {"request_timeout": "300ms"}}`)) // inventory, dealers, content: 800ms
	if err == nil || !strings.Contains(err.Error(), "server.request_timeout") {
		t.Errorf("server.request_timeout 300ms with upstream.timeouts of 800ms: err = %v; want an error naming server.request_timeout", err)
	}
}

// TestRedisDBNegative: redis.db is not negative (configs/README.md).
// Before 2026-11-27 -1 was accepted: go-redis skips SELECT for DB <= 0, so
// writes went to DB 0 while the embedded Redis measured and evicted DB -1,
// and redis.embedded_max_bytes was never enforced.
func TestRedisDBNegative(t *testing.T) {
	if _, err := Load(writeConfigFile(t, `{"redis": {"db": -1}}`)); err == nil || !strings.Contains(err.Error(), "redis.db") {
		t.Errorf("redis.db -1: err = %v; want an error naming redis.db", err)
	}
}

// TestRoutePolicyMergesFieldByField: an entry of cache.routes merges
// field by field over that route's default (configs/README.md): a file
// that sets only cache.routes.content_hub.ttl keeps the hub's
// stale_while_revalidate (1m) and stale_if_error (1h). Before 2026-11-27
// they were zeroed (encoding/json decodes a map element into a fresh zero
// value).
func TestRoutePolicyMergesFieldByField(t *testing.T) {
	c, err := Load(writeConfigFile(t, `{"cache": {"routes": {"content_hub": {"ttl": "10s"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got, def := c.Cache.Routes["content_hub"], Default().Cache.Routes["content_hub"]
	if got.StaleWhileRevalidate != def.StaleWhileRevalidate || got.StaleIfError != def.StaleIfError {
		t.Errorf("only ttl set: content_hub = {ttl %v, swr %v, sie %v}; want swr %v and sie %v kept (or an error)",
			got.TTL.D(), got.StaleWhileRevalidate.D(), got.StaleIfError.D(), def.StaleWhileRevalidate.D(), def.StaleIfError.D())
	}
}
