package corpus

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// visible applies the edge's public visibility rules, as the tests count
// them: hidden records out, a global record with an override replaced by the
// override, news only when dealer_editorial.
func visible(recs []upstream.ContentRecord) []upstream.ContentRecord {
	overridden := map[int64]bool{}
	for _, r := range recs {
		if r.OverrideOf != 0 && !r.HiddenForDealer {
			overridden[r.OverrideOf] = true
		}
	}
	var out []upstream.ContentRecord
	for _, r := range recs {
		if r.HiddenForDealer || r.DealerID == 0 && overridden[r.ID] {
			continue
		}
		if r.Type == upstream.ContentNews && r.SourceProvider != ProviderDealerEditorial {
			continue
		}
		out = append(out, r)
	}
	return out
}

func TestDealerIDs(t *testing.T) {
	if got := DealerIDs(); !slices.Equal(got, []int64{101, 102, 103}) {
		t.Fatalf("DealerIDs() = %v", got)
	}
}

func TestUnknownDealerOrType(t *testing.T) {
	for _, c := range []struct {
		dealer int64
		typ    string
	}{{199, upstream.ContentFAQ}, {0, upstream.ContentNews}, {101, "blog"}, {101, ""}, {101, "FAQ"}} {
		if got := Records(c.dealer, c.typ); got != nil {
			t.Errorf("Records(%d, %q) = %d records, want nil", c.dealer, c.typ, len(got))
		}
	}
}

func TestDeterministic(t *testing.T) {
	for _, d := range DealerIDs() {
		for _, typ := range upstream.ContentTypes {
			if !reflect.DeepEqual(Records(d, typ), Records(d, typ)) {
				t.Errorf("%d %s: two calls differ", d, typ)
			}
		}
	}
	// Two independent generations (map iteration order differs between
	// them) must be identical too.
	if !reflect.DeepEqual(build().views, build().views) {
		t.Fatal("two generations differ")
	}
}

func TestRecordsReturnsCopy(t *testing.T) {
	a := Records(101, upstream.ContentFAQ)
	want := a[0].Title
	a[0].Title = "changed"
	_ = append(a[:1], upstream.ContentRecord{Title: "appended"})
	b := Records(101, upstream.ContentFAQ)
	if b[0].Title != want || b[1].Title == "appended" {
		t.Fatal("caller changes leaked into the corpus")
	}
}

func TestVisibleCounts(t *testing.T) {
	for _, c := range []struct {
		dealer   int64
		min      int
		minTotal int
	}{{101, 40, 250}, {102, 15, 90}, {103, 15, 90}} {
		total := 0
		for _, typ := range upstream.ContentTypes {
			raw := Records(c.dealer, typ)
			n := len(visible(raw))
			total += n
			t.Logf("dealer %d %-8s visible %3d raw %3d", c.dealer, typ, n, len(raw))
			if n < c.min {
				t.Errorf("dealer %d %s: %d visible, want >= %d", c.dealer, typ, n, c.min)
			}
		}
		if total < c.minTotal {
			t.Errorf("dealer %d: %d visible in all, want >= %d", c.dealer, total, c.minTotal)
		}
	}
}

func TestNewsProvenance(t *testing.T) {
	for _, d := range DealerIDs() {
		external, custom, rewrites := 0, 0, 0
		for _, r := range Records(d, upstream.ContentNews) {
			switch r.SourceProvider {
			case ProviderDealerEditorial:
				if r.DealerID != d {
					t.Errorf("%d: editorial news %s of dealer %d", d, r.Slug, r.DealerID)
				}
				switch {
				case r.Category != "" && r.Brand == "":
					custom++
				case r.Brand != "" && r.Category == "":
					rewrites++
				default:
					t.Errorf("%d: editorial news %s has category %q and brand %q", d, r.Slug, r.Category, r.Brand)
				}
			case ProviderGlobalWire, ProviderHistoricalImport:
				if r.HiddenForDealer {
					t.Errorf("%d: external news %s is hidden", d, r.Slug)
				}
				if r.SourceProvider == ProviderGlobalWire && r.DealerID != 0 || r.SourceProvider == ProviderHistoricalImport && r.DealerID != d {
					t.Errorf("%d: %s news %s of dealer %d", d, r.SourceProvider, r.Slug, r.DealerID)
				}
				external++
			default:
				t.Errorf("%d: news %s with source provider %q", d, r.Slug, r.SourceProvider)
			}
		}
		if custom == 0 || rewrites == 0 || external == 0 {
			t.Errorf("%d: %d custom, %d rewrites, %d external news", d, custom, rewrites, external)
		}
		if d == 101 && external < 10 {
			t.Errorf("alpha: %d non-editorial news, want >= 10", external)
		}
	}
}

