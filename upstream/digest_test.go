package upstream

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestDigest: a call with a Digest records a digest of the answer's body
// (and the seed); with Prev equal to it the call returns ErrUnchanged
// without decoding; another body or seed gives another digest; unchanged
// answers are successes for the breaker; a non-200 answer sets nothing.
func TestDigest(t *testing.T) {
	ts := newTestServer(t)
	c := newTestClient(t, ts, func(o *Options) {
		o.Breaker = BreakerSettings{ConsecutiveFailures: 3, OpenFor: time.Minute, HalfOpenRequests: 1}
	})
	const page1 = `{"total":1,"items":[{"id_auto":"a1","dealer_id":7,"service":"REWIND","make":"Fiat"}]}`
	const page2 = `{"total":1,"items":[{"id_auto":"a1","dealer_id":7,"service":"REWIND","make":"Jeep"}]}`
	list := func(d *Digest) (VehiclePage, error) {
		var pg VehiclePage
		err := c.ListVehiclesInto(WithDigest(context.Background(), d), 7, VehicleQuery{Service: "REWIND"}, &pg)
		return pg, err
	}

	ts.set(200, page1, 0)
	first := &Digest{Seed: 1}
	if pg, err := list(first); err != nil || len(pg.Items) != 1 || first.Sum == 0 {
		t.Fatalf("first call: %v, %d items, sum %x", err, len(pg.Items), first.Sum)
	}
	// The same answer: unchanged, nothing decoded; many of them do not
	// trip the breaker.
	for i := 0; i < 10; i++ {
		d := &Digest{Seed: 1, Prev: first.Sum}
		pg, err := list(d)
		if !errors.Is(err, ErrUnchanged) || len(pg.Items) != 0 || d.Sum != first.Sum {
			t.Fatalf("same answer: %v, %d items decoded, sum %x", err, len(pg.Items), d.Sum)
		}
	}
	if st := c.BreakerStates()[SvcInventory]; st != BreakerClosed {
		t.Fatalf("unchanged answers tripped the breaker: %s", st)
	}
	// Another seed: another digest, decoded.
	other := &Digest{Seed: 2, Prev: first.Sum}
	if pg, err := list(other); err != nil || len(pg.Items) != 1 || other.Sum == first.Sum {
		t.Fatalf("other seed: %v, %d items, sum %x", err, len(pg.Items), other.Sum)
	}
	// Another body: decoded, another digest.
	ts.set(200, page2, 0)
	d := &Digest{Seed: 1, Prev: first.Sum}
	if pg, err := list(d); err != nil || len(pg.Items) != 1 || pg.Items[0].Make != "Jeep" || d.Sum == first.Sum {
		t.Fatalf("changed answer: %v, %+v, sum %x", err, pg.Items, d.Sum)
	}
	// Prev zero never answers unchanged.
	z := &Digest{Seed: 1}
	if _, err := list(z); err != nil || z.Sum != d.Sum {
		t.Fatalf("no prev: %v, sum %x want %x", err, z.Sum, d.Sum)
	}
	// An error answer: the call fails as before, no digest.
	ts.set(500, page2, 0)
	e := &Digest{Seed: 1, Prev: d.Sum}
	if _, err := list(e); !errors.Is(err, ErrUnavailable) || e.Sum != 0 {
		t.Fatalf("500: %v, sum %x", err, e.Sum)
	}
}
