package configs

import "testing"

// TestHugeL1Refused: Validate (and so --check-config) accepts any
// positive cache.l1_max_bytes, and cache.New panics on one it cannot
// allocate (makeslice: len out of range for the frequency sketch):
// the check should refuse it.
func TestHugeL1Refused(t *testing.T) {
	c := Default()
	c.Cache.L1MaxBytes = 1 << 62
	if err := c.Validate(); err == nil {
		t.Error("cache.l1_max_bytes = 2^62 passes the config check; cache.New panics on it at start")
	}
}
