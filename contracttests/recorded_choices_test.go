package contracttests

import (
	"testing"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// TestRecordedRepresentationChoices holds the edge to choices README's
// "Decisions where the contract is silent" records and no other test of
// this suite pins: percent-encoded path values are not decoded, JSON goes
// out without a charset parameter, search q's minimum counts the trimmed
// text as sent, and the 503 of a failing internal service has no
// Retry-After.
func TestRecordedRepresentationChoices(t *testing.T) {
	e := startEnv(t, envOptions{})
	for _, c := range []struct {
		path   string
		status int
		code   string
	}{
		{"/dealer/%52EWIND/listing", 400, "invalid_service"},
		{"/dealer/content/%67uides/listing", 400, "invalid_content_type"},
		{"/dealer/content/search?q=a", 422, "validation_error"},
		{"/dealer/content/search?q=%20a%20", 422, "validation_error"},
	} {
		if r := e.get(c.path, keyAlpha); r.status != c.status || r.code() != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.path, r.status, r.code(), c.status, c.code)
		}
	}
	for _, p := range []string{"/dealer/NLT/listing?page_size=1", "/dealer/content/search?q=a%20a&page_size=1", "/dealer/content/faq/listing?page_size=1", "/dealer/openapi.json"} {
		r := e.get(p, keyAlpha)
		if r.status != 200 || r.header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d with content type %q, want 200 application/json", p, r.status, r.header.Get("Content-Type"))
		}
	}
	if r := e.get("/dealer/content/search?q=a%20a&page_size=1", keyAlpha); r.json["q"] != "a" {
		t.Errorf("search q=a a: echo %v, want a", r.json["q"])
	}
	e.fake.SetDown(upstream.SvcInventory, true)
	r := e.get("/dealer/REWIND/listing?page=3&page_size=7", keyAlpha)
	e.fake.SetDown(upstream.SvcInventory, false)
	if r.status != 503 || r.code() != "service_unavailable" || r.header.Get("Retry-After") != "" {
		t.Errorf("inventory down: %d %s Retry-After %q, want 503 service_unavailable without Retry-After", r.status, r.code(), r.header.Get("Retry-After"))
	}
}
