package ops

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/publicshape"
)

func scrape(m *Metrics) string {
	var b bytes.Buffer
	m.WritePrometheus(&b)
	return b.String()
}

// metricValue returns the value of one series in a scrape.
func metricValue(t *testing.T, out, series string) float64 {
	t.Helper()
	for _, ln := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(ln, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", ln, err)
			}
			return f
		}
	}
	t.Fatalf("no series %s in:\n%s", series, out)
	return 0
}

func TestStatusAndCacheLabels(t *testing.T) {
	cases := []struct {
		name   string
		status int
		want   string
	}{
		{"ok", 200, "200"},
		{"not modified", 304, "304"},
		{"rate limited", 429, "429"},
		{"unavailable", 503, "503"},
		{"unlisted 4xx", 418, "4xx"},
		{"unlisted 5xx", 599, "5xx"},
		{"unlisted 2xx", 201, "2xx"},
		{"nonsense", 42, "other"},
		{"too big", 1000, "other"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := statusLabel(statusIndex(c.status)); got != c.want {
				t.Errorf("status %d: label %q, want %q", c.status, got, c.want)
			}
		})
	}
	for xc, want := range map[string]string{"HIT": "hit", "MISS": "miss", "STALE": "stale", "BYPASS": "bypass", "": "none", "WEIRD": "other"} {
		if got := cacheLabels[cacheIndex(xc)]; got != want {
			t.Errorf("cache %q: label %q, want %q", xc, got, want)
		}
	}
}

func TestMetricsFamilies(t *testing.T) {
	m := NewMetrics(MetricsOptions{Routes: []string{"inventory_listing", "content_hub"}, Services: []string{"inventory", "dealers"}})
	m.SetSources(Sources{
		Cache: func() CacheStats {
			return CacheStats{Hits: 7, Misses: 3, StaleServed: 2, L1Evictions: 1, L1Bytes: 4096, L1Entries: 12, RedisErrors: 4,
				Refreshes: 9, RefreshesSkipped: 5, RefreshesInFlight: 3, MaxRefreshes: 128}
		},
		Limiter: func() LimiterStats {
			return LimiterStats{Admitted: 10, Rejected: 2, FallbackActivations: 1, FallbackActive: true, RedisErrors: 5, FailMode: "local",
				Address: &LimiterFallback{Activations: 3, Active: true, RedisErrors: 6}}
		},
		CachePolicies: func() map[string]CachePolicy {
			return map[string]CachePolicy{
				"inventory_listing": {TTL: 30 * time.Second, StaleWhileRevalidate: 1500 * time.Millisecond, StaleIfError: 10 * time.Minute},
				"inventory_details": {TTL: time.Minute, NotFoundTTL: 10 * time.Second},
			}
		},
		Breakers: func() map[string]string {
			return map[string]string{"inventory": "open", "dealers": "closed", "media": "half-open"}
		},
		Redis: func(context.Context) error { return errors.New("connection refused") },
	})
	m.Request("inventory_listing", 200, "HIT", 300*time.Microsecond)
	m.Request("inventory_listing", 200, "HIT", 2*time.Millisecond)
	m.Request("inventory_listing", 503, "", 20*time.Millisecond)
	m.Request("/some/raw/path?dealer=42", 404, "", time.Millisecond) // unknown route: folded
	m.UpstreamCall("inventory", OutcomeOK, 3*time.Millisecond)
	m.UpstreamCall("inventory", "weird", 3*time.Millisecond)
	m.UpstreamCall("inventory", OutcomeBreakerOpen, 0)
	m.BreakerChange("inventory", "closed", "open")
	m.LogLineDropped()
	m.ConfigReload(nil)
	m.ConfigReload(errors.New("bad"))
	m.CachePurge()
	m.Body(10000, false)
	m.Body(0, false) // a 304
	m.Body(1900, true)
	m.Body(1800, true)

	out := scrape(m)
	want := []string{
		`edge_response_body_bytes_total{encoding="identity"} 10000`,
		`edge_response_body_bytes_total{encoding="gzip"} 3700`,
		`edge_gzip_responses_total 2`,
		`edge_requests_total{route="inventory_listing",status="200",cache="hit"} 2`,
		`edge_requests_total{route="inventory_listing",status="503",cache="none"} 1`,
		`edge_requests_total{route="other",status="404",cache="none"} 1`,
		`edge_request_duration_seconds_bucket{route="inventory_listing",le="0.0005"} 1`,
		`edge_request_duration_seconds_bucket{route="inventory_listing",le="0.0025"} 2`,
		`edge_request_duration_seconds_bucket{route="inventory_listing",le="+Inf"} 3`,
		`edge_request_duration_seconds_count{route="inventory_listing"} 3`,
		`edge_request_duration_seconds_count{route="content_hub"} 0`,
		`edge_request_duration_seconds_count{route="other"} 1`,
		`edge_upstream_requests_total{service="inventory",outcome="ok"} 1`,
		`edge_upstream_requests_total{service="inventory",outcome="error"} 1`,
		`edge_upstream_requests_total{service="inventory",outcome="breaker_open"} 1`,
		`edge_upstream_request_duration_seconds_count{service="inventory"} 2`,
		`edge_upstream_request_duration_seconds_count{service="dealers"} 0`,
		`edge_upstream_breaker_transitions_total{service="inventory",to="open"} 1`,
		`edge_upstream_breaker_state{service="dealers"} 0`,
		`edge_upstream_breaker_state{service="inventory"} 2`,
		`edge_upstream_breaker_state{service="media"} 1`,
		`edge_cache_hits_total 7`,
		`edge_cache_misses_total 3`,
		`edge_cache_stale_served_total 2`,
		`edge_cache_l1_evictions_total 1`,
		`edge_cache_l1_bytes 4096`,
		`edge_cache_l1_entries 12`,
		`edge_cache_refreshes_total 9`,
		`edge_cache_refreshes_skipped_total 5`,
		`edge_cache_refreshes_in_flight 3`,
		`edge_cache_refreshes_max 128`,
		`edge_ratelimit_admitted_total 10`,
		`edge_ratelimit_rejected_total 2`,
		`edge_ratelimit_fallback_activations_total 1`,
		`edge_ratelimit_fallback_active 1`,
		`edge_ratelimit_address_fallback_activations_total 3`,
		`edge_ratelimit_address_fallback_active 1`,
		`edge_redis_errors_total{component="cache"} 4`,
		`edge_redis_errors_total{component="ratelimit"} 5`,
		`edge_redis_errors_total{component="ratelimit_address"} 6`,
		`edge_redis_up 0`,
		`edge_log_lines_dropped_total 1`,
		`edge_config_reloads_total{result="ok"} 1`,
		`edge_config_reloads_total{result="error"} 1`,
		`edge_cache_purges_total 1`,
		`edge_config_last_reload_success_timestamp_seconds `,
		"edge_config_last_reload_successful 0", // the last attempt failed
		`edge_cache_policy_ttl_seconds{route="inventory_listing"} 30`,
		`edge_cache_policy_stale_while_revalidate_seconds{route="inventory_listing"} 1.5`,
		`edge_cache_policy_stale_if_error_seconds{route="inventory_listing"} 600`,
		`edge_cache_policy_not_found_ttl_seconds{route="inventory_listing"} 0`,
		`edge_cache_policy_not_found_ttl_seconds{route="inventory_details"} 10`,
		`edge_ratelimit_fail_mode{mode="local"} 1`,
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("missing %q", w)
		}
	}
	if strings.Contains(out, "dealer=42") || strings.Contains(out, "/some/raw/path") {
		t.Error("an unknown route leaked into a label")
	}
	if t.Failed() {
		t.Log(out)
	}
}

