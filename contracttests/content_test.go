package contracttests

import (
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake/corpus"
)

var contentTypes = []string{"faq", "news", "glossary", "guides", "videos", "podcasts"}

func TestContentListingsAndDeprecation(t *testing.T) {
	e := startEnv(t, envOptions{})
	depRe := regexp.MustCompile(`^@[0-9]+$`)
	for _, ct := range contentTypes {
		deprecated := ct == "guides" || ct == "glossary"
		r := e.get("/dealer/content/"+ct+"/listing", keyAlpha)
		if r.status != 200 || r.json["content_type"] != ct {
			t.Fatalf("%s listing: %d %s", ct, r.status, r.body)
		}
		if r.num("total") < 40 {
			t.Errorf("%s: total %d < 40", ct, r.num("total"))
		}
		meta, _ := r.json["meta"].(map[string]any)
		dealer, _ := meta["dealer"].(map[string]any)
		for _, f := range []string{"id", "name", "brand_name", "city", "province", "primary_domain"} {
			if _, ok := dealer[f]; !ok {
				t.Errorf("%s: meta.dealer.%s missing", ct, f)
			}
		}
		for _, it := range r.items() {
			if _, has := it["body_text"]; has {
				t.Errorf("%s listing item carries body_text", ct)
			}
			if p, _ := it["body_text_preview"].(string); p == "" || len([]rune(p)) > 241 {
				t.Errorf("%s: preview %q", ct, p)
			}
			if _, has := it["source_provider"]; has != (ct == "news") {
				t.Errorf("%s: source_provider presence %v", ct, has)
			}
		}
		// Details of the first item.
		slug := r.items()[0]["slug"].(string)
		d := e.get("/dealer/content/"+ct+"/details?slug="+url.QueryEscape(slug), keyAlpha)
		item, _ := d.json["item"].(map[string]any)
		if d.status != 200 || item["slug"] != slug || item["body_text"] == nil {
			t.Fatalf("%s details: %d %s", ct, d.status, d.body)
		}
		for _, resp := range []*resp{r, d} {
			h := resp.header
			if deprecated {
				if !depRe.MatchString(h.Get("Deprecation")) {
					t.Errorf("%s: Deprecation header %q", ct, h.Get("Deprecation"))
				}
				if _, err := time.Parse(time.RFC1123, h.Get("Sunset")); err != nil || !strings.HasSuffix(h.Get("Sunset"), "GMT") {
					t.Errorf("%s: Sunset header %q", ct, h.Get("Sunset"))
				}
				link := h.Get("Link")
				if !strings.Contains(link, `rel="sunset"`) || !strings.Contains(link, `rel="successor-version"`) {
					t.Errorf("%s: Link header %q", ct, link)
				}
				if resp.json["deprecated"] != true || !depRe.MatchString(fmt.Sprint(resp.json["deprecation"])) || resp.json["sunset"] != h.Get("Sunset") || resp.json["successor_version"] == nil {
					t.Errorf("%s: deprecation payload %v %v %v %v", ct, resp.json["deprecated"], resp.json["deprecation"], resp.json["sunset"], resp.json["successor_version"])
				}
				if "@"+strings.TrimPrefix(h.Get("Deprecation"), "@") != resp.json["deprecation"] {
					t.Errorf("%s: header and payload deprecation differ", ct)
				}
			} else {
				for _, hn := range []string{"Deprecation", "Sunset", "Link"} {
					if h.Get(hn) != "" {
						t.Errorf("%s carries %s", ct, hn)
					}
				}
				for _, f := range []string{"deprecated", "deprecation", "sunset", "successor_version"} {
					if _, has := resp.json[f]; has {
						t.Errorf("%s carries payload %s", ct, f)
					}
				}
			}
		}
	}
}

