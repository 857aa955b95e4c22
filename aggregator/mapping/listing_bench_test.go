package mapping

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/publicshape"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// fakeGet decodes the fake services' answer to uri into out.
func fakeGet(tb testing.TB, h fasthttp.RequestHandler, uri string, out any) {
	tb.Helper()
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI(uri)
	h(&ctx)
	if sc := ctx.Response.StatusCode(); sc != 200 {
		tb.Fatalf("GET %s: %d", uri, sc)
	}
	if err := json.Unmarshal(ctx.Response.Body(), out); err != nil {
		tb.Fatalf("GET %s: %v", uri, err)
	}
}

// BenchmarkListingBody measures the work of a listing miss between the
// decoded upstream page and the body, as the edge's listing fill does it
// (AppendVehicleListing, AppendOfferListing), for the first page of 20 and
// of 100 vehicles and of 20 NLT offers of the fake's first dealer (what
// BenchmarkMiss in aggregator requests). BenchmarkListingBodyByItems does
// the same work the way the edge did before: the items mapped, then
// encoded.
func BenchmarkListingBody(b *testing.B) { benchListingBody(b, false) }

// BenchmarkListingBodyByItems: see BenchmarkListingBody.
func BenchmarkListingBodyByItems(b *testing.B) { benchListingBody(b, true) }

func benchListingBody(b *testing.B, byItems bool) {
	h := fake.NewServer(fake.Options{}).Handler()
	for _, size := range []int{20, 100} {
		b.Run(fmt.Sprintf("vehicles_%d", size), func(b *testing.B) {
			var pg upstream.VehiclePage
			fakeGet(b, h, fmt.Sprintf("/inventory/v1/dealers/101/vehicles?service=REWIND&page=1&page_size=%d", size), &pg)
			if len(pg.Items) != size {
				b.Fatalf("%d vehicles", len(pg.Items))
			}
			var buf []byte
			items := make([]publicshape.InventoryItem, 0, size)
			b.ReportAllocs()
			for b.Loop() {
				l := publicshape.InventoryListing{Service: "REWIND", Page: 1, PageSize: size, Total: pg.Total, HasNext: size < pg.Total}
				var err error
				if byItems {
					items = VehicleItems(items[:0], pg.Items)
					l.Items = items
					buf, err = publicshape.AppendInventoryListing(buf[:0], &l)
				} else {
					buf, err = AppendVehicleListing(buf[:0], &l, pg.Items)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(len(buf)))
		})
	}
	b.Run("offers_20", func(b *testing.B) {
		var pg upstream.OfferPage
		fakeGet(b, h, "/inventory/v1/dealers/101/offers?page=1&page_size=20", &pg)
		if len(pg.Items) != 20 {
			b.Fatalf("%d offers", len(pg.Items))
		}
		var buf []byte
		b.ReportAllocs()
		for b.Loop() {
			l := publicshape.InventoryListing{Service: "NLT", Page: 1, PageSize: 20, Total: pg.Total, HasNext: 20 < pg.Total}
			if byItems {
				l.Items = OfferItems(make([]publicshape.InventoryItem, 0, len(pg.Items)), pg.Items)
				var err error
				if buf, err = publicshape.AppendInventoryListing(buf[:0], &l); err != nil {
					b.Fatal(err)
				}
			} else {
				buf = AppendOfferListing(buf[:0], &l, pg.Items)
			}
		}
		b.SetBytes(int64(len(buf)))
	})
}
