package contracttests

import (
	"strings"
	"testing"
)

// TestOfferIdentifierDetailStatesTheBound: an id_offerta past the int64
// the OpenAPI document declares (format int64) is 400 invalid_identifier,
// and the problem's detail says why. Before 2026-11-29 it said only "must
// be a positive integer", which 9223372036854775808 is.
func TestOfferIdentifierDetailStatesTheBound(t *testing.T) {
	e := startEnv(t, envOptions{})
	for _, id := range []string{"9223372036854775808", "99999999999999999999", "0", "-1", "1.5", "%2B1", ""} {
		r := e.get("/dealer/NLT/details?id_offerta="+id, keyAlpha)
		detail, _ := r.json["detail"].(string)
		if r.status != 400 || r.code() != "invalid_identifier" || !strings.Contains(detail, "9223372036854775807") {
			t.Errorf("id_offerta=%s: %d %s %q, want 400 invalid_identifier naming the bound", id, r.status, r.code(), detail)
		}
	}
	if r := e.get("/dealer/NLT/details?id_offerta=9223372036854775807", keyAlpha); r.status != 404 || r.code() != "offer_not_found" {
		t.Errorf("id_offerta at the bound: %d %s, want 404 offer_not_found", r.status, r.code())
	}
}
