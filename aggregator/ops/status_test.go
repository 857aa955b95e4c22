package ops

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestQuantile(t *testing.T) {
	at := func(bound time.Duration) int {
		for i, b := range durationBuckets {
			if b == bound {
				return i
			}
		}
		t.Fatalf("no bucket %v", bound)
		return -1
	}
	for _, tc := range []struct {
		name   string
		cur    map[int]uint64 // bucket index: count
		old    map[int]uint64
		q      float64
		want   float64
		wantOK bool
	}{
		{"no observations", nil, nil, 0.99, 0, false},
		{"no new observations", map[int]uint64{0: 5}, map[int]uint64{0: 5}, 0.99, 0, false},
		{"all in one bucket: interpolated within it", map[int]uint64{at(500 * time.Millisecond): 100}, nil, 0.99, 0.25 + 0.25*0.99, true},
		{"first bucket starts at zero", map[int]uint64{0: 10}, nil, 0.5, 0.0005 * 0.5, true},
		{"older observations subtracted", map[int]uint64{0: 1000, at(10 * time.Millisecond): 100}, map[int]uint64{0: 1000}, 0.5, 0.005 + 0.005*0.5, true},
		{"p99 in the upper of two buckets", map[int]uint64{0: 98, at(time.Millisecond): 2}, nil, 0.99, 0.0005 + 0.0005*0.5, true},
		{"+Inf bucket reports the largest bound", map[int]uint64{len(durationBuckets): 3}, nil, 0.99, 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cur, old bucketCounts
			for i, n := range tc.cur {
				cur[i] = n
			}
			for i, n := range tc.old {
				old[i] = n
			}
			got := quantile(tc.q, &cur, &old)
			if (got != nil) != tc.wantOK {
				t.Fatalf("got %v, want ok=%v", got, tc.wantOK)
			}
			if got != nil && math.Abs(*got-tc.want) > 1e-9 {
				t.Errorf("got %g, want %g", *got, tc.want)
			}
		})
	}
}

