package configs

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/aggregator"
)

func TestExampleConfigIsTheDefaults(t *testing.T) {
	got, err := Load("example.json")
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("configs/example.json differs from Default() in: %s", strings.Join(ChangedFields(want.Flatten(), got.Flatten()), ", "))
	}
}

func TestDemoConfigLoads(t *testing.T) {
	c, err := Load("demo.json")
	if err != nil {
		t.Fatal(err)
	}
	if c.Cache.Routes["inventory_listing"].TTL.D() >= Default().Cache.Routes["inventory_listing"].TTL.D() {
		t.Error("demo.json should shorten the inventory TTL")
	}
	if len(c.Cache.Routes) != len(Default().Cache.Routes) {
		t.Error("routes not merged over the defaults")
	}
}

// TestConfigReadmeDocumentsEveryField checks that configs/README.md names
// every field of Config (map keys written as <name>).
func TestConfigReadmeDocumentsEveryField(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	paths := configPaths(reflect.TypeFor[Config](), "")
	if len(paths) < 50 {
		t.Fatalf("only %d config paths found: %v", len(paths), paths)
	}
	for _, p := range paths {
		re := regexp.MustCompile("`" + strings.ReplaceAll(regexp.QuoteMeta(p), `<\*>`, `<[a-z_]+>`) + "`")
		parent := p[:max(strings.LastIndex(p, ".<*>"), 0)]
		if !re.MatchString(doc) && !(strings.Contains(p, "<*>") && strings.Contains(doc, "`"+parent+".<")) {
			t.Errorf("configs/README.md does not document %s", p)
		}
	}
}

// configPaths lists the dotted JSON paths of the leaves of t; a map
// contributes "<*>".
func configPaths(t reflect.Type, prefix string) []string {
	var out []string
	switch {
	case t.Kind() == reflect.Struct && t != reflect.TypeFor[time.Time]():
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			p := name
			if prefix != "" {
				p = prefix + "." + name
			}
			out = append(out, configPaths(f.Type, p)...)
		}
	case t.Kind() == reflect.Map:
		out = append(out, configPaths(t.Elem(), prefix+".<*>")...)
	default:
		out = append(out, prefix)
	}
	return out
}