var slugRe = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func TestSlugs(t *testing.T) {
	for _, d := range DealerIDs() {
		for _, typ := range upstream.ContentTypes {
			recs := Records(d, typ)
			byID := map[int64]upstream.ContentRecord{}
			for _, r := range recs {
				byID[r.ID] = r
			}
			seen := map[string]int64{}
			for _, r := range recs {
				if !slugRe.MatchString(r.Slug) || len(r.Slug) > 90 {
					t.Errorf("%d %s: bad slug %q", d, typ, r.Slug)
				}
				if r.OverrideOf != 0 {
					if g, ok := byID[r.OverrideOf]; !ok || g.Slug != r.Slug || g.DealerID != 0 {
						t.Errorf("%d %s: override %d does not share the slug of a global record in the view", d, typ, r.ID)
					}
					continue // shares the global's slug by design
				}
				if other, dup := seen[r.Slug]; dup {
					t.Errorf("%d %s: slug %q of %d and %d", d, typ, r.Slug, other, r.ID)
				}
				seen[r.Slug] = r.ID
			}
			pub := map[string]bool{}
			for _, r := range visible(recs) {
				if pub[r.Slug] {
					t.Errorf("%d %s: visible slug %q twice", d, typ, r.Slug)
				}
				pub[r.Slug] = true
			}
		}
	}
}

// TestSharedAndDistinctSlugs: global items share slugs across dealers; own
// items carry the dealer's brand.
func TestSharedAndDistinctSlugs(t *testing.T) {
	brandSlug := map[int64]string{101: "alpha-motori", 102: "betacar", 103: "gamma-auto"}
	alpha := map[string]bool{}
	for _, r := range Records(101, upstream.ContentGlossary) {
		alpha[r.Slug] = true
	}
	shared := 0
	for _, r := range Records(102, upstream.ContentGlossary) {
		if r.DealerID == 0 && alpha[r.Slug] {
			shared++
		}
	}
	if shared < 40 {
		t.Errorf("only %d glossary slugs shared by alpha and beta", shared)
	}
	for _, d := range DealerIDs() {
		for _, typ := range upstream.ContentTypes {
			for _, r := range Records(d, typ) {
				if r.DealerID == d && r.OverrideOf == 0 && !strings.Contains(r.Slug, brandSlug[d]) {
					t.Errorf("%d %s: own slug %q lacks the brand", d, typ, r.Slug)
				}
			}
		}
	}
}

func TestIDsAndTimes(t *testing.T) {
	first := map[int64]upstream.ContentRecord{}
	times := map[time.Time]int64{}
	lo, hi := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, d := range DealerIDs() {
		for _, typ := range upstream.ContentTypes {
			for _, r := range Records(d, typ) {
				if r.Type != typ {
					t.Errorf("record %d of type %q in the %s view", r.ID, r.Type, typ)
				}
				if f, ok := first[r.ID]; ok {
					if f.DealerID != r.DealerID || f.Slug != r.Slug || f.BodyText != r.BodyText || f.Type != r.Type || !f.UpdatedAt.Equal(r.UpdatedAt) {
						t.Errorf("id %d names two different records", r.ID)
					}
					continue
				}
				first[r.ID] = r
				if r.UpdatedAt.Before(lo) || !r.UpdatedAt.Before(hi) {
					t.Errorf("%d: updated_at %v outside 2025-2026", r.ID, r.UpdatedAt)
				}
				if other, dup := times[r.UpdatedAt]; dup {
					t.Errorf("%d and %d share updated_at %v", other, r.ID, r.UpdatedAt)
				}
				times[r.UpdatedAt] = r.ID
			}
		}
	}
}

