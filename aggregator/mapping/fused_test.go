package mapping

import (
	"fmt"
	"math"
	"testing"

	"github.com/dealer-edge/dealer-edge/publicshape"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
	"github.com/dealer-edge/dealer-edge/upstream/fake/corpus"
)

// vehicleListingByItems is the listing body as the edge built it before
// AppendVehicleListing: the items mapped by VehicleItems, then encoded.
func vehicleListingByItems(l publicshape.InventoryListing, vs []upstream.Vehicle) ([]byte, error) {
	l.Items = VehicleItems([]publicshape.InventoryItem{}, vs)
	return publicshape.AppendInventoryListing(nil, &l)
}

// offerListingByItems: see vehicleListingByItems.
func offerListingByItems(l publicshape.InventoryListing, os []upstream.Offer) ([]byte, error) {
	l.Items = OfferItems([]publicshape.InventoryItem{}, os)
	return publicshape.AppendInventoryListing(nil, &l)
}

// TestListingFusedOverCorpus: for every listing page of the fake corpus
// (every dealer, every service, the full view so every field the fake
// fills, pages of 1, 20 and 100 and an empty page past the end),
// AppendVehicleListing and AppendOfferListing write the bytes the items
// path (VehicleItems or OfferItems, then AppendInventoryListing) writes.
func TestListingFusedOverCorpus(t *testing.T) {
	h := fake.NewServer(fake.Options{}).Handler()
	pages, items := 0, 0
	for _, d := range corpus.DealerIDs() {
		for _, svc := range []string{publicshape.ServiceRewind, publicshape.ServiceNOS, publicshape.ServiceNLT} {
			var vs []upstream.Vehicle
			var os []upstream.Offer
			var total int
			if svc == publicshape.ServiceNLT {
				var pg upstream.OfferPage
				fakeGet(t, h, fmt.Sprintf("/inventory/v1/dealers/%d/offers?page_size=1000", d), &pg)
				os, total = pg.Items, pg.Total
			} else {
				var pg upstream.VehiclePage
				fakeGet(t, h, fmt.Sprintf("/inventory/v1/dealers/%d/vehicles?service=%s&page_size=1000&view=full", d, svc), &pg)
				vs, total = pg.Items, pg.Total
			}
			n := max(len(vs), len(os))
			items += n
			for _, size := range []int{1, 20, 100} {
				for page := 1; (page-1)*size <= n; page++ {
					lo, hi := min((page-1)*size, n), min(page*size, n)
					l := publicshape.InventoryListing{Service: svc, Page: page, PageSize: size, Total: total, HasNext: hi < n}
					var want, got []byte
					var err error
					if svc == publicshape.ServiceNLT {
						if want, err = offerListingByItems(l, os[lo:hi]); err != nil {
							t.Fatal(err)
						}
						got = AppendOfferListing([]byte("prefix"), &l, os[lo:hi])
						// The listing decodes offers without their
						// quotations (upstream.Client.ListOffers): the
						// body must not depend on them.
						bare := append([]upstream.Offer(nil), os[lo:hi]...)
						for i := range bare {
							bare[i].Quotations = nil
						}
						if b := AppendOfferListing([]byte("prefix"), &l, bare); string(b) != string(got) {
							t.Fatalf("dealer %d page %d of %d: the body depends on the quotations\nwith    %s\nwithout %s", d, page, size, got, b)
						}
					} else {
						if want, err = vehicleListingByItems(l, vs[lo:hi]); err != nil {
							t.Fatal(err)
						}
						if got, err = AppendVehicleListing([]byte("prefix"), &l, vs[lo:hi]); err != nil {
							t.Fatal(err)
						}
					}
					if string(got) != "prefix"+string(want) {
						t.Fatalf("dealer %d %s page %d of %d: bodies differ\ngot  %s\nwant prefix%s", d, svc, page, size, got, want)
					}
					pages++
				}
			}
		}
	}
	if items < 500 || pages < 100 {
		t.Fatalf("%d items, %d pages: too few to prove anything", items, pages)
	}
}

