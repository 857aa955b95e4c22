package contracttests

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

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

func TestRateLimit(t *testing.T) {
	e := startEnv(t, envOptions{})
	var limited *resp
	ok := 0
	for i := 0; i < 30 && limited == nil; i++ {
		r := e.get("/dealer/content/faq/listing?page_size=1", keyLimited)
		if r.header.Get("RateLimit-Policy") == "" || r.header.Get("RateLimit") == "" {
			t.Fatalf("no RateLimit headers: %v", r.header)
		}
		switch r.status {
		case 200:
			ok++
		case 429:
			limited = r
		default:
			t.Fatalf("status %d", r.status)
		}
	}
	if limited == nil || ok < 10 || ok > 12 {
		t.Fatalf("burst 10: admitted %d before a 429 (limited %v)", ok, limited != nil)
	}
	if limited.code() != "rate_limited" {
		t.Errorf("code %q", limited.code())
	}
	ra, err := strconv.Atoi(limited.header.Get("Retry-After"))
	if err != nil || ra < 1 {
		t.Fatalf("Retry-After %q", limited.header.Get("Retry-After"))
	}
	time.Sleep(time.Duration(ra) * time.Second)
	if r := e.get("/dealer/content/faq/listing?page_size=1", keyLimited); r.status != 200 {
		t.Errorf("after Retry-After: %d", r.status)
	}
	// Other keys are unaffected.
	if r := e.get("/dealer/content/faq/listing?page_size=1", keyAlpha); r.status != 200 {
		t.Errorf("alpha limited by another key: %d", r.status)
	}
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