func TestContentBounds(t *testing.T) {
	e := startEnv(t, envOptions{})
	// problem checks one error answer, errors[].field included for 422s.
	problem := func(path string, status int, code, field string) {
		t.Helper()
		r := e.get(path, keyAlpha)
		fields := problemFields(r)
		if r.status != status || r.code() != code || field != "" && !slices.Contains(fields, field) || field == "" && len(fields) > 0 {
			t.Errorf("%.90s: got %d %q fields %v, want %d %s fields [%s]", path, r.status, r.code(), fields, status, code, field)
		}
	}
	applicable := map[string][]string{"faq": {"category"}, "news": {"category", "brand"}, "glossary": {"category"}, "guides": {"topic"}}
	for _, ct := range contentTypes {
		base := "/dealer/content/" + ct + "/listing"
		def := e.get(base, keyAlpha)
		total := def.num("total")
		if def.status != 200 || total < 40 {
			t.Fatalf("%s listing: %d total %d", ct, def.status, total)
		}
		if def.num("page") != 1 || def.num("page_size") != 20 || len(def.items()) != 20 || def.json["has_next"] != true {
			t.Errorf("%s defaults: page %d page_size %d items %d has_next %v", ct, def.num("page"), def.num("page_size"), len(def.items()), def.json["has_next"])
		}
		for _, size := range []int{1, 7, 100} {
			r := e.get(fmt.Sprintf("%s?page_size=%d", base, size), keyAlpha)
			if r.status != 200 || len(r.items()) != min(size, total) || r.num("page_size") != size || r.num("total") != total || r.json["has_next"] != (size < total) {
				t.Errorf("%s page_size=%d: %d, %d items, page_size %d, total %d of %d, has_next %v", ct, size, r.status, len(r.items()), r.num("page_size"), r.num("total"), total, r.json["has_next"])
			}
		}
		for _, q := range []string{"?page=1", "?page=100000", "?page=2147483647"} {
			r := e.get(base+q, keyAlpha)
			if r.status != 200 || q != "?page=1" && (len(r.items()) != 0 || r.json["has_next"] != false || r.num("total") != total) {
				t.Errorf("%s %s: %d %.300s", ct, q, r.status, r.body)
			}
		}
		bad := map[string]string{
			"?page=0": "page", "?page=-1": "page", "?page=x": "page", "?page=2147483648": "page", "?page=1&page=2": "page",
			"?page_size=0": "page_size", "?page_size=101": "page_size", "?page_size=": "page_size",
			"?q=" + strings.Repeat("x", 201): "q",
		}
		for _, f := range []string{"category", "topic", "brand"} {
			if slices.Contains(applicable[ct], f) {
				if r := e.get(base+"?"+f+"=no-such-"+f, keyAlpha); r.status != 200 || r.num("total") != 0 {
					t.Errorf("%s %s=no-such-%s: %d total %d", ct, f, f, r.status, r.num("total"))
				}
				bad["?"+f+"=a&"+f+"=b"] = f
			} else {
				bad["?"+f+"=x"] = f // README: a filter outside its types is a 422
			}
		}
		for q, field := range bad {
			problem(base+q, 422, "validation_error", field)
		}
		details := "/dealer/content/" + ct + "/details"
		problem(details+"?slug=a", 404, "content_not_found", "") // length 1: valid, no such item
		problem(details+"?slug=", 422, "validation_error", "slug")
		problem(details, 422, "validation_error", "slug")
		problem(details+"?slug=a&slug=b", 422, "validation_error", "slug")
		problem(details+"?slug="+strings.Repeat("a", 1025), 422, "validation_error", "slug")
	}

	// Hub: default page_size 5 per section, 1 to 20.
	for q, size := range map[string]int{"": 5, "?page_size=1": 1, "?page_size=20": 20} {
		r := e.get("/dealer/content/hub"+q, keyAlpha)
		secs, _ := r.json["sections"].(map[string]any)
		if r.status != 200 || len(secs) != len(contentTypes) {
			t.Fatalf("hub %s: %d, %d sections", q, r.status, len(secs))
		}
		for _, ct := range contentTypes {
			sec, _ := secs[ct].(map[string]any)
			items, _ := sec["items"].([]any)
			ps, _ := sec["page_size"].(float64)
			tot, _ := sec["total"].(float64)
			if int(ps) != size || len(items) > size || len(items) != min(size, int(tot)) || sec["page"] != 1.0 {
				t.Errorf("hub %s: section %s page %v page_size %v, %d items of %v (want page_size %d)", q, ct, sec["page"], sec["page_size"], len(items), tot, size)
			}
		}
	}
	for _, q := range []string{"?page_size=0", "?page_size=21", "?page_size=x", "?page_size=1&page_size=2"} {
		problem("/dealer/content/hub"+q, 422, "validation_error", "page_size")
	}

	// Search: default page_size 5 per type, 1 to 20.
	for q, size := range map[string]int{"": 5, "&page_size=1": 1, "&page_size=20": 20} {
		r := e.get("/dealer/content/search?q=auto"+q, keyAlpha)
		if r.status != 200 || r.num("page_size_per_type") != size {
			t.Fatalf("search %s: %d page_size_per_type %d, want %d", q, r.status, r.num("page_size_per_type"), size)
		}
		byType, _ := r.json["by_type"].(map[string]any)
		perType := map[string]int{}
		for _, it := range r.items() {
			perType[fmt.Sprint(it["content_type"])]++
		}
		over := false
		for _, ct := range contentTypes {
			n, _ := byType[ct].(float64)
			if perType[ct] > size || perType[ct] != min(size, int(n)) {
				t.Errorf("search %s: %d %s items, by_type %v, page_size %d", q, perType[ct], ct, n, size)
			}
			over = over || int(n) > size
		}
		if !over && size < 20 {
			t.Errorf("search %s: a bad probe, no type has more than %d matches: %v", q, size, byType)
		}
	}
	for q, field := range map[string]string{
		"?q=a": "q", "?q=": "q", "": "q", "?q=%20a%20%20": "q", "?q=ab&q=cd": "q", "?q=" + strings.Repeat("x", 201): "q",
		"?q=ab&page_size=0": "page_size", "?q=ab&page_size=21": "page_size", "?q=ab&page_size=x": "page_size",
	} {
		problem("/dealer/content/search"+q, 422, "validation_error", field)
	}
}

