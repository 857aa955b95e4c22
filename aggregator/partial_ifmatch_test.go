package aggregator

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// TestPartialAnswerIfMatchProblemHeaders: a partial answer (a hub with a
// section down) whose ETag If-Match does not name is 412 problem+json,
// and a problem carries none of a body's headers: X-Edge-Partial was set
// after the 412 was written, so the problem said "X-Edge-Partial: true".
func TestPartialAnswerIfMatchProblemHeaders(t *testing.T) {
	s := newBenchServer(t, true)
	s.backend = failingContent{Backend: s.backend, failType: "videos"}
	h := s.Handler()
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI("/dealer/content/hub")
	ctx.Request.Header.Set("X-Api-Key", "demo-key-alpha")
	ctx.Request.Header.Set("If-Match", `"other"`)
	h(&ctx)
	if ctx.Response.StatusCode() != 412 || string(ctx.Response.Header.ContentType()) != "application/problem+json" {
		t.Fatalf("status %d %q, want 412 problem+json", ctx.Response.StatusCode(), ctx.Response.Header.ContentType())
	}
	for _, k := range []string{"X-Edge-Partial", "X-Cache", "ETag"} {
		if v := ctx.Response.Header.Peek(k); v != nil {
			t.Errorf("412 problem carries %s: %q", k, v)
		}
	}
	// The same answer without If-Match is the partial 200.
	var ok fasthttp.RequestCtx
	ok.Request.SetRequestURI("/dealer/content/hub")
	ok.Request.Header.Set("X-Api-Key", "demo-key-alpha")
	h(&ok)
	if ok.Response.StatusCode() != 200 || string(ok.Response.Header.Peek("X-Edge-Partial")) != "true" {
		t.Errorf("without If-Match: %d partial %q", ok.Response.StatusCode(), ok.Response.Header.Peek("X-Edge-Partial"))
	}
}