func TestServiceCardinalityBounded(t *testing.T) {
	m := NewMetrics(MetricsOptions{})
	for i := range 100 {
		m.UpstreamCall("svc"+strings.Repeat("x", i), OutcomeOK, time.Millisecond)
	}
	if n := len(*m.services.Load()); n > maxServices+1 {
		t.Fatalf("%d services tracked, want at most %d", n, maxServices+1)
	}
	if !strings.Contains(scrape(m), `service="other"`) {
		t.Error("services beyond the bound are not folded into other")
	}
}

func TestHotPathAllocations(t *testing.T) {
	m := NewMetrics(MetricsOptions{Routes: []string{"inventory_listing"}, Services: []string{"inventory"}})
	l := NewLogs(&bytes.Buffer{}, LogOptions{AccessLog: true, AccessSample: 0}, m)
	m.Request("inventory_listing", 200, "HIT", time.Millisecond)
	m.UpstreamCall("inventory", OutcomeOK, time.Millisecond)
	r := &Request{Method: []byte("GET"), Route: "inventory_listing", Status: 200, Cache: "HIT", RequestID: []byte("abc"), Duration: time.Millisecond}
	cases := []struct {
		name string
		f    func()
	}{
		{"request metric", func() { m.Request("inventory_listing", 200, "HIT", time.Millisecond) }},
		{"upstream metric", func() { m.UpstreamCall("inventory", OutcomeOK, time.Millisecond) }},
		{"body metric", func() { m.Body(1900, true) }},
		{"access line sampled out", func() { l.Access(r) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if n := testing.AllocsPerRun(200, c.f); n != 0 {
				t.Errorf("%v allocations per call, want 0", n)
			}
		})
	}
}