func TestContentPaginationWalk(t *testing.T) {
	e := startEnv(t, envOptions{})
	for _, ct := range contentTypes {
		ids, total := walk(t, e, "/dealer/content/"+ct+"/listing", keyAlpha, "slug", 7)
		if len(ids) != total {
			t.Errorf("%s: walked %d of %d", ct, len(ids), total)
		}
		seen := map[string]bool{}
		for _, s := range ids {
			if seen[s] {
				t.Errorf("%s: duplicate slug %s", ct, s)
			}
			seen[s] = true
		}
	}
}

// visibleContent is the test's oracle of the README's visibility rules,
// applied to the fake's whole raw view of one dealer and type: the visible
// records by public slug. A dealer's override replaces the global record
// (and takes its id); hidden records and overrides of hidden global records
// are left out; in discovery (listings, hub, search) so is news whose
// source_provider is not dealer_editorial.
func visibleContent(dealer int64, ct string, discovery bool) map[string]upstream.ContentRecord {
	recs := corpus.Records(dealer, ct)
	hiddenGlobal, overridden := map[int64]bool{}, map[int64]bool{}
	for _, r := range recs {
		if r.DealerID == 0 && r.HiddenForDealer {
			hiddenGlobal[r.ID] = true
		}
		if r.DealerID == dealer && r.OverrideOf != 0 {
			overridden[r.OverrideOf] = true
		}
	}
	out := map[string]upstream.ContentRecord{}
	for _, r := range recs {
		switch {
		case r.HiddenForDealer, r.DealerID != 0 && r.DealerID != dealer,
			r.DealerID == 0 && overridden[r.ID], r.OverrideOf != 0 && hiddenGlobal[r.OverrideOf],
			discovery && ct == "news" && r.SourceProvider != corpus.ProviderDealerEditorial:
			continue
		}
		if r.OverrideOf != 0 {
			r.ID = r.OverrideOf
		}
		out[r.Slug] = r
	}
	return out
}

// matchingContent returns the slugs of the visible (discovery) records of
// one dealer and type whose own text matches q, the content service's way.
func matchingContent(dealer int64, ct, q string) map[string]bool {
	vis := visibleContent(dealer, ct, true)
	recs := make([]upstream.ContentRecord, 0, len(vis))
	for _, r := range vis {
		recs = append(recs, r)
	}
	out := map[string]bool{}
	for _, r := range corpus.Filter(recs, upstream.ContentFilter{Q: q}) {
		out[r.Slug] = true
	}
	return out
}

