package cache

import (
	"context"
	"testing"
	"time"
)

// TestRevalidatedEntryKeepsGzipLevel: an entry stored again by a
// revalidated refresh (ErrUnchanged) must still compress at the cache's
// configured level (cache.gzip_level), as the entry it replaces did.
func TestRevalidatedEntryKeepsGzipLevel(t *testing.T) {
	pol := Policy{TTL: 10 * time.Second, StaleWhileRevalidate: 10 * time.Second}
	clock := newFakeClock()
	c := newCache(t, Options{Now: clock.Now, GzipLevel: 1}) // L1 only
	f := &sourceFiller{src: 1}
	get := func(want Result) *Entry {
		t.Helper()
		e, res, err := c.Get(context.Background(), 7, []byte("/k"), pol, f.fill)
		waitRefreshes(t, c)
		if err != nil || res != want {
			t.Fatalf("got %v %v, want %v", res, err, want)
		}
		return e
	}
	get(Miss) // an identity client: no gzip variant made yet
	clock.Advance(11 * time.Second)
	get(Stale)
	e := get(Hit)
	if c.Stats().FillsRevalidated != 1 {
		t.Fatalf("not revalidated")
	}
	want := GzipBody(listingBody(1, 20), 1)
	gz, _, ok := e.Gzip()
	if !ok || len(gz) != len(want) {
		t.Fatalf("revalidated entry's gzip variant is %d bytes, level 1 makes %d: compressed at the default level, not cache.gzip_level", len(gz), len(want))
	}
}
