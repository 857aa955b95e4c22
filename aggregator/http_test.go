package aggregator

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/cache/ratelimit"
	"github.com/dealer-edge/dealer-edge/publicshape"
)

// serveLoopback serves s on a loopback port with a real fasthttp.Server
// (HEAD framing, Content-Length and the error handler are the server's,
// not the handler's) and returns its base URL.
func serveLoopback(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: s.Handler(), ErrorHandler: s.ErrorHandler, MaxRequestBodySize: 1024}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return "http://" + ln.Addr().String()
}

type httpAnswer struct {
	status int
	header http.Header
	body   []byte
}

// rawDo sends one request without transparent decompression, so the
// coding and Content-Length on the wire are what the test sees.
func rawDo(t *testing.T, method, url string, hdr ...string) httpAnswer {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if req.Header.Get("Accept-Encoding") == "" {
		req.Header.Set("Accept-Encoding", "identity")
	}
	resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return httpAnswer{resp.StatusCode, resp.Header, body}
}

// slowLimitSettings: a budget that does not refill during a test, so the
// RateLimit remaining count moves only by what requests spend.
func slowLimitSettings() *Settings {
	st := DefaultSettings()
	st.Limits = map[string]ratelimit.Limit{}
	st.DefaultLimit = ratelimit.Limit{Rate: 0.01, Burst: 1000}
	return st
}

func remainingOf(t *testing.T, h http.Header) int {
	t.Helper()
	v := h.Get("RateLimit")
	i := strings.Index(v, ";r=")
	if i < 0 {
		t.Fatalf("RateLimit %q", v)
	}
	var r int
	if _, err := fmt.Sscanf(v[i+3:], "%d", &r); err != nil {
		t.Fatalf("RateLimit %q: %v", v, err)
	}
	return r
}

// TestHeadAnsweredLikeGet: HEAD on every public route (and on the error
// answers) gets GET's status and header fields, Content-Length included,
// without a body, and spends the same rate-limit budget.
func TestHeadAnsweredLikeGet(t *testing.T) {
	s := newBenchServer(t, true)
	if err := s.UpdateSettings(slowLimitSettings()); err != nil {
		t.Fatal(err)
	}
	base := serveLoopback(t, s)
	key := []string{"X-Api-Key", "demo-key-alpha"}
	first := func(path, field string) string {
		a := rawDo(t, "GET", base+path, key...)
		var l struct {
			Items []map[string]any `json:"items"`
		}
		if err := json.Unmarshal(a.body, &l); err != nil || len(l.Items) == 0 {
			t.Fatalf("%s: %d %v %.200s", path, a.status, err, a.body)
		}
		switch v := l.Items[0][field].(type) {
		case string:
			return v
		case float64:
			return fmt.Sprint(int64(v))
		}
		t.Fatalf("%s: no %s in %v", path, field, l.Items[0])
		return ""
	}
	idAuto := first("/dealer/REWIND/listing", "id_auto")
	idOfferta := first("/dealer/NLT/listing", "id_offerta")
	slug := first("/dealer/content/faq/listing", "slug")
	cases := []struct {
		name, path string
		hdr        []string
		status     int
	}{
		{"inventory listing", "/dealer/REWIND/listing?page_size=3", key, 200},
		{"inventory listing gzip", "/dealer/REWIND/listing", append([]string{"Accept-Encoding", "gzip"}, key...), 200},
		{"inventory details", "/dealer/REWIND/details?id_auto=" + idAuto, key, 200},
		{"offer details", "/dealer/NLT/details?id_offerta=" + idOfferta, key, 200},
		{"content hub", "/dealer/content/hub", key, 200},
		{"content search", "/dealer/content/search?q=auto", key, 200},
		{"content listing deprecated", "/dealer/content/guides/listing", key, 200},
		{"content details", "/dealer/content/faq/details?slug=" + slug, key, 200},
		{"openapi", "/dealer/openapi.json", nil, 200},
		{"openapi gzip", "/dealer/openapi.json", []string{"Accept-Encoding", "gzip"}, 200},
		{"validation error", "/dealer/content/search?q=a", key, 422},
		{"unknown service", "/dealer/rewind/listing", key, 400},
		{"no key", "/dealer/REWIND/listing", nil, 401},
		{"no route", "/nowhere", nil, 404},
	}
	// Headers that differ between any two requests.
	volatile := map[string]bool{"Date": true, "X-Request-Id": true, "Ratelimit": true, "X-Cache": true}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			warm := rawDo(t, "GET", base+c.path, c.hdr...) // warms the cache: both are hits below
			get := rawDo(t, "GET", base+c.path, c.hdr...)
			head := rawDo(t, "HEAD", base+c.path, c.hdr...)
			if get.status != c.status || head.status != c.status {
				t.Fatalf("GET %d, HEAD %d, want %d", get.status, head.status, c.status)
			}
			if len(head.body) != 0 {
				t.Errorf("HEAD sent a body of %d bytes", len(head.body))
			}
			if cl := head.header.Get("Content-Length"); cl != fmt.Sprint(len(get.body)) {
				t.Errorf("HEAD Content-Length %q, GET body %d bytes", cl, len(get.body))
			}
			for k := range get.header {
				if !volatile[k] && get.header.Get(k) != head.header.Get(k) {
					t.Errorf("%s: GET %q, HEAD %q", k, get.header.Get(k), head.header.Get(k))
				}
			}
			for k := range head.header {
				if _, ok := get.header[k]; !ok {
					t.Errorf("HEAD has %s, GET has not", k)
				}
			}
			if get.header.Get("RateLimit") != "" {
				w, g, h := remainingOf(t, warm.header), remainingOf(t, get.header), remainingOf(t, head.header)
				if g-h != w-g || g == w {
					t.Errorf("RateLimit remaining: GET %d, GET %d, HEAD %d: HEAD must spend what GET spends", w, g, h)
				}
			}
		})
	}
	// Conditional HEAD: 304 like GET.
	a := rawDo(t, "GET", base+"/dealer/content/hub", key...)
	h := rawDo(t, "HEAD", base+"/dealer/content/hub", append([]string{"If-None-Match", a.header.Get("ETag")}, key...)...)
	if h.status != 304 || h.header.Get("ETag") != a.header.Get("ETag") {
		t.Errorf("conditional HEAD: %d ETag %q, want 304 %q", h.status, h.header.Get("ETag"), a.header.Get("ETag"))
	}
}