// sameSlugs reports the differences between the slugs an answer showed and
// the ones the oracle expects.
func sameSlugs(t *testing.T, where string, got, want map[string]bool) {
	t.Helper()
	for s := range got {
		if !want[s] {
			t.Errorf("%s: shows %s, which it must not", where, s)
		}
	}
	for s := range want {
		if !got[s] {
			t.Errorf("%s: misses %s", where, s)
		}
	}
}

// searchQ turns a title into a search q within the edge's 200-character bound.
func searchQ(title string) string {
	q := ""
	for _, w := range strings.Fields(title) {
		if len([]rune(q+" "+w)) > 200 {
			break
		}
		q = strings.TrimSpace(q + " " + w)
	}
	return q
}

// TestContentRules: listings show exactly the visible items; hidden items
// (global or the dealer's, every type) appear nowhere, not by slug, not in
// search, not in a filtered listing; FAQ overrides replace the global item;
// non-editorial news stays out of discovery (hub included) but readable by
// slug.
func TestContentRules(t *testing.T) {
	e := startEnv(t, envOptions{})
	listed := func(ct, key string) map[string]bool {
		ids, _ := walk(t, e, "/dealer/content/"+ct+"/listing", key, "slug", 100)
		m := map[string]bool{}
		for _, s := range ids {
			m[s] = true
		}
		return m
	}
	lists := map[string]map[string]bool{}
	for _, ct := range contentTypes {
		lists[ct] = listed(ct, keyAlpha)
		want := map[string]bool{}
		for s := range visibleContent(101, ct, true) {
			want[s] = true
		}
		sameSlugs(t, ct+" listing", lists[ct], want)
	}
	// Hidden records of every type, global ones included.
	hidden, hiddenGlobalFAQ := 0, 0
	for _, ct := range contentTypes {
		bySlug := visibleContent(101, ct, false)
		for _, r := range corpus.Records(101, ct) {
			if !r.HiddenForDealer {
				continue
			}
			if _, vis := bySlug[r.Slug]; vis {
				continue // the slug is carried by a visible record too (not in the fake's data)
			}
			hidden++
			if ct == "faq" && r.DealerID == 0 {
				hiddenGlobalFAQ++
			}
			if lists[ct][r.Slug] {
				t.Errorf("hidden %s %s (dealer %d) is listed", ct, r.Slug, r.DealerID)
			}
			if d := e.get("/dealer/content/"+ct+"/details?slug="+url.QueryEscape(r.Slug), keyAlpha); d.status != 404 || d.code() != "content_not_found" {
				t.Errorf("hidden %s %s (dealer %d) readable by slug: %d %s", ct, r.Slug, r.DealerID, d.status, d.code())
			}
			q := searchQ(r.Title)
			s := e.get("/dealer/content/search?page_size=20&q="+url.QueryEscape(q), keyAlpha)
			if s.status != 200 {
				t.Fatalf("search %q: %d %s", q, s.status, s.body)
			}
			for _, it := range s.items() {
				if it["slug"] == r.Slug && it["content_type"] == ct {
					t.Errorf("hidden %s %s (dealer %d) found by search for its title", ct, r.Slug, r.DealerID)
				}
			}
			byType, _ := s.json["by_type"].(map[string]any)
			if want := len(matchingContent(101, ct, q)); byType[ct] != float64(want) {
				t.Errorf("search %q: by_type.%s %v, want %d (hidden items counted?)", q, ct, byType[ct], want)
			}
			l := e.get("/dealer/content/"+ct+"/listing?page_size=100&q="+url.QueryEscape(q), keyAlpha)
			for _, it := range l.items() {
				if it["slug"] == r.Slug {
					t.Errorf("hidden %s %s (dealer %d) in the listing filtered by its title", ct, r.Slug, r.DealerID)
				}
			}
		}
	}
	if hidden < 10 || hiddenGlobalFAQ == 0 {
		t.Fatalf("fake data has %d hidden records, %d of them global faq", hidden, hiddenGlobalFAQ)
	}
	// Hiding is per dealer: a global FAQ hidden by Alpha stays Beta's.
	perDealer := 0
	beta := visibleContent(102, "faq", false)
	for _, r := range corpus.Records(101, "faq") {
		if r.DealerID != 0 || !r.HiddenForDealer {
			continue
		}
		if b, ok := beta[r.Slug]; ok && b.DealerID == 0 {
			perDealer++
			if d := e.get("/dealer/content/faq/details?slug="+url.QueryEscape(r.Slug), keyBeta); d.status != 200 {
				t.Errorf("global faq %s hidden by Alpha only is %d for Beta", r.Slug, d.status)
			}
		}
	}
	if perDealer == 0 {
		t.Error("no global faq hidden by Alpha and visible to Beta in the fake's data")
	}
	// Overrides replace the global answer and keep its id and slug.
	overridden := 0
	for _, r := range corpus.Records(101, "faq") {
		if r.OverrideOf == 0 || r.HiddenForDealer {
			continue
		}
		overridden++
		d := e.get("/dealer/content/faq/details?slug="+url.QueryEscape(r.Slug), keyAlpha)
		item, _ := d.json["item"].(map[string]any)
		if d.status != 200 || item["body_text"] != r.BodyText {
			t.Errorf("override of %s not applied: %d", r.Slug, d.status)
		}
		if d.status == 200 && int64(item["id"].(float64)) != r.OverrideOf {
			t.Errorf("override of %s: public id %v, want the global id %d", r.Slug, item["id"], r.OverrideOf)
		}
	}
	if overridden == 0 {
		t.Fatal("fake data has no faq overrides")
	}
	// News provenance.
	external := 0
	nonEditorial := map[string]bool{}
	for _, r := range corpus.Records(101, "news") {
		if r.SourceProvider == corpus.ProviderDealerEditorial || r.HiddenForDealer {
			continue
		}
		external++
		nonEditorial[r.Slug] = true
		if lists["news"][r.Slug] {
			t.Errorf("non-editorial news %s listed", r.Slug)
		}
		d := e.get("/dealer/content/news/details?slug="+url.QueryEscape(r.Slug), keyAlpha)
		item, _ := d.json["item"].(map[string]any)
		if d.status != 200 || item["source_provider"] != r.SourceProvider {
			t.Errorf("non-editorial news %s not readable by slug: %d", r.Slug, d.status)
		}
		s := e.get("/dealer/content/search?page_size=20&q="+url.QueryEscape(searchQ(r.Title)), keyAlpha)
		for _, it := range s.items() {
			if it["slug"] == r.Slug && it["content_type"] == "news" {
				t.Errorf("non-editorial news %s found by search", r.Slug)
			}
		}
	}
	if external < 10 {
		t.Errorf("only %d non-editorial news", external)
	}
	// Hub: only visible items, never non-editorial news.
	for _, size := range []int{5, 20} {
		hub := e.get(fmt.Sprintf("/dealer/content/hub?page_size=%d", size), keyAlpha)
		if hub.json["content_type"] != "hub" {
			t.Errorf("hub content_type %v", hub.json["content_type"])
		}
		secs, _ := hub.json["sections"].(map[string]any)
		for _, ct := range contentTypes {
			sec, _ := secs[ct].(map[string]any)
			if sec == nil {
				t.Fatalf("hub without section %s", ct)
			}
			if tot, _ := sec["total"].(float64); int(tot) != len(lists[ct]) {
				t.Errorf("hub %s: total %v, the listing has %d", ct, tot, len(lists[ct]))
			}
			items, _ := sec["items"].([]any)
			if len(items) == 0 || len(items) > size {
				t.Errorf("hub %s: %d items", ct, len(items))
			}
			for _, it := range items {
				m := it.(map[string]any)
				slug := m["slug"].(string)
				if !lists[ct][slug] {
					t.Errorf("hub %s shows %s which the listing does not", ct, slug)
				}
				if ct == "news" && (nonEditorial[slug] || m["source_provider"] != corpus.ProviderDealerEditorial) {
					t.Errorf("hub news shows %s with source_provider %v", slug, m["source_provider"])
				}
			}
		}
	}
}

