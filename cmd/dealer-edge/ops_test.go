package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/dealer-edge/dealer-edge/contracttests/procs"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// syncBuffer collects a writer's output for concurrent readers.
type syncBuffer = procs.Buffer

// edge is an in-process dealer-edge started by run.
type edge struct {
	t       *testing.T
	app     *app
	base    string // http://public
	admin   string // http://admin
	signals chan os.Signal
	exit    chan int
	stderr  *syncBuffer
}

// startEdge runs the edge in-process on free loopback ports; the test's
// cleanup stops it and checks that it exits 0.
func startEdge(t *testing.T, args ...string) *edge {
	t.Helper()
	return startEdgeHooks(t, &hooks{}, args...)
}

// startEdgeHooks is startEdge with h's other hooks (its ready and signals
// are the test's).
func startEdgeHooks(t *testing.T, h *hooks, args ...string) *edge {
	t.Helper()
	e := launchEdge(t, h, args...)
	t.Cleanup(func() {
		e.signals <- syscall.SIGTERM
		select {
		case code := <-e.exit:
			if code != 0 {
				t.Errorf("edge exited with %d", code)
			}
		case <-time.After(10 * time.Second):
			t.Error("edge did not stop")
		}
	})
	return e
}

// launchEdge runs the edge in-process on free loopback ports with h's
// other hooks and waits until it is ready; stopping it (e.signals) and
// reading its exit code (e.exit) are the caller's.
func launchEdge(t *testing.T, h *hooks, args ...string) *edge {
	t.Helper()
	e := &edge{t: t, signals: make(chan os.Signal, 4), exit: make(chan int, 1), stderr: &syncBuffer{}}
	ready := make(chan *app, 1)
	h.ready, h.signals = ready, e.signals
	args = append([]string{"--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"}, args...)
	go func() { e.exit <- run(args, io.Discard, e.stderr, h) }()
	select {
	case e.app = <-ready:
	case code := <-e.exit:
		t.Fatalf("edge exited with %d:\n%s", code, e.stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatal("edge did not start")
	}
	e.base, e.admin = "http://"+e.app.addr, "http://"+e.app.adminAddr
	return e
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (e *edge) do(method, url string, hdr ...string) reply {
	e.t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("%s %s: read body: %v", method, url, err)
	}
	return reply{resp.StatusCode, resp.Header, b}
}

func (e *edge) get(path, key string, hdr ...string) reply {
	e.t.Helper()
	return e.do("GET", e.base+path, append([]string{"X-Api-Key", key}, hdr...)...)
}

// scrape returns the /metrics series as name{labels} -> value.
func (e *edge) scrape() map[string]float64 {
	e.t.Helper()
	r := e.do("GET", e.admin+"/metrics")
	if r.status != 200 {
		e.t.Fatalf("/metrics: %d", r.status)
	}
	out := map[string]float64{}
	for _, ln := range strings.Split(string(r.body), "\n") {
		if ln == "" || ln[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(ln, ' ')
		v, err := strconv.ParseFloat(ln[i+1:], 64)
		if err != nil {
			e.t.Fatalf("bad exposition line %q", ln)
		}
		out[ln[:i]] = v
	}
	return out
}

func (e *edge) readyz() (int, map[string]any) {
	e.t.Helper()
	r := e.do("GET", e.admin+"/readyz")
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		e.t.Fatalf("/readyz body %q", r.body)
	}
	return r.status, m
}

func TestMetricsMoveAfterRequests(t *testing.T) {
	e := startEdge(t, "--demo")
	before := e.scrape()
	for _, c := range []struct{ path, key string }{
		{"/dealer/REWIND/listing?page_size=2", "demo-key-alpha"},
		{"/dealer/REWIND/listing?page_size=2", "demo-key-alpha"},
		{"/dealer/content/hub?page_size=3", "demo-key-alpha"},
		{"/dealer/REWIND/listing", "no-such-key"},
		{"/dealer/nowhere", "demo-key-alpha"},
	} {
		e.get(c.path, c.key)
	}
	after := e.scrape()
	moved := []string{
		`edge_requests_total{route="inventory_listing",status="200",cache="miss"}`,
		`edge_requests_total{route="inventory_listing",status="200",cache="hit"}`,
		`edge_requests_total{route="content_hub",`, // 200 MISS, or BYPASS when a slow section made it partial
		`edge_requests_total{route="inventory_listing",status="401",cache="none"}`,
		`edge_requests_total{route="not_found",status="404",cache="none"}`,
		`edge_request_duration_seconds_count{route="inventory_listing"}`,
		`edge_request_duration_seconds_bucket{route="inventory_listing",le="+Inf"}`,
		`edge_upstream_requests_total{service="dealers",outcome="ok"}`,
		`edge_upstream_requests_total{service="inventory",outcome="ok"}`,
		`edge_upstream_requests_total{service="content",`,
		`edge_upstream_request_duration_seconds_count{service="inventory"}`,
		`edge_cache_hits_total`,
		`edge_cache_misses_total`,
		`edge_cache_fills_total`,
		`edge_cache_l1_bytes`,
		`edge_cache_l1_entries`,
		`edge_ratelimit_admitted_total`,
	}
	for _, s := range moved {
		if b, a := sumSeries(before, s), sumSeries(after, s); a <= b {
			t.Errorf("%s did not move: %v -> %v", s, b, a)
		}
	}
	present := []string{
		`edge_upstream_breaker_state{service="inventory"}`,
		`edge_cache_stale_served_total`,
		`edge_cache_l1_evictions_total`,
		`edge_cache_refreshes_skipped_total`,
		`edge_cache_refreshes_in_flight`,
		`edge_cache_refreshes_max`,
		`edge_ratelimit_rejected_total`,
		`edge_ratelimit_fallback_activations_total`,
		`edge_ratelimit_fallback_active`,
		`edge_redis_errors_total{component="cache"}`,
		`edge_redis_errors_total{component="ratelimit"}`,
		`edge_redis_errors_total{component="ratelimit_address"}`,
		`edge_log_lines_dropped_total`,
		`edge_config_reloads_total{result="ok"}`,
		`go_goroutines`,
	}
	for _, s := range present {
		if _, ok := after[s]; !ok {
			t.Errorf("%s missing", s)
		}
	}
	if after["edge_redis_up"] != 1 {
		t.Errorf("edge_redis_up = %v", after["edge_redis_up"])
	}
	for s := range after {
		if strings.Contains(s, "101") || strings.Contains(s, "demo-key") || strings.Contains(s, "dealer_id") {
			t.Errorf("series %s carries a dealer or key", s)
		}
	}

	// Access lines: JSON, with the request's fields, never the key.
	logs := e.stderr.String()
	if strings.Contains(logs, "demo-key-alpha") || strings.Contains(logs, fake.HashKey("demo-key-alpha")) {
		t.Error("an API key or its hash reached the log")
	}
	var access int
	for _, ln := range strings.Split(strings.TrimSpace(logs), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(ln), &m); err != nil {
			t.Fatalf("log line not JSON: %q", ln)
		}
		if m["msg"] == "access" {
			access++
			for _, f := range []string{"request_id", "route", "status", "duration_ms", "method"} {
				if _, ok := m[f]; !ok {
					t.Errorf("access line without %s: %s", f, ln)
				}
			}
			if m["route"] == "inventory_listing" && m["status"] == 200.0 && m["dealer_id"] != 101.0 {
				t.Errorf("access line without dealer_id: %s", ln)
			}
		}
	}
	if access != 5 {
		t.Errorf("%d access lines, want 5", access)
	}
}

