package aggregator

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dealer-edge/dealer-edge/publicshape"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// probeGet runs one request through the handler with the demo key.
func probeGet(h fasthttp.RequestHandler, uri string, hdr ...string) (int, map[string]any, *fasthttp.ResponseHeader) {
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI(uri)
	ctx.Request.Header.Set("X-Api-Key", "demo-key-alpha")
	for i := 0; i+1 < len(hdr); i += 2 {
		ctx.Request.Header.Set(hdr[i], hdr[i+1])
	}
	h(&ctx)
	var m map[string]any
	_ = json.Unmarshal(ctx.Response.Body(), &m)
	var rh fasthttp.ResponseHeader
	ctx.Response.Header.CopyTo(&rh)
	return ctx.Response.StatusCode(), m, &rh
}

// emptyDealerBackend answers as the services do for a dealer that exists
// but has no inventory and no content of its own or global.
type emptyDealerBackend struct{ Backend }

func (emptyDealerBackend) ListVehicles(context.Context, int64, upstream.VehicleQuery) (upstream.VehiclePage, error) {
	return upstream.VehiclePage{}, nil
}
func (emptyDealerBackend) ListOffers(context.Context, int64, upstream.OfferQuery) (upstream.OfferPage, error) {
	return upstream.OfferPage{}, nil
}
func (emptyDealerBackend) Content(context.Context, int64, string, upstream.ContentFilter) ([]upstream.ContentRecord, error) {
	return nil, nil
}

// TestEmptyDealer: a dealer with no inventory and no content gets
// 200 pages with total 0, has_next false and items [] (never null).
func TestEmptyDealer(t *testing.T) {
	s := newBenchServer(t, true)
	s.backend = emptyDealerBackend{s.backend}
	h := s.Handler()
	for _, uri := range []string{
		"/dealer/REWIND/listing", "/dealer/NOS/listing?catalog_type=vind&professional_upfit=gru", "/dealer/NLT/listing?page=3",
		"/dealer/content/faq/listing", "/dealer/content/guides/listing?page=2",
	} {
		st, m, _ := probeGet(h, uri)
		items, isArr := m["items"].([]any)
		if st != 200 || !isArr || len(items) != 0 || m["total"] != 0.0 || m["has_next"] != false {
			t.Errorf("%s: %d %v", uri, st, m)
		}
	}
	st, m, _ := probeGet(h, "/dealer/content/search?q=auto")
	if items, ok := m["items"].([]any); st != 200 || !ok || len(items) != 0 || m["total"] != 0.0 {
		t.Errorf("search: %d %v", st, m)
	}
	st, m, _ = probeGet(h, "/dealer/content/hub")
	secs, _ := m["sections"].(map[string]any)
	if st != 200 || len(secs) != 6 {
		t.Errorf("hub: %d %v", st, m)
	}
}

// TestDeprecationHeadersOnEveryGuidesAnswer: every answer of the guides
// and glossary routes carries Deprecation, Sunset and Link (contract
// section 9; README, Deprecation), a 422 for a refused parameter included.
// Before 2026-11-27 a 422 went out without them (the headers were set only
// after parameter validation).
func TestDeprecationHeadersOnEveryGuidesAnswer(t *testing.T) {
	s := newBenchServer(t, true)
	h := s.Handler()
	for _, uri := range []string{
		"/dealer/content/guides/details?slug=no-such-guide", // 404: carries them (reference)
		"/dealer/content/guides/listing?page=0",
		"/dealer/content/glossary/listing?page_size=101",
		"/dealer/content/guides/details",
		"/dealer/content/glossary/listing?topic=x",
	} {
		st, m, hdr := probeGet(h, uri)
		for _, name := range []string{"Deprecation", "Sunset", "Link"} {
			if len(hdr.Peek(name)) == 0 {
				t.Errorf("%s: %d %v without %s header", uri, st, m["code"], name)
			}
		}
	}
}

// TestOfferIDInt64: id_offerta is any positive int64, up to 19 digits
// (the OpenAPI document's format: int64; README, Decisions), so a
// well-formed id that matches no offer is 404 offer_not_found. Before
// 2026-11-27 a 19-digit id was refused 400 invalid_identifier.
func TestOfferIDInt64(t *testing.T) {
	s := newBenchServer(t, true)
	h := s.Handler()
	for _, id := range []string{"1000000000000000000", "9223372036854775807"} {
		st, m, _ := probeGet(h, "/dealer/NLT/details?id_offerta="+id)
		if st != 404 || m["code"] != "offer_not_found" {
			t.Errorf("id_offerta=%s: %d %v %v, want 404 offer_not_found", id, st, m["code"], m["detail"])
		}
	}
}

// rawSlugBackend is an inventory service whose stored taxonomy slugs are
// not in canonical form (upstream.Upfit.Slug: "should be canonical; the
// edge re-canonicalises") and which, as upstream/doc.go says, filters by
// the slug as the edge publishes it (publicshape.UpfitSlug).
type rawSlugBackend struct{ Backend }

func rawSlugVehicle() upstream.Vehicle {
	return upstream.Vehicle{
		IDAuto: "0b1c2d3e-4f50-4a6b-8c7d-8e9fa0b1c2d3", DealerID: 101, Service: "REWIND", Make: "Iveco", Model: "Daily", CatalogType: "vcom",
		Upfits: []upstream.Upfit{{Code: "UPF-ISO", Slug: "Furgone_Isotermico", Label: "Furgone isotermico", Family: "Trasporto refrigerato", Primary: true}},
	}
}

func (rawSlugBackend) ListVehicles(_ context.Context, dealerID int64, q upstream.VehicleQuery) (upstream.VehiclePage, error) {
	v := rawSlugVehicle()
	if q.Upfit != "" && q.Upfit != publicshape.UpfitSlug(v.Upfits[0].Slug, v.Upfits[0].Label) {
		return upstream.VehiclePage{Items: []upstream.Vehicle{}}, nil
	}
	return upstream.VehiclePage{Total: 1, Items: []upstream.Vehicle{v}}, nil
}

// TestPublishedUpfitSlugFilters: professional_upfit is "slug from
// professional_upfits[].slug" (contract 4.1), so every slug the edge
// publishes filters, also where the stored one is not canonical: the edge
// passes it on as given and the inventory service matches the published
// form (upstream/doc.go; README, Upfits). Before 2026-11-27 the services'
// contract matched the stored slug, so a published slug could select
// nothing.
func TestPublishedUpfitSlugFilters(t *testing.T) {
	s := newBenchServer(t, true)
	s.backend = rawSlugBackend{s.backend}
	h := s.Handler()
	st, m, _ := probeGet(h, "/dealer/REWIND/listing?page_size=5")
	items, _ := m["items"].([]any)
	if st != 200 || len(items) != 1 {
		t.Fatalf("listing: %d %v", st, m)
	}
	ups, _ := items[0].(map[string]any)["professional_upfits"].([]any)
	slug := ups[0].(map[string]any)["slug"].(string)
	st, m, _ = probeGet(h, "/dealer/REWIND/listing?professional_upfit="+slug)
	if st != 200 || m["total"] != 1.0 {
		t.Errorf("published slug %q as filter: %d total %v, want the vehicle that carries it", slug, st, m["total"])
	}
}