// TestContentQWithinType: a listing's q returns exactly the visible items
// whose own text matches, and a FAQ override replaces the global record in
// filtered listings and search too (a word of the global answer that the
// dealer's answer lacks must not bring the replaced global item back).
func TestContentQWithinType(t *testing.T) {
	e := startEnv(t, envOptions{})
	// A probe word per type: from a visible item's title, matching some
	// but not all visible items.
	for _, ct := range contentTypes {
		vis := visibleContent(101, ct, true)
		slugs := make([]string, 0, len(vis))
		for s := range vis {
			slugs = append(slugs, s)
		}
		slices.Sort(slugs)
		var q string
		var want map[string]bool
	probe:
		for _, s := range slugs {
			for _, w := range strings.Fields(strings.ToLower(vis[s].Title)) {
				w = strings.Trim(w, ".,;:?!«»()'\"")
				if len([]rune(w)) < 5 {
					continue
				}
				if m := matchingContent(101, ct, w); len(m) >= 2 && len(m) < len(vis)/2 {
					q, want = w, m
					break probe
				}
			}
		}
		if q == "" {
			t.Fatalf("%s: no probe word", ct)
		}
		got, total := walk(t, e, "/dealer/content/"+ct+"/listing?q="+url.QueryEscape(q), keyAlpha, "slug", 100)
		gotSet := map[string]bool{}
		for _, s := range got {
			gotSet[s] = true
		}
		if total != len(want) {
			t.Errorf("%s q=%s: total %d, want %d", ct, q, total, len(want))
		}
		sameSlugs(t, ct+" listing q="+q, gotSet, want)
		r := e.get("/dealer/content/"+ct+"/listing?q="+url.QueryEscape(q), keyAlpha)
		if r.json["q"] != q {
			t.Errorf("%s: q echo %v, want %s", ct, r.json["q"], q)
		}
	}
	// Overrides under q.
	globals := map[int64]upstream.ContentRecord{}
	recs := corpus.Records(101, "faq")
	for _, r := range recs {
		if r.DealerID == 0 {
			globals[r.ID] = r
		}
	}
	probes := 0
	for _, o := range recs {
		if o.OverrideOf == 0 || o.HiddenForDealer || o.DealerID != 101 {
			continue
		}
		g := globals[o.OverrideOf]
		var q string
		for _, w := range strings.Fields(strings.ToLower(g.BodyText)) {
			w = strings.Trim(w, ".,;:?!«»()'\"")
			if len([]rune(w)) < 6 {
				continue
			}
			f := upstream.ContentFilter{Q: w}
			if len(corpus.Filter([]upstream.ContentRecord{o}, f)) == 0 && len(corpus.Filter([]upstream.ContentRecord{g}, f)) == 1 {
				q = w
				break
			}
		}
		if q == "" {
			continue
		}
		probes++
		want := matchingContent(101, "faq", q)
		if want[o.Slug] {
			t.Fatalf("oracle: override %s matches %q", o.Slug, q)
		}
		got, _ := walk(t, e, "/dealer/content/faq/listing?q="+url.QueryEscape(q), keyAlpha, "slug", 100)
		gotSet := map[string]bool{}
		for _, s := range got {
			gotSet[s] = true
		}
		sameSlugs(t, "faq listing q="+q+" (word of the global answer that "+o.Slug+" overrides)", gotSet, want)
		s := e.get("/dealer/content/search?page_size=20&q="+url.QueryEscape(q), keyAlpha)
		for _, it := range s.items() {
			if it["content_type"] == "faq" && it["slug"] == o.Slug {
				t.Errorf("search q=%s shows the replaced global faq %s (%.60v)", q, o.Slug, it["body_text_preview"])
			}
		}
		if byType, _ := s.json["by_type"].(map[string]any); byType["faq"] != float64(len(want)) {
			t.Errorf("search q=%s: by_type.faq %v, want %d", q, byType["faq"], len(want))
		}
		if probes >= 3 {
			break
		}
	}
	if probes == 0 {
		t.Fatal("no word of a global answer missing from its override in the fake's data")
	}
}