func TestIsolation(t *testing.T) {
	others := map[int64][]string{
		101: {"BetaCar", "betacar.it", "Gamma Auto", "gammaauto.it"},
		102: {"Alpha Motori", "alphamotori.it", "Gamma Auto", "gammaauto.it"},
		103: {"Alpha Motori", "alphamotori.it", "BetaCar", "betacar.it"},
	}
	for _, d := range DealerIDs() {
		for _, typ := range upstream.ContentTypes {
			recs := Records(d, typ)
			for _, r := range recs {
				if r.DealerID != 0 && r.DealerID != d {
					t.Errorf("%d %s: record %d of dealer %d", d, typ, r.ID, r.DealerID)
				}
			}
			js, err := json.Marshal(recs)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range others[d] {
				if strings.Contains(string(js), s) {
					t.Errorf("%d %s: view mentions %q", d, typ, s)
				}
			}
		}
	}
}

func TestFAQRules(t *testing.T) {
	brands := map[int64]string{101: "Alpha Motori", 102: "BetaCar", 103: "Gamma Auto"}
	hiddenGlobal := map[int64][]int64{}
	for _, d := range DealerIDs() {
		recs := Records(d, upstream.ContentFAQ)
		byID := map[int64]upstream.ContentRecord{}
		for _, r := range recs {
			byID[r.ID] = r
		}
		overrides, ownHidden := 0, 0
		for _, r := range recs {
			switch {
			case r.OverrideOf != 0:
				overrides++
				g := byID[r.OverrideOf]
				if r.DealerID != d || g.HiddenForDealer || r.HiddenForDealer {
					t.Errorf("%d: override %d of %d: dealer %d, hidden %v/%v", d, r.ID, g.ID, r.DealerID, g.HiddenForDealer, r.HiddenForDealer)
				}
				if r.BodyText == g.BodyText || !strings.Contains(r.BodyText, brands[d]) || r.Category != g.Category {
					t.Errorf("%d: override %d does not carry its own answer naming the dealer", d, r.ID)
				}
			case r.DealerID == 0 && r.HiddenForDealer:
				hiddenGlobal[d] = append(hiddenGlobal[d], r.ID)
			case r.DealerID == d && r.HiddenForDealer:
				ownHidden++
			}
		}
		if overrides == 0 || len(hiddenGlobal[d]) == 0 || ownHidden == 0 {
			t.Errorf("%d: %d overrides, %d hidden global, %d hidden own faq", d, overrides, len(hiddenGlobal[d]), ownHidden)
		}
	}
	if slices.Equal(hiddenGlobal[101], hiddenGlobal[102]) || slices.Equal(hiddenGlobal[101], hiddenGlobal[103]) {
		t.Errorf("hidden global faq do not differ between dealers: %v", hiddenGlobal)
	}
}

// TestHiddenPerDealer: glossary and guides have global records hidden for
// one dealer only, and some visible to every dealer.
func TestHiddenPerDealer(t *testing.T) {
	for _, typ := range []string{upstream.ContentGlossary, upstream.ContentGuides} {
		hidden := map[int64]map[int64]bool{}
		for _, d := range DealerIDs() {
			hidden[d] = map[int64]bool{}
			for _, r := range Records(d, typ) {
				if r.DealerID == 0 && r.HiddenForDealer {
					hidden[d][r.ID] = true
				}
			}
			if len(hidden[d]) == 0 {
				t.Errorf("%s: nothing hidden for %d", typ, d)
			}
		}
		for id := range hidden[101] {
			if hidden[102][id] && hidden[103][id] {
				t.Errorf("%s: %d hidden for every dealer", typ, id)
			}
		}
		if reflect.DeepEqual(hidden[101], hidden[102]) {
			t.Errorf("%s: alpha and beta hide the same records", typ)
		}
	}
}

