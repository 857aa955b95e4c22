package upstream_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"unsafe"

	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
	"github.com/dealer-edge/dealer-edge/upstream/fake/corpus"
)

// TestVehiclePageReuseStrings: decoding page after page into one page with
// ReuseStrings (as the listing fill does with its pooled scratch) gives
// each time what a decoding into a fresh page gives, cuts the strings from
// the last decoding's memory (it is reused, not allocated anew), and the
// copy made of a page before the next decoding stays intact.
func TestVehiclePageReuseStrings(t *testing.T) {
	h := fake.NewServer(fake.Options{}).Handler()
	var pg upstream.VehiclePage
	pg.ReuseStrings()
	var kept []string // copies of earlier pages' first ids, and the pages they came from
	reused := 0
	for round := range 3 {
		for _, d := range corpus.DealerIDs() {
			for _, ps := range []int{1, 20, 100} {
				for page := 1; page <= 2; page++ {
					body := fakeBody(t, h, fmt.Sprintf("/inventory/v1/dealers/%d/vehicles?service=REWIND&page=%d&page_size=%d&view=summary", d, page, ps))
					var want upstream.VehiclePage
					if _, err := upstream.DecodeFields(body, &want); err != nil {
						t.Fatal(err)
					}
					before := upstream.ArenaCap(&pg)
					var prev *byte
					if len(pg.Items) > 0 && pg.Items[0].IDAuto != "" {
						prev = unsafe.StringData(pg.Items[0].IDAuto)
					}
					clear(pg.Items)
					pg.Items = pg.Items[:0]
					if _, err := upstream.DecodeFields(body, &pg); err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(pg.Items, want.Items) || pg.Total != want.Total {
						t.Fatalf("round %d dealer %d page %d of %d: reused page differs from a fresh one", round, d, page, ps)
					}
					if prev != nil && before > 0 && len(pg.Items) > 0 && unsafe.StringData(pg.Items[0].IDAuto) == prev {
						reused++
					}
					if len(want.Items) > 0 {
						kept = append(kept, string([]byte(pg.Items[0].IDAuto)), want.Items[0].IDAuto)
					}
				}
			}
		}
	}
	for i := 0; i < len(kept); i += 2 {
		if kept[i] != kept[i+1] {
			t.Fatalf("copy %d: %q, want %q", i/2, kept[i], kept[i+1])
		}
	}
	if reused < 10 {
		t.Fatalf("the arena was reused %d times: too few", reused)
	}
	if c := upstream.ArenaCap(&pg); c > 64<<10 {
		t.Fatalf("kept arena of %d bytes", c)
	}
	if c := upstream.BodyCap(&pg); c == 0 || c > 256<<10 {
		t.Fatalf("kept a body of %d bytes", c)
	}
	if c := upstream.UpfitsCap(&pg); c == 0 || c > 1024 {
		t.Fatalf("kept a block of %d upfits", c)
	}
}