// TestContentPreviews: a listing's body_text_preview is the start of the
// detail's body_text (whitespace collapsed), cut at a word boundary, and
// ends with "…" exactly when the body was cut.
func TestContentPreviews(t *testing.T) {
	e := startEnv(t, envOptions{})
	truncated, whole := 0, 0
	for _, ct := range contentTypes {
		r := e.get("/dealer/content/"+ct+"/listing?page_size=100", keyAlpha)
		for _, it := range r.items() {
			slug := it["slug"].(string)
			p, _ := it["body_text_preview"].(string)
			d := e.get("/dealer/content/"+ct+"/details?slug="+url.QueryEscape(slug), keyAlpha)
			item, _ := d.json["item"].(map[string]any)
			body, _ := item["body_text"].(string)
			if d.status != 200 || body == "" {
				t.Errorf("%s %s details: %d", ct, slug, d.status)
				continue
			}
			norm := strings.Join(strings.Fields(body), " ")
			core := strings.TrimSpace(strings.TrimSuffix(p, "…"))
			cut := strings.HasSuffix(p, "…")
			switch {
			case len([]rune(p)) > 241 || core == "":
				t.Errorf("%s %s: preview of %d runes", ct, slug, len([]rune(p)))
			case !strings.HasPrefix(norm, core):
				t.Errorf("%s %s: preview %q is not the start of body_text %.300q", ct, slug, p, norm)
			case cut && (len(core) >= len(norm) || norm[len(core)] != ' '):
				t.Errorf("%s %s: preview %q ends with … but is not cut at a word boundary of %.300q", ct, slug, p, norm)
			case !cut && core != norm:
				t.Errorf("%s %s: preview %q is cut without … (body %d runes)", ct, slug, p, len([]rune(norm)))
			case cut:
				truncated++
			default:
				whole++
			}
		}
	}
	if truncated == 0 {
		t.Errorf("no truncated preview seen (%d whole)", whole)
	}
}

