package contracttests

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/aggregator"
	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/upstream"
)

func TestHTTPCaching(t *testing.T) {
	e := startEnv(t, envOptions{})
	path := "/dealer/REWIND/listing?page_size=5"
	first := e.get(path, keyAlpha)
	if first.header.Get("X-Cache") != "MISS" {
		t.Errorf("first X-Cache %q", first.header.Get("X-Cache"))
	}
	calls := e.fake.Calls(upstream.SvcInventory)
	second := e.get("/dealer/REWIND/listing?page_size=5&page=1", keyAlpha)
	if second.header.Get("X-Cache") != "HIT" || e.fake.Calls(upstream.SvcInventory) != calls {
		t.Errorf("normalised repeat: X-Cache %q, upstream calls %d -> %d", second.header.Get("X-Cache"), calls, e.fake.Calls(upstream.SvcInventory))
	}
	if string(first.body) != string(second.body) {
		t.Error("hit body differs")
	}
	etag := first.header.Get("ETag")
	if !regexp.MustCompile(`^"[^"]+"$`).MatchString(etag) || etag != second.header.Get("ETag") {
		t.Errorf("ETag %q / %q", etag, second.header.Get("ETag"))
	}
	cc := second.header.Get("Cache-Control")
	m := regexp.MustCompile(`^private, max-age=(\d+)$`).FindStringSubmatch(cc)
	if m == nil {
		t.Fatalf("Cache-Control %q", cc)
	}
	if n, _ := strconv.Atoi(m[1]); n <= 0 || n > 30 {
		t.Errorf("max-age %d outside the listing TTL", n)
	}
	if v := second.header.Get("Vary"); !strings.Contains(v, "X-Api-Key") || !strings.Contains(v, "Authorization") {
		t.Errorf("Vary %q", v)
	}
	nm := e.get(path, keyAlpha, "If-None-Match: "+etag)
	if nm.status != 304 || len(nm.body) != 0 || nm.header.Get("ETag") != etag {
		t.Errorf("If-None-Match: %d body %d", nm.status, len(nm.body))
	}
	if r := e.get(path, keyAlpha, `If-None-Match: "other"`); r.status != 200 {
		t.Errorf("non-matching If-None-Match: %d", r.status)
	}
	// Another dealer with the same URL gets its own entry, never Alpha's.
	beta := e.get(path, keyBeta)
	if beta.header.Get("X-Cache") != "MISS" || string(beta.body) == string(first.body) {
		t.Errorf("beta got alpha's cached body")
	}
}

func TestCacheBypassWhenTTLZero(t *testing.T) {
	e := startEnv(t, envOptions{settings: func(s *aggregatorSettings) {
		delete(s.Cache, "inventory_listing")
	}})
	for i := 0; i < 2; i++ {
		if r := e.get("/dealer/NOS/listing", keyAlpha); r.header.Get("X-Cache") != "BYPASS" {
			t.Fatalf("X-Cache %q", r.header.Get("X-Cache"))
		}
	}
}

// upstreamCalls sums the fake's call counters of every internal service.
func (e *env) upstreamCalls() int64 {
	var n int64
	for _, svc := range upstream.Services {
		n += e.fake.Calls(svc)
	}
	return n
}

// cacheCounters is the cache's Stats without the Redis health gauges,
// which move on their own (the purge subscription confirms in the
// background).
func (e *env) cacheCounters() cache.Stats {
	st := e.cache.Stats()
	st.RedisUp, st.PubSubUp, st.RedisDownEvents = false, false, 0
	return st
}

