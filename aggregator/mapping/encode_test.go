package mapping

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/publicshape"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
	"github.com/dealer-edge/dealer-edge/upstream/fake/corpus"
)

// TestListingEncoderOverCorpus: every vehicle and offer of the fake corpus
// (every dealer, both vehicle services, the full view, so every field the
// fake fills), mapped to listing items as the edge maps them and cut into
// listing pages of several sizes, is encoded by
// publicshape.AppendInventoryListing exactly as json.Marshal encodes it.
func TestListingEncoderOverCorpus(t *testing.T) {
	h := fake.NewServer(fake.Options{}).Handler()
	get := func(uri string, out any) {
		t.Helper()
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI(uri)
		h(&ctx)
		if sc := ctx.Response.StatusCode(); sc != 200 {
			t.Fatalf("GET %s: %d", uri, sc)
		}
		if err := json.Unmarshal(ctx.Response.Body(), out); err != nil {
			t.Fatalf("GET %s: %v", uri, err)
		}
	}
	type listing struct {
		service string
		total   int
		items   []publicshape.InventoryItem
	}
	var all []listing
	for _, d := range corpus.DealerIDs() {
		for _, svc := range []string{publicshape.ServiceRewind, publicshape.ServiceNOS} {
			var pg upstream.VehiclePage
			get(fmt.Sprintf("/inventory/v1/dealers/%d/vehicles?service=%s&page_size=1000&view=full", d, svc), &pg)
			l := listing{service: svc, total: pg.Total, items: []publicshape.InventoryItem{}}
			for _, v := range pg.Items {
				l.items = append(l.items, VehicleItem(v))
			}
			// The batch form the edge uses maps each vehicle the same way.
			if batch := VehicleItems([]publicshape.InventoryItem{}, pg.Items); !reflect.DeepEqual(batch, l.items) {
				t.Fatalf("dealer %d %s: VehicleItems differs from VehicleItem", d, svc)
			}
			all = append(all, l)
		}
		var pg upstream.OfferPage
		get(fmt.Sprintf("/inventory/v1/dealers/%d/offers?page_size=1000", d), &pg)
		l := listing{service: publicshape.ServiceNLT, total: pg.Total, items: []publicshape.InventoryItem{}}
		for _, o := range pg.Items {
			l.items = append(l.items, OfferItem(o))
		}
		if batch := OfferItems([]publicshape.InventoryItem{}, pg.Items); !reflect.DeepEqual(batch, l.items) {
			t.Fatalf("dealer %d NLT: OfferItems differs from OfferItem", d)
		}
		all = append(all, l)
	}
	items, upfits, prices := 0, 0, 0
	var buf []byte
	for _, l := range all {
		for _, size := range []int{1, 20, 100} {
			for page := 1; (page-1)*size < len(l.items) || page == 1; page++ {
				lo, hi := min((page-1)*size, len(l.items)), min(page*size, len(l.items))
				v := publicshape.InventoryListing{Service: l.service, Page: page, PageSize: size, Total: l.total, HasNext: hi < len(l.items), Items: l.items[lo:hi]}
				want, err := json.Marshal(&v)
				if err != nil {
					t.Fatal(err)
				}
				if buf, err = publicshape.AppendInventoryListing(buf[:0], &v); err != nil {
					t.Fatal(err)
				}
				if string(buf) != string(want) {
					t.Fatalf("%s page %d of %d: encoding differs\ngot  %s\nwant %s", l.service, page, size, buf, want)
				}
			}
		}
		for _, it := range l.items {
			items++
			upfits += len(it.ProfessionalUpfits)
			if it.PrezzoVendita != nil {
				prices++
			}
		}
	}
	if items < 500 || upfits < 50 || prices < 100 {
		t.Fatalf("%d items, %d upfits, %d prices: too few to prove anything", items, upfits, prices)
	}
}

// TestContentItemEncoderOverCorpus: every content record of the fake
// corpus (every dealer and type, whole and in the summary view), mapped to
// an item in each form as the edge maps it, is encoded by
// publicshape.AppendContentItem exactly as json.Marshal encodes it.
func TestContentItemEncoderOverCorpus(t *testing.T) {
	items := 0
	var buf []byte
	for _, d := range corpus.DealerIDs() {
		for _, ct := range upstream.ContentTypes {
			for _, r := range corpus.Records(d, ct) {
				for _, rec := range []upstream.ContentRecord{r, upstream.ContentSummary(r)} {
					for _, form := range []ContentForm{ListingForm, DetailForm, SearchForm} {
						it := ContentItem(rec, ct, form)
						want, err := json.Marshal(&it)
						if err != nil {
							t.Fatal(err)
						}
						if buf = publicshape.AppendContentItem(buf[:0], &it); string(buf) != string(want) {
							t.Fatalf("dealer %d %s %q: encoding differs\ngot  %s\nwant %s", d, ct, rec.Slug, buf, want)
						}
						items++
					}
				}
			}
		}
	}
	if items < 1000 {
		t.Fatalf("%d items: too few to prove anything", items)
	}
}
