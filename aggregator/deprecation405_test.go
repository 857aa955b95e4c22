package aggregator

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// TestMethodNotAllowedDeprecationFollowsRouting: the 405 of another
// method carries the deprecation headers on the paths that GET routes to
// a guides or glossary route, and only there. Routing reads the raw path
// (README: dot segments and escapes never reach another route), but the
// 405 read fasthttp's decoded, normalised path, so a POST to a path whose
// GET is 404 or 400 invalid_content_type was answered as the guides type's.
func TestMethodNotAllowedDeprecationFollowsRouting(t *testing.T) {
	s := newBenchServer(t, true)
	h := s.Handler()
	for _, u := range []string{"/dealer/content/%67uides/listing", "/dealer/content/faq/../guides/listing"} {
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetMethod("POST")
		ctx.Request.SetRequestURI(u)
		h(&ctx)
		if d := ctx.Response.Header.Peek("Deprecation"); ctx.Response.StatusCode() != 405 || len(d) != 0 {
			t.Errorf("POST %s: %d with Deprecation %q; GET of it is no guides route, so no deprecation headers", u, ctx.Response.StatusCode(), d)
		}
	}
	var ctx fasthttp.RequestCtx
	ctx.Request.Header.SetMethod("POST")
	ctx.Request.SetRequestURI("/dealer/content/guides/listing")
	h(&ctx)
	if len(ctx.Response.Header.Peek("Deprecation")) == 0 {
		t.Errorf("POST on the guides listing: no Deprecation")
	}
}
