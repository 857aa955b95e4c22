package aggregator

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

func rawKeyRequest(t *testing.T, addr, hdrs string) (*http.Response, string) {
	t.Helper()
	resps, bodies, _ := rawExchange(t, addr, "GET /dealer/REWIND/listing?page_size=1 HTTP/1.1\r\nHost: edge.test\r\nConnection: close\r\n"+hdrs+"\r\n", "GET")
	return resps[0], string(bodies[0])
}

// TestDuplicateKeyHeaderEmptyFirst: the same key header sent twice is
// 401 invalid_api_key, also when the first is empty (README, Decisions,
// Authentication): a proxy in front might pick the other one. Before
// 2026-11-27 an empty first header made it missing_api_key (the duplicate
// check ran only when the first header held a key).
func TestDuplicateKeyHeaderEmptyFirst(t *testing.T) {
	s := newBenchServer(t, true)
	addr := strings.TrimPrefix(serveLoopback(t, s), "http://")
	for _, c := range []struct{ name, hdrs string }{
		{"empty then key", "X-Api-Key: \r\nX-Api-Key: demo-key-alpha\r\n"},
		{"empty Authorization then Bearer", "Authorization: \r\nAuthorization: Bearer demo-key-alpha\r\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, body := rawKeyRequest(t, addr, c.hdrs)
			if resp.StatusCode != 401 || !strings.Contains(body, `"code":"invalid_api_key"`) {
				t.Fatalf("status %d body %s; want 401 invalid_api_key (key header sent twice)", resp.StatusCode, body)
			}
		})
	}
}

// TestRevokedKeyComesBackWhenIndexGoesStale: a key the index stopped
// holding (revoked at the dealers service) is refused from then on
// (README, Decisions, Authentication): when the index later goes stale and
// the lookup fails with the dealers service down, the principal resolved
// before the revocation is no stale fallback and the answer stays 401.
// Before 2026-11-27 the key was served 200 again for up to auth.ttl +
// auth.stale after it was last resolved.
func TestRevokedKeyComesBackWhenIndexGoesStale(t *testing.T) {
	e := newIndexEdge(t, fake.Options{}, func(s *Settings) {
		s.IndexInterval = time.Second
		s.IndexStaleAfter = 2 * time.Second
		// auth.ttl 60s and auth.stale 10m: the defaults.
	}, true)
	now := time.Now()
	e.s.now, e.s.realClock = func() time.Time { return now }, false
	e.s.index.now = e.s.now
	e.sync(t)
	if got := e.get("demo-key-alpha"); got != 200 {
		t.Fatalf("warm: %d", got)
	}
	e.fk.RevokeKey("demo-key-alpha")
	now = now.Add(time.Second)
	e.sync(t)
	if got := e.get("demo-key-alpha"); got != 401 {
		t.Fatalf("after the revocation was synced: %d, want 401", got)
	}
	// The dealers service becomes unreachable; the index goes stale.
	e.fk.SetDown(upstream.SvcDealers, true)
	now = now.Add(3 * time.Second)
	_ = e.s.SyncKeyIndex(context.Background())
	if st := e.s.AuthStats(); st.IndexState != IndexStale {
		t.Fatalf("state %q, want stale", st.IndexState)
	}
	if got := e.get("demo-key-alpha"); got != 401 {
		t.Fatalf("revoked key answered %d once the index went stale with the dealers service down; want 401, as after the revocation", got)
	}
}