// TestVehiclePageReuseStringsBound: a page keeps the body its strings
// are views of, and the arena of the strings it unquotes, for the next
// decoding, within their bounds: a body too large to keep is not kept, and
// its strings, copied into the arena instead, leave no arena beyond the
// arena's bound either.
func TestVehiclePageReuseStringsBound(t *testing.T) {
	var b []byte
	b = append(b, `{"total":200,"items":[`...)
	for i := range 200 {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"id_auto":"%01500d","make":"Fiat"}`, i)
	}
	b = append(b, "]}"...)
	var pg upstream.VehiclePage
	pg.ReuseStrings()
	if _, err := upstream.DecodeFields(b, &pg); err != nil {
		t.Fatal(err)
	}
	if a, c := upstream.ArenaCap(&pg), upstream.BodyCap(&pg); a != 0 || c != 0 {
		t.Fatalf("kept an arena of %d bytes and a body of %d after a page of %d", a, c, len(b))
	}
	for _, c := range []struct {
		name, in    string
		arena, body bool // kept
	}{
		{"plain", `{"items":[{"id_auto":"a","upfits":[{"code":"U"}],"sale_price_eur":1}]}`, false, true},
		{"escaped", `{"items":[{"id_auto":"a\u00e8"}]}`, true, true},
	} {
		var small upstream.VehiclePage
		small.ReuseStrings()
		if _, err := upstream.DecodeFields([]byte(c.in), &small); err != nil {
			t.Fatal(err)
		}
		if a, k := upstream.ArenaCap(&small) > 0, upstream.BodyCap(&small) > 0; a != c.arena || k != c.body {
			t.Errorf("%s: kept an arena %v, a body %v; want %v, %v", c.name, a, k, c.arena, c.body)
		}
	}
}

// TestListVehiclesIntoKeepsItsBody: a page with ReuseStrings that the
// Client decodes into takes the body's buffer (its strings are views of
// it) and gives the pool its last one: the page's records stay what a
// fresh decoding gives while later calls read their bodies into the
// pool's buffers, and decoding into the page again changes only the page.
func TestListVehiclesIntoKeepsItsBody(t *testing.T) {
	c := fakeClient(t)
	ctx := context.Background()
	var pages [2]upstream.VehiclePage
	for i := range pages {
		pages[i].ReuseStrings()
	}
	ids := corpus.DealerIDs()
	for round := range 6 {
		for i := range pages {
			pg := &pages[i]
			q := upstream.VehicleQuery{Service: "REWIND", Page: 1 + round%2, PageSize: 20 + 30*i}
			d := ids[(round+i)%len(ids)]
			want, err := c.ListVehicles(ctx, d, q)
			if err != nil {
				t.Fatal(err)
			}
			clear(pg.Items)
			if err := c.ListVehiclesInto(ctx, d, q, pg); err != nil {
				t.Fatal(err)
			}
			// Other calls, smaller, whose bodies take the pool's buffers.
			for _, o := range ids {
				if _, err := c.ListVehicles(ctx, o, upstream.VehicleQuery{Service: "NOS", PageSize: 5}); err != nil {
					t.Fatal(err)
				}
			}
			if len(want.Items) == 0 || pg.Total != want.Total || !reflect.DeepEqual(pg.Items, want.Items) {
				t.Fatalf("round %d page %d: the reused page differs from a fresh one", round, i)
			}
		}
	}
	if upstream.BodyCap(&pages[0]) == 0 {
		t.Fatal("the page keeps no body")
	}
}

// TestListOffersIntoKeepsItsBody is TestListVehiclesIntoKeepsItsBody for
// the NLT listing's page (ListOffersInto): equal to ListOffers' while
// later calls read their bodies into the pool's buffers.
func TestListOffersIntoKeepsItsBody(t *testing.T) {
	c := fakeClient(t)
	ctx := context.Background()
	var pg upstream.OfferPage
	pg.ReuseStrings()
	ids := corpus.DealerIDs()
	for round := range 6 {
		d := ids[round%len(ids)]
		q := upstream.OfferQuery{Page: 1, PageSize: 5 + 15*(round%3)}
		want, err := c.ListOffers(ctx, d, q)
		if err != nil {
			t.Fatal(err)
		}
		clear(pg.Items)
		if err := c.ListOffersInto(ctx, d, q, &pg); err != nil {
			t.Fatal(err)
		}
		for _, o := range ids { // smaller bodies, into the pool's buffers
			if _, err := c.ListOffers(ctx, o, upstream.OfferQuery{PageSize: 3}); err != nil {
				t.Fatal(err)
			}
		}
		if len(want.Items) == 0 || pg.Total != want.Total || !reflect.DeepEqual(pg.Items, want.Items) {
			t.Fatalf("round %d: the reused page differs from a fresh one (%d/%d items, total %d/%d)", round, len(pg.Items), len(want.Items), pg.Total, want.Total)
		}
	}
	if upstream.OfferBodyCap(&pg) == 0 {
		t.Fatal("the page keeps no body")
	}
}

// fakeClient returns a Client of a fake upstream that serves on a port of
// its own for the test.
func fakeClient(t *testing.T) *upstream.Client {
	t.Helper()
	fk := fake.NewServer(fake.Options{})
	addr, err := fk.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fk.Close)
	c, err := upstream.New(upstream.Options{BaseURL: "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
