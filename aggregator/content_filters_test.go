package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/aggregator/mapping"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake/corpus"
)

// handContent is a hand-made content service for dealer 101 (the demo
// key's dealer) that filters exactly as upstream's package doc says the
// content service does (corpus.Filter's rule: the record's own field
// equals the value, case-insensitively, strings.EqualFold); other dealers
// go to the wrapped backend.
type handContent struct {
	Backend
	recs map[string][]upstream.ContentRecord
}

func (a handContent) Content(ctx context.Context, dealerID int64, ct string, f upstream.ContentFilter) ([]upstream.ContentRecord, error) {
	if dealerID != 101 {
		return a.Backend.Content(ctx, dealerID, ct, f)
	}
	out := []upstream.ContentRecord{}
	for _, r := range a.recs[ct] {
		if f.Category != "" && !strings.EqualFold(r.Category, f.Category) ||
			f.Topic != "" && !strings.EqualFold(r.Topic, f.Topic) ||
			f.Brand != "" && !strings.EqualFold(r.Brand, f.Brand) {
			continue
		}
		ok := true
		for _, w := range strings.Fields(strings.ToLower(f.Q)) {
			if !strings.Contains(strings.ToLower(r.Title+"\x00"+r.Excerpt+"\x00"+r.BodyText), w) {
				ok = false
			}
		}
		if ok {
			out = append(out, r)
		}
	}
	return out, nil
}

func probeGetJSON(t *testing.T, h fasthttp.RequestHandler, uri string) map[string]any {
	t.Helper()
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI(uri)
	ctx.Request.Header.Set("X-Api-Key", "demo-key-alpha")
	h(&ctx)
	if ctx.Response.StatusCode() != 200 {
		t.Fatalf("%s: %d %s", uri, ctx.Response.StatusCode(), ctx.Response.Body())
	}
	var m map[string]any
	if err := json.Unmarshal(ctx.Response.Body(), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPublishedFilterValueFilters: a listing filtered by the category or
// brand value an item is published with returns that item, as the content
// service's filtering does, also when the value holds a no-break space
// (common in CMS text: "Alfa Romeo" typed with NBSP) or a trailing or
// double space (README, Who filters what: equal case-insensitively once
// both sides are trimmed and each run of white space is one space,
// upstream.FieldMatches). Before 2026-11-27 the edge rewrote the value
// only, so no request could filter to these items.
func TestPublishedFilterValueFilters(t *testing.T) {
	s := newBenchServer(t, true)
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	back := handContent{Backend: s.backend, recs: map[string][]upstream.ContentRecord{
		"faq": {
			{ID: 1, Type: "faq", DealerID: 101, Slug: "nbsp", Title: "A", BodyText: "a", Category: "noleggio\u00a0lungo", UpdatedAt: at},
			{ID: 2, Type: "faq", DealerID: 101, Slug: "trailing", Title: "B", BodyText: "b", Category: "permuta ", UpdatedAt: at},
		},
		"news": {
			{ID: 3, Type: "news", DealerID: 101, Slug: "rewrite", Title: "C", BodyText: "c", Brand: "Alfa\u00a0Romeo", SourceProvider: "dealer_editorial", UpdatedAt: at},
			{ID: 4, Type: "news", DealerID: 101, Slug: "double", Title: "D", BodyText: "d", Category: "usato  garantito", SourceProvider: "dealer_editorial", UpdatedAt: at},
		},
	}}
	s.backend = back
	h := s.Handler()
	for _, c := range []struct{ ct, param, value, slug string }{
		{"faq", "category", "noleggio\u00a0lungo", "nbsp"},
		{"faq", "category", "permuta ", "trailing"},
		{"news", "brand", "Alfa\u00a0Romeo", "rewrite"},
		{"news", "category", "usato  garantito", "double"},
	} {
		// The content service's own filtering with the value as sent.
		svc, _ := back.Content(context.Background(), 101, c.ct, upstream.ContentFilter{Category: map[bool]string{true: c.value}[c.param == "category"], Brand: map[bool]string{true: c.value}[c.param == "brand"]})
		m := probeGetJSON(t, h, "/dealer/content/"+c.ct+"/listing?"+c.param+"="+url.QueryEscape(c.value))
		items, _ := m["items"].([]any)
		var got []string
		for _, it := range items {
			got = append(got, it.(map[string]any)["slug"].(string))
		}
		if len(svc) != 1 || len(got) != 1 || got[0] != c.slug {
			t.Errorf("%s %s=%q (the item's published value): edge items %v (filters echo %v), want that item alone; the content service matches %d record(s), want 1",
				c.ct, c.param, c.value, got, m["filters"], len(svc))
		}
	}
}

// TestViewFilterUnicodeFormsEqualService: the edge's filtering of its
// cached view equals the content service's filtering under the rules
// (README, Who filters what) for every category, topic and brand value of
// the demo corpus in more letter-case and Unicode forms than
// TestViewFilteringEqualsService (lower, upper, title, swapped, Kelvin
// sign and long s folding, Turkish dotted I, NFD-like combining accents),
// combined with a text query.
func TestViewFilterUnicodeFormsEqualService(t *testing.T) {
	s := newBenchServer(t, true)
	st := s.settings.Load()
	ctx := context.Background()
	forms := func(v string) []string {
		swap := strings.Map(func(r rune) rune {
			if unicode.IsUpper(r) {
				return unicode.ToLower(r)
			}
			return unicode.ToUpper(r)
		}, v)
		return []string{v, strings.ToLower(v), strings.ToUpper(v), swap,
			strings.ReplaceAll(strings.ReplaceAll(v, "k", "\u212a"), "s", "\u017f"),
			strings.ReplaceAll(v, "i", "\u0130"), strings.ReplaceAll(v, "e", "e\u0301"), v + "x"}
	}
	cases := 0
	for _, d := range corpus.DealerIDs() {
		for _, ct := range upstream.ContentTypes {
			vals := map[[3]string]bool{}
			for _, r := range corpus.Records(d, ct) {
				for _, f := range forms(r.Category) {
					if r.Category != "" {
						vals[[3]string{f, "", ""}] = true
					}
				}
				for _, f := range forms(r.Topic) {
					if r.Topic != "" {
						vals[[3]string{"", f, ""}] = true
					}
				}
				for _, f := range forms(r.Brand) {
					if r.Brand != "" {
						vals[[3]string{"", "", f}] = true
					}
				}
			}
			all := corpus.Records(d, ct)
			vis := mapping.Visible(d, ct, all, mapping.Discovery)
			for v := range vals {
				for _, q := range []string{"", "auto"} {
					f := upstream.ContentFilter{Q: q, Category: v[0], Topic: v[1], Brand: v[2]}
					hit := map[string]bool{}
					for _, m := range corpus.Filter(corpus.Records(d, ct), f) {
						hit[fmt.Sprint(m.DealerID, "/", m.Slug)] = true
					}
					var want []string
					for _, r := range vis {
						if hit[fmt.Sprint(r.DealerID, "/", r.Slug)] {
							want = append(want, r.Slug)
						}
					}
					sel, err := s.listingSelection(ctx, st, d, ct, &params{q: q, category: v[0], topic: v[1], brand: v[2]})
					if err != nil {
						t.Fatal(err)
					}
					var got []string
					for i := 0; i < sel.len(); i++ {
						got = append(got, sel.at(i).Slug)
					}
					if strings.Join(got, ",") != strings.Join(want, ",") {
						t.Fatalf("dealer %d %s %+v:\nedge    %v\nservice %v", d, ct, f, got, want)
					}
					cases++
				}
			}
		}
	}
	t.Logf("%d cases", cases)
}