// TestMethodNotAllowedListsHead: other methods are 405 with Allow naming
// both methods the API answers.
func TestMethodNotAllowedListsHead(t *testing.T) {
	s := newBenchServer(t, true)
	base := serveLoopback(t, s)
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"} {
		a := rawDo(t, m, base+"/dealer/REWIND/listing", "X-Api-Key", "demo-key-alpha")
		if a.status != 405 || a.header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: %d Allow %q, want 405 %q", m, a.status, a.header.Get("Allow"), "GET, HEAD")
		}
	}
}

// TestNosniffOnEveryAnswer: X-Content-Type-Options: nosniff on successes,
// 304s, every kind of problem and the answers to unparsable requests.
func TestNosniffOnEveryAnswer(t *testing.T) {
	s := newBenchServer(t, true)
	st := DefaultSettings()
	st.Limits = map[string]ratelimit.Limit{}
	st.DefaultLimit = ratelimit.Limit{Rate: 0.01, Burst: 1}
	if err := s.UpdateSettings(st); err != nil {
		t.Fatal(err)
	}
	base := serveLoopback(t, s)
	ok := rawDo(t, "GET", base+"/dealer/REWIND/listing", "X-Api-Key", "demo-key-alpha")
	cases := []struct {
		name, method, path string
		hdr                []string
		status             int
	}{
		{"200 openapi", "GET", "/dealer/openapi.json", nil, 200},
		{"304 openapi", "GET", "/dealer/openapi.json", []string{"If-None-Match", "*"}, 304},
		{"429 after the budget", "GET", "/dealer/REWIND/listing", []string{"X-Api-Key", "demo-key-alpha"}, 429},
		{"401", "GET", "/dealer/REWIND/listing", nil, 401},
		{"404", "GET", "/x", nil, 404},
		{"405", "DELETE", "/dealer/REWIND/listing", nil, 405},
		{"400 invalid service", "GET", "/dealer/x/listing", []string{"X-Api-Key", "demo-key-beta"}, 400},
	}
	if ok.status != 200 || ok.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("200 listing: %d nosniff %q", ok.status, ok.header.Get("X-Content-Type-Options"))
	}
	for _, c := range cases {
		a := rawDo(t, c.method, base+c.path, c.hdr...)
		if a.status != c.status || a.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %d X-Content-Type-Options %q, want %d nosniff", c.name, a.status, a.header.Get("X-Content-Type-Options"), c.status)
		}
	}
	// Malformed HTTP, answered by the error handler.
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET /dealer/REWIND/listing HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n" + strings.Repeat("a", 5000))); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 413 || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("error handler: %d nosniff %q", resp.StatusCode, resp.Header.Get("X-Content-Type-Options"))
	}
}