// sumSeries sums the series named name, or, when name ends in ",", the
// series it is a prefix of.
func sumSeries(m map[string]float64, name string) float64 {
	if !strings.HasSuffix(name, ",") {
		return m[name]
	}
	var sum float64
	for k, v := range m {
		if strings.HasPrefix(k, name) {
			sum += v
		}
	}
	return sum
}

// writeConfig writes a config file over the defaults.
func writeConfig(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

var maxAgeRE = regexp.MustCompile(`max-age=(\d+)`)

func maxAge(t *testing.T, r reply) int {
	t.Helper()
	m := maxAgeRE.FindStringSubmatch(r.header.Get("Cache-Control"))
	if r.status != 200 || m == nil {
		t.Fatalf("status %d, Cache-Control %q: %s", r.status, r.header.Get("Cache-Control"), r.body)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// burstOf returns q from RateLimit-Policy: "<plan>";q=<burst>;w=<window>.
func burstOf(t *testing.T, r reply) int {
	t.Helper()
	m := regexp.MustCompile(`;q=(\d+)`).FindStringSubmatch(r.header.Get("RateLimit-Policy"))
	if m == nil {
		t.Fatalf("RateLimit-Policy %q", r.header.Get("RateLimit-Policy"))
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

const reloadBase = `{"watch_interval": "0s", "cache": {"routes": {"inventory_listing": {"ttl": "%s"}}}, "rate_limit": {"plans": {"limited": {"rate": %d, "burst": %d}}}}`

func TestReloadChangesTTLAndLimit(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "edge.json")
	writeConfig(t, cfg, fmt.Sprintf(reloadBase, "300s", 10, 10))
	e := startEdge(t, "--demo", "--config", cfg)

	r := e.get("/dealer/NOS/listing?page_size=1", "demo-key-limited")
	if a := maxAge(t, r); a < 290 || a > 300 {
		t.Fatalf("max-age %d before reload, want about 300", a)
	}
	if b := burstOf(t, r); b != 10 {
		t.Fatalf("burst %d before reload, want 10", b)
	}

	// The admin endpoint installs a new TTL and limit.
	writeConfig(t, cfg, fmt.Sprintf(reloadBase, "7s", 1, 3))
	if rr := e.do("POST", e.admin+"/admin/reload"); rr.status != 200 {
		t.Fatalf("reload: %d %s", rr.status, rr.body)
	}
	r = e.get("/dealer/NOS/listing?page_size=2", "demo-key-limited")
	if a := maxAge(t, r); a > 7 || a < 5 {
		t.Errorf("max-age %d after reload, want about 7", a)
	}
	if b := burstOf(t, r); b != 3 {
		t.Errorf("burst %d after reload, want 3", b)
	}
	// The policy in force is what the dashboard and the status page show.
	if v := e.scrape()[`edge_cache_policy_ttl_seconds{route="inventory_listing"}`]; v != 7 {
		t.Errorf("edge_cache_policy_ttl_seconds{route=\"inventory_listing\"} = %v after reload, want 7", v)
	}
	var st struct {
		Routes []struct {
			Route  string
			Policy *struct {
				TTL float64 `json:"ttl_seconds"`
			}
		}
		Reload struct{ Result string }
	}
	if rr := e.do("GET", e.admin+"/admin/status"); rr.status != 200 || json.Unmarshal(rr.body, &st) != nil {
		t.Fatalf("/admin/status: %d %s", rr.status, rr.body)
	}
	for _, rt := range st.Routes {
		if rt.Route == "inventory_listing" && (rt.Policy == nil || rt.Policy.TTL != 7) {
			t.Errorf("/admin/status inventory_listing policy %+v after reload, want ttl 7", rt.Policy)
		}
	}
	if st.Reload.Result != "ok" {
		t.Errorf("/admin/status reload result %q, want ok", st.Reload.Result)
	}
	limited := false
	for i := range 6 {
		if r := e.get(fmt.Sprintf("/dealer/NOS/listing?page_size=%d", 3+i), "demo-key-limited"); r.status == 429 {
			limited = true
			break
		}
	}
	if !limited {
		t.Error("no 429 within 7 requests under a burst of 3 at 1/s")
	}

	// SIGHUP does the same.
	writeConfig(t, cfg, fmt.Sprintf(reloadBase, "4s", 50, 50))
	before := e.scrape()[`edge_config_reloads_total{result="ok"}`]
	e.signals <- syscall.SIGHUP
	deadline := time.Now().Add(5 * time.Second)
	for e.scrape()[`edge_config_reloads_total{result="ok"}`] == before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if a := maxAge(t, e.get("/dealer/REWIND/listing?page_size=1", "demo-key-alpha")); a > 4 {
		t.Errorf("max-age %d after SIGHUP, want at most 4", a)
	}
}

// TestReloadChangesMaxRefreshes: cache.max_refreshes reloads (README,
// "Live config reload"): the bound in force, edge_cache_refreshes_max,
// follows the file without a restart and without the restart-only
// warning, and a zero, or a bound over half of the upstream pool in force
// (TestRefreshBoundWithinUpstreamPool; before 2026-11-29 a reload took
// any), is rejected with the field named while the bound in force stays.
func TestReloadChangesMaxRefreshes(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "edge.json")
	writeConfig(t, cfg, `{"watch_interval": "0s", "cache": {"max_refreshes": 8}}`)
	e := startEdge(t, "--demo", "--config", cfg)
	if v := e.scrape()["edge_cache_refreshes_max"]; v != 8 {
		t.Fatalf("edge_cache_refreshes_max = %v at start, want 8", v)
	}
	steps := []struct {
		name, body string
		status     int
		want       float64
	}{
		{"lowered", `{"watch_interval": "0s", "cache": {"max_refreshes": 3}}`, 200, 3},
		{"zero rejected", `{"watch_interval": "0s", "cache": {"max_refreshes": 0}}`, 422, 3},
		// At most half of the upstream pool (configs.CheckRefreshBound):
		// the file's own, and on reload the one in force (read at
		// start, 256 here), whatever the file says of it.
		{"over half the pool", `{"watch_interval": "0s", "cache": {"max_refreshes": 200}}`, 422, 3},
		{"over half the pool in force", `{"watch_interval": "0s", "upstream": {"max_conns_per_host": 1000}, "cache": {"max_refreshes": 300}}`, 422, 3},
		{"half the pool in force", `{"watch_interval": "0s", "cache": {"max_refreshes": 128}}`, 200, 128},
		{"lowered again", `{"watch_interval": "0s", "cache": {"max_refreshes": 3}}`, 200, 3},
		{"default", `{"watch_interval": "0s"}`, 200, 128},
	}
	for _, s := range steps {
		writeConfig(t, cfg, s.body)
		r := e.do("POST", e.admin+"/admin/reload")
		if r.status != s.status {
			t.Fatalf("%s: reload %d %s, want %d", s.name, r.status, r.body, s.status)
		}
		if s.status != 200 && !strings.Contains(string(r.body), "cache.max_refreshes") {
			t.Errorf("%s: the rejection %s does not name cache.max_refreshes", s.name, r.body)
		}
		if v := e.scrape()["edge_cache_refreshes_max"]; v != s.want {
			t.Errorf("%s: edge_cache_refreshes_max = %v, want %v", s.name, v, s.want)
		}
	}
	if strings.Contains(e.stderr.String(), "take effect only at restart") {
		t.Errorf("a reload of cache.max_refreshes warned of a restart-only field:\n%s", e.stderr.String())
	}
}

// TestReloadChangesRedisDealerBudget: cache.redis_dealer_budget_bytes
// reaches the cache at start and on reload (README, "Per-dealer Redis
// budget"): with a budget of one byte every new entry is kept out of Redis
// and counted in edge_cache_redis_budget_skips_total while every request
// is answered; after a reload to 0 (no budget) new entries are written
// again and the counter stays; a negative budget is rejected with the
// field named.
func TestReloadChangesRedisDealerBudget(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "edge.json")
	// A generous redis.timeout in every version of the file (a change of
	// it would be a restart-only field): the skips are counted on the way
	// to Redis, and at the default 50 ms a busy box stalled the in-process
	// Redis past the budget now and then, which marked Redis down, so the
	// entries that followed were never offered to it (1 skip, not 3).
	writeConfig(t, cfg, `{"watch_interval": "0s", "redis": {"timeout": "2s"}, "cache": {"redis_dealer_budget_bytes": 1}}`)
	e := startEdge(t, "--demo", "--config", cfg)
	get := func(pages ...int) {
		t.Helper()
		for _, p := range pages {
			if r := e.get(fmt.Sprintf("/dealer/REWIND/listing?page_size=%d", p), "demo-key-alpha"); r.status != 200 {
				t.Fatalf("page_size=%d: %d %s", p, r.status, r.body)
			}
		}
	}
	get(1, 2, 3)
	skips := e.scrape()["edge_cache_redis_budget_skips_total"]
	if skips < 3 {
		t.Fatalf("edge_cache_redis_budget_skips_total = %v after 3 new entries over a 1-byte budget, want at least 3", skips)
	}
	writeConfig(t, cfg, `{"watch_interval": "0s", "redis": {"timeout": "2s"}, "cache": {"redis_dealer_budget_bytes": -1}}`)
	if r := e.do("POST", e.admin+"/admin/reload"); r.status != 422 || !strings.Contains(string(r.body), "cache.redis_dealer_budget_bytes") {
		t.Fatalf("a negative budget: reload %d %s, want 422 naming the field", r.status, r.body)
	}
	writeConfig(t, cfg, `{"watch_interval": "0s", "redis": {"timeout": "2s"}, "cache": {"redis_dealer_budget_bytes": 0}}`)
	if r := e.do("POST", e.admin+"/admin/reload"); r.status != 200 {
		t.Fatalf("reload: %d %s", r.status, r.body)
	}
	get(4, 5, 6)
	if v := e.scrape()["edge_cache_redis_budget_skips_total"]; v != skips {
		t.Fatalf("edge_cache_redis_budget_skips_total = %v after a reload to no budget, want %v", v, skips)
	}
	if strings.Contains(e.stderr.String(), "take effect only at restart") {
		t.Errorf("a reload of cache.redis_dealer_budget_bytes warned of a restart-only field:\n%s", e.stderr.String())
	}
}

func TestInvalidReloadKeepsConfig(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "edge.json")
	good := fmt.Sprintf(reloadBase, "120s", 10, 10)
	writeConfig(t, cfg, good)
	e := startEdge(t, "--demo", "--config", cfg)
	cases := []struct {
		name, body, detail string
	}{
		{"bad JSON", `{"cache": `, "unexpected EOF"},
		{"unknown field", `{"cache": {"ttl": "1s"}}`, `unknown field "ttl"`},
		{"bad fail mode", `{"rate_limit": {"fail_mode": "sometimes"}}`, "rate_limit.fail_mode"},
		{"negative TTL", `{"cache": {"routes": {"inventory_listing": {"ttl": "-5s"}}}}`, "cache.routes.inventory_listing"},
		{"zero burst", fmt.Sprintf(reloadBase, "5s", 1, 0), "rate_limit.plans.limited"},
		{"missing file", "", "no such file"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.body == "" {
				_ = os.Remove(cfg)
			} else {
				writeConfig(t, cfg, c.body)
			}
			r := e.do("POST", e.admin+"/admin/reload")
			var p map[string]any
			_ = json.Unmarshal(r.body, &p)
			if r.status != 422 || r.header.Get("Content-Type") != "application/problem+json" {
				t.Fatalf("reload: %d %q %s", r.status, r.header.Get("Content-Type"), r.body)
			}
			if d, _ := p["detail"].(string); !strings.Contains(d, c.detail) {
				t.Errorf("detail %q does not say %q", p["detail"], c.detail)
			}
			// The old config stays in force.
			rr := e.get(fmt.Sprintf("/dealer/NOS/listing?page_size=%d", i+1), "demo-key-limited")
			if a := maxAge(t, rr); a < 110 {
				t.Errorf("max-age %d: the rejected config took effect", a)
			}
			if b := burstOf(t, rr); b != 10 {
				t.Errorf("burst %d: the rejected config took effect", b)
			}
		})
	}
	if n := e.scrape()[`edge_config_reloads_total{result="error"}`]; n != float64(len(cases)) {
		t.Errorf("edge_config_reloads_total{result=\"error\"} = %v, want %d", n, len(cases))
	}
	// EdgeConfigReloadFailed fires on this until a good reload.
	if v := e.scrape()["edge_config_last_reload_successful"]; v != 0 {
		t.Errorf("edge_config_last_reload_successful = %v after a rejected reload, want 0", v)
	}
	if !strings.Contains(e.stderr.String(), "config reload rejected") {
		t.Error("the rejection was not logged")
	}
}

