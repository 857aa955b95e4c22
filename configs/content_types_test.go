package configs

import (
	"strings"
	"testing"
)

// TestContentTypeEntryWithoutTTL: an entry of cache.content_types has no
// default of its own (configs/README.md), so a field left out is 0, and a
// ttl of 0 turns caching off for the type (X-Cache: BYPASS, every request
// a call to the content service, no stale answer when it fails). An entry
// that sets only a stale window, {"faq": {"stale_if_error": "6h"}} (an
// operator making FAQ pages outlast an outage), therefore turned FAQ
// caching off and left the window unused: the opposite of its intent.
// Before 2026-11-29 it validated; now it is refused naming the ttl.
func TestContentTypeEntryWithoutTTL(t *testing.T) {
	for _, body := range []string{
		`{"cache": {"content_types": {"faq": {"stale_if_error": "6h"}}}}`,
		`{"cache": {"content_types": {"news": {"stale_while_revalidate": "1m"}}}}`,
		`{"cache": {"content_types": {"news": {"ttl": "0s", "stale_if_error": "1h"}}}}`,
	} {
		_, err := Load(writeConfigFile(t, body))
		if err == nil || !strings.Contains(err.Error(), "cache.content_types.") || !strings.Contains(err.Error(), ".ttl:") {
			t.Errorf("%s: err = %v; want an error naming the entry's ttl", body, err)
		}
	}
	for _, body := range []string{
		`{"cache": {"content_types": {"faq": {"ttl": "10m", "stale_if_error": "6h"}}}}`,
		`{"cache": {"content_types": {"faq": {"ttl": "0s"}}}}`, // caching off for the type, on purpose
		// A route's entry merges over the route's default: ttl 0s turns
		// it off and keeps the default windows (documented).
		`{"cache": {"routes": {"content_hub": {"ttl": "0s"}}}}`,
	} {
		if _, err := Load(writeConfigFile(t, body)); err != nil {
			t.Errorf("%s refused: %v", body, err)
		}
	}
}