func TestRateLimit(t *testing.T) {
	e := startEnv(t, envOptions{})
	const path = "/dealer/content/faq/listing?page_size=1"
	var limited *resp
	ok, rejected := 0, 0
	// Until three 429s: each one is checked on its own (a token may come
	// back between them, at 10/s, and admit a request in between). Every
	// request asks for a page not cached yet, so one that got past the
	// limiter would show as a cache miss and an upstream call.
	for i := 0; i < 60 && rejected < 3; i++ {
		calls, stats := e.upstreamCalls(), e.cacheCounters()
		r := e.get(fmt.Sprintf("%s&page=%d", path, i+1), keyLimited)
		if r.header.Get("RateLimit-Policy") == "" || r.header.Get("RateLimit") == "" {
			t.Fatalf("no RateLimit headers: %v", r.header)
		}
		switch r.status {
		case 200:
			if limited == nil {
				ok++
			}
		case 429:
			limited = r
			rejected++
			// A rejected request reaches neither the cache nor the upstream.
			if n := e.upstreamCalls(); n != calls {
				t.Errorf("429 #%d made %d upstream calls", rejected, n-calls)
			}
			if got := e.cacheCounters(); got != stats {
				t.Errorf("429 #%d touched the cache:\nbefore %+v\nafter  %+v", rejected, stats, got)
			}
			if r.header.Get("X-Cache") != "" || r.header.Get("ETag") != "" {
				t.Errorf("429 #%d carries X-Cache %q / ETag %q", rejected, r.header.Get("X-Cache"), r.header.Get("ETag"))
			}
		default:
			t.Fatalf("status %d", r.status)
		}
	}
	if limited == nil || ok < 10 || ok > 12 {
		t.Fatalf("burst 10: admitted %d before a 429 (limited %v)", ok, limited != nil)
	}
	if rejected < 3 {
		t.Fatalf("only %d rejections in 60 requests", rejected)
	}
	if limited.code() != "rate_limited" {
		t.Errorf("code %q", limited.code())
	}
	ra, err := strconv.Atoi(limited.header.Get("Retry-After"))
	if err != nil || ra < 1 {
		t.Fatalf("Retry-After %q", limited.header.Get("Retry-After"))
	}
	time.Sleep(time.Duration(ra) * time.Second)
	if r := e.get(path, keyLimited); r.status != 200 {
		t.Errorf("after Retry-After: %d", r.status)
	}
	// Other keys are unaffected.
	if r := e.get(path, keyAlpha); r.status != 200 {
		t.Errorf("alpha limited by another key: %d", r.status)
	}
}

