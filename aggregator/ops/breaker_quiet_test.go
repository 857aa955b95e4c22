package ops

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestUpstreamSeriesAtZeroFromStart: the call counters of every known
// service (one per outcome) and its breaker transition counters exist at
// zero before any call. They used to appear on a service's first call (or
// transition) with the value 1, and Prometheus' increase() and rate() do
// not count the increments before a series' first sample: the first
// refusals, failures and openings went unseen by EdgeUpstreamBreakerOpen
// and any error-rate panel or alert for a scrape interval. The content
// service's transitions are counted per content type, never as the
// summary state's changes.
func TestUpstreamSeriesAtZeroFromStart(t *testing.T) {
	m := NewMetrics(MetricsOptions{
		Services:     []string{"inventory", "content"},
		TypeBreakers: map[string][]string{"content": {"faq", "news"}},
	})
	out := scrape(m)
	var want []string
	for _, svc := range []string{"inventory", "content"} {
		for _, o := range outcomes {
			want = append(want, `edge_upstream_requests_total{service="`+svc+`",outcome="`+o+`"} 0`)
		}
	}
	for _, to := range []string{"closed", "half_open", "open"} {
		want = append(want,
			`edge_upstream_breaker_transitions_total{service="inventory",to="`+to+`"} 0`,
			`edge_upstream_breaker_transitions_total{service="content",content_type="faq",to="`+to+`"} 0`,
			`edge_upstream_breaker_transitions_total{service="content",content_type="news",to="`+to+`"} 0`)
	}
	for _, w := range want {
		if !strings.Contains(out, w+"\n") {
			t.Errorf("missing at start: %s", w)
		}
	}
	if strings.Contains(out, `edge_upstream_breaker_transitions_total{service="content",to=`) {
		t.Errorf("the content service's summary transitions are exported:\n%s", out)
	}

	m.UpstreamCall("inventory", OutcomeError, time.Millisecond)
	m.BreakerChange("inventory", "closed", "open")
	m.BreakerChange("content", "closed", "half-open") // the summary: not counted
	m.TypeBreakerChange("content", "news", "closed", "open")
	out = scrape(m)
	for series, v := range map[string]float64{
		`edge_upstream_requests_total{service="inventory",outcome="error"}`:                          1,
		`edge_upstream_breaker_transitions_total{service="inventory",to="open"}`:                     1,
		`edge_upstream_breaker_transitions_total{service="content",content_type="news",to="open"}`:   1,
		`edge_upstream_breaker_transitions_total{service="content",content_type="faq",to="open"}`:    0,
		`edge_upstream_breaker_transitions_total{service="content",content_type="news",to="closed"}`: 0,
	} {
		if got := metricValue(t, out, series); got != v {
			t.Errorf("%s = %v, want %v", series, got, v)
		}
	}
	if strings.Contains(out, `edge_upstream_breaker_transitions_total{service="content",to=`) {
		t.Errorf("the content service's summary change was counted")
	}
}

// TestQuietHalfOpenBreakerIsNotDegraded: a breaker reads half-open once
// breaker_open_for has passed and stays so until the next call, so a
// service nobody calls after an outage used to keep /readyz "degraded"
// (and the status page's breaker cell in warning colours) for good. Now a
// half-open breaker degrades only while one of its service's breakers
// opened or refused a call within BreakerQuietAfter (the window of the
// EdgeUpstreamBreakerOpen alert); an open one always does. The breakers
// map still shows the state as read.
func TestQuietHalfOpenBreakerIsNotDegraded(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 14, 0, 0, 0, time.UTC)
	cases := []struct {
		name     string
		state    string
		event    func(m *Metrics) // at t0
		after    time.Duration    // when /readyz is asked
		degraded bool
	}{
		{"half-open, no opening or refusal since start", "half-open", nil, time.Minute, false},
		{"half-open, opened 4 minutes ago", "half-open", func(m *Metrics) { m.BreakerChange("inventory", "closed", "open") }, 4 * time.Minute, true},
		{"half-open, opened 6 minutes ago, no call since", "half-open", func(m *Metrics) { m.BreakerChange("inventory", "closed", "open") }, 6 * time.Minute, false},
		{"half-open, a call refused 1 minute ago", "half-open", func(m *Metrics) { m.UpstreamCall("inventory", OutcomeBreakerOpen, 0) }, time.Minute, true},
		{"half-open, failed calls only (a breaker that never opened)", "half-open", func(m *Metrics) { m.UpstreamCall("inventory", OutcomeError, time.Millisecond) }, time.Minute, false},
		{"half-open, one content type opened 1 minute ago", "half-open", func(m *Metrics) { m.TypeBreakerChange("inventory", "news", "closed", "open") }, time.Minute, true},
		{"open is degraded whatever the counters", "open", nil, time.Hour, true},
		{"closed after an opening", "closed", func(m *Metrics) { m.BreakerChange("inventory", "closed", "open") }, time.Minute, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now := t0
			m := NewMetrics(MetricsOptions{Services: []string{"inventory"}})
			m.now = func() time.Time { return now }
			if tc.event != nil {
				tc.event(m)
			}
			now = t0.Add(tc.after)
			breakers := func() map[string]string { return map[string]string{"inventory": tc.state} }
			m.SetSources(Sources{Breakers: breakers})
			c := adminServer(t, AdminOptions{Metrics: m, Breakers: breakers})
			a := call(t, c, "GET", "/readyz", "")
			wantStatus := "ready"
			if tc.degraded {
				wantStatus = "degraded"
			}
			if a.status != 200 || a.body["status"] != wantStatus {
				t.Errorf("/readyz: %d %v, want 200 %s", a.status, a.body, wantStatus)
			}
			if br, _ := a.body["breakers"].(map[string]any); br["inventory"] != tc.state {
				t.Errorf("breakers %v, want inventory %s as read", a.body["breakers"], tc.state)
			}

			ad, err := NewAdmin(AdminOptions{Metrics: m})
			if err != nil {
				t.Fatal(err)
			}
			st := ad.status(context.Background())
			if len(st.Services) != 1 {
				t.Fatalf("status services %+v", st.Services)
			}
			s := st.Services[0]
			wantQuiet := tc.state != "closed" && !tc.degraded
			if s.Breaker != tc.state || s.BreakerQuiet != wantQuiet {
				t.Errorf("status page: breaker %q quiet %v, want %q quiet %v", s.Breaker, s.BreakerQuiet, tc.state, wantQuiet)
			}
		})
	}
}