func TestReadinessReflectsRedisAndBreakers(t *testing.T) {
	mr := miniredis.NewMiniRedis()
	if err := mr.StartAddr("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer mr.Close()
	fk := fake.NewServer(fake.Options{})
	addr, err := fk.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer fk.Close()
	e := startEdge(t, "--redis", mr.Addr(), "--upstream", "http://"+addr)

	status, body := e.readyz()
	if status != 200 || body["status"] != "ready" || body["redis"] != "up" {
		t.Fatalf("readyz at start: %d %v", status, body)
	}
	if br := body["breakers"].(map[string]any); len(br) != 5 || br["inventory"] != "closed" {
		t.Fatalf("breakers at start: %v", br)
	}

	// An upstream that keeps failing opens its breaker: degraded, still ready.
	e.get("/dealer/REWIND/listing?page_size=1", "demo-key-alpha") // key now cached
	fk.SetDown("inventory", true)
	for i := range 8 {
		e.get(fmt.Sprintf("/dealer/REWIND/listing?page_size=%d", 2+i), "demo-key-alpha")
	}
	status, body = e.readyz()
	if status != 200 || body["status"] != "degraded" || body["breakers"].(map[string]any)["inventory"] != "open" {
		t.Fatalf("readyz with inventory down: %d %v", status, body)
	}
	m := e.scrape()
	if m[`edge_upstream_breaker_state{service="inventory"}`] != 2 || m[`edge_upstream_breaker_transitions_total{service="inventory",to="open"}`] != 1 {
		t.Errorf("breaker metrics: state %v, transitions %v", m[`edge_upstream_breaker_state{service="inventory"}`], m[`edge_upstream_breaker_transitions_total{service="inventory",to="open"}`])
	}
	if m[`edge_upstream_requests_total{service="inventory",outcome="error"}`] < 5 || m[`edge_upstream_requests_total{service="inventory",outcome="breaker_open"}`] < 1 {
		t.Errorf("upstream outcomes: %v", m)
	}

	// Redis going away degrades too; the edge keeps serving.
	mr.Close()
	waitRedisCheck()
	status, body = e.readyz()
	if status != 200 || body["redis"] != "down" || !strings.Contains(fmt.Sprint(body["degraded"]), "redis") {
		t.Fatalf("readyz with Redis down: %d %v", status, body)
	}
	if r := e.get("/dealer/content/hub?page_size=1", "demo-key-alpha"); r.status != 200 {
		t.Errorf("content hub with Redis down: %d", r.status)
	}
	if e.scrape()["edge_redis_up"] != 0 {
		t.Error("edge_redis_up not 0 with Redis down")
	}
}

func TestTracePropagation(t *testing.T) {
	fk := fake.NewServer(fake.Options{})
	type seen struct{ path, reqID, traceparent string }
	var mu sync.Mutex
	var calls []seen
	rec := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		mu.Lock()
		calls = append(calls, seen{string(ctx.Path()), string(ctx.Request.Header.Peek("X-Request-ID")), string(ctx.Request.Header.Peek("traceparent"))})
		mu.Unlock()
		fk.Handler()(ctx)
	}}
	ln, err := netListen()
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = rec.Serve(ln) }()
	defer func() { _ = rec.Shutdown() }()
	e := startEdge(t, "--upstream", "http://"+ln.Addr().String())

	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	cases := []struct {
		name, reqID, traceparent, wantTP string
	}{
		{"valid traceparent", "trace-test-1", tp, tp},
		{"invalid traceparent is not forwarded", "trace-test-2", "00-zz-bad", ""},
		// W3C Trace Context 3.2.4: a later version is parsed at version
		// 00's positions and passed on as version 00; 3.2.2.5: flags other
		// than sampled are set to zero (README, "Propagation"). Before
		// 2026-11-27 a later version was dropped and other flags passed on.
		{"future version forwarded as 00", "trace-test-3", "cc" + tp[2:] + "-future-field", tp},
		{"undefined flags zeroed", "trace-test-4", tp[:53] + "fd", tp},
		{"version ff is not forwarded", "trace-test-5", "ff" + tp[2:], ""},
		{"future version shorter than 55 is not forwarded", "trace-test-6", "cc" + tp[2:54], ""},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mu.Lock()
			calls = nil
			mu.Unlock()
			r := e.get(fmt.Sprintf("/dealer/NOS/listing?page_size=%d", i+1), fmt.Sprintf("bench-key-%03d", i), "X-Request-ID", c.reqID, "traceparent", c.traceparent)
			if r.status != 200 || r.header.Get("X-Request-ID") != c.reqID {
				t.Fatalf("status %d, X-Request-ID %q", r.status, r.header.Get("X-Request-ID"))
			}
			mu.Lock()
			defer mu.Unlock()
			var dealers, inventory bool
			for _, s := range calls {
				if strings.HasPrefix(s.path, "/dealers/v1/key-index") {
					continue // the key index's background sync: no request of a client
				}
				if s.reqID != c.reqID || s.traceparent != c.wantTP {
					t.Errorf("%s got X-Request-ID %q traceparent %q", s.path, s.reqID, s.traceparent)
				}
				dealers = dealers || strings.HasPrefix(s.path, "/dealers/")
				inventory = inventory || strings.HasPrefix(s.path, "/inventory/")
			}
			// The key lookup is made while the key index is still loading:
			// by the later cases it may answer the key alone.
			if !inventory || (i < 2 && !dealers) {
				t.Errorf("upstream calls %v: want the key lookup and the listing", calls)
			}
		})
	}
}

