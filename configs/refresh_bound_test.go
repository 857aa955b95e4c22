package configs

import (
	"strings"
	"testing"
)

// TestRefreshBoundWithinUpstreamPool: cache.max_refreshes may be at most
// half of upstream.max_conns_per_host (0: its default, 256), as the
// default 128 is: refreshes beyond it could hold every connection of a
// slow service and leave every miss waiting for its deadline. Before
// 2026-11-29 any positive bound passed (configs/README.md asked to keep it
// under the pool, and nothing checked it).
func TestRefreshBoundWithinUpstreamPool(t *testing.T) {
	for _, c := range []struct {
		refreshes, conns int
		refused          bool
	}{
		{128, 0, false}, // the defaults
		{128, 256, false},
		{129, 256, true},
		{129, 0, true}, // 0 is the default pool
		{1000, 0, true},
		{256, 256, true}, // every connection
		{128, 16, true},  // the default bound beside a small pool
		{8, 16, false},
		{9, 16, true},
		{4, 9, false}, // half, rounded down
		{5, 9, true},
		{1, 1, false}, // one connection: one refresh still allowed
		{2, 1, true},
	} {
		err := validateField(t, func(cfg *Config) {
			cfg.Cache.MaxRefreshes, cfg.Upstream.MaxConnsPerHost = c.refreshes, c.conns
		})
		switch {
		case c.refused && (err == nil || !strings.Contains(err.Error(), "cache.max_refreshes:") || !strings.Contains(err.Error(), "upstream.max_conns_per_host")):
			t.Errorf("max_refreshes %d, max_conns_per_host %d: err = %v, want a refusal naming both fields", c.refreshes, c.conns, err)
		case !c.refused && err != nil:
			t.Errorf("max_refreshes %d, max_conns_per_host %d refused: %v", c.refreshes, c.conns, err)
		}
	}
}
