package cache

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
)

// TestPeekPut: a fact Put in one instance is found by Peek in another
// through Redis (a hit, counted as one), for its TTL only, never for
// another dealer, never after a purge of the dealer or of everything,
// and not at all when the purge came between the Peek that took the
// Stamp and the Put.
func TestPeekPut(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	now := time.Now()
	clock := func() time.Time { return now }
	prefix := "pk" + strconv.Itoa(int(time.Now().UnixNano()%1e9))
	mk := func() *Cache {
		return newCache(t, Options{Redis: newClient(t, srv.Addr), Prefix: prefix, Now: clock})
	}
	a, b := mk(), mk()
	waitFor(t, "subscriptions", func() bool { return a.Stats().PubSubUp && b.Stats().PubSubUp })
	pol := Policy{TTL: 10 * time.Second}
	key := []byte("absent\x00/k")
	peek := func(c *Cache, dealer int64) bool { _, ok := c.Peek(ctx, dealer, key, pol); return ok }

	st, ok := a.Peek(ctx, 1, key, pol)
	if ok {
		t.Fatal("Peek found a fact nobody Put")
	}
	a.Put(ctx, 1, key, pol, st, []byte("404"))
	hits := b.Stats().Hits
	if !peek(a, 1) || !peek(b, 1) {
		t.Fatal("a fact Put is not found in L1 and through Redis")
	}
	if got := b.Stats().Hits - hits; got != 1 {
		t.Errorf("b's Peek counted %d hits, want 1", got)
	}
	if peek(a, 2) || peek(b, 2) {
		t.Fatal("dealer 1's fact found for dealer 2")
	}
	now = now.Add(pol.TTL)
	if peek(a, 1) || peek(b, 1) {
		t.Fatal("a fact found after its TTL")
	}

	for _, purge := range []struct {
		name string
		do   func() error
	}{
		{"dealer", func() error { return a.PurgeDealer(ctx, 1) }},
		{"all", func() error { return a.PurgeAll(ctx) }},
	} {
		st, _ := a.Peek(ctx, 1, key, pol)
		a.Put(ctx, 1, key, pol, st, []byte("404"))
		// b may not have heard of the previous round's last purge yet
		// (purges reach other instances asynchronously): until it has,
		// it looks under the dealer's old generation and misses.
		waitFor(t, purge.name+": the fact Put found by b", func() bool { return peek(b, 1) })
		if err := purge.do(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "purge in b", func() bool { return !peek(b, 1) })
		if peek(a, 1) {
			t.Fatalf("purge of %s: the fact is still found in the purging instance", purge.name)
		}
		// A Stamp taken before a purge stores nothing after it.
		st, _ = a.Peek(ctx, 1, key, pol)
		if err := purge.do(); err != nil {
			t.Fatal(err)
		}
		a.Put(ctx, 1, key, pol, st, []byte("404"))
		if peek(a, 1) || peek(b, 1) {
			t.Fatalf("purge of %s: a fact learnt before the purge was stored after it", purge.name)
		}
	}
	var zero Stamp
	a.Put(ctx, 1, key, pol, zero, []byte("404"))
	if peek(a, 1) {
		t.Fatal("Put with the zero Stamp stored a fact")
	}
}
