package configs

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// installedOnReload is what a reload installs of c (cmd/dealer-edge's
// app.reload): the aggregator's settings, the log options, and the cache's
// refresh bound and per-dealer Redis budget (server.gzip_min_bytes, also
// set on the cache, is in the settings).
func installedOnReload(c *Config) any {
	return []any{c.Settings(), c.LogOptions(), c.Cache.MaxRefreshes, c.Cache.RedisDealerBudget}
}

// TestReloadInstallsExactlyTheReloadableFields changes each field of the
// config alone and checks that what a reload installs changes exactly for
// the fields marked reloadable (RestartOnly, the R column of
// configs/README.md): a reloadable field that reached none of it would be
// documented live and ignored, and a restart-only field that reached it
// would be half-applied by a reload (installed while the process logs it
// as needing a restart, and beside parts still running on the old value).
func TestReloadInstallsExactlyTheReloadableFields(t *testing.T) {
	// Values a field's mapping takes (a log level it parses, a header it
	// knows); other strings get an "x" appended.
	special := map[string]any{
		"log.level":               "debug",
		"server.forwarded_header": "forwarded",
		"server.trusted_proxies":  []any{"10.0.0.1"},
		"cache.content_types":     map[string]any{"faq": map[string]any{"ttl": "1s"}},
	}
	base := Default()
	before := installedOnReload(base)
	paths := 0
	for p, js := range base.Flatten() {
		var doc map[string]any
		b, _ := json.Marshal(base)
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		keys := strings.Split(p, ".")
		parent := doc
		for _, k := range keys[:len(keys)-1] {
			parent = parent[k].(map[string]any)
		}
		leaf := keys[len(keys)-1]
		var v any
		_ = json.Unmarshal([]byte(js), &v)
		if s, ok := special[p]; ok {
			v = s
		} else {
			switch x := v.(type) {
			case bool:
				v = !x
			case float64:
				v = x + 1
			case string:
				if d, err := time.ParseDuration(x); err == nil {
					v = (d + time.Second).String()
				} else if tm, err := time.Parse(time.RFC3339, x); err == nil {
					v = tm.Add(time.Hour).Format(time.RFC3339)
				} else {
					v = x + "x"
				}
			case []any:
				v = append(x, "10.0.0.1:6379")
			case map[string]any:
				v = map[string]any{"a": "b"}
			}
		}
		parent[leaf] = v
		b, _ = json.Marshal(doc)
		c := &Config{}
		if err := json.Unmarshal(b, c); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		paths++
		live := len(RestartOnly([]string{p})) == 0
		changed := !reflect.DeepEqual(before, installedOnReload(c))
		switch {
		case live && !changed:
			t.Errorf("%s is reloadable, but a change of it reaches nothing a reload installs", p)
		case !live && changed:
			t.Errorf("%s is restart-only, but a reload installs a change of it", p)
		}
	}
	if paths < 80 {
		t.Fatalf("only %d fields tried", paths)
	}
}