func TestFields(t *testing.T) {
	domains := map[int64]string{101: "www.alphamotori.it", 102: "www.betacar.it", 103: "www.gammaauto.it"}
	for _, d := range DealerIDs() {
		for _, typ := range upstream.ContentTypes {
			for _, r := range Records(d, typ) {
				where := fmt.Sprintf("%d %s %d", d, typ, r.ID)
				if r.Title == "" || r.H1 == "" || r.Excerpt == "" || r.MetaDescription == "" || len(r.MetaDescription) > 155 {
					t.Errorf("%s: title %q h1 %q excerpt %q meta %q", where, r.Title, r.H1, r.Excerpt, r.MetaDescription)
				}
				if len(r.BodyText) < 600 || strings.Count(r.BodyText, "\n\n") < 2 || strings.ContainsAny(r.BodyText, "<>{}") {
					t.Errorf("%s: body of %d bytes, %d paragraphs", where, len(r.BodyText), strings.Count(r.BodyText, "\n\n")+1)
				}
				if want := "https://" + domains[d] + "/" + typePath[typ] + "/" + r.Slug; r.URL != want {
					t.Errorf("%s: url %q, want %q", where, r.URL, want)
				}
				if r.TemplateID == "" || r.SourceID == "" || !strings.HasPrefix(string(r.BodyHTML), "<article") || len(r.RenderPayload) == 0 {
					t.Errorf("%s: internal fields missing", where)
				}
				if r.SEOPayload["canonical"] != r.URL || r.SEOPayload["robots"] == nil || r.SEOPayload["json_ld"] == nil {
					t.Errorf("%s: seo payload %v", where, r.SEOPayload)
				}
				custom := typ == upstream.ContentNews && r.SourceProvider == ProviderDealerEditorial && r.Brand == ""
				if (typ == upstream.ContentFAQ || typ == upstream.ContentGlossary || custom) != (r.Category != "") {
					t.Errorf("%s: category %q", where, r.Category)
				}
				if (typ == upstream.ContentGuides) != (r.Topic != "") {
					t.Errorf("%s: topic %q", where, r.Topic)
				}
				if (typ == upstream.ContentNews) != (r.SourceProvider != "") {
					t.Errorf("%s: source provider %q", where, r.SourceProvider)
				}
				media := typ == upstream.ContentVideos || typ == upstream.ContentPodcasts
				if media != (r.MediaURL != "" && r.DurationSeconds > 0) ||
					(typ == upstream.ContentVideos) != (r.ThumbnailURL != "") ||
					(typ == upstream.ContentPodcasts) != (len(r.Transcript) >= 600) {
					t.Errorf("%s: media fields %q %q %d transcript %d", where, r.MediaURL, r.ThumbnailURL, r.DurationSeconds, len(r.Transcript))
				}
			}
		}
	}
}

// naiveFilter is the reference implementation of the filter semantics.
func naiveFilter(recs []upstream.ContentRecord, f upstream.ContentFilter) []upstream.ContentRecord {
	out := []upstream.ContentRecord{}
	for _, r := range recs {
		ok := (f.Category == "" || strings.EqualFold(r.Category, f.Category)) &&
			(f.Topic == "" || strings.EqualFold(r.Topic, f.Topic)) &&
			(f.Brand == "" || strings.EqualFold(r.Brand, f.Brand))
		for _, w := range strings.Fields(f.Q) {
			w = strings.ToLower(w)
			if !strings.Contains(strings.ToLower(r.Title), w) && !strings.Contains(strings.ToLower(r.Excerpt), w) &&
				!strings.Contains(strings.ToLower(r.BodyText), w) {
				ok = false
			}
		}
		if ok {
			out = append(out, r)
		}
	}
	return out
}

