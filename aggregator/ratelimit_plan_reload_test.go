package aggregator

import (
	"strconv"
	"testing"

	"github.com/dealer-edge/dealer-edge/cache/ratelimit"
)

// TestPlanRaisedOnReloadNoLockout: the operator raises a plan on
// reload (from 1,000 requests per ~33 minutes to the built-in 50/s burst
// 100); a key that had spent its old bucket must not then be refused for
// the old plan's half hour. The answer's own RateLimit-Policy says the
// bucket refills in w=2 seconds.
func TestPlanRaisedOnReloadNoLockout(t *testing.T) {
	s := newBenchServer(t, true)
	st := DefaultSettings()
	st.Limits = map[string]ratelimit.Limit{}
	st.DefaultLimit = ratelimit.Limit{Rate: 0.5, Burst: 1000} // valid: refills in 2,000 s
	st.Costs = map[string]int{RouteContentSearch: 1000}
	if err := s.UpdateSettings(st); err != nil {
		t.Fatal(err)
	}
	base := serveLoopback(t, s)
	key := []string{"X-Api-Key", "demo-key-gamma"}
	if a := rawDo(t, "GET", base+"/dealer/content/search?q=auto", key...); a.status != 200 {
		t.Fatalf("search: %d %s", a.status, a.body)
	}
	raised := DefaultSettings()
	raised.Limits = map[string]ratelimit.Limit{}
	raised.DefaultLimit = ratelimit.Limit{Rate: 50, Burst: 100}
	if err := s.UpdateSettings(raised); err != nil {
		t.Fatal(err)
	}
	a := rawDo(t, "GET", base+"/dealer/REWIND/listing", key...)
	if a.status == 429 {
		ra, _ := strconv.Atoi(a.header.Get("Retry-After"))
		if ra > 2 {
			t.Fatalf("after the plan was raised: 429, Retry-After %d, RateLimit %q, RateLimit-Policy %q",
				ra, a.header.Get("RateLimit"), a.header.Get("RateLimit-Policy"))
		}
	}
}
