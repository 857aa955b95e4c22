package aggregator

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// TestPartialAnswerCompressedForGzipClients: the README (Compression)
// promises every body of at least server.gzip_min_bytes gzip-coded to a
// client that accepts gzip, "problems and small bodies" excepted. A
// partial answer (a hub with a section down; every vehicle detail while
// the media service is down) is neither, yet it goes out identity-coded:
// during an outage of one service the edge sends about five times the
// bytes for those routes.
func TestPartialAnswerCompressedForGzipClients(t *testing.T) {
	s := newBenchServer(t, true)
	s.backend = failingContent{Backend: s.backend, failType: "videos"}
	h := s.Handler()
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI("/dealer/content/hub")
	ctx.Request.Header.Set("X-Api-Key", "demo-key-alpha")
	ctx.Request.Header.Set("Accept-Encoding", "gzip")
	h(&ctx)
	if ctx.Response.StatusCode() != 200 || string(ctx.Response.Header.Peek("X-Edge-Partial")) != "true" {
		t.Fatalf("status %d partial %q", ctx.Response.StatusCode(), ctx.Response.Header.Peek("X-Edge-Partial"))
	}
	min := s.settings.Load().GzipMinBytes
	if n := len(ctx.Response.Body()); n >= min && string(ctx.Response.Header.Peek("Content-Encoding")) != "gzip" {
		t.Errorf("partial hub of %d bytes (gzip_min_bytes %d) sent to a gzip client with Content-Encoding %q",
			n, min, ctx.Response.Header.Peek("Content-Encoding"))
	}
}
