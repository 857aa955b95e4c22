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

// TestExactParameterForms: numbers, enumerations, upfit slugs and
// identifiers are taken only in their plain form (README, "Parameters"):
// ASCII decimal digits (leading zeros allowed) for page, page_size and
// id_offerta; no sign, white space, decimal point, exponent or other
// script's digits; catalog_type and professional_upfit exactly as the
// contract spells them. Text parameters (q, category, topic, brand) are
// the ones that are trimmed.
func TestExactParameterForms(t *testing.T) {
	e := startEnv(t, envOptions{})
	for _, c := range []struct {
		path   string
		status int
		code   string
	}{
		{"/dealer/REWIND/listing?page=%2B1", 422, "validation_error"},
		{"/dealer/REWIND/listing?page=+1", 422, "validation_error"}, // "+" is a space in a query
		{"/dealer/REWIND/listing?page=-0", 422, "validation_error"},
		{"/dealer/REWIND/listing?page=%201", 422, "validation_error"},
		{"/dealer/REWIND/listing?page=1%09", 422, "validation_error"},
		{"/dealer/REWIND/listing?page=1.0", 422, "validation_error"},
		{"/dealer/REWIND/listing?page=1e1", 422, "validation_error"},
		{"/dealer/REWIND/listing?page=0x1", 422, "validation_error"},
		{"/dealer/REWIND/listing?page=%D9%A1", 422, "validation_error"},    // ARABIC-INDIC DIGIT ONE
		{"/dealer/REWIND/listing?page=%EF%BC%91", 422, "validation_error"}, // FULLWIDTH DIGIT ONE
		{"/dealer/REWIND/listing?page_size=1%2C2", 422, "validation_error"},
		{"/dealer/REWIND/listing?page=0001&page_size=0002", 200, ""},
		{"/dealer/REWIND/listing?catalog_type=AUTO", 422, "validation_error"},
		{"/dealer/REWIND/listing?catalog_type=%20auto", 422, "validation_error"},
		{"/dealer/REWIND/listing?catalog_type=vcom&professional_upfit=Furgone-isotermico", 422, "validation_error"},
		{"/dealer/REWIND/listing?catalog_type=vcom&professional_upfit=furgone-isotermico%20", 422, "validation_error"},
		{"/dealer/NLT/details?id_offerta=%20101018", 400, "invalid_identifier"},
		{"/dealer/NLT/details?id_offerta=101018.0", 400, "invalid_identifier"},
		{"/dealer/NLT/details?id_offerta=%2B101018", 400, "invalid_identifier"},
		{"/dealer/NLT/details?id_offerta=000101018", 200, ""},
		{"/dealer/REWIND/details?id_auto=%7Bd3b8b8d4-bf88-4ab6-b912-6b61eb3e51ae%7D", 400, "invalid_identifier"},
		{"/dealer/REWIND/details?id_auto=d3b8b8d4bf884ab6b9126b61eb3e51ae", 400, "invalid_identifier"},
		{"/dealer/REWIND/details?id_auto=urn:uuid:d3b8b8d4-bf88-4ab6-b912-6b61eb3e51ae", 400, "invalid_identifier"},
		{"/dealer/REWIND/details?id_auto=D3B8B8D4-BF88-4AB6-B912-6B61EB3E51AE", 200, ""},
	} {
		r := e.get(c.path, keyAlpha)
		if r.status != c.status || r.code() != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.path, r.status, r.code(), c.status, c.code)
		}
	}
}
