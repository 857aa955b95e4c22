package aggregator

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// TestMethodNotAllowedCarriesItsRoute: the 405 of another method on a
// path is counted, logged and traced under the route a GET of the same
// path is (metrics, access log and span name all read the request's
// route): a POST to an inventory listing is inventory_listing traffic,
// and only a path GET routes nowhere is not_found. Before 2026-11-29
// every 405 was route="not_found", so operators saw the 405 traffic of
// known endpoints as unknown paths.
func TestMethodNotAllowedCarriesItsRoute(t *testing.T) {
	s := newBenchServer(t, true)
	var route string
	s.onRequest = func(ri *RequestInfo) { route = ri.Route }
	h := s.Handler()
	do := func(method, uri string) (int, string) {
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetMethod(method)
		ctx.Request.SetRequestURI(uri)
		route = ""
		h(&ctx)
		return ctx.Response.StatusCode(), route
	}
	for _, c := range []struct {
		path, want string
	}{
		{"/dealer/REWIND/listing", RouteInventoryListing},
		{"/dealer/NLT/details?id_offerta=1", RouteInventoryDetails},
		{"/dealer/BOGUS/listing", RouteInventoryListing}, // GET: 400 invalid_service on the route
		{"/dealer/content/hub", RouteContentHub},
		{"/dealer/content/search?q=ab", RouteContentSearch},
		{"/dealer/content/faq/listing", RouteContentListing},
		{"/dealer/content/guides/details?slug=a", RouteContentDetails},
		{"/dealer/content/nope/listing", RouteContentListing},
		{"/dealer/openapi.json", RouteOpenAPI},
		{"/dealer/content/listing", ""},
		{"/dealer/REWIND/listing/", ""},
		{"/dealer/REWIND/../NOS/listing", ""},
		{"/dealer/content/faq/../guides/listing", ""},
		{"/nope", ""},
		{"/", ""},
		{"/dealer/a/b/c/d", ""},
		{"/dealer/%52EWIND/listing", ""},
		{"/dealer/content/%67uides/listing", ""},
		{"/dealer/content%2Fhub", ""},
		{"/dealer//listing", ""},
		{"/dealer/content//listing", ""},
		{"/dealer/content/faq/other", ""},
		{"/dealer/content/faq", ""},
		{"/dealer/content/hub/x", ""},
		{"/dealer/REWIND/other", ""},
		{"/dealer/REWIND", ""},
		{"/dealer/", ""},
		{"/dealer", ""},
		{"/dealer/content/content/listing", ""},
		{"/dealer/openapi.json/x", ""},
		{"/DEALER/REWIND/listing", ""},
	} {
		_, get := do("GET", c.path)
		if c.want != "" && get != c.want {
			t.Fatalf("GET %s: route %q, want %q (the case is wrong)", c.path, get, c.want)
		}
		for _, m := range []string{"POST", "DELETE", "OPTIONS"} {
			st, r := do(m, c.path)
			if st != 405 {
				t.Fatalf("%s %s: status %d, want 405", m, c.path, st)
			}
			if r != get {
				t.Errorf("%s %s: route %q, want %q (GET's)", m, c.path, r, get)
			}
		}
	}
}
