package upstream_test

import (
	"context"
	stdjson "encoding/json"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// BenchmarkMissDecode measures what an upstream call of a cache miss costs
// the edge in CPU: the whole Client call against the in-process fake (its
// bodies are realistic, internal noise included), for the two largest
// answers the edge reads; "encoding_json" decodes the same body with the
// standard library into the same type, for comparison.
func BenchmarkMissDecode(b *testing.B) {
	fk := fake.NewServer(fake.Options{})
	addr, err := fk.Start("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer fk.Close()
	c, err := upstream.New(upstream.Options{BaseURL: "http://" + addr})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()

	get := func(uri string) []byte {
		sc, body, err := fasthttp.Get(nil, "http://"+addr+uri)
		if err != nil || sc != 200 {
			b.Fatalf("GET %s: %d %v", uri, sc, err)
		}
		return body
	}
	faq := get("/content/v1/dealers/101/faq")
	page := get("/inventory/v1/dealers/101/vehicles?service=REWIND&page=1&page_size=20&view=summary") // what ListVehicles asks

	b.Run("content_faq/client", func(b *testing.B) {
		b.SetBytes(int64(len(faq)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Content(ctx, 101, upstream.ContentFAQ, upstream.ContentFilter{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("content_faq/encoding_json", func(b *testing.B) {
		b.SetBytes(int64(len(faq)))
		b.ReportAllocs()
		for b.Loop() {
			var out struct {
				Items []upstream.ContentRecord `json:"items"`
			}
			if err := stdjson.Unmarshal(faq, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("vehicles_20/client", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.ListVehicles(ctx, 101, upstream.VehicleQuery{Service: "REWIND", Page: 1, PageSize: 20}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("vehicles_20/encoding_json", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		b.ReportAllocs()
		for b.Loop() {
			var out upstream.VehiclePage
			if err := stdjson.Unmarshal(page, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
}