// TestContentDealerMeta: meta.dealer carries the key's dealer, all six
// fields, on listings, details, hub and search.
func TestContentDealerMeta(t *testing.T) {
	e := startEnv(t, envOptions{})
	dealers := map[string]map[string]any{
		keyAlpha: {"id": 101.0, "name": "Autosalone Alpha S.r.l.", "brand_name": "Alpha Motori", "city": "Milano", "province": "MI", "primary_domain": "www.alphamotori.it"},
		keyBeta:  {"id": 102.0, "name": "Beta Car S.p.A.", "brand_name": "BetaCar", "city": "Roma", "province": "RM", "primary_domain": "www.betacar.it"},
	}
	for key, want := range dealers {
		check := func(where string, r *resp) {
			t.Helper()
			meta, _ := r.json["meta"].(map[string]any)
			got, _ := meta["dealer"].(map[string]any)
			if r.status != 200 || !reflect.DeepEqual(got, want) {
				t.Errorf("%s (%s): %d meta.dealer %v, want %v", where, key, r.status, got, want)
			}
		}
		for _, ct := range contentTypes {
			l := e.get("/dealer/content/"+ct+"/listing?page_size=1", key)
			check(ct+" listing", l)
			if len(l.items()) == 0 {
				t.Fatalf("%s listing empty", ct)
			}
			check(ct+" details", e.get("/dealer/content/"+ct+"/details?slug="+url.QueryEscape(l.items()[0]["slug"].(string)), key))
		}
		check("hub", e.get("/dealer/content/hub", key))
		check("search", e.get("/dealer/content/search?q=auto", key))
		check("empty search", e.get("/dealer/content/search?q=zzzzqqqq", key))
	}
}

func TestContentFilters(t *testing.T) {
	e := startEnv(t, envOptions{})
	check := func(ct, param, field string) {
		values := map[string]bool{}
		all := e.get("/dealer/content/"+ct+"/listing?page_size=100", keyAlpha)
		for _, it := range all.items() {
			if v, _ := it[field].(string); v != "" {
				values[v] = true
			}
		}
		if len(values) == 0 {
			t.Errorf("%s: no item carries %s", ct, field)
			return
		}
		for v := range values {
			r := e.get("/dealer/content/"+ct+"/listing?page_size=100&"+param+"="+url.QueryEscape(v), keyAlpha)
			if r.num("total") == 0 || r.num("total") >= all.num("total") && len(values) > 1 {
				t.Errorf("%s %s=%s: total %d of %d", ct, param, v, r.num("total"), all.num("total"))
			}
			for _, it := range r.items() {
				if !strings.EqualFold(fmt.Sprint(it[field]), v) {
					t.Errorf("%s %s=%s returned %v", ct, param, v, it[field])
				}
			}
			filters, _ := r.json["filters"].(map[string]any)
			if filters[param] != v {
				t.Errorf("%s: filters echo %v", ct, r.json["filters"])
			}
		}
	}
	check("faq", "category", "category")
	check("glossary", "category", "category")
	check("guides", "topic", "topic")
	check("news", "brand", "brand")
	check("news", "category", "category") // custom news
	r := e.get("/dealer/content/guides/listing?q=noleggio", keyAlpha)
	if r.json["q"] != "noleggio" {
		t.Errorf("q not echoed: %v", r.json["q"])
	}
}

