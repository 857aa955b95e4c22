package configs

import (
	"strings"
	"testing"
)

// TestUnknownFieldNamesItsPath: an unknown field is refused with where
// it is, as every other config error names its field (configs/README.md).
// Before 2026-11-29 the message was encoding/json's alone, `json: unknown
// field "brust"`, with no path: in a file with several plans, routes or
// rate limits the operator had to search for the typo, and a name valid
// elsewhere ("ttl" under cache instead of a route) did not say where it
// was misplaced.
func TestUnknownFieldNamesItsPath(t *testing.T) {
	cases := []struct{ body, want string }{
		{`{"lissten": "127.0.0.1:8080"}`, `unknown field "lissten"`},
		{`{"server": {"read_timout": "5s"}}`, `server: unknown field "read_timout"`},
		{`{"cache": {"ttl": "1s"}}`, `cache: unknown field "ttl"`},
		{`{"rate_limit": {"default": {"rate": 1, "brust": 2}}}`, `rate_limit.default: unknown field "brust"`},
		{`{"rate_limit": {"plans": {"gold": {"rate": 1, "brust": 2}}}}`, `rate_limit.plans.gold: unknown field "brust"`},
		{`{"cache": {"routes": {"content_hub": {"tll": "1s"}}}}`, `cache.routes.content_hub: unknown field "tll"`},
		{`{"cache": {"content_types": {"faq": {"ttl": "1m", "stale": "1h"}}}}`, `cache.content_types.faq: unknown field "stale"`},
	}
	for _, c := range cases {
		_, err := Load(writeConfigFile(t, c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v; want it to say %s", c.body, err, c.want)
		}
	}
}