// TestAppendVehicleListingBadPrice: a NaN or infinite price fails both
// paths alike, and the fused one leaves dst as it was given.
func TestAppendVehicleListingBadPrice(t *testing.T) {
	for _, p := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		vs := []upstream.Vehicle{{IDAuto: "a", Service: "REWIND", Make: "Fiat", Model: "Panda"}, {IDAuto: "b", Service: "REWIND", Make: "Fiat", Model: "Panda", SalePrice: &p}}
		l := publicshape.InventoryListing{Service: "REWIND", Page: 1, PageSize: 20, Total: 2}
		_, wantErr := vehicleListingByItems(l, vs)
		got, err := AppendVehicleListing([]byte("keep"), &l, vs)
		if err != wantErr || err == nil || string(got) != "keep" {
			t.Fatalf("price %v: %q, %v (items path: %v)", p, got, err, wantErr)
		}
	}
}

// FuzzAppendVehicleListing: for vehicles and offers made of fuzzed text
// (white space and escapes in the names, upfits duplicated, unnamed, Altro
// in any case, non-canonical slugs), any price and any flags, the fused
// encoders write the bytes the items path writes.
func FuzzAppendVehicleListing(f *testing.F) {
	f.Add("Fiat", "Doblo", "Cargo Maxi", "UPF-ISO", "Furgone Isotermico", "furgone isotermico", "", "trasporto", uint16(0x1ff), 22790.5)
	f.Add("  Fiat\t", "Dob  lo", "\u00a0Maxi\u2028", "altro", "", "ALTRO", "Su misura <&>", " fam ", uint16(0x2aa), 1e21)
	f.Add("Città", "é\"\\", "a\xffb", "", "--", "  ", "x", "", uint16(0x155), -0.0)
	f.Add("", "", "", "U1", "Gru", "Gru", "", "", uint16(0xfff), 1e-7)
	f.Add(" Fiat", "Doblo ", " ", "U2", "gru", " Gru ", "", "", uint16(0x3000), 100.0)
	f.Fuzz(func(t *testing.T, mk, model, trim, code, slug, label, alias, family string, flags uint16, price float64) {
		on := func(bit int) bool { return flags&(1<<bit) != 0 }
		var ups []upstream.Upfit
		for i := range int(flags>>12) % 6 {
			u := upstream.Upfit{Code: code, Slug: slug, Label: label, DealerAlias: alias, Family: family, Primary: on(i)}
			if on(6 + i%3) {
				u.Code += fmt.Sprint(i)
			}
			if on(9) && i%2 == 1 {
				u.Slug, u.Label = label, slug
			}
			ups = append(ups, u)
		}
		v := upstream.Vehicle{IDAuto: trim + "-id", Service: publicshape.ServiceRewind, Make: mk, Model: model, Trim: trim, CatalogType: family, Upfits: ups, CoverURL: label, HasPodcast: on(10), HasVideo: on(11)}
		if on(3) {
			v.Service = publicshape.ServiceNOS
		}
		if on(4) {
			v.IDAuto = ""
		}
		if on(5) {
			v.SalePrice = &price
		}
		vs := []upstream.Vehicle{v, {IDAuto: "x", Service: v.Service, Make: model, Model: mk, Trim: alias}, v}
		l := publicshape.InventoryListing{Service: v.Service, Page: 2, PageSize: 3, Total: 9, HasNext: on(1)}
		want, wantErr := vehicleListingByItems(l, vs)
		got, err := AppendVehicleListing(nil, &l, vs)
		if err != wantErr || string(got) != string(want) {
			t.Fatalf("vehicles: bodies differ (%v, %v)\ngot  %s\nwant %s", err, wantErr, got, want)
		}
		os := []upstream.Offer{{IDOfferta: int64(flags), Make: mk, Model: model, Version: trim, CoverURL: label, Slug: slug}, {Make: trim, Model: alias}}
		l.Service = publicshape.ServiceNLT
		if want, wantErr = offerListingByItems(l, os); wantErr != nil {
			t.Fatal(wantErr)
		}
		if got := AppendOfferListing(nil, &l, os); string(got) != string(want) {
			t.Fatalf("offers: bodies differ\ngot  %s\nwant %s", got, want)
		}
	})
}