func TestAdminTokenEnforced(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "edge.json")
	const token = "test-admin-token-0123456789"
	// A generous redis.timeout: the purge below must reach the embedded
	// Redis, and under -race on a loaded machine a call can pass the 50 ms
	// default, which makes the purge a deferred one (503, "purge not taken
	// by Redis"). This test is about the token, not the budget.
	writeConfig(t, cfg, `{"admin_token": "`+token+`", "redis": {"timeout": "2s"}}`)
	e := startEdge(t, "--demo", "--config", cfg)
	if r := e.do("GET", e.admin+"/metrics"); r.status != 401 {
		t.Errorf("/metrics without token: %d", r.status)
	}
	if r := e.do("GET", e.admin+"/metrics", "Authorization", "Bearer "+token); r.status != 200 {
		t.Errorf("/metrics with token: %d", r.status)
	}
	if r := e.do("POST", e.admin+"/admin/purge?dealer_id=101", "Authorization", "Bearer "+token); r.status != 200 {
		t.Errorf("purge with token: %d %s", r.status, r.body)
	}
	if r := e.do("GET", e.admin+"/readyz"); r.status != 200 {
		t.Errorf("/readyz without token: %d", r.status)
	}

	// Beyond loopback without a token: refused at start.
	var stderr syncBuffer
	code := run([]string{"--demo", "--listen", "127.0.0.1:0", "--admin-listen", "0.0.0.0:0"}, io.Discard, &stderr, nil)
	if code != 2 || !strings.Contains(stderr.String(), "admin_token") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

