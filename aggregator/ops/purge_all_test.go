package ops

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

// TestAdminPurgeAll: POST /admin/purge?all=true calls PurgeAll once, with
// the admin token as every purge, answers 200 {"status":"purged","all":true}
// and counts edge_cache_purges_all_total; every other form of the query is
// refused before anything is purged, and a purge Redis did not take is 503
// with a detail that does not name Redis.
func TestAdminPurgeAll(t *testing.T) {
	const tok = "s3cret-admin-token"
	var all, dealer atomic.Int64
	fail := atomic.Bool{}
	m := NewMetrics(MetricsOptions{Routes: []string{"content_hub"}})
	c := adminServer(t, AdminOptions{
		Token:   tok,
		Metrics: m,
		Purge:   func(context.Context, int64) error { dealer.Add(1); return nil },
		PurgeAll: func(context.Context) error {
			all.Add(1)
			if fail.Load() {
				return errors.New("cache: purge all: deferred: dial tcp 10.20.30.40:6379: connection refused")
			}
			return nil
		},
	})
	for _, tc := range []struct {
		name, method, uri, token string
		fail                     bool
		status                   int
		wantAll                  int64 // PurgeAll calls it makes
	}{
		{"without token", "POST", "/admin/purge?all=true", "", false, 401, 0},
		{"wrong token", "POST", "/admin/purge?all=true", "nope", false, 401, 0},
		{"by GET", "GET", "/admin/purge?all=true", tok, false, 405, 0},
		{"all=false", "POST", "/admin/purge?all=false", tok, false, 422, 0},
		{"all=1", "POST", "/admin/purge?all=1", tok, false, 422, 0},
		{"all empty", "POST", "/admin/purge?all=", tok, false, 422, 0},
		{"all and dealer_id", "POST", "/admin/purge?all=true&dealer_id=101", tok, false, 422, 0},
		{"purge all", "POST", "/admin/purge?all=true", tok, false, 200, 1},
		{"Redis did not take it", "POST", "/admin/purge?all=true", tok, true, 503, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fail.Store(tc.fail)
			before := all.Load()
			a := call(t, c, tc.method, tc.uri, tc.token)
			if a.status != tc.status {
				t.Fatalf("got %d, want %d: %s", a.status, tc.status, a.raw)
			}
			if got := all.Load() - before; got != tc.wantAll {
				t.Errorf("PurgeAll called %d times, want %d", got, tc.wantAll)
			}
			switch tc.status {
			case 200:
				if a.ctype != "application/json" || a.body["status"] != "purged" || a.body["all"] != true {
					t.Errorf("answer %q %v", a.ctype, a.body)
				}
			default:
				if a.ctype != "application/problem+json" {
					t.Errorf("content type %q", a.ctype)
				}
			}
			if strings.Contains(a.raw, "10.20.30.40") {
				t.Errorf("the answer names the Redis address: %s", a.raw)
			}
		})
	}
	if dealer.Load() != 0 {
		t.Errorf("a purge of everything called the dealer purge %d times", dealer.Load())
	}
	var buf bytes.Buffer
	m.WritePrometheus(&buf)
	if !strings.Contains(buf.String(), "edge_cache_purges_all_total 1\n") {
		t.Errorf("edge_cache_purges_all_total is not 1 (the one purge Redis took):\n%s", grepLines(buf.String(), "purges"))
	}
	if strings.Contains(buf.String(), "edge_cache_purges_total 1") {
		t.Error("a purge of everything counted as a dealer purge")
	}

	// Without a PurgeAll function the endpoint is not implemented.
	if a := call(t, adminServer(t, AdminOptions{}), "POST", "/admin/purge?all=true", ""); a.status != 501 {
		t.Errorf("purge all without a function: %d", a.status)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
