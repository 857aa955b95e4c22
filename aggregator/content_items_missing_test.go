package aggregator

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dealer-edge/dealer-edge/cache"
)

// TestContentAnswerWithoutItemsIsUnavailable: a 200 answer of the content
// service without its items member ({} or null, a gateway's or a broken
// deploy's answer) is malformed: the content listing is a 503
// service_unavailable problem, not an empty listing cached for the view's
// TTL (before 2026-11-29 the dealer's listing showed no item until the
// TTL ended). {"items":null}, a Go service's empty list, stays an empty
// listing. The next good answer is served at once (nothing was cached).
func TestContentAnswerWithoutItemsIsUnavailable(t *testing.T) {
	for _, tc := range []struct {
		body   string
		status int
	}{
		{`{}`, 503},
		{`null`, 503},
		{`{"error":"no backend"}`, 503},
		{`{"items":null}`, 200},
		{`{"items":[]}`, 200},
	} {
		t.Run(tc.body, func(t *testing.T) {
			var bad atomic.Bool
			bad.Store(true)
			s := newBenchServerVia(t, true, nil, cache.Options{}, interceptingProxy(t, func(w http.ResponseWriter, r *http.Request) bool {
				if !bad.Load() || !strings.HasPrefix(r.URL.Path, "/content/") || !strings.HasSuffix(r.URL.Path, "/faq") {
					return false
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tc.body))
				return true
			}))
			base := serveLoopback(t, s)
			a := rawDo(t, "GET", base+"/dealer/content/faq/listing", "X-Api-Key", "demo-key-alpha")
			var p struct {
				Code  string            `json:"code"`
				Items []json.RawMessage `json:"items"`
			}
			_ = json.Unmarshal(a.body, &p)
			if a.status != tc.status {
				t.Fatalf("status %d %s, want %d", a.status, a.body, tc.status)
			}
			if tc.status == 503 {
				if p.Code != "service_unavailable" || a.header.Get("Content-Type") != "application/problem+json" {
					t.Fatalf("%q %s, want a service_unavailable problem", a.header.Get("Content-Type"), a.body)
				}
				bad.Store(false)
				a = rawDo(t, "GET", base+"/dealer/content/faq/listing", "X-Api-Key", "demo-key-alpha")
				_ = json.Unmarshal(a.body, &p)
				if a.status != 200 || len(p.Items) == 0 {
					t.Fatalf("after the service recovered: %d %s, want the dealer's items", a.status, a.body)
				}
			} else if len(p.Items) != 0 {
				t.Fatalf("%s, want an empty listing", a.body)
			}
		})
	}
}