func TestContentSearch(t *testing.T) {
	e := startEnv(t, envOptions{})
	for _, q := range []string{"noleggio", "fiat", "ibrido", "garanzia", "zzzzqqqq"} {
		for _, size := range []int{1, 3} {
			r := e.get(fmt.Sprintf("/dealer/content/search?page_size=%d&q=%s", size, q), keyAlpha)
			if r.status != 200 || r.json["q"] != q || r.num("page_size_per_type") != size {
				t.Fatalf("search %s: %d %s", q, r.status, r.body)
			}
			byType, _ := r.json["by_type"].(map[string]any)
			if len(byType) != len(contentTypes) {
				t.Errorf("search %s: by_type has %d keys, want the six types: %v", q, len(byType), byType)
			}
			sum := 0
			var wantOrder []string
			for _, ct := range contentTypes {
				n, ok := byType[ct].(float64)
				if !ok {
					t.Errorf("search %s: by_type.%s missing", q, ct)
				}
				if want := len(matchingContent(101, ct, q)); int(n) != want {
					t.Errorf("search %s: by_type.%s %v, want %d", q, ct, n, want)
				}
				sum += int(n)
			}
			if sum != r.num("total") {
				t.Errorf("search %s: by_type sums to %d, total %d", q, sum, r.num("total"))
			}
			// Round-robin in the order faq, news, glossary, guides, videos,
			// podcasts, each type with min(page_size, by_type) items.
			for rank := 0; rank < size; rank++ {
				for _, ct := range contentTypes {
					if n, _ := byType[ct].(float64); rank < int(n) {
						wantOrder = append(wantOrder, ct)
					}
				}
			}
			var order []string
			for _, it := range r.items() {
				ct := fmt.Sprint(it["content_type"])
				order = append(order, ct)
				if !matchingContent(101, ct, q)[fmt.Sprint(it["slug"])] {
					t.Errorf("search %s: %s %v is not a visible match", q, ct, it["slug"])
				}
			}
			if !slices.Equal(order, wantOrder) {
				t.Errorf("search %s page_size %d: types in order %v, want %v", q, size, order, wantOrder)
			}
			if q == "zzzzqqqq" {
				if r.num("total") != 0 || len(order) != 0 {
					t.Errorf("nonsense search: total %d, %d items", r.num("total"), len(order))
				}
			} else if nonzero := slices.IndexFunc(contentTypes, func(ct string) bool { return byType[ct] != 0.0 }); nonzero < 0 {
				t.Errorf("search %s: a bad probe, nothing matches", q)
			}
		}
	}
}

func TestDealerIsolationContent(t *testing.T) {
	e := startEnv(t, envOptions{})
	for _, ct := range contentTypes {
		for _, r := range corpus.Records(102, ct) {
			if r.DealerID != 102 {
				continue
			}
			if d := e.get("/dealer/content/"+ct+"/details?slug="+url.QueryEscape(r.Slug), keyAlpha); d.status == 200 {
				item := d.json["item"].(map[string]any)
				if item["body_text"] == r.BodyText {
					t.Errorf("alpha reads beta's %s %s", ct, r.Slug)
				}
			}
		}
		beta := e.get("/dealer/content/"+ct+"/listing?page_size=100", keyBeta)
		meta := beta.json["meta"].(map[string]any)["dealer"].(map[string]any)
		if meta["id"].(float64) != 102 {
			t.Errorf("beta meta.dealer.id %v", meta["id"])
		}
		if strings.Contains(string(beta.body), "Alpha Motori") {
			t.Errorf("beta's %s listing mentions Alpha", ct)
		}
	}
}

func TestOpenAPIServed(t *testing.T) {
	e := startEnv(t, envOptions{})
	r := e.get("/dealer/openapi.json")
	if r.status != 200 || r.json["openapi"] != "3.1.0" {
		t.Fatalf("openapi.json: %d", r.status)
	}
	if info, _ := r.json["info"].(map[string]any); info["version"] != "1.2.0" {
		t.Errorf("info.version %v", info["version"])
	}
}
