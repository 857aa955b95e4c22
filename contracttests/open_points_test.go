package contracttests

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/aggregator"
)

// The tests of this file hold the edge to what README's "Decisions where
// the contract is silent" says about points contract v1.2.0 leaves open and
// no other test pins: content negotiation by Accept, empty parameter
// values, parameter names, slug matching, the order of the checks, path
// versions, CORS and the time after the sunset.

// TestAcceptIsNotNegotiated: the edge has one representation per answer
// and disregards Accept (RFC 9110 12.5.1 allows it; 406 is no status of the
// contract): success is application/json, a failure application/problem+json,
// whatever the client lists.
func TestAcceptIsNotNegotiated(t *testing.T) {
	e := startEnv(t, envOptions{})
	for _, accept := range []string{"text/html", "application/xml", "application/problem+json", "application/json;q=0", "*/*;q=0", "image/*"} {
		for _, c := range []struct {
			path   string
			status int
			ct     string
		}{
			{"/dealer/REWIND/listing?page_size=2", 200, "application/json"},
			{"/dealer/content/faq/listing?page_size=2", 200, "application/json"},
			{"/dealer/REWIND/listing?page=0", 422, "application/problem+json"},
			{"/dealer/content/faq/details?slug=no-such-item", 404, "application/problem+json"},
		} {
			r := e.get(c.path, keyAlpha, "Accept: "+accept)
			if r.status != c.status || r.header.Get("Content-Type") != c.ct {
				t.Errorf("Accept %q, %s: %d %q, want %d %q", accept, c.path, r.status, r.header.Get("Content-Type"), c.status, c.ct)
			}
			for _, f := range strings.Split(r.header.Get("Vary"), ",") {
				if strings.EqualFold(strings.TrimSpace(f), "Accept") {
					t.Errorf("Accept %q, %s: Vary %q names Accept, which selects nothing", accept, c.path, r.header.Get("Vary"))
				}
			}
		}
	}
}

// TestEmptyParameterValues: an empty value (or one of white space only,
// or a name without "=") of an optional text filter means no filter: the
// answer is the unfiltered one, without a q or filters echo. Every other
// empty value is refused as the parameter's rule says, and an empty value
// still counts as given (a duplicate, a filter outside its types).
func TestEmptyParameterValues(t *testing.T) {
	e := startEnv(t, envOptions{})
	same := func(base string, variants ...string) {
		t.Helper()
		want := e.get(base, keyAlpha)
		if want.status != 200 {
			t.Fatalf("%s: %d", base, want.status)
		}
		sep := "?"
		if strings.Contains(base, "?") {
			sep = "&"
		}
		for _, v := range variants {
			r := e.get(base+sep+v, keyAlpha)
			if r.status != 200 || string(r.body) != string(want.body) {
				t.Errorf("%s%s%s: %d, body differs from the unfiltered one: %.200s", base, sep, v, r.status, r.body)
			}
			if _, has := r.json["q"]; has {
				t.Errorf("%s%s%s: echoes q", base, sep, v)
			}
			if _, has := r.json["filters"]; has {
				t.Errorf("%s%s%s: echoes filters", base, sep, v)
			}
		}
	}
	for _, svc := range []string{"REWIND", "NOS", "NLT"} {
		same("/dealer/"+svc+"/listing?page_size=5", "q=", "q=%20%20", "q")
	}
	same("/dealer/content/faq/listing?page_size=5", "q=", "q=%09", "category=", "category=%20", "category")
	same("/dealer/content/news/listing?page_size=5", "category=", "brand=", "brand=%C2%A0", "q=&brand=")
	same("/dealer/content/glossary/listing?page_size=5", "category=")
	same("/dealer/content/guides/listing?page_size=5", "topic=", "topic=%20")

	refused := []struct {
		path   string
		status int
		code   string
		field  string
	}{
		{"/dealer/REWIND/listing?page=", 422, "validation_error", "page"},
		{"/dealer/REWIND/listing?page_size", 422, "validation_error", "page_size"},
		{"/dealer/REWIND/listing?catalog_type=", 422, "validation_error", "catalog_type"},
		{"/dealer/REWIND/listing?professional_upfit=", 422, "validation_error", "professional_upfit"},
		{"/dealer/NLT/listing?catalog_type=", 422, "validation_error", "catalog_type"},
		{"/dealer/content/hub?page_size=", 422, "validation_error", "page_size"},
		{"/dealer/content/search?q=", 422, "validation_error", "q"},
		{"/dealer/content/search?q=%20%20", 422, "validation_error", "q"},
		{"/dealer/content/faq/details?slug=", 422, "validation_error", "slug"},
		{"/dealer/content/faq/listing?category=&category=permuta", 422, "validation_error", "category"},
		{"/dealer/content/guides/listing?category=", 422, "validation_error", "category"},
		{"/dealer/content/news/listing?topic=", 422, "validation_error", "topic"},
		// An empty identifier is a malformed one, not a missing one.
		{"/dealer/REWIND/details?id_auto=", 400, "invalid_identifier", ""},
		{"/dealer/NLT/details?id_offerta=", 400, "invalid_identifier", ""},
	}
	for _, c := range refused {
		r := e.get(c.path, keyAlpha)
		fields := problemFields(r)
		if r.status != c.status || r.code() != c.code || c.field != "" && (len(fields) != 1 || fields[0] != c.field) {
			t.Errorf("%s: %d %q fields %v, want %d %q [%s]", c.path, r.status, r.code(), fields, c.status, c.code, c.field)
		}
	}
}

