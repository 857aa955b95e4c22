package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// goneDealerBackend answers as the internal services do once a dealer has
// been deleted (upstream/doc.go: an unknown dealer is 404 on every
// inventory path; content: 404 for an unknown dealer), while the edge
// still holds the dealer's key and profile (auth.ttl, or until the key
// index drops the key).
type goneDealerBackend struct{ Backend }

func (goneDealerBackend) ListVehicles(context.Context, int64, upstream.VehicleQuery) (upstream.VehiclePage, error) {
	return upstream.VehiclePage{}, fmt.Errorf("upstream inventory: %w", upstream.ErrNotFound)
}

func (goneDealerBackend) ListOffers(context.Context, int64, upstream.OfferQuery) (upstream.OfferPage, error) {
	return upstream.OfferPage{}, fmt.Errorf("upstream inventory: %w", upstream.ErrNotFound)
}

func (goneDealerBackend) Vehicle(context.Context, int64, string, string) (upstream.Vehicle, error) {
	return upstream.Vehicle{}, fmt.Errorf("upstream inventory: %w", upstream.ErrNotFound)
}

func (goneDealerBackend) Content(context.Context, int64, string, upstream.ContentFilter) ([]upstream.ContentRecord, error) {
	return nil, fmt.Errorf("upstream content: %w", upstream.ErrNotFound)
}

// TestDealerGoneIsDealerNotFound: a dealer deleted while its key is still
// held by the edge is 404 dealer_not_found on every dealer-scoped route
// (contract 5.6), not a 500 internal_error; a detail route keeps its own
// not-found code.
func TestDealerGoneIsDealerNotFound(t *testing.T) {
	s := newBenchServer(t, true)
	h := s.Handler()
	get := func(uri string) (int, string) {
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI(uri)
		ctx.Request.Header.Set("X-Api-Key", "demo-key-alpha")
		h(&ctx)
		var p struct {
			Code string `json:"code"`
		}
		_ = json.Unmarshal(ctx.Response.Body(), &p)
		return ctx.Response.StatusCode(), p.Code
	}
	// The key and the dealer's profile are cached by a first request (one
	// that caches no content view the routes below could be cut from).
	if st, _ := get("/dealer/REWIND/listing?page=999"); st != fasthttp.StatusOK {
		t.Fatalf("warm-up: %d", st)
	}
	s.backend = goneDealerBackend{s.backend}
	for _, tc := range []struct {
		uri, code string
	}{
		{"/dealer/REWIND/listing?page_size=3", codeDealerNotFound},
		{"/dealer/NOS/listing", codeDealerNotFound},
		{"/dealer/NLT/listing", codeDealerNotFound},
		{"/dealer/content/faq/listing?page_size=7", codeDealerNotFound},
		{"/dealer/content/news/details?slug=anything", codeDealerNotFound},
		{"/dealer/content/search?q=zzzz", codeDealerNotFound},
		{"/dealer/content/hub?page_size=9", codeDealerNotFound},
		{"/dealer/REWIND/details?id_auto=d3b8b8d4-bf88-4ab6-b912-6b61eb3e51ae", codeVehicleNotFound},
	} {
		st, code := get(tc.uri)
		if st != fasthttp.StatusNotFound || code != tc.code {
			t.Errorf("%s: %d %q, want 404 %q", tc.uri, st, code, tc.code)
		}
	}
}