func TestPurge(t *testing.T) {
	e := startEdge(t, "--demo")
	const path = "/dealer/REWIND/listing?page_size=2"
	e.get(path, "demo-key-alpha")
	if r := e.get(path, "demo-key-alpha"); r.header.Get("X-Cache") != "HIT" {
		t.Fatalf("X-Cache %q before purge", r.header.Get("X-Cache"))
	}
	if r := e.do("POST", e.admin+"/admin/purge?dealer_id=101"); r.status != 200 {
		t.Fatalf("purge: %d %s", r.status, r.body)
	}
	if r := e.get(path, "demo-key-alpha"); r.header.Get("X-Cache") != "MISS" {
		t.Errorf("X-Cache %q after purge, want MISS", r.header.Get("X-Cache"))
	}
}

// TestPurgeForgetsNotFound: a remembered "not found" of a vehicle
// (X-Cache: HIT on the 404) is dropped by POST /admin/purge of the dealer
// and of everything: the next 404 is a fill's again (no X-Cache). The
// policy gauge shows not_found_ttl in force.
func TestPurgeForgetsNotFound(t *testing.T) {
	e := startEdge(t, "--demo")
	const path = "/dealer/REWIND/details?id_auto=00000000-0000-4000-8000-000000000000"
	check := func(step, want string) {
		t.Helper()
		if r := e.get(path, "demo-key-alpha"); r.status != 404 || r.header.Get("X-Cache") != want {
			t.Fatalf("%s: %d X-Cache %q, want 404 %q", step, r.status, r.header.Get("X-Cache"), want)
		}
	}
	check("first", "")
	check("remembered", "HIT")
	for _, purge := range []string{"dealer_id=101", "all=true"} {
		if r := e.do("POST", e.admin+"/admin/purge?"+purge); r.status != 200 {
			t.Fatalf("purge %s: %d %s", purge, r.status, r.body)
		}
		check("after purge "+purge, "")
		check("remembered after purge "+purge, "HIT")
	}
	if v := e.scrape()[`edge_cache_policy_not_found_ttl_seconds{route="inventory_details"}`]; v != 10 {
		t.Errorf(`edge_cache_policy_not_found_ttl_seconds{route="inventory_details"} = %v, want 10`, v)
	}
}