// TestOpenAPICompressedAndValidated: the document goes out gzip-coded to
// clients that accept it (made once), with an ETag that answers 304 in
// either coding, Cache-Control and Vary.
func TestOpenAPICompressedAndValidated(t *testing.T) {
	s := newBenchServer(t, true)
	base := serveLoopback(t, s)
	doc := publicshape.OpenAPI()
	plain := rawDo(t, "GET", base+"/dealer/openapi.json")
	gz := rawDo(t, "GET", base+"/dealer/openapi.json", "Accept-Encoding", "gzip, deflate, br")
	if plain.status != 200 || !bytes.Equal(plain.body, doc) || plain.header.Get("Content-Encoding") != "" {
		t.Fatalf("plain: %d, %d bytes, coding %q", plain.status, len(plain.body), plain.header.Get("Content-Encoding"))
	}
	if gz.status != 200 || gz.header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("gzip: %d coding %q", gz.status, gz.header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz.body))
	if err != nil {
		t.Fatal(err)
	}
	un, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(un, doc) {
		t.Fatalf("gzip body does not decode to the document: %v", err)
	}
	if len(gz.body)*4 > len(doc) {
		t.Errorf("gzip body %d bytes for a %d-byte document", len(gz.body), len(doc))
	}
	for _, a := range []httpAnswer{plain, gz} {
		if a.header.Get("ETag") == "" || !strings.Contains(a.header.Get("Cache-Control"), "max-age=") || !strings.Contains(a.header.Get("Vary"), "Accept-Encoding") {
			t.Errorf("ETag %q Cache-Control %q Vary %q", a.header.Get("ETag"), a.header.Get("Cache-Control"), a.header.Get("Vary"))
		}
	}
	if gz.header.Get("ETag") != "W/"+plain.header.Get("ETag") {
		t.Errorf("gzip ETag %q, plain %q: want the weak form of the same tag", gz.header.Get("ETag"), plain.header.Get("ETag"))
	}
	for _, tag := range []string{plain.header.Get("ETag"), gz.header.Get("ETag")} {
		for _, ae := range []string{"identity", "gzip"} {
			a := rawDo(t, "GET", base+"/dealer/openapi.json", "If-None-Match", tag, "Accept-Encoding", ae)
			if a.status != 304 || len(a.body) != 0 || a.header.Get("Content-Encoding") != "" {
				t.Errorf("If-None-Match %s, Accept-Encoding %s: %d, %d bytes, coding %q", tag, ae, a.status, len(a.body), a.header.Get("Content-Encoding"))
			}
		}
	}
	if a := rawDo(t, "GET", base+"/dealer/openapi.json", "If-None-Match", `"other"`); a.status != 200 {
		t.Errorf("other tag: %d", a.status)
	}
}

// TestOpenAPIAnonymousLimitHook: the per-client-address limit decides
// before the document is served; a refusal is 429 with Retry-After.
func TestOpenAPIAnonymousLimitHook(t *testing.T) {
	s := newBenchServer(t, true)
	calls := 0
	s.anonLimit = func(ctx *fasthttp.RequestCtx) (bool, int) {
		calls++
		return calls <= 1, 7
	}
	base := serveLoopback(t, s)
	if a := rawDo(t, "GET", base+"/dealer/openapi.json"); a.status != 200 {
		t.Fatalf("first: %d", a.status)
	}
	a := rawDo(t, "GET", base+"/dealer/openapi.json")
	if a.status != 429 || a.header.Get("Retry-After") != "7" || !strings.Contains(string(a.body), `"rate_limited"`) {
		t.Errorf("refused: %d Retry-After %q %s", a.status, a.header.Get("Retry-After"), a.body)
	}
}

