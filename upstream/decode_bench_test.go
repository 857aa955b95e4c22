package upstream_test

import (
	"context"
	stdjson "encoding/json"
	"syscall"
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
	b.Run("content_faq_summary/client", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Content(ctx, 101, upstream.ContentFAQ, upstream.ContentFilter{Summary: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
	// What a cold hub section reads: the keys of every record, five whole.
	b.Run("content_faq_summary/page_of_5", func(b *testing.B) {
		b.ReportAllocs()
		pick := func(keys []upstream.ContentRecord) []int32 { return []int32{0, 1, 2, 3, 4}[:min(5, len(keys))] }
		for b.Loop() {
			if _, err := c.ContentPage(ctx, 101, upstream.ContentFAQ, upstream.ContentFilter{Summary: true}, pick); err != nil {
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

// BenchmarkDecode measures the decoding of a 200 body alone, the way the
// Client decodes it (no HTTP exchange, no fake in the profile), for the
// answers a miss reads: the summary view of a content type (listings, hub
// sections) and vehicle listing pages of 20 and 100 items.
func BenchmarkDecode(b *testing.B) {
	fk := fake.NewServer(fake.Options{})
	h := fk.Handler()
	get := func(uri string) []byte {
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI(uri)
		h(&ctx)
		if sc := ctx.Response.StatusCode(); sc != 200 {
			b.Fatalf("GET %s: %d", uri, sc)
		}
		return append([]byte(nil), ctx.Response.Body()...)
	}
	cases := []struct {
		name string
		uri  string
		out  func() any
	}{
		{"faq_summary", "/content/v1/dealers/101/faq?view=summary", func() any { return new(upstream.ContentList) }},
		{"news_summary", "/content/v1/dealers/101/news?view=summary", func() any { return new(upstream.ContentList) }},
		{"vehicles_20", "/inventory/v1/dealers/101/vehicles?service=REWIND&page=1&page_size=20&view=summary", func() any { return new(upstream.VehiclePage) }},
		{"vehicles_100", "/inventory/v1/dealers/101/vehicles?service=REWIND&page=1&page_size=100&view=summary", func() any { return new(upstream.VehiclePage) }},
	}
	for _, c := range cases {
		body := get(c.uri)
		for _, d := range []struct {
			name   string
			decode func([]byte, any) error
		}{
			{"client", upstream.DecodeBody},        // what the Client does
			{"reflection", upstream.DecodeReflect}, // go-json-experiment by reflection, internal payloads skipped
		} {
			b.Run(c.name+"/"+d.name, func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				cpu := startCPU()
				for b.Loop() {
					if err := d.decode(body, c.out()); err != nil {
						b.Fatal(err)
					}
				}
				cpu.report(b)
			})
		}
	}
}

// BenchmarkDecodePooled decodes a vehicle listing page into one page
// reused across operations, as the edge's listing fill does (a pooled
// listingScratch, the memory of its strings reused too): the scanner's own
// cost, without the page's allocation and its garbage collection that
// BenchmarkDecode includes.
func BenchmarkDecodePooled(b *testing.B) {
	fk := fake.NewServer(fake.Options{})
	h := fk.Handler()
	for _, c := range []struct{ name, uri string }{
		{"vehicles_20", "/inventory/v1/dealers/101/vehicles?service=REWIND&page=1&page_size=20&view=summary"},
		{"vehicles_100", "/inventory/v1/dealers/101/vehicles?service=REWIND&page=1&page_size=100&view=summary"},
	} {
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI(c.uri)
		h(&ctx)
		if sc := ctx.Response.StatusCode(); sc != 200 {
			b.Fatalf("GET %s: %d", c.uri, sc)
		}
		body := append([]byte(nil), ctx.Response.Body()...)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			var pg upstream.VehiclePage
			pg.ReuseStrings() // as the listing fill does
			for b.Loop() {
				pg.Items = pg.Items[:0]
				if err := upstream.DecodeBody(body, &pg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// cpuClock measures the process's CPU time (user and system, every
// thread: the garbage collector's work included) over a benchmark loop,
// reported as cpu-ns/op: less sensitive than ns/op to other processes
// sharing the machine.
type cpuClock struct{ start time.Duration }

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU() cpuClock { return cpuClock{processCPU()} }

func (c cpuClock) report(b *testing.B) {
	if b.N > 0 {
		b.ReportMetric(float64(processCPU()-c.start)/float64(b.N), "cpu-ns/op")
	}
}
