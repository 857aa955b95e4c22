package aggregator

import (
	"context"
	"strings"
	"testing"

	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// twoGateBackend is growingBackend whose calls for pages 1 and 2 read the
// stock and then wait, each for its own release.
type twoGateBackend struct {
	growingBackend
	entered, release [3]chan struct{}
}

func (b *twoGateBackend) ListVehicles(ctx context.Context, dealerID int64, q upstream.VehicleQuery) (upstream.VehiclePage, error) {
	p, err := b.growingBackend.ListVehicles(ctx, dealerID, q)
	if q.Page == 1 || q.Page == 2 {
		close(b.entered[q.Page])
		<-b.release[q.Page]
	}
	return p, err
}

// TestNewerTotalNotRefusedForAnOlderOnesLateStore: the mirror of
// TestOlderTotalDoesNotReplaceNewer. keepTotal compares the known total's
// StoredAt (when its fill ENDED) with this fill's stamp (when its call
// BEGAN). A fill A that read the stock first but ended after fill B's call
// began stores A's older total with a later StoredAt; B, which read the
// stock after it grew, then keeps nothing: L1 holds the older total for
// its ttl and pages of existing vehicles are answered empty (the defect
// the commit says it fixed, for the other order of the two fills).
func TestNewerTotalNotRefusedForAnOlderOnesLateStore(t *testing.T) {
	c, err := cache.New(cache.Options{ServeStaleOn: ServeStaleOn, DropOn: DropOn})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	gb := &twoGateBackend{}
	for i := 1; i <= 2; i++ {
		gb.entered[i], gb.release[i] = make(chan struct{}), make(chan struct{})
	}
	gb.n.Store(2)
	e := newIndexEdge(t, fake.Options{}, nil, false, func(o *Options) {
		o.Cache = c
		gb.Backend = o.Backend
		o.Backend = gb
	})
	const key = "demo-key-alpha"
	done1, done2 := make(chan struct{}), make(chan struct{})
	go func() { defer close(done1); e.body(t, "/dealer/REWIND/listing?page=1&page_size=2", key) }()
	<-gb.entered[1] // A (page 1) read total 2
	gb.n.Store(4)   // the stock grows
	go func() { defer close(done2); e.body(t, "/dealer/REWIND/listing?page=2&page_size=2", key) }()
	<-gb.entered[2] // B (page 2) began after A and read total 4
	close(gb.release[1])
	<-done1 // A keeps its total 2 (nothing known yet)
	close(gb.release[2])
	<-done2 // B, newer, should replace it with 4
	if st, body := e.body(t, "/dealer/REWIND/listing?page=3&page_size=1", key); st != 200 || !strings.Contains(body, `"total":4`) {
		t.Fatalf("page 3 of size 1 (vehicle 3 of 4) after the newer fill ended: %d %s", st, body)
	}
}
