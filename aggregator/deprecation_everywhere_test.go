package aggregator

import "testing"

// TestDeprecationOnDealerNotFound: every answer of a guides or glossary
// route carries the deprecation headers (contract 9; the OpenAPI document
// lists them on those routes' 401, 404, 422, 429, 500 and 503), the 404
// dealer_not_found that authentication answers too.
func TestDeprecationOnDealerNotFound(t *testing.T) {
	s := newBenchServer(t, true)
	h := s.Handler()
	for _, uri := range []string{"/dealer/content/guides/listing", "/dealer/content/glossary/details?slug=x"} {
		st, m, hdr := probeGet(h, uri, "X-Api-Key", "demo-key-orphan")
		for _, name := range []string{"Deprecation", "Sunset", "Link"} {
			if len(hdr.Peek(name)) == 0 {
				t.Errorf("%s: %d %v without %s header", uri, st, m["code"], name)
			}
		}
	}
}
