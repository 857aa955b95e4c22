package aggregator

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// growingBackend answers vehicle listings from the first n vehicles of
// the dealer's REWIND stock: a test grows the stock by raising n.
type growingBackend struct {
	Backend
	n atomic.Int64
}

func (b *growingBackend) ListVehicles(_ context.Context, dealerID int64, q upstream.VehicleQuery) (upstream.VehiclePage, error) {
	// A context of its own: no revalidation digest reaches the real call.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	all, err := b.Backend.ListVehicles(ctx, dealerID, upstream.VehicleQuery{Service: q.Service, Page: 1, PageSize: 100})
	if err != nil {
		return upstream.VehiclePage{}, err
	}
	items := all.Items[:min(int(b.n.Load()), len(all.Items))]
	out := upstream.VehiclePage{Total: len(items)}
	if from := (q.Page - 1) * q.PageSize; from < len(items) {
		out.Items = append(out.Items, items[from:min(from+q.PageSize, len(items))]...)
	}
	return out, nil
}

// TestPastEndPageNoOlderThanTTL: a page answered past the end from the
// query's known total must not be served fresh (HIT) with a total older
// than the route's ttl, which is what a page filled from the service
// guarantees ("the total is as fresh as the cached pages").
func TestPastEndPageNoOlderThanTTL(t *testing.T) {
	clock := newNFClock()
	c, err := cache.New(cache.Options{ServeStaleOn: ServeStaleOn, DropOn: DropOn, Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	gb := &growingBackend{}
	gb.n.Store(2)
	e := newIndexEdge(t, fake.Options{}, nil, false, func(o *Options) {
		o.Cache = c
		gb.Backend = o.Backend
		o.Backend = gb
	})
	const key = "demo-key-alpha"
	ttl := DefaultSettings().Cache[RouteInventoryListing].TTL // 30s
	if st, body := e.body(t, "/dealer/REWIND/listing?page=1&page_size=2", key); st != 200 || !strings.Contains(body, `"total":2`) {
		t.Fatalf("page 1: %d %s", st, body)
	}
	clock.add(time.Second)
	gb.n.Store(4)                  // two vehicles added at t=1s
	clock.add(ttl - 2*time.Second) // t=29s: the total (learnt at 0s) still fresh
	if st, body := e.body(t, "/dealer/REWIND/listing?page=2&page_size=2", key); st != 200 || !strings.Contains(body, `"total":2`) {
		t.Fatalf("page 2 at 29s: %d %s", st, body)
	}
	clock.add(ttl/2 + time.Second) // t=45s: the stock grew 44 s ago, more than ttl
	ctx := e.request("/dealer/REWIND/listing?page=2&page_size=2", key)
	xc, body := string(ctx.Response.Header.Peek("X-Cache")), string(ctx.Response.Body())
	if xc == "HIT" && strings.Contains(body, `"total":2`) {
		t.Fatalf("at 45s page 2 is a fresh HIT made from a total learnt at 0s (%v old, ttl %v), the stock has had 4 vehicles since 1s: %s", 45*time.Second, ttl, body)
	}
}

// gatedBackend is growingBackend whose call for page 1 reads the stock
// and then waits for release: an answer read before a later call's.
type gatedBackend struct {
	growingBackend
	entered, release chan struct{}
}

func (b *gatedBackend) ListVehicles(ctx context.Context, dealerID int64, q upstream.VehicleQuery) (upstream.VehiclePage, error) {
	p, err := b.growingBackend.ListVehicles(ctx, dealerID, q)
	if q.Page == 1 {
		close(b.entered)
		<-b.release
	}
	return p, err
}

// TestOlderTotalDoesNotReplaceNewer: a listing fill whose answer was read
// before another fill's must not store its older total over the newer one
// (the responses' own rule: a refresh that read its sources before a
// miss's fill did must not write its older body over the miss's).
func TestOlderTotalDoesNotReplaceNewer(t *testing.T) {
	c, err := cache.New(cache.Options{ServeStaleOn: ServeStaleOn, DropOn: DropOn})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	gb := &gatedBackend{entered: make(chan struct{}), release: make(chan struct{})}
	gb.n.Store(2)
	e := newIndexEdge(t, fake.Options{}, nil, false, func(o *Options) {
		o.Cache = c
		gb.Backend = o.Backend
		o.Backend = gb
	})
	const key = "demo-key-alpha"
	done := make(chan struct{})
	go func() { defer close(done); e.body(t, "/dealer/REWIND/listing?page=1&page_size=2", key) }()
	<-gb.entered  // page 1's fill read total 2
	gb.n.Store(4) // the stock grows
	if st, body := e.body(t, "/dealer/REWIND/listing?page=2&page_size=2", key); st != 200 || !strings.Contains(body, `"total":4`) {
		t.Fatalf("page 2: %d %s", st, body) // learns total 4
	}
	close(gb.release)
	<-done // page 1's fill ends, with its total 2 read before
	if st, body := e.body(t, "/dealer/REWIND/listing?page=3&page_size=1", key); st != 200 || !strings.Contains(body, `"total":4`) {
		t.Fatalf("page 3 of size 1 (vehicle 3 of 4): %d %s", st, body)
	}
}
