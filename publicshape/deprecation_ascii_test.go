package publicshape

import (
	"testing"
	"time"
)

// TestDeprecationURLsAreURIs: successor_url and sunset_info_url become the
// targets of the Link header (RFC 8288 section 3: a URI-Reference, ASCII
// only) and the payload's successor_version (contract 2.9: string, uri).
// A URL with raw non-ASCII characters (an IRI such as an Italian path with
// an accented letter, or an internationalised host name) passes the
// policy's validation and is sent as raw UTF-8 bytes in the Link field and
// as a value that is no RFC 3986 URI in successor_version. It must be
// refused (or sent percent-encoded).
func TestDeprecationURLsAreURIs(t *testing.T) {
	base := DeprecationPolicy{Deprecation: time.Unix(1767225600, 0), Sunset: time.Unix(1814399999, 0),
		SuccessorURL: "https://editorial.example/"}
	for _, u := range []string{
		"https://concessionario.example/guide/novit\u00e0",
		"https://concessionari\u00e0.example/",
		"https://editorial.example/\u0085",
	} {
		p := base
		p.SuccessorURL = u
		if err := p.Validate(); err == nil {
			_, _, link := p.Headers()
			t.Errorf("successor_url %q accepted: Link %q, successor_version %q", u, link, p.Fields().SuccessorVersion)
		}
		p = base
		p.SunsetInfoURL = u
		if err := p.Validate(); err == nil {
			t.Errorf("sunset_info_url %q accepted", u)
		}
	}
}
