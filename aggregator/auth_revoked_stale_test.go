package aggregator

import (
	"context"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// TestRevokedKeyStaysRevoked: README (Decisions, Authentication): "A key
// the index stopped holding (revoked or expired there) is refused from
// then on: its principal resolved before that sync is no stale fallback
// when the index later goes stale, or expires, and a lookup cannot be
// made". Two ways it came back as 200 with the dealers service down:
//   - expired: the revocation guard covered the stale state only; past
//     index_stale_after + auth.stale the principal cached before the
//     revocation was the stale fallback again;
//   - lookup principal, stale: a principal resolved by a lookup (before
//     the first snapshot) answered by itself (usable) for its auth.ttl once
//     the index went stale, before the guard was reached.
func TestRevokedKeyStaysRevoked(t *testing.T) {
	for _, tc := range []struct {
		name      string
		settings  func(*Settings)
		indexWarm bool          // the index synced before the warm request (else: looked up)
		advance   time.Duration // after the revocation's sync, with the dealers service down
		state     string
	}{
		// Defaults: ttl 60s, stale 10m, index_stale_after 30s. Past
		// index_stale_after + auth.stale (630 s) since the last good sync,
		// within auth.ttl + auth.stale (660 s) of the warm request.
		{"index principal, index expired", nil, true, 635 * time.Second, IndexGone},
		// 4 s after the lookup (auth.ttl 60 s): the index stale.
		{"lookup principal, index stale", func(s *Settings) {
			s.IndexInterval = time.Second
			s.IndexStaleAfter = 2 * time.Second
		}, false, 3 * time.Second, IndexStale},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newIndexEdge(t, fake.Options{}, tc.settings, true)
			now := time.Now()
			e.s.now, e.s.realClock = func() time.Time { return now }, false
			e.s.index.now = e.s.now
			if tc.indexWarm {
				e.sync(t)
			}
			if got := e.get("demo-key-alpha"); got != 200 {
				t.Fatalf("warm: %d", got)
			}
			e.fk.RevokeKey("demo-key-alpha")
			now = now.Add(time.Second)
			e.sync(t)
			if got := e.get("demo-key-alpha"); got != 401 {
				t.Fatalf("after the revocation was synced: %d, want 401", got)
			}
			e.fk.SetDown(upstream.SvcDealers, true)
			now = now.Add(tc.advance)
			_ = e.s.SyncKeyIndex(context.Background())
			if st := e.s.AuthStats(); st.IndexState != tc.state {
				t.Fatalf("state %q, want %q", st.IndexState, tc.state)
			}
			if got := e.get("demo-key-alpha"); got != 401 {
				t.Fatalf("revoked key answered %d with the index %s and the dealers service down; want 401, as after the revocation", got, tc.state)
			}
		})
	}
}