// TestContentTypeTTL: a per-content-type policy (Settings.ContentCache,
// config cache.content_types) overrides the content routes' policy for that
// type only, on listings and details alike.
func TestContentTypeTTL(t *testing.T) {
	const faqTTL = 17 * time.Second
	e := startEnv(t, envOptions{settings: func(s *aggregatorSettings) {
		s.ContentCache = map[string]cache.Policy{"faq": {TTL: faqTTL, StaleWhileRevalidate: time.Second}}
	}})
	routeTTL := int(aggregator.DefaultSettings().Cache["content_listing"].TTL / time.Second)
	maxAge := func(r *resp) int {
		t.Helper()
		m := regexp.MustCompile(`^private, max-age=(\d+)$`).FindStringSubmatch(r.header.Get("Cache-Control"))
		if r.status != 200 || m == nil {
			t.Fatalf("status %d, Cache-Control %q", r.status, r.header.Get("Cache-Control"))
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	for _, x := range []string{"MISS", "HIT"} {
		faq := e.get("/dealer/content/faq/listing?page_size=2", keyAlpha)
		news := e.get("/dealer/content/news/listing?page_size=2", keyAlpha)
		if faq.header.Get("X-Cache") != x || news.header.Get("X-Cache") != x {
			t.Fatalf("X-Cache faq %q news %q, want %s", faq.header.Get("X-Cache"), news.header.Get("X-Cache"), x)
		}
		if a := maxAge(faq); a > int(faqTTL/time.Second) || a < int(faqTTL/time.Second)-3 {
			t.Errorf("%s: faq listing max-age %d, want about %v (its content type's TTL)", x, a, faqTTL)
		}
		if a := maxAge(news); a > routeTTL || a < routeTTL-3 {
			t.Errorf("%s: news listing max-age %d, want about %ds (the content_listing route's TTL)", x, a, routeTTL)
		}
	}
	// Details of the type follow its policy too.
	items := e.get("/dealer/content/faq/listing?page_size=1", keyAlpha).items()
	if len(items) == 0 {
		t.Fatal("no faq item")
	}
	slug, _ := items[0]["slug"].(string)
	if slug == "" {
		t.Fatalf("no slug in %v", items[0])
	}
	if a := maxAge(e.get("/dealer/content/faq/details?slug="+url.QueryEscape(slug), keyAlpha)); a > int(faqTTL/time.Second) {
		t.Errorf("faq details max-age %d, want at most %v", a, faqTTL)
	}
}

// TestEdgeCoalescesConcurrentMisses: 100 concurrent requests of one
// uncached URL, with a slow inventory service, make exactly one inventory
// call, and every one of them gets the 200.
func TestEdgeCoalescesConcurrentMisses(t *testing.T) {
	e := startEnv(t, envOptions{})
	// Resolve the key first: the test is about the response cache.
	if r := e.get("/dealer/NOS/listing?page_size=1", keyAlpha); r.status != 200 {
		t.Fatalf("warm-up: %d", r.status)
	}
	e.fake.SetLatency(upstream.SvcInventory, 300*time.Millisecond)
	defer e.fake.SetLatency(upstream.SvcInventory, 0)
	before := e.fake.Calls(upstream.SvcInventory)
	const n = 100
	const path = "/dealer/REWIND/listing?page_size=7&page=2"
	type result struct {
		status int
		body   string
		err    error
	}
	results := make([]result, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, err := http.NewRequest("GET", e.base+path, nil)
			if err != nil {
				results[i].err = err
				return
			}
			req.Header.Set("X-Api-Key", "demo-key-alpha")
			<-start
			hr, err := e.client.Do(req)
			if err != nil {
				results[i].err = err
				return
			}
			defer hr.Body.Close()
			b, err := io.ReadAll(hr.Body)
			results[i] = result{hr.StatusCode, string(b), err}
		}()
	}
	close(start)
	wg.Wait()
	for i, r := range results {
		if r.err != nil || r.status != 200 {
			t.Fatalf("request %d: status %d, error %v: %.300s", i, r.status, r.err, r.body)
		}
		if r.body != results[0].body {
			t.Fatalf("request %d got a different body", i)
		}
	}
	if got := e.fake.Calls(upstream.SvcInventory) - before; got != 1 {
		t.Fatalf("%d concurrent misses made %d inventory calls, want exactly 1", n, got)
	}
	// The response is the contract's (checked once, on the main goroutine).
	if r := e.get(path, keyAlpha); r.status != 200 || string(r.body) != results[0].body || r.header.Get("X-Cache") != "HIT" {
		t.Errorf("after the burst: %d X-Cache %q", r.status, r.header.Get("X-Cache"))
	}
	t.Logf("coalesced %d of %d requests into one fill", e.cache.Stats().Coalesced, n)
}

func TestUpstreamDownServesStaleThen503(t *testing.T) {
	e := startEnv(t, envOptions{settings: func(s *aggregatorSettings) {
		p := s.Cache["inventory_listing"]
		p.TTL, p.StaleWhileRevalidate, p.StaleIfError = time.Millisecond, 0, time.Hour
		s.Cache["inventory_listing"] = p
	}})
	warm := e.get("/dealer/REWIND/listing?page_size=3", keyAlpha)
	if warm.status != 200 {
		t.Fatal(warm.status)
	}
	time.Sleep(5 * time.Millisecond)
	e.fake.SetDown(upstream.SvcInventory, true)
	defer e.fake.SetDown(upstream.SvcInventory, false)
	stale := e.get("/dealer/REWIND/listing?page_size=3", keyAlpha)
	if stale.status != 200 || stale.header.Get("X-Cache") != "STALE" || string(stale.body) != string(warm.body) {
		t.Errorf("stale-if-error: %d %q", stale.status, stale.header.Get("X-Cache"))
	}
	start := time.Now()
	r := e.get("/dealer/REWIND/listing?page_size=4", keyAlpha)
	if r.status != 503 || r.code() != "service_unavailable" {
		t.Errorf("nothing cached, upstream down: %d %q", r.status, r.code())
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("503 took %v", d)
	}
}

// TestGzipResponses: a client that accepts gzip gets the same JSON
// compressed, made once per cache entry, with the weak form of the ETag;
// either tag revalidates; a refusal, a small body or no Accept-Encoding
// gets the plain body; Vary names Accept-Encoding.
func TestGzipResponses(t *testing.T) {
	e := startEnv(t, envOptions{})
	path := "/dealer/REWIND/listing?page_size=20"
	plain := e.get(path, keyAlpha)
	if plain.header.Get("Content-Encoding") != "" || plain.wire != len(plain.body) {
		t.Fatalf("no Accept-Encoding: Content-Encoding %q", plain.header.Get("Content-Encoding"))
	}
	strong := plain.header.Get("ETag")
	for _, ae := range []string{"gzip", "gzip, deflate, br", "br;q=1.0, gzip;q=0.8", "x-gzip", "*", "GZIP;Q=0.001", "identity;q=0.5, *;q=0.1"} {
		gz := e.get(path, keyAlpha, "Accept-Encoding: "+ae)
		if gz.status != 200 || gz.header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("%q: status %d, Content-Encoding %q", ae, gz.status, gz.header.Get("Content-Encoding"))
		}
		if !bytes.Equal(gz.body, plain.body) {
			t.Fatalf("%q: decoded body differs from the plain one", ae)
		}
		if gz.wire*3 > len(plain.body) {
			t.Errorf("%q: %d bytes compressed of %d", ae, gz.wire, len(plain.body))
		}
		if gz.header.Get("X-Cache") != "HIT" || gz.header.Get("ETag") != "W/"+strong {
			t.Errorf("%q: X-Cache %q ETag %q (plain %q)", ae, gz.header.Get("X-Cache"), gz.header.Get("ETag"), strong)
		}
		if v := gz.header.Get("Vary"); !strings.Contains(v, "Accept-Encoding") {
			t.Errorf("Vary %q", v)
		}
	}
	for _, tag := range []string{strong, "W/" + strong} {
		for _, ae := range []string{"", "gzip"} {
			h := []string{"If-None-Match: " + tag}
			if ae != "" {
				h = append(h, "Accept-Encoding: "+ae)
			}
			r := e.get(path, append(h, keyAlpha)...)
			if r.status != 304 || r.wire != 0 || r.header.Get("Content-Encoding") != "" {
				t.Errorf("If-None-Match %s, Accept-Encoding %q: %d with %d bytes, Content-Encoding %q", tag, ae, r.status, r.wire, r.header.Get("Content-Encoding"))
			}
			if want := strong; ae != "" {
				if want = "W/" + strong; r.header.Get("ETag") != want {
					t.Errorf("304 for a gzip client: ETag %q, want %q", r.header.Get("ETag"), want)
				}
			} else if r.header.Get("ETag") != want {
				t.Errorf("304 for a plain client: ETag %q, want %q", r.header.Get("ETag"), want)
			}
		}
	}
	for _, ae := range []string{"gzip;q=0", "identity", "br", "gzip;q=0, *", "*;q=0", "gzip;q=abc", "deflate, gzip;q=0.000", "gzip; q = 0",
		"identity;q=0", "br, identity;q=0", "*;q=0, identity;q=0"} { // identity refused, gzip not accepted: identity, never 406
		if r := e.get(path, keyAlpha, "Accept-Encoding: "+ae); r.header.Get("Content-Encoding") != "" || !bytes.Equal(r.body, plain.body) {
			t.Errorf("%q: Content-Encoding %q", ae, r.header.Get("Content-Encoding"))
		}
	}
	// Problems and bodies under server.gzip_min_bytes stay plain.
	if r := e.get("/dealer/REWIND/listing?page_size=0", keyAlpha, "Accept-Encoding: gzip"); r.status != 422 || r.header.Get("Content-Encoding") != "" {
		t.Errorf("problem: %d, Content-Encoding %q", r.status, r.header.Get("Content-Encoding"))
	}
	for _, ae := range []string{"gzip", "gzip, identity;q=0"} {
		small := e.get("/dealer/REWIND/listing?page_size=1&q=zzzz-no-such-vehicle", keyAlpha, "Accept-Encoding: "+ae)
		if small.status != 200 || len(small.body) >= 1024 || small.header.Get("Content-Encoding") != "" {
			t.Errorf("%q: small body (%d bytes): %d, Content-Encoding %q", ae, len(small.body), small.status, small.header.Get("Content-Encoding"))
		}
	}
}

