package aggregator

import (
	"context"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// TestRevokedKeyComesBackWhenIndexExpires: README (Decisions,
// Authentication): "A key the index stopped holding (revoked or expired
// there) is refused from then on: its principal resolved before that sync
// is no stale fallback when the index later goes stale and a lookup cannot
// be made". The guard covers the stale state only: once the index is past
// index_stale_after + auth.stale ("expired"), the principal cached before
// the revocation is the stale fallback again while the dealers service is
// down, and the revoked key answers 200.
func TestRevokedKeyComesBackWhenIndexExpires(t *testing.T) {
	e := newIndexEdge(t, fake.Options{}, nil, true) // defaults: ttl 60s, stale 10m, index_stale_after 30s
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
	e.fk.SetDown(upstream.SvcDealers, true)
	// Past index_stale_after + auth.stale (630 s) since the last good
	// sync, within auth.ttl + auth.stale (660 s) of the warm request.
	now = now.Add(635 * time.Second)
	_ = e.s.SyncKeyIndex(context.Background())
	if st := e.s.AuthStats(); st.IndexState != IndexGone {
		t.Fatalf("state %q, want expired", st.IndexState)
	}
	if got := e.get("demo-key-alpha"); got != 401 {
		t.Fatalf("revoked key answered %d once the index expired with the dealers service down; want 401, as after the revocation", got)
	}
}

// TestRevokedLookupPrincipalUsableWhenIndexGoesStale: the same
// README promise, for a principal resolved by a lookup (before the first
// snapshot) rather than from the index. The index's first sync no longer
// holds the key (revoked meanwhile): 401. When the index then goes stale,
// the principal's auth.ttl has not run out, and usable() answers with it
// before authenticate's revocation guard is reached: 200 for a revoked key.
func TestRevokedLookupPrincipalUsableWhenIndexGoesStale(t *testing.T) {
	e := newIndexEdge(t, fake.Options{}, func(s *Settings) {
		s.IndexInterval = time.Second
		s.IndexStaleAfter = 2 * time.Second
	}, true)
	now := time.Now()
	e.s.now, e.s.realClock = func() time.Time { return now }, false
	e.s.index.now = e.s.now
	// No snapshot yet (state loading): the key is looked up.
	if got := e.get("demo-key-alpha"); got != 200 {
		t.Fatalf("warm (index loading, looked up): %d", got)
	}
	e.fk.RevokeKey("demo-key-alpha")
	now = now.Add(time.Second)
	e.sync(t)
	if got := e.get("demo-key-alpha"); got != 401 {
		t.Fatalf("after the revocation was synced: %d, want 401", got)
	}
	e.fk.SetDown(upstream.SvcDealers, true)
	now = now.Add(3 * time.Second) // index stale; 4 s after the lookup (auth.ttl 60 s)
	_ = e.s.SyncKeyIndex(context.Background())
	if st := e.s.AuthStats(); st.IndexState != IndexStale {
		t.Fatalf("state %q, want stale", st.IndexState)
	}
	if got := e.get("demo-key-alpha"); got != 401 {
		t.Fatalf("revoked key answered %d once the index went stale; want 401, as after the revocation", got)
	}
}