// TestReloadNotFoundTTL: cache.routes.inventory_details.not_found_ttl is
// reloadable: off at start (every 404 a fill's), on after a reload (the
// second 404 remembered), and the policy gauge follows.
func TestReloadNotFoundTTL(t *testing.T) {
	const conf = `{"watch_interval": "0s", "cache": {"routes": {"inventory_details": {"not_found_ttl": "%s"}}}}`
	cfg := filepath.Join(t.TempDir(), "edge.json")
	writeConfig(t, cfg, fmt.Sprintf(conf, "0s"))
	e := startEdge(t, "--demo", "--config", cfg)
	const path = "/dealer/NOS/details?id_auto=00000000-0000-4000-8000-000000000001"
	for i, want := range []string{"", ""} {
		if r := e.get(path, "demo-key-alpha"); r.status != 404 || r.header.Get("X-Cache") != want {
			t.Fatalf("off, request %d: %d X-Cache %q", i, r.status, r.header.Get("X-Cache"))
		}
	}
	if v := e.scrape()[`edge_cache_policy_not_found_ttl_seconds{route="inventory_details"}`]; v != 0 {
		t.Errorf("gauge %v with not_found_ttl 0s, want 0", v)
	}
	writeConfig(t, cfg, fmt.Sprintf(conf, "5s"))
	if rr := e.do("POST", e.admin+"/admin/reload"); rr.status != 200 {
		t.Fatalf("reload: %d %s", rr.status, rr.body)
	}
	for i, want := range []string{"", "HIT"} {
		if r := e.get(path, "demo-key-alpha"); r.status != 404 || r.header.Get("X-Cache") != want {
			t.Fatalf("after reload, request %d: %d X-Cache %q, want %q", i, r.status, r.header.Get("X-Cache"), want)
		}
	}
	if v := e.scrape()[`edge_cache_policy_not_found_ttl_seconds{route="inventory_details"}`]; v != 5 {
		t.Errorf("gauge %v after reload, want 5", v)
	}
}

func netListen() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

// TestReloadShortensMaxAgeOfCachedEntry: an entry cached under a long TTL
// and served again after a reload that shortened the TTL advertises the
// freshness it has left under the new policy, never the old one's: a
// client must not keep for 300 s what the edge itself keeps for 7 s.
func TestReloadShortensMaxAgeOfCachedEntry(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "edge.json")
	writeConfig(t, cfg, fmt.Sprintf(reloadBase, "300s", 10, 10))
	e := startEdge(t, "--demo", "--config", cfg)
	const path = "/dealer/NOS/listing?page_size=3"
	if r := e.get(path, "demo-key-alpha"); r.header.Get("X-Cache") != "MISS" {
		t.Fatalf("first request: X-Cache %q", r.header.Get("X-Cache"))
	}
	r := e.get(path, "demo-key-alpha")
	if r.header.Get("X-Cache") != "HIT" {
		t.Fatalf("second request: X-Cache %q", r.header.Get("X-Cache"))
	}
	if a := maxAge(t, r); a < 290 || a > 300 {
		t.Fatalf("max-age %d before reload, want about 300", a)
	}

	writeConfig(t, cfg, fmt.Sprintf(reloadBase, "7s", 10, 10))
	if rr := e.do("POST", e.admin+"/admin/reload"); rr.status != 200 {
		t.Fatalf("reload: %d %s", rr.status, rr.body)
	}
	// The same URL: the entry stored under 300 s is still cached.
	r = e.get(path, "demo-key-alpha")
	switch x := r.header.Get("X-Cache"); x {
	case "HIT", "MISS": // MISS only if the entry aged past the new 7 s meanwhile
		if a := maxAge(t, r); a > 7 {
			t.Errorf("X-Cache %s after the TTL went from 300s to 7s: max-age %d, want at most 7", x, a)
		}
	default:
		t.Fatalf("after reload: X-Cache %q", x)
	}
}

// TestDeprecationFromConfig: the Deprecation, Sunset and Link headers and
// the payload fields of guides come from the deprecation section, and a
// reload changes them on the very URL that was cached under the old values.
func TestDeprecationFromConfig(t *testing.T) {
	type dep struct {
		deprecation, sunset time.Time
		successor, info     string
	}
	write := func(path string, d dep) {
		info := ""
		if d.info != "" {
			info = `, "sunset_info_url": "` + d.info + `"`
		}
		writeConfig(t, path, fmt.Sprintf(`{"deprecation": {"deprecation": %q, "sunset": %q, "successor_url": %q%s}}`,
			d.deprecation.Format(time.RFC3339), d.sunset.Format(time.RFC3339), d.successor, info))
	}
	check := func(e *edge, path string, d dep, wantCache ...string) {
		t.Helper()
		r := e.get(path, "demo-key-alpha")
		if r.status != 200 {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
		if x := r.header.Get("X-Cache"); !slices.Contains(wantCache, x) {
			t.Errorf("X-Cache %q, want one of %v", x, wantCache)
		}
		wantDep := "@" + strconv.FormatInt(d.deprecation.Unix(), 10)
		wantSunset := d.sunset.UTC().Format(http.TimeFormat)
		info := d.info
		if info == "" {
			info = d.successor
		}
		wantLink := "<" + d.successor + `>; rel="successor-version", <` + info + `>; rel="sunset"`
		if got := r.header.Get("Deprecation"); got != wantDep {
			t.Errorf("Deprecation %q, want %q", got, wantDep)
		}
		if got := r.header.Get("Sunset"); got != wantSunset {
			t.Errorf("Sunset %q, want %q", got, wantSunset)
		}
		if got := r.header.Get("Link"); got != wantLink {
			t.Errorf("Link %q, want %q", got, wantLink)
		}
		var body struct {
			Deprecated       bool   `json:"deprecated"`
			Deprecation      string `json:"deprecation"`
			Sunset           string `json:"sunset"`
			SuccessorVersion string `json:"successor_version"`
			Items            []any  `json:"items"`
		}
		if err := json.Unmarshal(r.body, &body); err != nil || len(body.Items) == 0 {
			t.Fatalf("body: %v %s", err, r.body)
		}
		if !body.Deprecated || body.Deprecation != wantDep || body.Sunset != wantSunset || body.SuccessorVersion != d.successor {
			t.Errorf("payload deprecated=%v deprecation=%q sunset=%q successor_version=%q, want true %q %q %q",
				body.Deprecated, body.Deprecation, body.Sunset, body.SuccessorVersion, wantDep, wantSunset, d.successor)
		}
	}
	first := dep{
		deprecation: time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC),
		sunset:      time.Date(2028, 1, 31, 12, 0, 0, 0, time.UTC),
		successor:   "https://editorial.example/guides",
		info:        "https://editorial.example/sunset-notice",
	}
	second := dep{
		deprecation: time.Date(2025, 9, 15, 8, 30, 0, 0, time.UTC),
		sunset:      time.Date(2029, 12, 31, 23, 0, 0, 0, time.UTC),
		successor:   "https://magazine.example/",
	}
	cfg := filepath.Join(t.TempDir(), "edge.json")
	write(cfg, first)
	e := startEdge(t, "--demo", "--config", cfg)
	const path = "/dealer/content/guides/listing?page_size=2"
	check(e, path, first, "MISS")
	check(e, path, first, "HIT")

	write(cfg, second)
	if rr := e.do("POST", e.admin+"/admin/reload"); rr.status != 200 {
		t.Fatalf("reload: %d %s", rr.status, rr.body)
	}
	// The cache key carries the deprecation settings: the body cached with
	// the first values is not served under the second.
	check(e, path, second, "MISS")
	check(e, path, second, "HIT")

	// Types that are not deprecated carry none of it.
	r := e.get("/dealer/content/faq/listing?page_size=1", "demo-key-alpha")
	for _, h := range []string{"Deprecation", "Sunset", "Link"} {
		if v := r.header.Get(h); v != "" {
			t.Errorf("faq listing carries %s: %q", h, v)
		}
	}
	if bytes.Contains(r.body, []byte(`"deprecated"`)) {
		t.Errorf("faq listing carries deprecation fields: %s", r.body)
	}
}