func TestValidateNamesTheBadField(t *testing.T) {
	cases := []struct {
		name  string
		json  string
		field string
	}{
		{"unknown field", `{"lisen": "x"}`, `unknown field "lisen"`},
		{"bad duration", `{"server": {"read_timeout": "soon"}}`, "read_timeout"},
		{"negative grace", `{"server": {"shutdown_grace": "-1s"}}`, "server.shutdown_grace"},
		{"bad listen", `{"listen": "8080"}`, "listen"},
		{"bad admin listen", `{"admin_listen": "nowhere"}`, "admin_listen"},
		{"admin beyond loopback without token", `{"admin_listen": "0.0.0.0:9091"}`, "admin_token"},
		{"short admin token", `{"admin_token": "short"}`, "admin_token"},
		{"admin token ending in a space", `{"admin_token": "a-token-of-20-chars "}`, "admin_token"},
		{"admin token with a tab inside", `{"admin_token": "a-token-of\t20-chars"}`, "admin_token"},
		{"fail mode", `{"rate_limit": {"fail_mode": "sometimes"}}`, "rate_limit.fail_mode"},
		{"zero rate", `{"rate_limit": {"plans": {"gold": {"rate": 0, "burst": 5}}}}`, "rate_limit.plans.gold"},
		{"default burst", `{"rate_limit": {"default": {"rate": 5, "burst": 0}}}`, "rate_limit.default"},
		{"unknown route", `{"cache": {"routes": {"everything": {"ttl": "1s"}}}}`, "cache.routes.everything"},
		{"negative ttl", `{"cache": {"routes": {"content_hub": {"ttl": "-1s"}}}}`, "cache.routes.content_hub"},
		{"unknown content type", `{"cache": {"content_types": {"memes": {"ttl": "1s"}}}}`, "cache.content_types.memes"},
		{"negative not found ttl", `{"cache": {"routes": {"inventory_details": {"not_found_ttl": "-1s"}}}}`, "cache.routes.inventory_details.not_found_ttl"},
		{"not found ttl of a listing", `{"cache": {"routes": {"inventory_listing": {"not_found_ttl": "5s"}}}}`, "cache.routes.inventory_listing.not_found_ttl"},
		{"not found ttl of a content type", `{"cache": {"content_types": {"news": {"ttl": "1m", "not_found_ttl": "5s"}}}}`, "cache.content_types.news.not_found_ttl"},
		{"unknown service timeout", `{"upstream": {"timeouts": {"billing": "1s"}}}`, "upstream.timeouts.billing"},
		{"sample", `{"log": {"access_sample": 2}}`, "log.access_sample"},
		{"max lines", `{"log": {"max_lines_per_sec": -1}}`, "log.max_lines_per_sec"},
		{"zero client-sampled bound", `{"tracing": {"client_sampled_per_second": 0}}`, "tracing.client_sampled_per_second"},
		{"negative client-sampled bound other than -1", `{"tracing": {"client_sampled_per_second": -2}}`, "tracing.client_sampled_per_second"},
		{"level", `{"log": {"level": "loud"}}`, "log.level"},
		{"request timeout", `{"server": {"request_timeout": "0s"}}`, "server.request_timeout"},
		{"request timeout within the upstream chain", `{"server": {"request_timeout": "1600ms"}}`, "server.request_timeout"},
		{"L1 of zero bytes", `{"cache": {"l1_max_bytes": 0}}`, "cache.l1_max_bytes"},
		{"base URL without scheme", `{"upstream": {"base_url": "internal-gw:9090"}}`, "upstream.base_url"},
		{"gzip min bytes", `{"server": {"gzip_min_bytes": -1}}`, "server.gzip_min_bytes"},
		{"zero request body", `{"server": {"max_request_body": 0}}`, "server.max_request_body"},
		{"huge header bytes", `{"server": {"max_header_bytes": 1099511627776}}`, "server.max_header_bytes"},
		{"small header bytes", `{"server": {"max_header_bytes": 512}}`, "server.max_header_bytes"},
		{"watch interval too short", `{"watch_interval": "1ns"}`, "watch_interval"},
		{"relative problem base", `{"server": {"problem_base_url": "/problems"}}`, "server.problem_base_url"},
		{"auth ttl", `{"auth": {"ttl": "0s"}}`, "auth.ttl"},
		{"secret", `{"auth": {"key_hash_secret": "short"}}`, "auth.key_hash_secret"},
		{"redis timeout", `{"redis": {"timeout": "0s"}}`, "redis.timeout"},
		{"negative breaker open for", `{"upstream": {"breaker_open_for": "-1s"}}`, "upstream.breaker_open_for"},
		{"breaker open for beyond the alert window", `{"upstream": {"breaker_open_for": "5m1s"}}`, "upstream.breaker_open_for"},
		{"negative lock ttl", `{"cache": {"lock_ttl": "-1s"}}`, "cache.lock_ttl"},
		{"zero lock ttl", `{"cache": {"lock_ttl": "0s"}}`, "cache.lock_ttl"},
		{"negative lock wait", `{"cache": {"lock_wait": "-1ms"}}`, "cache.lock_wait"},
		{"gzip level too high", `{"cache": {"gzip_level": 10}}`, "cache.gzip_level"},
		{"negative gzip level", `{"cache": {"gzip_level": -1}}`, "cache.gzip_level"},
		{"zero max refreshes", `{"cache": {"max_refreshes": 0}}`, "cache.max_refreshes"},
		{"negative max refreshes", `{"cache": {"max_refreshes": -1}}`, "cache.max_refreshes"},
		{"negative redis dealer budget", `{"cache": {"redis_dealer_budget_bytes": -1}}`, "cache.redis_dealer_budget_bytes"},
		{"sentinel password without master name", `{"redis": {"sentinel_password": "s3cret"}}`, "redis.sentinel_password"},
		{"sentinel username without master name", `{"redis": {"sentinel_username": "edge", "sentinel_password": "s3cret"}}`, "redis.sentinel_username"},
		{"sentinel username without password", `{"redis": {"master_name": "mymaster", "sentinel_username": "edge"}}`, "redis.sentinel_username"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "edge.json")
			if err := os.WriteFile(p, []byte(c.json), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(p)
			if err == nil || !strings.Contains(err.Error(), c.field) {
				t.Errorf("error %v does not name %s", err, c.field)
			}
		})
	}
}

