package ops

import (
	"strings"
	"testing"
)

// TestDealerBreakerOpensCounted: an opening of one dealer's breaker (its
// calls failed while the service answered other dealers) leaves the
// service's breaker, its state and /readyz as they were, so before
// edge_upstream_dealer_breaker_opens_total only a log line showed it. The
// series exist at zero from the start (per service, and per content type
// for the content service, never its summary), count each opening, and
// carry no dealer label.
func TestDealerBreakerOpensCounted(t *testing.T) {
	m := NewMetrics(MetricsOptions{
		Services:     []string{"inventory", "content"},
		TypeBreakers: map[string][]string{"content": {"faq", "news"}},
	})
	out := scrape(m)
	for _, w := range []string{
		`edge_upstream_dealer_breaker_opens_total{service="inventory"} 0`,
		`edge_upstream_dealer_breaker_opens_total{service="content",content_type="faq"} 0`,
		`edge_upstream_dealer_breaker_opens_total{service="content",content_type="news"} 0`,
	} {
		if !strings.Contains(out, w+"\n") {
			t.Errorf("missing at start: %s", w)
		}
	}
	if strings.Contains(out, `edge_upstream_dealer_breaker_opens_total{service="content"}`) {
		t.Errorf("the content service's summary series is exported:\n%s", out)
	}
	m.DealerBreakerOpen("inventory", "")
	m.DealerBreakerOpen("inventory", "")
	m.DealerBreakerOpen("content", "news")
	out = scrape(m)
	for series, v := range map[string]float64{
		`edge_upstream_dealer_breaker_opens_total{service="inventory"}`:                   2,
		`edge_upstream_dealer_breaker_opens_total{service="content",content_type="news"}`: 1,
		`edge_upstream_dealer_breaker_opens_total{service="content",content_type="faq"}`:  0,
	} {
		if got := metricValue(t, out, series); got != v {
			t.Errorf("%s = %v, want %v", series, got, v)
		}
	}
	if strings.Contains(out, "dealer_id") {
		t.Errorf("a dealer label is exported:\n%s", out)
	}
}