// TestParameterNamesAreExact: parameter names are matched as the contract
// spells them (after percent-decoding); another spelling is an unknown
// parameter, ignored like any other, also when its value would be refused.
func TestParameterNamesAreExact(t *testing.T) {
	e := startEnv(t, envOptions{})
	want := e.get("/dealer/REWIND/listing?page_size=3", keyAlpha)
	for _, q := range []string{"PAGE=0&page_size=3", "Page_Size=0&page_size=3", "page_size=3&Q=%FF", "page%5Fsize=3", "page_size=3&sort=price&order=desc"} {
		r := e.get("/dealer/REWIND/listing?"+q, keyAlpha)
		if r.status != 200 || string(r.body) != string(want.body) {
			t.Errorf("?%s: %d %.200s, want the body of ?page_size=3", q, r.status, r.body)
		}
	}
}

// TestSlugMatchedExactly: a content slug is matched byte for byte, as the
// listings publish it: another letter case, white space around it or a
// percent-encoded form of another string is 404 content_not_found.
func TestSlugMatchedExactly(t *testing.T) {
	e := startEnv(t, envOptions{})
	l := e.get("/dealer/content/faq/listing?page_size=1", keyAlpha)
	slug, _ := l.items()[0]["slug"].(string)
	if slug == "" {
		t.Fatalf("no slug: %s", l.body)
	}
	if r := e.get("/dealer/content/faq/details?slug="+url.QueryEscape(slug), keyAlpha); r.status != 200 {
		t.Fatalf("%s: %d", slug, r.status)
	}
	for _, s := range []string{strings.ToUpper(slug), " " + slug, slug + " ", slug + "/", strings.ReplaceAll(slug, "-", "_")} {
		r := e.get("/dealer/content/faq/details?slug="+url.QueryEscape(s), keyAlpha)
		if r.status != 404 || r.code() != "content_not_found" {
			t.Errorf("slug %q: %d %q, want 404 content_not_found", s, r.status, r.code())
		}
	}
}

// TestCheckOrder: the route, then the method, then the key (and its
// dealer), then the path value, then the parameters, then the lookup. A
// caller without a valid key learns nothing of the path values or the
// parameters.
func TestCheckOrder(t *testing.T) {
	e := startEnv(t, envOptions{})
	cases := []struct {
		method, path, key string
		status            int
		code              string
	}{
		{"GET", "/dealer/nothing/here?page=0", "", 404, "not_found"},
		{"POST", "/dealer/CARS/listing?page=0", "", 405, "method_not_allowed"},
		{"GET", "/dealer/CARS/listing?page=0", "", 401, "missing_api_key"},
		{"GET", "/dealer/content/blog/details", "X-Api-Key: nope-not-a-key", 401, "invalid_api_key"},
		{"GET", "/dealer/CARS/details?id_auto=x", "X-Api-Key: demo-key-expired", 401, "expired_api_key"},
		{"GET", "/dealer/CARS/listing?page=0", "X-Api-Key: demo-key-orphan", 404, "dealer_not_found"},
		{"GET", "/dealer/CARS/listing?page=0", keyAlpha, 400, "invalid_service"},
		{"GET", "/dealer/content/blog/details", keyAlpha, 400, "invalid_content_type"},
		{"GET", "/dealer/REWIND/details?id_auto=x&id_offerta=1", keyAlpha, 422, "validation_error"},
		{"GET", "/dealer/REWIND/details?id_auto=x&page=0", keyAlpha, 400, "invalid_identifier"},
	}
	for _, c := range cases {
		var hs []string
		if c.key != "" {
			hs = append(hs, c.key)
		}
		r := e.do(c.method, c.path, hs...)
		if r.status != c.status || r.code() != c.code {
			t.Errorf("%s %s (%s): %d %q, want %d %q", c.method, c.path, c.key, r.status, r.code(), c.status, c.code)
		}
	}
}

// TestNoPathVersions: the contract's paths carry no version (the version
// is the OpenAPI document's info.version); a versioned path is no route.
func TestNoPathVersions(t *testing.T) {
	e := startEnv(t, envOptions{})
	for _, p := range []string{"/v1/dealer/REWIND/listing", "/v1.2/dealer/REWIND/listing", "/dealer/v1/REWIND/listing", "/api/dealer/REWIND/listing"} {
		if r := e.get(p, keyAlpha); r.status != 404 || r.code() != "not_found" {
			t.Errorf("%s: %d %q, want 404 not_found", p, r.status, r.code())
		}
	}
	if r := e.get("/dealer/openapi.json", keyAlpha); r.status != 200 || !strings.Contains(string(r.body), `"version": "1.2.0"`) {
		t.Errorf("openapi.json: %d, no version 1.2.0", r.status)
	}
}

