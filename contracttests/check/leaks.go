package check

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// InternalFields are names that exist only on internal records; none may
// appear as a key anywhere in a public response.
var InternalFields = map[string]bool{
	"source_ids": true, "source_id": true, "lookup_cascade": true, "tech_data_dir": true,
	"render_payload": true, "seo_payload": true, "raw_version_optionals": true,
	"crm_source_id": true, "billing_account": true, "browser_widget_secret": true,
	"render_template": true, "prompt_id": true, "tech_ref": true, "internal_cost_eur": true,
	"source_rate_id": true, "tts_voice_id": true, "render_job_id": true, "template_id": true,
	"body_html": true, "hidden_for_dealer": true, "override_of": true, "dealer_id": true,
	"version_code": true, "confirmed_optionals": true, "confirmed_packages": true,
	"sale_price_eur": true, "monthly_fee_eur": true, "key_id": true, "episode_id": true,
	"video_id": true, "optionals": true, "standard": true, "upfits": true, "dealer_alias": true,
}

// InternalMarkers are substrings of internal-only values of the fake
// services; none may appear anywhere in a public response.
var InternalMarkers = []string{"/mnt/techdata", "lookup_cascade", "render_job", "tts-voice", "browser_widget"}

// InternalLeaks returns one line per internal marker found in body and,
// when body is JSON, per internal field name used as a key anywhere in it
// (with its JSON path). The result is empty for a clean body.
func InternalLeaks(body []byte) []string {
	var bad []string
	for _, m := range InternalMarkers {
		if strings.Contains(string(body), m) {
			bad = append(bad, fmt.Sprintf("response contains internal marker %q", m))
		}
	}
	var v any
	if json.Unmarshal(body, &v) != nil {
		return bad
	}
	var walk func(any, string)
	walk = func(n any, path string) {
		switch x := n.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if InternalFields[k] {
					bad = append(bad, fmt.Sprintf("internal field %q at %s", k, path))
				}
				walk(x[k], path+"."+k)
			}
		case []any:
			for _, c := range x {
				walk(c, path+"[]")
			}
		}
	}
	walk(v, "$")
	return bad
}