// TestGzipOff: server.gzip_min_bytes 0 turns compression off, for the
// OpenAPI document too (it was still sent gzip-coded), and the document
// follows the threshold like any body.
func TestGzipOff(t *testing.T) {
	e := startEnv(t, envOptions{settings: func(s *aggregatorSettings) { s.GzipMinBytes = 0 }})
	for _, path := range []string{"/dealer/REWIND/listing?page_size=20", "/dealer/openapi.json"} {
		r := e.get(path, keyAlpha, "Accept-Encoding: gzip")
		if r.status != 200 || r.header.Get("Content-Encoding") != "" || len(r.body) < 1024 || strings.HasPrefix(r.header.Get("ETag"), "W/") {
			t.Errorf("%s: %d, Content-Encoding %q, ETag %q, %d bytes", path, r.status, r.header.Get("Content-Encoding"), r.header.Get("ETag"), len(r.body))
		}
	}
	doc := e.get("/dealer/openapi.json")
	st := aggregator.DefaultSettings()
	st.GzipMinBytes = len(doc.body) + 1
	if err := e.api.UpdateSettings(st); err != nil {
		t.Fatal(err)
	}
	if r := e.get("/dealer/openapi.json", "Accept-Encoding: gzip"); r.status != 200 || r.header.Get("Content-Encoding") != "" {
		t.Errorf("document of %d bytes under a threshold of %d: Content-Encoding %q", len(doc.body), st.GzipMinBytes, r.header.Get("Content-Encoding"))
	}
	st.GzipMinBytes = len(doc.body)
	if err := e.api.UpdateSettings(st); err != nil {
		t.Fatal(err)
	}
	if r := e.get("/dealer/openapi.json", "Accept-Encoding: gzip"); r.status != 200 || r.header.Get("Content-Encoding") != "gzip" {
		t.Errorf("document of %d bytes at a threshold of %d: Content-Encoding %q", len(doc.body), st.GzipMinBytes, r.header.Get("Content-Encoding"))
	}
}

