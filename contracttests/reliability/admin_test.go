package reliability

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAdminRefusesForeignPages is issue 15's admin audit on the real
// binary (admin on loopback, no token): a cross-origin text/plain POST to
// /admin/purge and a DNS-rebinding read of /metrics are refused, and a
// cached entry survives the refused purge; the same requests from the
// admin's own origin and from curl work.
func TestAdminRefusesForeignPages(t *testing.T) {
	s := startStack(t, nil)
	s.get(t, listing, keyAlpha) // MISS: cached now
	host := strings.TrimPrefix(s.edge.Admin, "http://")
	c := &http.Client{Timeout: 5 * time.Second}
	do := func(method, path, body string, hdr ...string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, s.edge.Admin+path, strings.NewReader(body))
		for i := 0; i+1 < len(hdr); i += 2 {
			if hdr[i] == "Host" {
				req.Host = hdr[i+1]
				continue
			}
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct {
		name, method, path, body string
		hdr                      []string
		want                     int
	}{
		{"cross-origin text/plain purge", "POST", "/admin/purge?dealer_id=101", "x", []string{"Origin", "https://evil.example", "Content-Type", "text/plain"}, 403},
		{"cross-origin reload", "POST", "/admin/reload", "", []string{"Origin", "https://evil.example"}, 403},
		{"DNS rebinding metrics read", "GET", "/metrics", "", []string{"Host", "evil.example:" + host[strings.LastIndexByte(host, ':')+1:]}, 403},
		{"text/plain body without Origin", "POST", "/admin/purge?dealer_id=101", "dealer_id=101", []string{"Content-Type", "text/plain"}, 415},
		{"own origin reads metrics", "GET", "/metrics", "", []string{"Origin", "http://" + host, "Sec-Fetch-Site", "same-origin"}, 200},
	} {
		if st, body := do(tc.method, tc.path, tc.body, tc.hdr...); st != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, st, body, tc.want)
		}
	}
	if r := s.get(t, listing, keyAlpha); r.Header.Get("X-Cache") != "HIT" {
		t.Errorf("after the refused purges: X-Cache %q, want HIT (the entry must survive)", r.Header.Get("X-Cache"))
	}
	// A Redis round trip stalled past redis.timeout (50 ms) on a loaded
	// machine marks Redis down for a moment, and a purge then is a 503
	// (deferred): that is the documented behaviour, not what this test is
	// about, so the purge is asked again until Redis is back.
	st, body := do("POST", "/admin/purge?dealer_id=101", "", "Origin", "http://"+host)
	for end := time.Now().Add(10 * time.Second); st == 503 && strings.Contains(body, "redis") && time.Now().Before(end); {
		time.Sleep(200 * time.Millisecond)
		st, body = do("POST", "/admin/purge?dealer_id=101", "", "Origin", "http://"+host)
	}
	if st != 200 {
		t.Fatalf("purge from the admin's own origin: %d %s", st, body)
	}
	if r := s.get(t, listing, keyAlpha); r.Header.Get("X-Cache") != "MISS" {
		t.Errorf("after the purge: X-Cache %q, want MISS", r.Header.Get("X-Cache"))
	}
}