func TestFilter(t *testing.T) {
	type check func(t *testing.T, all, got []upstream.ContentRecord)
	some := func(t *testing.T, all, got []upstream.ContentRecord) {
		if len(got) == 0 || len(got) >= len(all) {
			t.Errorf("%d of %d matched", len(got), len(all))
		}
	}
	none := func(t *testing.T, all, got []upstream.ContentRecord) {
		if got == nil || len(got) != 0 {
			t.Errorf("got %d records (nil %v), want an empty slice", len(got), got == nil)
		}
	}
	every := func(t *testing.T, all, got []upstream.ContentRecord) {
		if len(got) != len(all) {
			t.Errorf("%d of %d", len(got), len(all))
		}
	}
	keepsHidden := func(t *testing.T, all, got []upstream.ContentRecord) {
		if !slices.ContainsFunc(got, func(r upstream.ContentRecord) bool { return r.HiddenForDealer }) {
			t.Error("hidden records dropped")
		}
	}
	keepsExternal := func(t *testing.T, all, got []upstream.ContentRecord) {
		if !slices.ContainsFunc(got, func(r upstream.ContentRecord) bool { return r.SourceProvider == ProviderGlobalWire }) ||
			!slices.ContainsFunc(got, func(r upstream.ContentRecord) bool { return r.SourceProvider == ProviderDealerEditorial }) {
			t.Error("brand filter should return wire stories and rewrites")
		}
	}
	for _, c := range []struct {
		name   string
		dealer int64
		typ    string
		f      upstream.ContentFilter
		checks []check
	}{
		{"empty", 101, "faq", upstream.ContentFilter{}, []check{every}},
		{"blank q", 101, "faq", upstream.ContentFilter{Q: "  \t "}, []check{every}},
		{"word", 101, "guides", upstream.ContentFilter{Q: "noleggio"}, []check{some}},
		{"case-insensitive words", 101, "news", upstream.ContentFilter{Q: "FIAT  Ducato"}, []check{some}},
		{"words across fields", 101, "glossary", upstream.ContentFilter{Q: "abs ruote"}, []check{some}},
		{"accented word", 101, "faq", upstream.ContentFilter{Q: "proprietà"}, []check{some}},
		{"substring", 101, "faq", upstream.ContentFilter{Q: "noleg"}, []check{some}},
		{"no match", 101, "faq", upstream.ContentFilter{Q: "zzzqqq"}, []check{none}},
		{"one word missing", 101, "faq", upstream.ContentFilter{Q: "noleggio zzzqqq"}, []check{none}},
		{"category", 101, "faq", upstream.ContentFilter{Category: "ACQUISTO"}, []check{some}},
		{"category is exact", 101, "faq", upstream.ContentFilter{Category: "acquist"}, []check{none}},
		{"glossary category", 102, "glossary", upstream.ContentFilter{Category: "normativa"}, []check{some}},
		{"news category", 101, "news", upstream.ContentFilter{Category: "promozioni"}, []check{some}},
		{"topic", 101, "guides", upstream.ContentFilter{Topic: "Elettrico"}, []check{some}},
		{"topic and q", 101, "guides", upstream.ContentFilter{Topic: "noleggio", Q: "canone"}, []check{some}},
		{"topic on faq", 101, "faq", upstream.ContentFilter{Topic: "noleggio"}, []check{none}},
		{"brand", 101, "news", upstream.ContentFilter{Brand: "fiat"}, []check{some, keepsExternal}},
		{"brand alfa", 103, "news", upstream.ContentFilter{Brand: "Alfa Romeo"}, []check{some}},
		{"keeps hidden", 101, "faq", upstream.ContentFilter{Q: "?"}, []check{keepsHidden}},
	} {
		t.Run(c.name, func(t *testing.T) {
			all := Records(c.dealer, c.typ)
			got := Filter(all, c.f)
			if want := naiveFilter(all, c.f); !reflect.DeepEqual(got, want) && len(got)+len(want) > 0 {
				t.Fatalf("Filter returned %d records, reference %d", len(got), len(want))
			}
			for _, ck := range c.checks {
				ck(t, all, got)
			}
		})
	}
}

// TestFilterSearchesEveryType: the demo searches of the README find items of
// several types.
func TestFilterSearchesEveryType(t *testing.T) {
	for _, q := range []string{"noleggio", "fiat", "ibrido"} {
		types := 0
		for _, typ := range upstream.ContentTypes {
			if len(Filter(visible(Records(101, typ)), upstream.ContentFilter{Q: q})) > 0 {
				types++
			}
		}
		if types < 4 {
			t.Errorf("q=%s matches visible items of %d types", q, types)
		}
	}
}

func TestFilterSeesCallerChanges(t *testing.T) {
	recs := Records(101, upstream.ContentFAQ)
	recs[3].Title = "Parola xyzzy nuova"
	got := Filter(recs, upstream.ContentFilter{Q: "xyzzy"})
	if len(got) != 1 || got[0].ID != recs[3].ID {
		t.Fatalf("got %d records", len(got))
	}
}

func BenchmarkFilterQ(b *testing.B) {
	recs := Records(101, upstream.ContentGuides)
	f := upstream.ContentFilter{Q: "noleggio canone"}
	for b.Loop() {
		Filter(recs, f)
	}
}
