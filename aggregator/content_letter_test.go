package aggregator

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// craftedContentBackend answers the content service's calls for dealer
// 101 with recs (of every type asked for, their Type set to it), filtered
// as the service filters (upstream/doc.go); the rest is the fake's.
type craftedContentBackend struct {
	Backend
	recs []upstream.ContentRecord
}

func (b craftedContentBackend) Content(_ context.Context, dealerID int64, ct string, f upstream.ContentFilter) ([]upstream.ContentRecord, error) {
	var out []upstream.ContentRecord
	for _, r := range b.recs {
		r.Type = ct
		if r.DealerID != 0 && r.DealerID != dealerID {
			continue
		}
		ok := true
		for _, w := range strings.Fields(strings.ToLower(f.Q)) {
			if !strings.Contains(strings.ToLower(r.Title+"\n"+r.Excerpt+"\n"+r.BodyText), w) {
				ok = false
			}
		}
		if f.Category != "" && !upstream.FieldMatches(r.Category, f.Category) {
			ok = false
		}
		if ok {
			out = append(out, r)
		}
	}
	return out, nil
}

func craftedServer(t *testing.T, recs ...upstream.ContentRecord) fasthttp.RequestHandler {
	s := newBenchServer(t, true)
	s.backend = craftedContentBackend{Backend: s.backend, recs: recs}
	return s.Handler()
}

func getJSON(t *testing.T, h fasthttp.RequestHandler, uri string) (int, map[string]any) {
	t.Helper()
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI(uri)
	ctx.Request.Header.Set("X-Api-Key", "demo-key-alpha")
	h(&ctx)
	var m map[string]any
	if err := json.Unmarshal(ctx.Response.Body(), &m); err != nil {
		t.Fatalf("%s: %d %q", uri, ctx.Response.StatusCode(), ctx.Response.Body())
	}
	return ctx.Response.StatusCode(), m
}

// TestEveryListedSlugIsReadable: every item a content listing publishes
// can be read by its slug (4.6: "one content item selected by public
// slug"; the contract sets no maximum length on slug). The edge's own
// bound on the slug parameter (200 characters) refuses the detail of a
// listed item whose slug is longer with 422 validation_error.
func TestEveryListedSlugIsReadable(t *testing.T) {
	long := strings.Repeat("noleggio-lungo-termine-", 9) + "auto-elettriche-milano" // 229 characters
	h := craftedServer(t, upstream.ContentRecord{ID: 7, DealerID: 101, Slug: long, Title: "Guida", BodyText: "Testo.", UpdatedAt: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)})
	st, m := getJSON(t, h, "/dealer/content/faq/listing")
	items, _ := m["items"].([]any)
	if st != 200 || len(items) != 1 {
		t.Fatalf("listing: %d %v", st, m)
	}
	slug := items[0].(map[string]any)["slug"].(string)
	st, m = getJSON(t, h, "/dealer/content/faq/details?slug="+url.QueryEscape(slug))
	if st != 200 {
		t.Fatalf("details of the listed slug (%d characters): %d %v %v, want 200", len(slug), st, m["code"], m["errors"])
	}
}

// TestEveryPublishedCategoryFilters: the README promises "every value the
// edge publishes filters" (Listings and content, Who filters what). A
// category the listing publishes that is longer than the edge's own
// 100-character bound on the filter parameter is refused with 422.
func TestEveryPublishedCategoryFilters(t *testing.T) {
	cat := "Noleggio a lungo termine per aziende, professionisti con partita IVA e pubbliche amministrazioni locali" // 104 characters
	h := craftedServer(t, upstream.ContentRecord{ID: 7, DealerID: 101, Slug: "a", Category: cat, Title: "A", BodyText: "Testo.", UpdatedAt: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)})
	st, m := getJSON(t, h, "/dealer/content/faq/listing")
	items, _ := m["items"].([]any)
	if st != 200 || len(items) != 1 {
		t.Fatalf("listing: %d %v", st, m)
	}
	published := items[0].(map[string]any)["category"].(string)
	st, m = getJSON(t, h, "/dealer/content/faq/listing?category="+url.QueryEscape(published))
	if items, _ := m["items"].([]any); st != 200 || len(items) != 1 {
		t.Fatalf("listing by the published category (%d characters): %d %v %v, want 200 with the item", len(published), st, m["code"], m["errors"])
	}
}

// TestDurationSecondsNotNegative: the OpenAPI document the edge serves
// (DealerPublicContentItem.duration_seconds) says minimum 0; a negative
// duration from the content service is published as it came.
func TestDurationSecondsNotNegative(t *testing.T) {
	h := craftedServer(t, upstream.ContentRecord{ID: 7, DealerID: 101, Slug: "v", Title: "V", BodyText: "Testo.", DurationSeconds: -90, UpdatedAt: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)})
	for _, uri := range []string{"/dealer/content/videos/listing", "/dealer/content/videos/details?slug=v", "/dealer/content/search?q=testo", "/dealer/content/hub"} {
		st, m := getJSON(t, h, uri)
		if st != 200 {
			t.Fatalf("%s: %d %v", uri, st, m)
		}
		b, _ := json.Marshal(m)
		if strings.Contains(string(b), `"duration_seconds":-`) {
			t.Errorf("%s publishes a negative duration_seconds (OpenAPI minimum 0)", uri)
		}
	}
}

// TestDeprecationOnMethodNotAllowed: "every answer of those two types
// carries the headers" (README, Deprecation; contract 9): a 405 for a
// method other than GET/HEAD on a guides or glossary route goes out
// without Deprecation, Sunset and Link.
func TestDeprecationOnMethodNotAllowed(t *testing.T) {
	s := newBenchServer(t, true)
	h := s.Handler()
	for _, uri := range []string{"/dealer/content/guides/listing", "/dealer/content/glossary/details?slug=x"} {
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI(uri)
		ctx.Request.Header.SetMethod("POST")
		ctx.Request.Header.Set("X-Api-Key", "demo-key-alpha")
		h(&ctx)
		for _, name := range []string{"Deprecation", "Sunset", "Link"} {
			if len(ctx.Response.Header.Peek(name)) == 0 {
				t.Errorf("POST %s: %d without %s", uri, ctx.Response.StatusCode(), name)
			}
		}
	}
}
