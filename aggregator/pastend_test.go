package aggregator

import (
	"context"
	"fmt"
	"testing"

	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// TestPagesPastTheEndFromTotal: a page past the end answered from the
// query's known total is byte for byte the page a fill makes of the
// service's empty answer (checked against an edge that knows no total),
// for every service, with filters (q, catalog_type) and page sizes;
// a page within the total is still filled (its items); the total is per
// query (another q is not answered from it); a purge of the dealer drops
// it (the next page past the end calls the service again); and a route
// with its cache off keeps none.
func TestPagesPastTheEndFromTotal(t *testing.T) {
	knowing := newIndexEdge(t, fake.Options{}, nil, false)
	fresh := newIndexEdge(t, fake.Options{}, nil, false)
	const key = "demo-key-alpha"
	for _, c := range []struct{ name, query string }{
		{"REWIND", "/dealer/REWIND/listing?"},
		{"NOS", "/dealer/NOS/listing?"},
		{"NLT", "/dealer/NLT/listing?"},
		{"REWIND q", "/dealer/REWIND/listing?q=a&"},
		{"NOS catalog_type", "/dealer/NOS/listing?catalog_type=auto&"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The total, learnt by a fill of page 1.
			if st, body := knowing.body(t, c.query+"page=1&page_size=3", key); st != 200 {
				t.Fatalf("page 1: %d %s", st, body)
			}
			inv0 := knowing.fk.Calls(upstream.SvcInventory)
			for _, ps := range []int{1, 7, 100} {
				uri := fmt.Sprintf("%spage=%d&page_size=%d", c.query, 100000+ps, ps)
				st, got := knowing.body(t, uri, key)
				stF, want := fresh.body(t, uri, key)
				if st != 200 || stF != 200 || got != want {
					t.Fatalf("%s: from the total %d %s\nfilled %d %s", uri, st, got, stF, want)
				}
			}
			if calls := knowing.fk.Calls(upstream.SvcInventory) - inv0; calls != 0 {
				t.Errorf("pages past the end made %d inventory calls, want 0", calls)
			}
		})
	}
	// A page within the total is filled, with its items.
	inv0 := knowing.fk.Calls(upstream.SvcInventory)
	if st, body := knowing.body(t, "/dealer/REWIND/listing?page=2&page_size=3", key); st != 200 || knowing.fk.Calls(upstream.SvcInventory) != inv0+1 {
		t.Fatalf("page 2: %d %s, calls %d", st, body, knowing.fk.Calls(upstream.SvcInventory)-inv0)
	}
	// Another query's pages past the end are not answered from this total.
	inv0 = knowing.fk.Calls(upstream.SvcInventory)
	if st, _ := knowing.body(t, "/dealer/REWIND/listing?q=zz&page=500&page_size=3", key); st != 200 || knowing.fk.Calls(upstream.SvcInventory) != inv0+1 {
		t.Fatalf("another q: %d, calls %d, want 1", st, knowing.fk.Calls(upstream.SvcInventory)-inv0)
	}
	// A purge of the dealer drops the total.
	if err := knowing.s.cache.(*cache.Cache).PurgeDealer(context.Background(), 101); err != nil { // demo-key-alpha's dealer
		t.Fatal(err)
	}
	inv0 = knowing.fk.Calls(upstream.SvcInventory)
	if st, _ := knowing.body(t, "/dealer/REWIND/listing?page=9000&page_size=3", key); st != 200 || knowing.fk.Calls(upstream.SvcInventory) != inv0+1 {
		t.Fatalf("after the purge: %d, calls %d, want 1", st, knowing.fk.Calls(upstream.SvcInventory)-inv0)
	}
	// With the route's cache off nothing is kept: every page is a call.
	off := newIndexEdge(t, fake.Options{}, func(s *Settings) { delete(s.Cache, RouteInventoryListing) }, false)
	if st, _ := off.body(t, "/dealer/REWIND/listing?page=1&page_size=3", key); st != 200 {
		t.Fatal("page 1 with the cache off")
	}
	inv0 = off.fk.Calls(upstream.SvcInventory)
	for i := range 3 {
		if st, _ := off.body(t, fmt.Sprintf("/dealer/REWIND/listing?page=%d&page_size=3", 7000+i), key); st != 200 {
			t.Fatal("page past the end with the cache off")
		}
	}
	if calls := off.fk.Calls(upstream.SvcInventory) - inv0; calls != 3 {
		t.Errorf("cache off: %d calls for 3 pages past the end, want 3", calls)
	}
}