// TestRareMetricsMove shows the metric families that ordinary traffic
// leaves at zero moving when their cause happens: L1 evictions (a tiny
// L1), stale serving (a short TTL with stale-while-revalidate), rate-limit
// rejections (demo-key-limited until 429) and the rate limiter's fallback
// (Redis gone).
func TestRareMetricsMove(t *testing.T) {
	mr := miniredis.NewMiniRedis()
	if err := mr.StartAddr("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mr.Close)
	cfg := filepath.Join(t.TempDir(), "edge.json")
	// A Redis budget far above the default 50 ms: the 16 KiB L1 may well
	// have evicted the stale entry (its own fills and facts churn it), and
	// on a loaded machine a GET from the embedded server can take longer
	// than 50 ms, which reads as a miss and marks Redis down, not as the
	// stale answer this test is about.
	writeConfig(t, cfg, `{"redis": {"timeout": "2s"}, "cache": {"l1_max_bytes": 16384, "routes": {"inventory_listing": {"ttl": "300ms", "stale_while_revalidate": "1m"}}}}`)
	e := startEdge(t, "--demo", "--config", cfg, "--redis", mr.Addr())
	moved := func(before, after map[string]float64, series ...string) {
		t.Helper()
		for _, s := range series {
			if b, a := sumSeries(before, s), sumSeries(after, s); a <= b {
				t.Errorf("%s did not move: %v -> %v", s, b, a)
			}
		}
	}

	// L1 evictions: an L1 of 16 KiB holds about a dozen content pages.
	m0 := e.scrape()
	for page := 1; page <= 40; page++ {
		if r := e.get(fmt.Sprintf("/dealer/content/faq/listing?page_size=1&page=%d", page), "bench-key-000"); r.status != 200 {
			t.Fatalf("faq page %d: %d", page, r.status)
		}
	}
	m1 := e.scrape()
	moved(m0, m1, "edge_cache_l1_evictions_total", "edge_cache_fills_total")
	if m1["edge_cache_l1_bytes"] > 16384 {
		t.Errorf("edge_cache_l1_bytes %v over the 16384 bound", m1["edge_cache_l1_bytes"])
	}

	// Stale serving: past the 300ms TTL, within stale-while-revalidate.
	const stalePath = "/dealer/NOS/listing?page_size=2"
	if r := e.get(stalePath, "bench-key-001"); r.header.Get("X-Cache") != "MISS" {
		t.Fatalf("stale path first: X-Cache %q", r.header.Get("X-Cache"))
	}
	time.Sleep(400 * time.Millisecond)
	if r := e.get(stalePath, "bench-key-001"); r.header.Get("X-Cache") != "STALE" {
		t.Fatalf("after the TTL: X-Cache %q, want STALE", r.header.Get("X-Cache"))
	}
	m2 := e.scrape()
	moved(m1, m2, "edge_cache_stale_served_total", "edge_cache_refreshes_total", `edge_requests_total{route="inventory_listing",status="200",cache="stale"}`)

	// Rejections: the limited plan (burst 10) until a 429.
	limited := false
	for i := 0; i < 30 && !limited; i++ {
		limited = e.get("/dealer/NOS/listing?page_size=1", "demo-key-limited").status == 429
	}
	if !limited {
		t.Fatal("no 429 within 30 requests of demo-key-limited")
	}
	m3 := e.scrape()
	moved(m2, m3, "edge_ratelimit_rejected_total", `edge_requests_total{route="inventory_listing",status="429",cache="none"}`)
	if m3["edge_ratelimit_fallback_active"] != 0 || m3["edge_ratelimit_fallback_activations_total"] != 0 {
		t.Fatalf("fallback before Redis went away: active %v, activations %v", m3["edge_ratelimit_fallback_active"], m3["edge_ratelimit_fallback_activations_total"])
	}

	// Fallback: Redis gone. A key the limiter holds nothing for must ask
	// Redis, fails, and the in-process limiter takes over (fail_mode local).
	mr.Close()
	waitRedisCheck()
	if r := e.get("/dealer/REWIND/listing?page_size=1", "demo-key-beta"); r.status != 200 {
		t.Fatalf("with Redis gone: %d %s", r.status, r.body)
	}
	m4 := e.scrape()
	moved(m3, m4, "edge_ratelimit_fallback_activations_total", `edge_redis_errors_total{component="ratelimit"}`)
	if m4["edge_ratelimit_fallback_active"] != 1 || m4["edge_redis_up"] != 0 {
		t.Errorf("with Redis gone: edge_ratelimit_fallback_active %v, edge_redis_up %v", m4["edge_ratelimit_fallback_active"], m4["edge_redis_up"])
	}
	if v := m4[`edge_redis_errors_total{component="ratelimit_address"}`]; v != 0 {
		t.Errorf("per-address limiter's Redis errors %v before any request it limits", v)
	}

	// The per-client-address limiter (here the OpenAPI document without a
	// key) meets the same dead Redis: its errors are counted under their
	// own component, not lost.
	if r := e.get("/dealer/openapi.json", ""); r.status != 200 {
		t.Fatalf("openapi with Redis gone: %d %s", r.status, r.body)
	}
	m5 := e.scrape()
	moved(m4, m5, `edge_redis_errors_total{component="ratelimit_address"}`, "edge_ratelimit_address_fallback_activations_total")
}

// TestPurgeAcrossInstances: two edges share one real redis-server; a purge
// on A's admin listener makes B drop the dealer's entries it had cached
// (pub/sub), and only that dealer's.
func TestPurgeAcrossInstances(t *testing.T) {
	srv := redistest.Start(t)
	fk := fake.NewServer(fake.Options{})
	addr, err := fk.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fk.Close) // after the edges stop
	// A generous redis.timeout: on a loaded machine (CI runs every
	// package at once on 2 cores) a call past the 50 ms default marks
	// Redis down in that edge, B then keeps its entry out of Redis or A
	// does not look there, and A's read was a MISS. This test is about
	// sharing entries and purges, not the budget.
	cfg := filepath.Join(t.TempDir(), "edge.json")
	writeConfig(t, cfg, `{"redis": {"timeout": "2s"}}`)
	args := []string{"--redis", srv.Addr, "--upstream", "http://" + addr, "--config", cfg}
	a, b := startEdge(t, args...), startEdge(t, args...)
	deadline := time.Now().Add(10 * time.Second)
	for !(a.app.cache.Stats().PubSubUp && b.app.cache.Stats().PubSubUp) {
		if time.Now().After(deadline) {
			t.Fatal("purge subscriptions not up")
		}
		time.Sleep(10 * time.Millisecond)
	}

	const path = "/dealer/REWIND/listing?page_size=4"
	xcache := func(e *edge, key string) string {
		t.Helper()
		r := e.get(path, key)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
		return r.header.Get("X-Cache")
	}
	if x := xcache(b, "demo-key-alpha"); x != "MISS" {
		t.Fatalf("B first: X-Cache %q", x)
	}
	if x := xcache(b, "demo-key-alpha"); x != "HIT" {
		t.Fatalf("B second: X-Cache %q", x)
	}
	if x := xcache(a, "demo-key-alpha"); x != "HIT" {
		t.Fatalf("A reads B's entry from Redis: X-Cache %q\nA: %+v\nB: %+v", x, a.app.cache.Stats(), b.app.cache.Stats())
	}
	if x := xcache(b, "demo-key-beta"); x != "MISS" { // another dealer, same URL
		t.Fatalf("B beta first: X-Cache %q", x)
	}

	if r := a.do("POST", a.admin+"/admin/purge?dealer_id=101"); r.status != 200 {
		t.Fatalf("purge on A: %d %s", r.status, r.body)
	}
	// B learns of the purge over pub/sub (well under a millisecond on
	// loopback); without it, B would serve its L1 entry for its 30 s TTL.
	x := ""
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if x = xcache(b, "demo-key-alpha"); x == "MISS" {
			break
		}
	}
	if x != "MISS" {
		t.Fatalf("B after A's purge of dealer 101: X-Cache %q, want MISS", x)
	}
	if x := xcache(b, "demo-key-beta"); x != "HIT" {
		t.Errorf("B, dealer 102 after a purge of 101: X-Cache %q, want HIT", x)
	}
	if m := a.scrape(); m["edge_cache_purges_total"] != 1 {
		t.Errorf("A edge_cache_purges_total %v", m["edge_cache_purges_total"])
	}
}