// TestRouteCostsSpendBudget: a search and the hub spend their configured
// cost of the key's budget (HEAD too), shown as edge-cost in
// RateLimit-Policy; a listing spends one token and its policy is unchanged.
func TestRouteCostsSpendBudget(t *testing.T) {
	s := newBenchServer(t, true)
	st := slowLimitSettings()
	st.Costs = map[string]int{RouteContentSearch: 5, RouteContentHub: 3}
	if err := s.UpdateSettings(st); err != nil {
		t.Fatal(err)
	}
	base := serveLoopback(t, s)
	key := []string{"X-Api-Key", "demo-key-gamma"}
	prev := remainingOf(t, rawDo(t, "GET", base+"/dealer/REWIND/listing", key...).header)
	for _, c := range []struct {
		name, method, path string
		cost               int
		policySuffix       string
	}{
		{"listing", "GET", "/dealer/REWIND/listing", 1, ";w=100000"},
		{"search", "GET", "/dealer/content/search?q=auto", 5, ";edge-cost=5"},
		{"search HEAD", "HEAD", "/dealer/content/search?q=auto", 5, ";edge-cost=5"},
		{"hub", "GET", "/dealer/content/hub", 3, ";edge-cost=3"},
		{"content listing", "GET", "/dealer/content/faq/listing", 1, ";w=100000"},
		{"search rejected by validation still pays", "GET", "/dealer/content/search?q=a", 5, ";edge-cost=5"},
	} {
		a := rawDo(t, c.method, base+c.path, key...)
		r := remainingOf(t, a.header)
		if prev-r != c.cost {
			t.Errorf("%s: remaining %d -> %d, want a cost of %d", c.name, prev, r, c.cost)
		}
		if p := a.header.Get("RateLimit-Policy"); !strings.HasSuffix(p, c.policySuffix) {
			t.Errorf("%s: RateLimit-Policy %q, want it to end in %q", c.name, p, c.policySuffix)
		}
		prev = r
	}
}

func TestSettingsValidateCosts(t *testing.T) {
	for _, c := range []struct {
		name  string
		costs map[string]int
		want  string
	}{
		{"defaults", DefaultCosts(), ""},
		{"unknown route", map[string]int{"openapi": 2}, "costs.openapi: unknown route"},
		{"zero", map[string]int{RouteContentSearch: 0}, "costs.content_search: must be between 1"},
		{"too large", map[string]int{RouteContentHub: MaxCost + 1}, "costs.content_hub: must be between 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := DefaultSettings()
			st.Costs = c.costs
			err := st.Validate()
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("Validate: %v, want %q", err, c.want)
			}
		})
	}
}

// TestBrokenHeaderLinesRejected: a header line ended by a bare LF, and a
// line that starts with a space or a tab (a folded field, obs-fold, or
// whitespace before the first field), are 400 bad_request and close the
// connection; nothing of the header block is used (the request id is the
// edge's own), so a header hidden behind a bare LF in another field's
// value can never be acted on (README, Decisions; RFC 9112 sections 2.2
// and 5.2). Before 2026-11-27 folded blocks were acted on (a folded key
// was refused as unknown, a tab-folded note or a folded Forwarded served
// 200): fasthttp joins a folded value into its field, while the edge's own
// raw readers (a chunked request's header reader, the forwarding fields'
// reader) keep the first line only, so the same bytes could mean two
// things inside the edge and a third in a proxy in front.
func TestBrokenHeaderLinesRejected(t *testing.T) {
	s := newBenchServer(t, true)
	base := serveLoopback(t, s)
	addr := strings.TrimPrefix(base, "http://")
	const chunked = "Transfer-Encoding: chunked\r\n"
	for _, c := range []struct {
		name, hdrs, body string
		status           int
	}{
		{"CRLF throughout", "X-Api-Key: demo-key-alpha\r\nX-Request-ID: abc\r\n", "", 200},
		{"CRLF throughout, chunked", "X-Api-Key: demo-key-alpha\r\nX-Request-ID: abc\r\n" + chunked, "0\r\n\r\n", 200},
		{"key smuggled after a bare LF", "X-Request-ID: abc\nX-Api-Key: demo-key-alpha\r\n", "", 400},
		{"second key behind a bare LF", "X-Api-Key: demo-key-alpha\r\nX-Note: a\nX-Api-Key: demo-key-beta\r\n", "", 400},
		{"If-None-Match behind a bare LF", "X-Api-Key: demo-key-alpha\r\nX-Note: a\nIf-None-Match: *\r\n", "", 400},
		{"bare LF ends the first line", "X-Api-Key: demo-key-alpha\nX-Request-ID: abc\r\n", "", 400},
		{"folded key", "X-Request-ID: abc\r\nX-Api-Key: demo-key-alpha\r\n junk\r\n", "", 400},
		{"folded key, chunked", "X-Request-ID: abc\r\nX-Api-Key: demo-key-alpha\r\n junk\r\n" + chunked, "0\r\n\r\n", 400},
		{"tab fold", "X-Request-ID: abc\r\nX-Note: a\r\n\tb\r\nX-Api-Key: demo-key-alpha\r\n", "", 400},
		{"folded Forwarded", "X-Request-ID: abc\r\nX-Api-Key: demo-key-alpha\r\nForwarded: for=192.0.2.1\r\n ,for=192.0.2.2\r\n", "", 400},
		{"whitespace before the first field", " X-Request-ID: abc\r\nX-Api-Key: demo-key-alpha\r\n", "", 400},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
			req := "GET /dealer/REWIND/listing?page_size=1 HTTP/1.1\r\nHost: edge.test\r\n" + c.hdrs + "\r\n" + c.body
			if _, err := conn.Write([]byte(req)); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, body)
			}
			if c.status == 200 {
				return
			}
			if !strings.Contains(string(body), `"bad_request"`) || resp.Header.Get("Content-Type") != "application/problem+json" ||
				resp.Header.Get("X-Request-Id") == "abc" || !resp.Close {
				t.Errorf("body %s, Content-Type %q, X-Request-Id %q, closed %v", body, resp.Header.Get("Content-Type"), resp.Header.Get("X-Request-Id"), resp.Close)
			}
			if n, _ := br.Read(make([]byte, 1)); n != 0 {
				t.Error("connection still open")
			}
		})
	}
}

