package aggregator

import (
	"math"
	"strings"
	"testing"

	"github.com/dealer-edge/dealer-edge/cache/ratelimit"
)

// TestSettingsRefuseUnenforceableLimit: settings whose limits the limiter
// cannot enforce (it refuses every request of such a limit, 429 with
// Retry-After 1, for as long as the settings stand) are refused by
// Validate, naming the field. Before, only rate > 0 and burst >= 1 were
// checked: UpdateSettings took them and the plan's keys got nothing but
// 429s.
func TestSettingsRefuseUnenforceableLimit(t *testing.T) {
	for _, c := range []struct {
		name  string
		set   func(*Settings)
		field string
	}{
		{"rate above MaxRate", func(s *Settings) { s.Limits["gold"] = ratelimit.Limit{Rate: 2e6, Burst: 10} }, "limits.gold"},
		{"burst above MaxBurst", func(s *Settings) { s.DefaultLimit = ratelimit.Limit{Rate: 1e6, Burst: 1 << 31} }, "default_limit"},
		{"refill over 7 days", func(s *Settings) { s.FailedAuthLimit = ratelimit.Limit{Rate: 1.0 / 86400, Burst: 30} }, "rate_limit.failed_auth"},
		{"rate NaN", func(s *Settings) { s.OpenAPILimit = ratelimit.Limit{Rate: math.NaN(), Burst: 30} }, "rate_limit.openapi"},
	} {
		st := DefaultSettings()
		c.set(st)
		err := st.Validate()
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: Validate = %v, want an error naming %s", c.name, err, c.field)
		}
	}
	if err := DefaultSettings().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
}
