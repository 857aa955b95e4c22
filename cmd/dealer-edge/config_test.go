package main

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestExampleConfigIsTheDefaults(t *testing.T) {
	got, err := loadConfig(filepath.Join("..", "..", "configs", "example.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := defaultConfig()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("configs/example.json differs from defaultConfig() in: %s", strings.Join(changedFields(want.flatten(), got.flatten()), ", "))
	}
}

func TestDemoConfigLoads(t *testing.T) {
	c, err := loadConfig(filepath.Join("..", "..", "configs", "demo.json"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Cache.Routes["inventory_listing"].TTL.D() >= defaultConfig().Cache.Routes["inventory_listing"].TTL.D() {
		t.Error("demo.json should shorten the inventory TTL")
	}
	if len(c.Cache.Routes) != len(defaultConfig().Cache.Routes) {
		t.Error("routes not merged over the defaults")
	}
}

// TestConfigReadmeDocumentsEveryField checks that configs/README.md names
// every field of Config (map keys written as <name>).
func TestConfigReadmeDocumentsEveryField(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "configs", "README.md"))
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
		{"fail mode", `{"rate_limit": {"fail_mode": "sometimes"}}`, "rate_limit.fail_mode"},
		{"zero rate", `{"rate_limit": {"plans": {"gold": {"rate": 0, "burst": 5}}}}`, "rate_limit.plans.gold"},
		{"default burst", `{"rate_limit": {"default": {"rate": 5, "burst": 0}}}`, "rate_limit.default"},
		{"unknown route", `{"cache": {"routes": {"everything": {"ttl": "1s"}}}}`, "cache.routes.everything"},
		{"negative ttl", `{"cache": {"routes": {"content_hub": {"ttl": "-1s"}}}}`, "cache.routes.content_hub"},
		{"unknown content type", `{"cache": {"content_types": {"memes": {"ttl": "1s"}}}}`, "cache.content_types.memes"},
		{"unknown service timeout", `{"upstream": {"timeouts": {"billing": "1s"}}}`, "upstream.timeouts.billing"},
		{"sample", `{"log": {"access_sample": 2}}`, "log.access_sample"},
		{"max lines", `{"log": {"max_lines_per_sec": -1}}`, "log.max_lines_per_sec"},
		{"level", `{"log": {"level": "loud"}}`, "log.level"},
		{"request timeout", `{"server": {"request_timeout": "0s"}}`, "server.request_timeout"},
		{"auth ttl", `{"auth": {"ttl": "0s"}}`, "auth.ttl"},
		{"secret", `{"auth": {"key_hash_secret": "short"}}`, "auth.key_hash_secret"},
		{"redis timeout", `{"redis": {"timeout": "0s"}}`, "redis.timeout"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "edge.json")
			if err := os.WriteFile(p, []byte(c.json), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := loadConfig(p)
			if err == nil || !strings.Contains(err.Error(), c.field) {
				t.Errorf("error %v does not name %s", err, c.field)
			}
		})
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
			cfg := defaultConfig()
			cfg.AdminListen, cfg.AdminToken = c.addr, c.token
			if err := cfg.validate(); (err == nil) != c.ok {
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
		{"plan is live", func(c *Config) { c.RateLimit.Plans["gold"] = Limit{Rate: 1, Burst: 1} }, ""},
		{"log is live", func(c *Config) { c.Log.AccessSample = 0.5 }, ""},
		{"listen needs a restart", func(c *Config) { c.Listen = "127.0.0.1:1" }, "listen"},
		{"redis needs a restart", func(c *Config) { c.Redis.Addrs = []string{"a:1"}; c.Redis.Password = "x" }, "redis.addrs,redis.password"},
		{"breaker needs a restart", func(c *Config) { c.Upstream.BreakerFailures = 9 }, "upstream.breaker_failures"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, b := defaultConfig(), defaultConfig()
			c.change(b)
			if got := strings.Join(restartOnly(changedFields(a.flatten(), b.flatten())), ","); got != c.want {
				t.Errorf("restart-only fields %q, want %q", got, c.want)
			}
		})
	}
}