// TestNoCORS: the key is a backend secret (contract section 1), so the
// edge grants no browser origin: a preflight is 405 like any OPTIONS, and
// no answer carries Access-Control-* fields.
func TestNoCORS(t *testing.T) {
	e := startEnv(t, envOptions{})
	pre := e.do("OPTIONS", "/dealer/REWIND/listing", "Origin: https://www.alphamotori.it", "Access-Control-Request-Method: GET", "Access-Control-Request-Headers: x-api-key")
	if pre.status != 405 || pre.header.Get("Allow") != "GET, HEAD" {
		t.Errorf("preflight: %d Allow %q", pre.status, pre.header.Get("Allow"))
	}
	get := e.get("/dealer/REWIND/listing?page_size=1", keyAlpha, "Origin: https://www.alphamotori.it")
	for _, r := range []*resp{pre, get} {
		for k := range r.header {
			if strings.HasPrefix(strings.ToLower(k), "access-control-") {
				t.Errorf("%d answer carries %s: %q", r.status, k, r.header.Get(k))
			}
		}
	}
}

// TestServedPastSunset: after the sunset date the deprecated types are
// still served, with the same headers and payload fields (the contract
// says only that they may stop; it has no 410), until the operator
// removes them.
func TestServedPastSunset(t *testing.T) {
	sunset := time.Now().Add(-24 * time.Hour).UTC().Truncate(time.Second)
	e := startEnv(t, envOptions{settings: func(st *aggregator.Settings) {
		st.Deprecation.Deprecation = sunset.Add(-365 * 24 * time.Hour)
		st.Deprecation.Sunset = sunset
	}})
	for _, ct := range []string{"guides", "glossary"} {
		r := e.get("/dealer/content/"+ct+"/listing?page_size=1", keyAlpha)
		if r.status != 200 || len(r.items()) != 1 || r.json["deprecated"] != true {
			t.Fatalf("%s past sunset: %d %.200s", ct, r.status, r.body)
		}
		want := sunset.Format(time.RFC1123)
		want = strings.Replace(want, "UTC", "GMT", 1)
		if r.header.Get("Sunset") != want || r.json["sunset"] != want {
			t.Errorf("%s: Sunset %q, payload %v, want %q", ct, r.header.Get("Sunset"), r.json["sunset"], want)
		}
		slug, _ := r.items()[0]["slug"].(string)
		if d := e.get("/dealer/content/"+ct+"/details?slug="+url.QueryEscape(slug), keyAlpha); d.status != 200 || d.header.Get("Deprecation") == "" {
			t.Errorf("%s detail past sunset: %d Deprecation %q", ct, d.status, d.header.Get("Deprecation"))
		}
	}
}

// TestMalformedPercentTakenLiterally: a "%" not followed by two hex digits
// is kept as it is (the query is read leniently, as most servers do); a
// value that decodes to bytes that are not UTF-8 is still refused.
func TestMalformedPercentTakenLiterally(t *testing.T) {
	e := startEnv(t, envOptions{})
	if r := e.get("/dealer/content/faq/listing?q=%zz", keyAlpha); r.status != 200 || r.json["q"] != "%zz" || r.num("total") != 0 {
		t.Errorf("listing q=%%zz: %d q %v total %d", r.status, r.json["q"], r.num("total"))
	}
	if r := e.get("/dealer/content/search?q=ab%2", keyAlpha); r.status != 200 || r.json["q"] != "ab%2" {
		t.Errorf("search q=ab%%2: %d q %v", r.status, r.json["q"])
	}
	if r := e.get("/dealer/content/faq/details?slug=a%2", keyAlpha); r.status != 404 || r.code() != "content_not_found" {
		t.Errorf("slug a%%2: %d %q", r.status, r.code())
	}
	if r := e.get("/dealer/REWIND/listing?q=caf%E9", keyAlpha); r.status != 422 || r.code() != "validation_error" {
		t.Errorf("q=caf%%E9 (Latin-1): %d %q, want 422", r.status, r.code())
	}
}

// TestDeprecatedItemsKeepDealerURL: the url of a guides or glossary item is
// the page on the dealer's site (contract 2.7), which redirects (301) to
// the successor that successor_version names; the edge does not rewrite it.
func TestDeprecatedItemsKeepDealerURL(t *testing.T) {
	e := startEnv(t, envOptions{})
	for _, ct := range []string{"guides", "glossary"} {
		r := e.get("/dealer/content/"+ct+"/listing?page_size=5", keyAlpha)
		meta, _ := r.json["meta"].(map[string]any)
		dealer, _ := meta["dealer"].(map[string]any)
		domain, _ := dealer["primary_domain"].(string)
		if r.status != 200 || domain == "" {
			t.Fatalf("%s: %d, no primary_domain: %.300s", ct, r.status, r.body)
		}
		for _, it := range r.items() {
			raw, _ := it["url"].(string)
			u, err := url.Parse(raw)
			if err != nil || u.Host != domain {
				t.Errorf("%s item %v: url %q is not on the dealer's site %s", ct, it["slug"], raw, domain)
			}
		}
	}
}
