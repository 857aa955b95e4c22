package aggregator

import (
	"context"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// TestIndexIntervalReloadTakesEffect: auth.index_interval is reloadable
// (configs/README.md marks it R; README, Operations: "it times the wait
// under way too"): after a reload that shortens it (60s -> 50ms, with
// index_stale_after 2m -> 1s) the index syncs at the new interval at once.
// Before 2026-11-27 the running loop slept out the old interval, so a key
// added at the dealers service waited up to a minute and the index went
// stale under the new index_stale_after meanwhile.
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
		t.Fatalf("auth.index_interval reloaded 60s -> 50ms: %d sync(s) in the next second, want about 20 (index state %q)", n, got.IndexState)
	}
}
