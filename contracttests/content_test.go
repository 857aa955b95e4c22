package contracttests

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

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
	for _, q := range []string{"?page_size=1", "?page_size=100", "?page=1"} {
		if r := e.get("/dealer/content/faq/listing"+q, keyAlpha); r.status != 200 {
			t.Errorf("%s: %d", q, r.status)
		}
	}
	for _, q := range []string{"?page=0", "?page_size=0", "?page_size=101", "?topic=x", "?brand=x"} {
		if r := e.get("/dealer/content/faq/listing"+q, keyAlpha); r.status != 422 {
			t.Errorf("faq %s: %d", q, r.status)
		}
	}
	for q, want := range map[string]int{"": 200, "?page_size=1": 200, "?page_size=20": 200, "?page_size=0": 422, "?page_size=21": 422} {
		if r := e.get("/dealer/content/hub"+q, keyAlpha); r.status != want {
			t.Errorf("hub %s: %d", q, r.status)
		}
	}
	for q, want := range map[string]int{"?q=ab": 200, "?q=ab&page_size=20": 200, "?q=a": 422, "?q=": 422, "": 422, "?q=ab&page_size=21": 422, "?q=ab&page_size=0": 422} {
		if r := e.get("/dealer/content/search"+q, keyAlpha); r.status != want {
			t.Errorf("search %s: %d", q, r.status)
		}
	}
	if r := e.get("/dealer/content/faq/details?slug=", keyAlpha); r.status != 422 {
		t.Errorf("empty slug: %d", r.status)
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

// TestContentRules: hidden FAQ items and non-editorial news stay out of
// discovery; non-editorial news stays readable by slug.
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
	recs := corpus.Records(101, "faq")
	hidden, overridden := 0, 0
	faq := listed("faq", keyAlpha)
	for _, r := range recs {
		if r.HiddenForDealer {
			hidden++
			if r.OverrideOf == 0 && faq[r.Slug] {
				// a hidden record's slug may be shared only by an override of a visible record
				t.Errorf("hidden faq %s is listed", r.Slug)
			}
			if d := e.get("/dealer/content/faq/details?slug="+url.QueryEscape(r.Slug), keyAlpha); d.status != 404 && r.DealerID != 0 {
				t.Errorf("hidden faq %s readable: %d", r.Slug, d.status)
			}
		}
		if r.OverrideOf != 0 && !r.HiddenForDealer {
			overridden++
			d := e.get("/dealer/content/faq/details?slug="+url.QueryEscape(r.Slug), keyAlpha)
			item, _ := d.json["item"].(map[string]any)
			if d.status == 200 && item["body_text"] != r.BodyText {
				t.Errorf("override of %s not applied", r.Slug)
			}
			if d.status == 200 && int64(item["id"].(float64)) != r.OverrideOf {
				t.Errorf("override of %s: public id %v, want the global id %d", r.Slug, item["id"], r.OverrideOf)
			}
		}
	}
	if hidden == 0 || overridden == 0 {
		t.Fatalf("fake data has %d hidden and %d overridden faq records", hidden, overridden)
	}
	// News provenance.
	news := listed("news", keyAlpha)
	external := 0
	for _, r := range corpus.Records(101, "news") {
		if r.SourceProvider == "dealer_editorial" || r.HiddenForDealer {
			continue
		}
		external++
		if news[r.Slug] {
			t.Errorf("non-editorial news %s listed", r.Slug)
		}
		d := e.get("/dealer/content/news/details?slug="+url.QueryEscape(r.Slug), keyAlpha)
		item, _ := d.json["item"].(map[string]any)
		if d.status != 200 || item["source_provider"] != r.SourceProvider {
			t.Errorf("non-editorial news %s not readable by slug: %d", r.Slug, d.status)
		}
		word := strings.Fields(r.Title)[0]
		if len([]rune(word)) >= 2 {
			s := e.get("/dealer/content/search?page_size=20&q="+url.QueryEscape(r.Title), keyAlpha)
			for _, it := range s.items() {
				if it["slug"] == r.Slug && it["content_type"] == "news" {
					t.Errorf("non-editorial news %s found by search", r.Slug)
				}
			}
		}
	}
	if external < 10 {
		t.Errorf("only %d non-editorial news", external)
	}
	hub := e.get("/dealer/content/hub?page_size=20", keyAlpha)
	secs, _ := hub.json["sections"].(map[string]any)
	for _, ct := range contentTypes {
		sec, _ := secs[ct].(map[string]any)
		if sec == nil {
			t.Fatalf("hub without section %s", ct)
		}
		items, _ := sec["items"].([]any)
		if len(items) == 0 || len(items) > 20 {
			t.Errorf("hub %s: %d items", ct, len(items))
		}
		for _, it := range items {
			slug := it.(map[string]any)["slug"].(string)
			if !listed(ct, keyAlpha)[slug] {
				t.Errorf("hub %s shows %s which the listing does not", ct, slug)
			}
		}
	}
	if hub.json["content_type"] != "hub" {
		t.Errorf("hub content_type %v", hub.json["content_type"])
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
	r := e.get("/dealer/content/guides/listing?q=noleggio", keyAlpha)
	if r.json["q"] != "noleggio" {
		t.Errorf("q not echoed: %v", r.json["q"])
	}
}

func TestContentSearch(t *testing.T) {
	e := startEnv(t, envOptions{})
	for _, q := range []string{"noleggio", "fiat", "ibrido"} {
		r := e.get("/dealer/content/search?page_size=3&q="+q, keyAlpha)
		if r.status != 200 || r.json["q"] != q || r.num("page_size_per_type") != 3 {
			t.Fatalf("search %s: %d %s", q, r.status, r.body)
		}
		byType, _ := r.json["by_type"].(map[string]any)
		sum, perType := 0, map[string]int{}
		for ct, n := range byType {
			sum += int(n.(float64))
			_ = ct
		}
		if sum != r.num("total") {
			t.Errorf("search %s: by_type sums to %d, total %d", q, sum, r.num("total"))
		}
		var order []string
		for _, it := range r.items() {
			ct := it["content_type"].(string)
			perType[ct]++
			order = append(order, ct)
		}
		for ct, n := range perType {
			if n > 3 || n > int(byType[ct].(float64)) {
				t.Errorf("search %s: %d %s items (by_type %v)", q, n, ct, byType[ct])
			}
		}
		// Interleaved: the first round has each type with matches once.
		firstRound := map[string]bool{}
		for _, ct := range order {
			if firstRound[ct] {
				break
			}
			firstRound[ct] = true
		}
		for ct, n := range byType {
			if n.(float64) > 0 && !firstRound[ct] {
				t.Errorf("search %s: not interleaved, %s missing from the first round %v", q, ct, order)
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
