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

// TestTrailingContentRejected: Load decodes the first JSON value and
// ignores the rest of the file. An object closed one brace too early
// silently drops every field after it ("Unknown fields are errors, so a
// typo cannot silently leave a knob at its default").
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

// TestNullMapKeepsDefaults: configs/README.md "maps ... merge key by
// key"; a JSON null for a map (or a map entry) is not rejected and wipes
// the built-in entries: every route uncached, the "limited" plan lifted to
// the default limit, with no error.
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

// TestDuplicateAndCaseVariantKeys: duplicate keys (last one wins) and
// keys in another case ("LISTEN", "Rate_Limit") are accepted silently; a
// hand-edited file with a field twice runs on whichever came last.
func TestDuplicateAndCaseVariantKeys(t *testing.T) {
	for _, body := range []string{
		`{"rate_limit": {"fail_mode": "closed", "fail_mode": "open"}}`,
		`{"rate_limit": {"fail_mode": "closed"}, "Rate_Limit": {"Fail_Mode": "open"}}`,
	} {
		if c, err := Load(writeConfigFile(t, body)); err == nil {
			t.Errorf("%s\n  accepted; fail_mode in force %q", body, c.RateLimit.FailMode)
		}
	}
}

// TestRequestTimeoutCoversUpstreamTimeouts: server.request_timeout is
// "the budget of one request's upstream work ...; each upstream call gets the
// earlier of this and its own upstream.timeouts entry". Below a service's
// timeout, that service's timeout never fires: every slow call ends at the
// caller's deadline, which the breaker excludes (upstream/breaker.go
// IsExcluded), so the breaker of a hanging service never opens
// (upstream.TestBreakerNeverOpensUnderShortRequestBudget).
func TestRequestTimeoutCoversUpstreamTimeouts(t *testing.T) {
	_, err := Load(writeConfigFile(t, `{"server": {"request_timeout": "300ms"}}`)) // inventory, dealers, content: 800ms
	if err == nil || !strings.Contains(err.Error(), "server.request_timeout") {
		t.Errorf("server.request_timeout 300ms with upstream.timeouts of 800ms: err = %v; want an error naming server.request_timeout", err)
	}
}

// TestRedisDBNegative: redis.db -1 is accepted; go-redis skips SELECT
// for DB <= 0 (writes go to DB 0) while the embedded Redis measures and
// evicts DB -1, so redis.embedded_max_bytes is never enforced
// (main.TestEmbeddedCapIgnoredWithNegativeDB).
func TestRedisDBNegative(t *testing.T) {
	if _, err := Load(writeConfigFile(t, `{"redis": {"db": -1}}`)); err == nil || !strings.Contains(err.Error(), "redis.db") {
		t.Errorf("redis.db -1: err = %v; want an error naming redis.db", err)
	}
}

// TestRoutePolicyMergesFieldByField: configs/README.md "Objects merge
// field by field; maps ... merge key by key (a file that sets
// cache.routes.content_hub leaves the other routes at their defaults)", and
// each of ttl / stale_while_revalidate / stale_if_error has its own default
// row. A file that sets only cache.routes.content_hub.ttl silently zeroes
// that route's stale_while_revalidate (1m) and stale_if_error (1h):
// encoding/json decodes a map element into a fresh zero value.
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