// TestIfMatchPrecondition: If-Match is evaluated as RFC 9110 13.1.1 and
// 13.2.2 require of an origin server, before If-None-Match: a 2xx answer
// whose current ETag does not strongly match a listed tag is 412
// precondition_failed instead (a weak tag never matches strongly), "*"
// matches any current representation, and an answer that would not be 2xx
// ignores the precondition. Before 2026-11-29 If-Match was disregarded and
// a client guarding its read with it got whatever the edge held.
func TestIfMatchPrecondition(t *testing.T) {
	e := startEnv(t, envOptions{})
	path := "/dealer/REWIND/listing?page_size=5"
	first := e.get(path, keyAlpha)
	etag := first.header.Get("ETag")
	if first.status != 200 || etag == "" {
		t.Fatalf("%s: %d ETag %q", path, first.status, etag)
	}
	for _, c := range []struct {
		name    string
		headers []string
		status  int
	}{
		{"current tag", []string{"If-Match: " + etag}, 200},
		{"current tag in a list", []string{`If-Match: "other", ` + etag}, 200},
		{"star", []string{"If-Match: *"}, 200},
		{"other tag", []string{`If-Match: "other"`}, 412},
		{"weak form of the current tag", []string{"If-Match: W/" + etag}, 412},
		{"before If-None-Match", []string{`If-Match: "other"`, "If-None-Match: " + etag}, 412},
		{"both true", []string{"If-Match: " + etag, "If-None-Match: " + etag}, 304},
	} {
		r := e.get(path, append([]string{keyAlpha}, c.headers...)...)
		if r.status != c.status {
			t.Errorf("%s: %d, want %d: %.200s", c.name, r.status, c.status, r.body)
			continue
		}
		switch c.status {
		case 200:
			if string(r.body) != string(first.body) {
				t.Errorf("%s: body differs", c.name)
			}
		case 412:
			if r.code() != "precondition_failed" || r.header.Get("Cache-Control") != "no-store" || r.header.Get("ETag") != "" {
				t.Errorf("%s: code %q Cache-Control %q ETag %q", c.name, r.code(), r.header.Get("Cache-Control"), r.header.Get("ETag"))
			}
		}
	}
	// HEAD: the same status without a body (e.do checks a problem body).
	req, _ := http.NewRequest("HEAD", e.base+path, nil)
	req.Header.Set("X-Api-Key", "demo-key-alpha")
	req.Header.Set("If-Match", `"other"`)
	if hr, err := e.client.Do(req); err != nil {
		t.Errorf("HEAD: %v", err)
	} else {
		b, _ := io.ReadAll(hr.Body)
		hr.Body.Close()
		if hr.StatusCode != 412 || len(b) != 0 || hr.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("HEAD: %d, %d bytes, %q", hr.StatusCode, len(b), hr.Header.Get("Content-Type"))
		}
	}
	// A gzip answer's tag is weak: only "*" can match it.
	if r := e.get(path, keyAlpha, "Accept-Encoding: gzip", "If-Match: "+etag); r.status != 412 {
		t.Errorf("gzip answer, strong tag: %d", r.status)
	}
	if r := e.get(path, keyAlpha, "Accept-Encoding: gzip", "If-Match: *"); r.status != 200 || r.header.Get("Content-Encoding") != "gzip" {
		t.Errorf("gzip answer, star: %d %q", r.status, r.header.Get("Content-Encoding"))
	}
	// Answers that would not be 2xx ignore the precondition.
	for path, status := range map[string]int{
		"/dealer/REWIND/listing?page=0":                                       422,
		"/dealer/REWIND/details?id_auto=3f2504e0-4f89-41d3-9a0c-0305e82c3301": 404,
		"/dealer/CARS/listing":                                                400,
	} {
		if r := e.get(path, keyAlpha, `If-Match: "other"`); r.status != status {
			t.Errorf("%s: %d, want %d", path, r.status, status)
		}
	}
	if r := e.get(path, `If-Match: "other"`); r.status != 401 {
		t.Errorf("without a key: %d", r.status)
	}
	// A deprecated type's 412 carries the deprecation fields, as every
	// answer of it does; the contract document too obeys If-Match.
	if r := e.get("/dealer/content/guides/listing", keyAlpha, `If-Match: "other"`); r.status != 412 || r.header.Get("Deprecation") == "" {
		t.Errorf("guides: %d Deprecation %q", r.status, r.header.Get("Deprecation"))
	}
	if r := e.get("/dealer/openapi.json", `If-Match: "other"`); r.status != 412 {
		t.Errorf("openapi.json: %d", r.status)
	}
}