// TestLockFieldsNamedSeparately: a bad cache.lock_ttl or cache.lock_wait
// is reported under its own name, never the other's.
func TestLockFieldsNamedSeparately(t *testing.T) {
	cases := []struct {
		name      string
		ttl, wait time.Duration
		want      []string
	}{
		{"ttl only", -time.Second, 250 * time.Millisecond, []string{"cache.lock_ttl"}},
		{"wait only", 2 * time.Second, -time.Millisecond, []string{"cache.lock_wait"}},
		{"both", 0, -time.Millisecond, []string{"cache.lock_ttl", "cache.lock_wait"}},
		{"wait zero disables the lock", 2 * time.Second, 0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := Default()
			cfg.Cache.LockTTL, cfg.Cache.LockWait = Duration(c.ttl), Duration(c.wait)
			err := cfg.Validate()
			if c.want == nil {
				if err != nil {
					t.Fatalf("validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("validate accepted lock_ttl %v, lock_wait %v", c.ttl, c.wait)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(c.want) {
				t.Fatalf("errors %q, want one for each of %v", lines, c.want)
			}
			for i, w := range c.want {
				if !strings.HasPrefix(lines[i], w+": ") {
					t.Errorf("error %q does not start with %s", lines[i], w)
				}
			}
		})
	}
}

// TestSentinelFields: the Sentinel credentials are accepted in Sentinel
// mode (a user name with its password, or a password alone) and take
// effect only at restart.
func TestSentinelFields(t *testing.T) {
	cfg := Default()
	cfg.Redis.Addrs = []string{"10.0.0.1:26379", "10.0.0.2:26379"}
	cfg.Redis.MasterName = "mymaster"
	cfg.Redis.SentinelUsername = "edge"
	cfg.Redis.SentinelPassword = "sentinel-secret"
	if err := cfg.Validate(); err != nil {
		t.Fatalf("validate: %v", err)
	}
	cfg.Redis.SentinelUsername = "" // requirepass on the Sentinels: password alone
	if err := cfg.Validate(); err != nil {
		t.Fatalf("validate, password only: %v", err)
	}
	got := strings.Join(RestartOnly(ChangedFields(Default().Flatten(), cfg.Flatten())), ",")
	if want := "redis.addrs,redis.master_name,redis.sentinel_password"; got != want {
		t.Errorf("restart-only fields %q, want %q", got, want)
	}
}

func TestAdminTokenRules(t *testing.T) {
	cases := []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:9091", "", true},
		{"[::1]:9091", "", true},
		{"localhost:9091", "", true},
		{"off", "", true},
		{"0.0.0.0:9091", "", false},
		{":9091", "", false},
		{"10.1.2.3:9091", "", false},
		{"0.0.0.0:9091", "a-long-enough-admin-token", true},
	}
	for _, c := range cases {
		t.Run(c.addr, func(t *testing.T) {
			cfg := Default()
			cfg.AdminListen, cfg.AdminToken = c.addr, c.token
			if err := cfg.Validate(); (err == nil) != c.ok {
				t.Errorf("validate: %v, want ok=%v", err, c.ok)
			}
		})
	}
}

func TestRestartOnlyFields(t *testing.T) {
	cases := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"nothing", func(*Config) {}, ""},
		{"ttl is live", func(c *Config) { c.Cache.Routes["content_hub"] = Policy{TTL: 1} }, ""},
		{"not found ttl is live", func(c *Config) {
			p := c.Cache.Routes["inventory_details"]
			p.NotFoundTTL = Duration(3 * time.Second)
			c.Cache.Routes["inventory_details"] = p
		}, ""},
		{"plan is live", func(c *Config) { c.RateLimit.Plans["gold"] = Limit{Rate: 1, Burst: 1} }, ""},
		{"log is live", func(c *Config) { c.Log.AccessSample = 0.5 }, ""},
		{"compression is live", func(c *Config) { c.Server.GzipMinBytes = 0 }, ""},
		{"refresh bound is live", func(c *Config) { c.Cache.MaxRefreshes = 16 }, ""},
		{"gzip level needs a restart", func(c *Config) { c.Cache.GzipLevel = 1 }, "cache.gzip_level"},
		{"write buffer needs a restart", func(c *Config) { c.Server.WriteBuffer = 8192 }, "server.write_buffer_bytes"},
		{"listen needs a restart", func(c *Config) { c.Listen = "127.0.0.1:1" }, "listen"},
		{"redis needs a restart", func(c *Config) { c.Redis.Addrs = []string{"a:1"}; c.Redis.Password = "x" }, "redis.addrs,redis.password"},
		{"breaker needs a restart", func(c *Config) { c.Upstream.BreakerFailures = 9 }, "upstream.breaker_failures"},
		// README "Tracing": nothing in the section reloads.
		{"sampling needs a restart", func(c *Config) { c.Tracing.SamplerArg = 0.5; c.Tracing.ClientSampledPerSecond = 1 },
			"tracing.client_sampled_per_second,tracing.sampler_arg"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, b := Default(), Default()
			c.change(b)
			if got := strings.Join(RestartOnly(ChangedFields(a.Flatten(), b.Flatten())), ","); got != c.want {
				t.Errorf("restart-only fields %q, want %q", got, c.want)
			}
		})
	}
}

