package ops

import (
	"strings"
	"testing"
	"time"
)

// The SLO availability records, EdgeRoute5xxRatioHigh
// and the burn alerts read edge_requests_total{status=~"5.."}. Prometheus'
// rate()/increase() count a series' increments only from its first scrape:
// a series the edge creates at its first 5xx is first scraped holding every
// error counted before, which no rule ever sees (the upstream call counters
// and the refused-connection counters are created at 0 for this reason;
// the requests' 5xx series are not). A scrape taken before the first error
// must already hold the series at 0.
func Test5xxSeriesExistBeforeFirstError(t *testing.T) {
	m := NewMetrics(MetricsOptions{Routes: []string{"inventory_listing"}})
	before := scrape(m)
	m.Request("inventory_listing", 503, "", time.Millisecond) // an upstream outage's 503 (no X-Cache)
	after := scrape(m)
	series := `edge_requests_total{route="inventory_listing",status="503",cache="none"}`
	if v := metricValue(t, after, series); v != 1 {
		t.Fatalf("%s = %v after one 503", series, v)
	}
	if !strings.Contains(before, series+" 0\n") {
		t.Errorf("%s not exported at 0 before the first 503: rate() and increase() (SLO records, burn alerts, EdgeRoute5xxRatioHigh) never count the errors of its first scrape interval", series)
	}
}