func BenchmarkRequestMetrics(b *testing.B) {
	m := NewMetrics(MetricsOptions{Routes: []string{"inventory_listing"}})
	l := NewLogs(&bytes.Buffer{}, LogOptions{AccessLog: true, AccessSample: 0.01}, m)
	r := &Request{Method: []byte("GET"), Route: "inventory_listing", Status: 200, Cache: "HIT", RequestID: []byte("abc"), Duration: time.Millisecond}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Request(r.Route, r.Status, r.Cache, r.Duration)
			l.Access(r)
		}
	})
}

// TestBuildInfo: the build identity is one constant series, label values
// escaped; without a version there is none.
func TestBuildInfo(t *testing.T) {
	cases := []struct {
		name   string
		build  BuildInfo
		series string // "" for none
	}{
		{"release", BuildInfo{Version: "v1.4.0", Commit: "0123abc", GoVersion: "go1.26.8"},
			`edge_build_info{version="v1.4.0",commit="0123abc",goversion="go1.26.8"}`},
		{"escaped", BuildInfo{Version: `v1"x\`, Commit: "a\nb", GoVersion: "go1.26.8"},
			`edge_build_info{version="v1\"x\\",commit="a\nb",goversion="go1.26.8"}`},
		{"none", BuildInfo{}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := scrape(NewMetrics(MetricsOptions{Build: c.build}))
			if c.series == "" {
				if strings.Contains(out, "edge_build_info") {
					t.Errorf("build info without a version:\n%s", out)
				}
				return
			}
			if v := metricValue(t, out, c.series); v != 1 {
				t.Errorf("%s = %v", c.series, v)
			}
		})
	}
}

func TestAuthMetrics(t *testing.T) {
	m := NewMetrics(MetricsOptions{})
	m.SetSources(Sources{Auth: func() AuthStats {
		return AuthStats{
			IndexState: "stale", IndexKeys: 1234, IndexAge: 45 * time.Second,
			IndexSyncs: 10, IndexSyncErrors: 3, IndexResyncs: 1, IndexMisses: 999,
			Results:              map[string]uint64{"ok": 5, "invalid_api_key": 7},
			Lookups:              map[string]uint64{"no_index": 2, "index_stale": 4},
			LookupBudgetExceeded: 8,
			AddrLimited:          map[string]uint64{"failed_auth": 6, "openapi": 1},
		}
	}})
	out := scrape(m)
	for _, c := range []struct {
		series string
		want   float64
	}{
		{`edge_auth_index_state{state="stale"}`, 1},
		{`edge_auth_index_state{state="fresh"}`, 0},
		{"edge_auth_index_keys", 1234},
		{"edge_auth_index_age_seconds", 45},
		{"edge_auth_index_sync_errors_total", 3},
		{"edge_auth_index_resyncs_total", 1},
		{"edge_auth_index_misses_total", 999},
		{`edge_auth_results_total{result="invalid_api_key"}`, 7},
		{`edge_auth_lookups_total{cause="index_stale"}`, 4},
		{"edge_auth_lookup_budget_exceeded_total", 8},
		{`edge_auth_addr_limited_total{limit="failed_auth"}`, 6},
	} {
		if got := metricValue(t, out, c.series); got != c.want {
			t.Errorf("%s = %v, want %v", c.series, got, c.want)
		}
	}
}

// TestTracingMetrics: the tracer's dropped spans are one counter family by
// reason, present only when tracing is on (README, metrics table).
func TestTracingMetrics(t *testing.T) {
	m := NewMetrics(MetricsOptions{})
	m.SetSources(Sources{})
	if out := scrape(m); strings.Contains(out, "edge_trace_spans_dropped_total") {
		t.Errorf("edge_trace_spans_dropped_total exported with tracing off:\n%s", out)
	}
	m.SetSources(Sources{Tracing: func() TracingStats {
		return TracingStats{SpansDropped: map[string]uint64{"queue_full": 92, "export_failed": 9}, ClientSampledCapped: 7}
	}})
	out := scrape(m)
	for series, want := range map[string]float64{
		`edge_trace_client_sampled_capped_total`:                 7,
		`edge_trace_spans_dropped_total{reason="queue_full"}`:    92,
		`edge_trace_spans_dropped_total{reason="export_failed"}`: 9,
	} {
		if got := metricValue(t, out, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
}

// TestEveryProblemStatusHasItsLabel: every status the edge answers a
// problem with (publicshape's problem codes) is counted under its own
// status label, not its class: 414 uri_too_long, added 2026-11-29, was
// counted as "4xx" while 413 and 431 beside it had their own.
func TestEveryProblemStatusHasItsLabel(t *testing.T) {
	for _, p := range publicshape.Problems() {
		if got, want := statusLabel(statusIndex(p.Status)), strconv.Itoa(p.Status); got != want {
			t.Errorf("problem %s (%d): status label %q, want %q", p.Code, p.Status, got, want)
		}
	}
}