// hasBareLF reports whether a raw header block has a line ended by LF
// without CR: serve's check before scanHeaderLines merged it with
// hasObsFold, kept as the reference of the fuzz targets.
func hasBareLF(raw []byte) bool {
	off := 0
	for {
		i := bytes.IndexByte(raw[off:], '\n')
		if i < 0 {
			return false
		}
		if off+i == 0 || raw[off+i-1] != '\r' {
			return true
		}
		off += i + 1
	}
}

// hasObsFold reports whether a raw header block has a line that starts
// with a space or a tab (obs-fold, or whitespace before the first field):
// serve's second scan before scanHeaderLines, kept as a reference.
func hasObsFold(raw []byte) bool {
	if len(raw) > 0 && (raw[0] == ' ' || raw[0] == '\t') {
		return true
	}
	off := 0
	for {
		i := bytes.IndexByte(raw[off:], '\n')
		if i < 0 {
			return false
		}
		off += i + 1
		if off < len(raw) && (raw[off] == ' ' || raw[off] == '\t') {
			return true
		}
	}
}

// checkScanHeaderLines fails unless scanHeaderLines answers what serve's
// two scans did: bareLF as hasBareLF, folded as hasObsFold when there is
// no bare LF (serve answered the bare LF first and never asked).
func checkScanHeaderLines(t *testing.T, raw []byte) {
	t.Helper()
	wantBare := hasBareLF(raw)
	wantFolded := !wantBare && hasObsFold(raw)
	if bare, folded := scanHeaderLines(raw); bare != wantBare || folded != wantFolded {
		t.Fatalf("scanHeaderLines(%q) = %v, %v; the two scans: %v, %v", raw, bare, folded, wantBare, wantFolded)
	}
}

// headerLineSeeds are blocks with a bare LF, a fold, both in either order,
// and neither, at the start, the middle and the end.
var headerLineSeeds = []string{
	"", "a: b\r\n", "a: b\n", "\n", "\r\n\n", "a\r\nb\nc\r\n",
	" a: b\r\n", "a: b\r\n c\r\n", "a: b\r\n\tc", "a: b \r\n", "\n ", "a\n", "\t",
	"a: b\r\n c\r\nd: e\n", "a: b\nc: d\r\n e\r\n", " a\n", "a: b\r\n\r\n", "\r\n ", "\r\r\n\t",
}

func FuzzHasBareLF(f *testing.F) {
	for _, s := range headerLineSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		want := false
		for i, c := range raw {
			if c == '\n' && (i == 0 || raw[i-1] != '\r') {
				want = true
				break
			}
		}
		if got := hasBareLF(raw); got != want {
			t.Fatalf("hasBareLF(%q) = %v, want %v", raw, got, want)
		}
		checkScanHeaderLines(t, raw)
	})
}

func FuzzHasObsFold(f *testing.F) {
	for _, s := range headerLineSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		want := false
		for i, c := range raw {
			if (c == ' ' || c == '\t') && (i == 0 || raw[i-1] == '\n') {
				want = true
				break
			}
		}
		if got := hasObsFold(raw); got != want {
			t.Fatalf("hasObsFold(%q) = %v, want %v", raw, got, want)
		}
		checkScanHeaderLines(t, raw)
	})
}
