package aggregator

import (
	"bufio"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// wireHitRequest is a hit of BenchmarkHitPath as a client sends it: parsed
// from the wire, so RawHeaders holds the block the request checks scan
// (a request built with SetRequestURI and Header.Set has none).
const wireHitRequest = "GET /dealer/REWIND/listing?page=1&page_size=20 HTTP/1.1\r\n" +
	"Host: api.dealer-edge.example\r\n" +
	"User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36\r\n" +
	"Accept: application/json\r\n" +
	"Accept-Language: it-IT,it;q=0.9,en-US;q=0.8,en;q=0.7\r\n" +
	"Origin: https://www.alpha-motori.example\r\n" +
	"Referer: https://www.alpha-motori.example/usato?page=1\r\n" +
	"Sec-Fetch-Mode: cors\r\n" +
	"Sec-Fetch-Site: cross-site\r\n" +
	"X-Api-Key: bench-key-000\r\n" +
	"Connection: keep-alive\r\n" +
	"\r\n"

// BenchmarkHitPathWire is BenchmarkHitPath's inventory_listing hit for a
// request parsed from the wire, with a browser's header block (11 lines):
// what the raw header checks of serve (bare LF, obs-fold) cost per hit.
func BenchmarkHitPathWire(b *testing.B) {
	s := newBenchServer(b, true)
	h := s.Handler()
	var warm fasthttp.RequestCtx
	if err := warm.Request.Read(bufio.NewReader(strings.NewReader(wireHitRequest))); err != nil {
		b.Fatal(err)
	}
	if len(warm.Request.Header.RawHeaders()) == 0 {
		b.Fatal("no raw header block")
	}
	h(&warm)
	if warm.Response.StatusCode() != 200 {
		b.Fatalf("warm-up: %d %s", warm.Response.StatusCode(), warm.Response.Body())
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := benchCPU()
	defer func() { b.ReportMetric(float64(benchCPU()-cpu0)/float64(b.N), "cpu-ns/op") }()
	b.RunParallel(func(pb *testing.PB) {
		var ctx fasthttp.RequestCtx
		if err := ctx.Request.Read(bufio.NewReader(strings.NewReader(wireHitRequest))); err != nil {
			b.Error(err)
			return
		}
		for pb.Next() {
			ctx.Response.Reset()
			h(&ctx)
			if ctx.Response.StatusCode() != 200 {
				b.Fatalf("status %d", ctx.Response.StatusCode())
			}
		}
	})
}

// BenchmarkHeaderLineScan compares serve's raw header checks on
// wireHitRequest's block: the two scans it made (hasBareLF, then
// hasObsFold) and the one it makes (scanHeaderLines).
func BenchmarkHeaderLineScan(b *testing.B) {
	var req fasthttp.Request
	if err := req.Read(bufio.NewReader(strings.NewReader(wireHitRequest))); err != nil {
		b.Fatal(err)
	}
	raw := req.Header.RawHeaders()
	var sink bool
	b.Run("two_scans", func(b *testing.B) {
		for range b.N {
			bare := hasBareLF(raw)
			sink = sink != (bare || hasObsFold(raw))
		}
	})
	b.Run("one_scan", func(b *testing.B) {
		for range b.N {
			bare, folded := scanHeaderLines(raw)
			sink = sink != (bare || folded)
		}
	})
	_ = sink
}
