package aggregator

import (
	"context"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// TestIndexIntervalReloadTakesEffect: auth.index_interval is marked R
// ("take effect for the next request"). A reload that shortens it (60s ->
// 50ms, index_stale_after 30s -> 1s) must make the index sync at the new
// interval; the running loop keeps sleeping the old interval, so a key added
// at the dealers service is not accepted for up to the OLD interval, and the
// index turns stale under the new, shorter index_stale_after meanwhile.
func TestIndexIntervalReloadTakesEffect(t *testing.T) {
	e := newIndexEdge(t, fake.Options{}, func(s *Settings) { s.IndexInterval = time.Minute; s.IndexStaleAfter = 2 * time.Minute }, true)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.s.RunKeyIndex(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	// Wait for the first sync (snapshot) of the loop.
	for end := time.Now().Add(5 * time.Second); e.s.AuthStats().IndexSyncs == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("no first sync")
		}
	}
	st := DefaultSettings()
	st.IndexInterval = 50 * time.Millisecond
	st.IndexStaleAfter = time.Second
	if err := e.s.UpdateSettings(st); err != nil {
		t.Fatal(err)
	}
	before := e.s.AuthStats().IndexSyncs
	time.Sleep(time.Second)
	got := e.s.AuthStats()
	if n := got.IndexSyncs - before; n < 5 {
		t.Fatalf("auth.index_interval reloaded 60s -> 50ms: %d sync(s) in the next second (want about 20); index state %q (index_stale_after is now 1s, so the index has stopped deciding alone)", n, got.IndexState)
	}
}