// TestSentinelMode: with redis.master_name the edge finds its Redis
// through Sentinel (--redis lists the Sentinels) and authenticates to the
// Sentinel with redis.sentinel_password; without the password it cannot
// learn the master and runs degraded.
func TestSentinelMode(t *testing.T) {
	const pass = "sentinel-pass-0123456789"
	sentinel, master := redistest.StartSentinel(t, "requirepass "+pass)
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.json"), filepath.Join(dir, "bad.json")
	writeConfig(t, good, fmt.Sprintf(`{"redis": {"master_name": %q, "sentinel_password": %q, "timeout": "500ms"}}`, master, pass))
	writeConfig(t, bad, fmt.Sprintf(`{"redis": {"master_name": %q, "timeout": "500ms"}}`, master))

	e := startEdge(t, "--demo", "--config", good, "--redis", sentinel)
	if status, body := e.readyz(); status != 200 || body["redis"] != "up" {
		t.Fatalf("readyz through Sentinel: %d %v", status, body)
	}
	const path = "/dealer/NOS/listing?page_size=2"
	if r := e.get(path, "demo-key-alpha"); r.status != 200 || r.header.Get("X-Cache") != "MISS" {
		t.Fatalf("first: %d %q", r.status, r.header.Get("X-Cache"))
	}
	if st := e.app.cache.Stats(); !st.RedisUp || st.L2Errors != 0 {
		t.Errorf("cache through Sentinel: %+v", st)
	}
	if st := e.app.limiter.Stats(); st.RedisCalls == 0 || st.RedisErrors != 0 || st.FallbackActive {
		t.Errorf("limiter through Sentinel: %+v", st)
	}
	if strings.Contains(e.stderr.String(), pass) {
		t.Error("the Sentinel password reached the log")
	}

	nopass := startEdge(t, "--demo", "--config", bad, "--redis", sentinel)
	if status, body := nopass.readyz(); status != 200 || body["redis"] != "down" {
		t.Errorf("readyz without the Sentinel password: %d %v, want redis down", status, body)
	}
}
