package cache

import (
	"context"
	"fmt"
	"github.com/VictoriaMetrics/fastcache"
	"testing"
	"time"
)

// TestBulkAfterPurgeAll: a purge of everything empties the bulk tier
// (fastcache Reset), but the ring clock (bulkTier.written) and the
// admission log are left as they were. Afterwards the empty tier
// (1) reports itself full in edge_cache_bulk_bytes, and (2) weighs every
// write against phantom victims (records of entries the reset dropped),
// so writes an empty tier must take are rejected.
func TestBulkAfterPurgeAll(t *testing.T) {
	c := bulkOnly(t, Options{})
	pol := Policy{TTL: time.Hour}
	ctx := context.Background()
	// Fill the ring past its capacity with keys asked for three times each.
	n := int(c.bulk.capacity/(8<<10)) + 1000
	for i := 0; i < n; i++ {
		body := randomBody(uint64(i), 8<<10)
		key := fmt.Sprintf("/old/%d", i)
		for j := 0; j < 3; j++ {
			mustGet(t, c, 1, key, pol, func(context.Context) ([]byte, error) { return body, nil })
		}
	}
	if w := c.bulk.written.Load(); w < c.bulk.capacity*9/10 {
		t.Fatalf("ring not filled: written %d, capacity %d", w, c.bulk.capacity)
	}
	if err := c.PurgeAll(ctx); err != nil {
		t.Fatal(err)
	}
	st := c.Stats()
	t.Logf("after PurgeAll: bulk entries %d, bulk bytes %d (capacity %d)", st.BulkEntries, st.BulkBytes, c.bulk.capacity)
	if st.BulkEntries == 0 && st.BulkBytes > c.bulk.capacity/2 {
		t.Errorf("empty bulk tier reports %d bytes in use (edge_cache_bulk_bytes)", st.BulkBytes)
	}
	// 1,000 new pages (a twentieth of the tier), each filled once: an empty
	// tier keeps them all, so asking again is a bulk hit.
	rej := c.bulk.rejected.Load()
	const m = 1000
	for i := 0; i < m; i++ {
		body := randomBody(uint64(1e6+i), 8<<10)
		mustGet(t, c, 2, fmt.Sprintf("/new/%d", i), pol, func(context.Context) ([]byte, error) { return body, nil })
	}
	hits := c.Stats().BulkHits
	for i := 0; i < m; i++ {
		mustGet(t, c, 2, fmt.Sprintf("/new/%d", i), pol, func(context.Context) ([]byte, error) { return randomBody(uint64(1e6+i), 8<<10), nil })
	}
	got := c.Stats().BulkHits - hits
	t.Logf("after PurgeAll: %d of %d writes rejected, %d of %d asked again were bulk hits", c.bulk.rejected.Load()-rej, m, got, m)
	if got < m*9/10 {
		t.Errorf("empty bulk tier after PurgeAll kept %d of %d new pages", got, m)
	}
}

// TestBulkRingWithinBudget: the bulk tier's ring (fastcache rounds
// each of its 512 buckets up to whole 64 KiB chunks) must fit in the
// bulk share of cache.l1_max_bytes, so that hot + bulk stays within
// l1_max_bytes.
func TestBulkRingWithinBudget(t *testing.T) {
	for _, tc := range []struct{ max, hot int64 }{
		{1 << 30, 0},               // the documented 1 GiB: 16 MiB hot + 1,008 MiB bulk
		{512 << 20, 0},             // 16 + 496
		{300 << 20, 0},             // 16 + 284
		{48<<20 + 1<<20, 16 << 20}, // 16 + 33
	} {
		c := newCache(t, Options{L1MaxBytes: tc.max, L1HotBytes: tc.hot})
		if c.bulk == nil {
			t.Fatalf("%d: no bulk tier", tc.max)
		}
		var s fastcacheStats
		c.bulk.fc.UpdateStats(&s)
		ring := int64(s.MaxBytesSize)
		if c.l1.max+ring > tc.max {
			t.Errorf("l1_max_bytes %d MiB: hot %d MiB + bulk ring %d MiB = %d MiB (bulk share %d MiB, capacity used by admission and edge_cache_bulk_bytes %d MiB)",
				tc.max>>20, c.l1.max>>20, ring>>20, (c.l1.max+ring)>>20, (tc.max-c.l1.max)>>20, c.bulk.capacity>>20)
		}
	}
}

type fastcacheStats = fastcache.Stats
