package cache

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// redisFlags is the flags byte of the one entry in Redis.
func redisFlags(t *testing.T, mr *miniredis.Miniredis) byte {
	t.Helper()
	for _, k := range mr.Keys() {
		if v, err := mr.Get(k); err == nil && len(v) > wireHeader {
			return v[1]
		}
	}
	t.Fatalf("no entry in redis: %v", mr.Keys())
	return 0
}

// TestPlainBelowBulkReader: an instance with a bulk tier (l1_max_bytes
// above 256 MiB) that reads a small value stored plain from Redis keeps its
// copy plain. Before decodeEntry marked such a value plainWire, every L2
// hit of it compressed it for the bulk tier (l1put -> bulk.put -> appendEntry
// -> Gzip).
func TestPlainBelowBulkReader(t *testing.T) {
	_, rc := newMiniRedis(t)
	writer := newCache(t, Options{Redis: rc, L1MaxBytes: -1})
	writer.SetPlainBelow(1024)
	reader := bulkOnly(t, Options{Redis: rc})
	reader.SetPlainBelow(1024)
	waitFor(t, "subscriptions", func() bool { return writer.Stats().PubSubUp && reader.Stats().PubSubUp })
	pol := Policy{TTL: time.Hour}
	small := listingBody(3, 1)
	if len(small) >= 1024 {
		t.Fatalf("%d bytes", len(small))
	}
	mustGet(t, writer, 1, "/small", pol, func(context.Context) ([]byte, error) { return small, nil })
	e, res := mustGet(t, reader, 1, "/small", pol, func(context.Context) ([]byte, error) { return small, nil })
	if res != Hit || reader.Stats().L2Hits != 1 {
		t.Fatalf("res %v, L2 hits %d", res, reader.Stats().L2Hits)
	}
	if e.gz.Load() != nil {
		t.Errorf("an L2 hit of a %d-byte value stored plain compressed it (gzip variant made)", len(small))
	}
}

// TestPlainBelowRenewed: a revalidated refresh of a small body stored plain
// stores it plain again. Before renewed carried plainWire, the first such
// refresh compressed it and wrote it to Redis gzip.
func TestPlainBelowRenewed(t *testing.T) {
	clock := newFakeClock()
	mr, rc := newMiniRedis(t)
	c := newCache(t, Options{Now: clock.Now, Redis: rc})
	c.SetPlainBelow(1024)
	pol := Policy{TTL: 10 * time.Second, StaleWhileRevalidate: 10 * time.Second}
	f := &sourceFiller{src: 1, items: 1} // a body under 1 KB
	get := func(want Result) *Entry {
		t.Helper()
		e, res, err := c.Get(context.Background(), 7, []byte("/k"), pol, f.fill)
		waitRefreshes(t, c)
		if err != nil || res != want {
			t.Fatalf("got %v %v, want %v", res, err, want)
		}
		return e
	}
	get(Miss)
	if redisFlags(t, mr)&wireGzip != 0 {
		t.Fatal("fill stored compressed")
	}
	clock.Advance(11 * time.Second)
	get(Stale)
	if c.Stats().FillsRevalidated != 1 {
		t.Fatalf("revalidated %d", c.Stats().FillsRevalidated)
	}
	if redisFlags(t, mr)&wireGzip != 0 {
		t.Errorf("after a revalidated refresh the %d-byte body is in Redis compressed", len(listingBody(1, 1)))
	}
}
