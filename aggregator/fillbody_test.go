package aggregator

import (
	"bytes"
	"compress/gzip"
	"io"
	"runtime"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestListingBypassBody checks the listing and hub fills that write into a
// pooled buffer (the route's cache off): each response carries its own body,
// byte for byte the body the cached route serves, plain and gzip, whatever
// listings of other sizes used the buffers in between, and still after the
// next request's fill (fasthttp writes a response after its handler
// returns, and gives the buffer back only then, closing its user values).
func TestListingBypassBody(t *testing.T) {
	uris := []string{
		// Empty pages first, each filled from a fresh pooled scratch (the
		// pools are emptied below): "items":[], never null.
		"/dealer/REWIND/listing?page=10000&page_size=20",
		"/dealer/NOS/listing?page=1&page_size=20&q=no-such-vehicle-anywhere",
		"/dealer/REWIND/listing?page=1&page_size=20",
		"/dealer/REWIND/listing?page=1&page_size=100",
		"/dealer/REWIND/listing?page=2&page_size=5",
		"/dealer/NOS/listing?page=1&page_size=20",
		"/dealer/NLT/listing?page=1&page_size=20",
		"/dealer/content/hub",
		"/dealer/content/hub?page_size=20",
		"/dealer/content/hub?page_size=1",
	}
	serve := func(h fasthttp.RequestHandler, uri string, gz bool) *fasthttp.RequestCtx {
		t.Helper()
		ctx := new(fasthttp.RequestCtx)
		ctx.Request.SetRequestURI(uri)
		ctx.Request.Header.Set("X-Api-Key", "bench-key-000")
		if gz {
			ctx.Request.Header.Set("Accept-Encoding", "gzip")
		}
		h(ctx)
		if sc := ctx.Response.StatusCode(); sc != 200 {
			t.Fatalf("%s: status %d: %s", uri, sc, ctx.Response.Body())
		}
		return ctx
	}
	read := func(ctx *fasthttp.RequestCtx) (body []byte, xcache string) {
		t.Helper()
		body = bytes.Clone(ctx.Response.Body())
		if string(ctx.Response.Header.Peek("Content-Encoding")) == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		return body, string(ctx.Response.Header.Peek("X-Cache"))
	}

	cached := newBenchServer(t, true)
	runtime.GC() // twice: a sync.Pool is empty after two collections
	runtime.GC()
	want := map[string][]byte{}
	for _, u := range uris {
		want[u], _ = read(serve(cached.Handler(), u, false))
		if bytes.Contains(want[u], []byte(`"items":null`)) {
			t.Fatalf("%s: %s", u, want[u])
		}
	}

	s := newBenchServer(t, true)
	st := DefaultSettings()
	delete(st.Cache, RouteInventoryListing)
	delete(st.Cache, RouteContentHub)
	if err := s.UpdateSettings(st); err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	var prev *fasthttp.RequestCtx
	var prevURI string
	check := func(ctx *fasthttp.RequestCtx, u string) {
		t.Helper()
		got, xc := read(ctx)
		if xc != "BYPASS" {
			t.Fatalf("%s: X-Cache %q, want BYPASS", u, xc)
		}
		if !bytes.Equal(got, want[u]) {
			t.Fatalf("%s: body differs from the cached route's\n got %.200s\nwant %.200s", u, got, want[u])
		}
	}
	for round := 0; round < 3; round++ {
		for i, u := range uris {
			ctx := serve(h, u, (round+i)%2 == 1)
			if prev != nil {
				check(prev, prevURI) // the previous response, not yet "written", kept its buffer
				// What the server does once it has written the response:
				// the previous buffer goes back to the pool, for the next fill.
				prev.ResetUserValues()
			}
			check(ctx, u)
			prev, prevURI = ctx, u
		}
	}
}
