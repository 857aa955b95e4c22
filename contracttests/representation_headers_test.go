package contracttests

import (
	"bytes"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/dealer-edge/dealer-edge/upstream"
)

// TestCachedAnswersKeepTheirHeaders: wherever an answer comes from (a
// fill, another instance's entry read from a real redis-server, this
// instance's L1, a stale entry served while it is refreshed, a stale entry
// served because the inventory service is down), a client and the caches
// in front of the edge see the same representation headers for each
// coding: the identity body's strong ETag, the gzip body's weak form of
// it, Vary naming the key headers and Accept-Encoding, Cache-Control
// private with the freshness left (0 when stale), Date, a Content-Length
// that is the body's, and a gzip body that decodes to the identity body.
// HEAD answers GET's headers, and If-None-Match with either tag is a 304
// in either coding carrying the fields RFC 9110 15.4.5 asks for (ETag,
// Cache-Control, Vary, Date) and no body or body metadata.
func TestCachedAnswersKeepTheirHeaders(t *testing.T) {
	rs := redistest.Start(t)
	fk := sharedFake(t)
	const ttl, swr = 2 * time.Second, 2 * time.Second
	set := func(s *aggregatorSettings) {
		p := s.Cache["inventory_listing"]
		p.TTL, p.StaleWhileRevalidate, p.StaleIfError = ttl, swr, time.Hour
		s.Cache["inventory_listing"] = p
	}
	a := startEnv(t, envOptions{redisAddrs: []string{rs.Addr}, fake: fk, settings: set})
	b := startEnv(t, envOptions{redisAddrs: []string{rs.Addr}, fake: fk, settings: set})
	const path = "/dealer/REWIND/listing?page_size=20"
	for _, e := range []*env{a, b} { // resolve the key on both: the test is about the response cache
		if r := e.get("/dealer/NOS/listing?page_size=1", keyAlpha); r.status != 200 {
			t.Fatalf("warm-up: %d", r.status)
		}
	}
	const vary = "X-Api-Key, Authorization, Accept-Encoding"
	ccRe := regexp.MustCompile(`^private, max-age=(\d+)$`)
	var plainBody []byte
	var strong string
	// check asks e for path in one coding and checks the answer, its HEAD
	// and its 304s; wantCache is the X-Cache the GET must report.
	check := func(where string, e *env, gzip bool, wantCache string, maxAge func(int) bool) {
		t.Helper()
		hdr := []string{keyAlpha}
		if gzip {
			hdr = append(hdr, "Accept-Encoding: gzip")
		}
		r := e.get(path, hdr...)
		if r.status != 200 || r.header.Get("X-Cache") != wantCache {
			t.Fatalf("%s: %d X-Cache %q, want 200 %s", where, r.status, r.header.Get("X-Cache"), wantCache)
		}
		if plainBody == nil {
			plainBody, strong = r.body, r.header.Get("ETag")
			if !regexp.MustCompile(`^"[0-9a-f]{16}"$`).MatchString(strong) || gzip {
				t.Fatalf("%s: first answer ETag %q (gzip %v)", where, strong, gzip)
			}
		}
		wantTag, wantCE := strong, ""
		if gzip {
			wantTag, wantCE = "W/"+strong, "gzip"
		}
		if got := r.header.Get("ETag"); got != wantTag {
			t.Errorf("%s: ETag %q, want %q", where, got, wantTag)
		}
		if got := r.header.Get("Content-Encoding"); got != wantCE {
			t.Errorf("%s: Content-Encoding %q, want %q", where, got, wantCE)
		}
		if !bytes.Equal(r.body, plainBody) {
			t.Errorf("%s: the body (decoded) differs from the first answer's", where)
		}
		if got := r.header.Get("Content-Length"); got != strconv.Itoa(r.wire) {
			t.Errorf("%s: Content-Length %q, %d bytes sent", where, got, r.wire)
		}
		if got := r.header.Get("Vary"); got != vary {
			t.Errorf("%s: Vary %q, want %q", where, got, vary)
		}
		if r.header.Get("Date") == "" {
			t.Errorf("%s: no Date", where)
		}
		m := ccRe.FindStringSubmatch(r.header.Get("Cache-Control"))
		if m == nil {
			t.Fatalf("%s: Cache-Control %q", where, r.header.Get("Cache-Control"))
		}
		if n, _ := strconv.Atoi(m[1]); !maxAge(n) {
			t.Errorf("%s: max-age %d", where, n)
		}
		head := e.do("HEAD", path, hdr...)
		for _, k := range []string{"ETag", "Content-Encoding", "Content-Length", "Content-Type", "Vary"} {
			if head.header.Get(k) != r.header.Get(k) {
				t.Errorf("%s: HEAD %s %q, GET %q", where, k, head.header.Get(k), r.header.Get(k))
			}
		}
		if head.status != 200 || head.wire != 0 {
			t.Errorf("%s: HEAD %d with %d bytes", where, head.status, head.wire)
		}
		for _, inm := range []string{strong, "W/" + strong, `"other", ` + wantTag, "*"} {
			nm := e.get(path, append(hdr, "If-None-Match: "+inm)...)
			if nm.status != 304 || nm.wire != 0 {
				t.Errorf("%s: If-None-Match %s: %d with %d bytes", where, inm, nm.status, nm.wire)
				continue
			}
			if nm.header.Get("ETag") != wantTag || nm.header.Get("Vary") != vary || nm.header.Get("Date") == "" ||
				!ccRe.MatchString(nm.header.Get("Cache-Control")) {
				t.Errorf("%s: If-None-Match %s: 304 with ETag %q Vary %q Date %q Cache-Control %q", where, inm,
					nm.header.Get("ETag"), nm.header.Get("Vary"), nm.header.Get("Date"), nm.header.Get("Cache-Control"))
			}
			for _, k := range []string{"Content-Encoding", "Content-Length", "Content-Type"} {
				if v := nm.header.Get(k); v != "" {
					// A cache updating its stored answer from the 304
					// would take this over (RFC 9111 4.3.4).
					t.Errorf("%s: If-None-Match %s: 304 carries %s %q", where, inm, k, v)
				}
			}
		}
	}
	fresh := func(n int) bool { return n >= 0 && n <= int(ttl/time.Second) }
	stale := func(n int) bool { return n == 0 }
	check("a fill", a, false, "MISS", fresh)
	check("an L2 hit, gzip (another instance's entry)", b, true, "HIT", fresh)
	check("an L1 hit, gzip", b, true, "HIT", fresh)
	check("an L1 hit, identity", b, false, "HIT", fresh)
	check("an L1 hit, identity, filling instance", a, false, "HIT", fresh)
	check("an L1 hit, gzip, filling instance", a, true, "HIT", fresh)
	// Past the TTL: served stale while a refresh runs. The entry found is
	// the one each instance holds; the first request refreshes it.
	time.Sleep(ttl + 200*time.Millisecond)
	check("stale-while-revalidate, gzip", b, true, "STALE", stale)
	// Past every instance's stale-while-revalidate window, with the
	// inventory service down: the refill fails and the stale entry is
	// served (stale-if-error).
	time.Sleep(ttl + swr + 500*time.Millisecond)
	fk.SetDown(upstream.SvcInventory, true)
	defer fk.SetDown(upstream.SvcInventory, false)
	check("stale-if-error, identity", a, false, "STALE", stale)
	check("stale-if-error, gzip", b, true, "STALE", stale)
}