func TestStatusRatesOverWindow(t *testing.T) {
	m := NewMetrics(MetricsOptions{Routes: []string{"inventory_listing", "content_hub"}, Services: []string{"inventory"}})
	redisErr := errors.New("connection refused")
	m.SetSources(Sources{
		Cache:    func() CacheStats { return CacheStats{L1Bytes: 2048, L1Entries: 3, L1Evictions: 1} },
		Limiter:  func() LimiterStats { return LimiterStats{Admitted: 40, FallbackActive: true, FailMode: "local"} },
		Breakers: func() map[string]string { return map[string]string{"inventory": "open", "media": "closed"} },
		Redis:    func(context.Context) error { return redisErr },
		CachePolicies: func() map[string]CachePolicy {
			return map[string]CachePolicy{"inventory_listing": {TTL: 30 * time.Second, StaleWhileRevalidate: 30 * time.Second, StaleIfError: 10 * time.Minute, NotFoundTTL: 10 * time.Second}}
		},
	})
	a, err := NewAdmin(AdminOptions{Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	// Before the window: traffic that must not count in the rates.
	for range 10 {
		m.Request("inventory_listing", 200, "MISS", time.Millisecond)
	}
	first := a.status(context.Background())
	if first.WindowSeconds != 0 || first.Routes[1].RPS != nil {
		t.Errorf("first call: window %v, rps %v; want no rates yet", first.WindowSeconds, first.Routes[1].RPS)
	}
	// Pretend the first snapshot was taken 2 s ago.
	a.window.hist[0].at = a.window.hist[0].at.Add(-2 * time.Second)
	for range 6 {
		m.Request("inventory_listing", 200, "HIT", 300*time.Microsecond)
	}
	m.Request("inventory_listing", 200, "STALE", 300*time.Microsecond)
	m.Request("inventory_listing", 200, "MISS", 300*time.Microsecond)
	m.Request("inventory_listing", 503, "", 300*time.Microsecond)
	m.Request("inventory_listing", 200, "BYPASS", 300*time.Microsecond)
	m.UpstreamCall("inventory", OutcomeOK, time.Millisecond)
	m.UpstreamCall("inventory", OutcomeError, time.Millisecond)
	m.UpstreamCall("inventory", OutcomeBreakerOpen, 0)
	m.UpstreamCall("inventory", OutcomeNotFound, time.Millisecond)
	m.ConfigReload(errors.New("cache.routes.x: unknown route"))

	st := a.status(context.Background())
	if st.WindowSeconds < 2 || st.WindowSeconds > 3 {
		t.Fatalf("window %v s, want about 2", st.WindowSeconds)
	}
	var inv *RouteStatus
	for i := range st.Routes {
		if st.Routes[i].Route == "inventory_listing" {
			inv = &st.Routes[i]
		}
	}
	if inv == nil {
		t.Fatal("no inventory_listing row")
	}
	near := func(name string, got *float64, want float64) {
		t.Helper()
		if got == nil || math.Abs(*got-want) > want*0.2+1e-9 {
			t.Errorf("%s = %v, want about %g", name, deref(got), want)
		}
	}
	near("rps", inv.RPS, 10/st.WindowSeconds)
	near("hit ratio", inv.HitRatio, 6.0/8)
	near("stale share", inv.StaleShare, 1.0/8)
	near("5xx share", inv.ErrorRatio, 1.0/10)
	near("p99", inv.P99, 0.0005*0.99*10/10)
	if inv.Policy == nil || inv.Policy.TTL != 30 || inv.Policy.StaleIfError != 600 || inv.Policy.NotFoundTTL != 10 {
		t.Errorf("policy %+v", inv.Policy)
	}
	if inv.Requests != 20 {
		t.Errorf("requests_total %d, want 20", inv.Requests)
	}
	for _, r := range st.Routes {
		if r.Route == "content_hub" && (r.Policy != nil || r.HitRatio != nil || r.RPS == nil || *r.RPS != 0) {
			t.Errorf("content_hub: %+v; want no policy, no hit ratio, 0 rps", r)
		}
	}
	svc := map[string]ServiceStatus{}
	for _, s := range st.Services {
		svc[s.Service] = s
	}
	if s := svc["inventory"]; s.Breaker != "open" || s.Calls != 4 {
		t.Errorf("inventory: %+v", s)
	} else {
		near("inventory error rate", s.ErrorRate, 2.0/4)
		near("inventory calls/s", s.CallsPerSec, 4/st.WindowSeconds)
	}
	if s, ok := svc["media"]; !ok || s.Breaker != "closed" || s.ErrorRate != nil {
		t.Errorf("media (breaker only, no calls): %+v", s)
	}
	if st.Redis == nil || st.Redis.Up || !strings.Contains(st.Redis.Error, "refused") {
		t.Errorf("redis %+v", st.Redis)
	}
	if st.L1 == nil || st.L1.Bytes != 2048 || st.L1.Entries != 3 {
		t.Errorf("l1 %+v", st.L1)
	}
	if st.Limiter == nil || !st.Limiter.FallbackActive || st.Limiter.FailMode != "local" {
		t.Errorf("limiter %+v", st.Limiter)
	}
	if st.Reload.Result != "error" || !strings.Contains(st.Reload.Error, "unknown route") || st.Reload.LastAttempt == nil {
		t.Errorf("reload %+v", st.Reload)
	}
}

func deref(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

func TestStatusWindowKeepsRecentSnapshots(t *testing.T) {
	var w statusWindow
	t0 := time.Unix(1000, 0)
	snap := func(s float64) *counters { return &counters{at: t0.Add(time.Duration(s * float64(time.Second)))} }
	for _, tc := range []struct {
		name     string
		at       float64
		wantBase float64 // -1: none
	}{
		{"first call has no base", 0, -1},
		{"too soon: the oldest is the base", 0.5, 0},
		{"one second later: kept", 1, 0},
		{"window not yet full: oldest", 3, 0},
		{"newest at least 5 s old", 6.5, 1},
		{"after a pause", 70, 6.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := w.base(snap(tc.at))
			switch {
			case tc.wantBase < 0 && base != nil:
				t.Errorf("base at %v, want none", base.at.Sub(t0))
			case tc.wantBase >= 0 && (base == nil || !base.at.Equal(snap(tc.wantBase).at)):
				t.Errorf("base %v, want %v s", base, tc.wantBase)
			}
		})
	}
	if len(w.hist) > 3 {
		t.Errorf("%d snapshots kept after a minute's pause", len(w.hist))
	}
}

func TestStatusPageAndEndpointAuth(t *testing.T) {
	c := adminServer(t, AdminOptions{Token: "s3cret-admin-token"})
	page := call(t, c, "GET", "/", "")
	if page.status != 200 || !strings.HasPrefix(page.ctype, "text/html") || !strings.Contains(page.raw, "/admin/status") {
		t.Fatalf("GET / without token: %d %s", page.status, page.ctype)
	}
	for _, ext := range []string{"http://", "https://", "src=\"//"} {
		if strings.Contains(page.raw, ext) {
			t.Errorf("the page refers to an external asset (%q)", ext)
		}
	}
	if csp := string(page.header.Peek("Content-Security-Policy")); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("CSP %q", csp)
	}
	if a := call(t, c, "GET", "/admin/status", ""); a.status != 401 {
		t.Errorf("GET /admin/status without token: %d", a.status)
	}
	a := call(t, c, "GET", "/admin/status", "s3cret-admin-token")
	if a.status != 200 || a.body["routes"] == nil || a.body["reload"] == nil {
		t.Errorf("GET /admin/status: %d %s", a.status, a.raw)
	}
	if a := call(t, c, "POST", "/admin/status", "s3cret-admin-token"); a.status != 405 {
		t.Errorf("POST /admin/status: %d", a.status)
	}
}

// TestStatusLimiterAddress checks that /admin/status shows the
// per-client-address limiter's fallback beside the per-key limiter's, so
// an operator sees either one running without Redis.
func TestStatusLimiterAddress(t *testing.T) {
	for _, tc := range []struct {
		name    string
		stats   LimiterStats
		want    string // the limiter object's JSON, admitted/rejected rates aside
		wantNil bool   // no address object
	}{
		{name: "address limiter on fallback, key limiter on redis",
			stats: LimiterStats{FailMode: "local", Address: &LimiterFallback{Activations: 1, Active: true}},
			want:  `"address":{"fallback_active":true}`},
		{name: "both on redis",
			stats: LimiterStats{FailMode: "local", Address: &LimiterFallback{}},
			want:  `"address":{"fallback_active":false}`},
		{name: "no address limiter", stats: LimiterStats{FailMode: "open", FallbackActive: true}, wantNil: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMetrics(MetricsOptions{})
			m.SetSources(Sources{Limiter: func() LimiterStats { return tc.stats }})
			a, err := NewAdmin(AdminOptions{Metrics: m})
			if err != nil {
				t.Fatal(err)
			}
			st := a.status(context.Background())
			if st.Limiter == nil {
				t.Fatal("no limiter status")
			}
			if st.Limiter.FallbackActive != tc.stats.FallbackActive {
				t.Errorf("fallback_active %v, want %v", st.Limiter.FallbackActive, tc.stats.FallbackActive)
			}
			b, err := json.Marshal(st.Limiter)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantNil {
				if strings.Contains(string(b), `"address"`) {
					t.Errorf("limiter %s, want no address object", b)
				}
				return
			}
			if !strings.Contains(string(b), tc.want) {
				t.Errorf("limiter %s, want it to contain %s", b, tc.want)
			}
		})
	}
}