// TestGzipMinBytesReachesSettings: server.gzip_min_bytes defaults to the
// aggregator's default and a config value (0: off) reaches the settings.
func TestGzipMinBytesReachesSettings(t *testing.T) {
	if got, want := Default().Settings().GzipMinBytes, aggregator.DefaultSettings().GzipMinBytes; got != want || got != 1024 {
		t.Errorf("default gzip_min_bytes %d, aggregator default %d", got, want)
	}
	p := filepath.Join(t.TempDir(), "edge.json")
	if err := os.WriteFile(p, []byte(`{"server": {"gzip_min_bytes": 0}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Settings().GzipMinBytes; got != 0 {
		t.Errorf("gzip_min_bytes 0 in the file gave %d", got)
	}
}

// TestWriteBufferBytes: 0 chooses the write buffer by server.reduce_memory
// (a server's buffer lent per response, or one kept per connection); a
// size set is used as set; sizes out of range are refused.
func TestWriteBufferBytes(t *testing.T) {
	tests := []struct {
		name   string
		set    int
		reduce bool
		want   int
		bad    bool
	}{
		{"auto, reduce_memory", 0, true, 64 << 10, false},
		{"auto, buffers per connection", 0, false, 16 << 10, false},
		{"set", 8192, true, 8192, false},
		{"set, buffers per connection", 32 << 10, false, 32 << 10, false},
		{"too small", 100, true, 0, true},
		{"too large", 2 << 20, true, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			c.Server.WriteBuffer, c.Server.ReduceMemory = tt.set, tt.reduce
			err := c.Validate()
			if tt.bad {
				if err == nil || !strings.Contains(err.Error(), "server.write_buffer_bytes") {
					t.Fatalf("Validate() = %v, want a server.write_buffer_bytes error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.WriteBufferBytes(); got != tt.want {
				t.Errorf("WriteBufferBytes() = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestBreakerOpenForUpToTheAlertWindow: upstream.breaker_open_for is
// accepted up to ops.BreakerQuietAfter (5m), the window in which /readyz,
// the status page and EdgeUpstreamBreakerOpen see an opening.
func TestBreakerOpenForUpToTheAlertWindow(t *testing.T) {
	for _, v := range []string{"0s", "5s", "1m", "5m"} {
		t.Run(v, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "edge.json")
			if err := os.WriteFile(p, []byte(`{"upstream": {"breaker_open_for": "`+v+`"}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(p); err != nil {
				t.Errorf("breaker_open_for %s: %v", v, err)
			}
		})
	}
}

// TestNotFoundTTL: cache.routes.inventory_details.not_found_ttl defaults
// to aggregator.DefaultNotFoundTTL, merges field by field with the route's
// other fields, reaches the settings (0s: off) and is valid there.
func TestNotFoundTTL(t *testing.T) {
	for _, c := range []struct {
		name, json string
		want       time.Duration
	}{
		{"default", `{}`, aggregator.DefaultNotFoundTTL},
		{"route ttl set alone keeps the default", `{"cache": {"routes": {"inventory_details": {"ttl": "2m"}}}}`, aggregator.DefaultNotFoundTTL},
		{"set", `{"cache": {"routes": {"inventory_details": {"not_found_ttl": "3s"}}}}`, 3 * time.Second},
		{"off", `{"cache": {"routes": {"inventory_details": {"not_found_ttl": "0s"}}}}`, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "edge.json")
			if err := os.WriteFile(p, []byte(c.json), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := Load(p)
			if err != nil {
				t.Fatal(err)
			}
			st := cfg.Settings()
			if got := st.NotFoundTTL[aggregator.RouteInventoryDetails]; got != c.want {
				t.Errorf("not_found_ttl %v, want %v", got, c.want)
			}
			if err := st.Validate(); err != nil {
				t.Error(err)
			}
		})
	}
}
