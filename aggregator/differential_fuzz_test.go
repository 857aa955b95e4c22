package aggregator

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// FuzzPipelineFraming: a fuzzed first
// request (method, target, extra header lines, body) is followed on the
// same connection by a known second request carrying X-Request-ID
// marker-2. Reference framing: net/http.ReadRequest. When Go's reader
// frames the bytes as exactly the fuzzed request and then the marker
// request, the edge must agree: it answers the first request (possibly
// closing the connection after it), and any second answer is the marker
// request's (echoes marker-2). An edge that answers a request Go never saw
// (or answers the marker first) frames the stream differently from a
// conforming intermediary: request smuggling.
func FuzzPipelineFraming(f *testing.F) {
	seeds := []struct{ method, target, headers, body string }{
		{"GET", "/dealer/REWIND/listing", "X-Api-Key: bench-key-000\r\n", ""},
		{"GET", "/dealer/REWIND/listing", "Content-Length: 3\r\n", "abc"},
		{"POST", "/dealer/REWIND/listing", "Transfer-Encoding: chunked\r\n", "3\r\nabc\r\n0\r\n\r\n"},
		{"GET", "/x", "Transfer-Encoding: chunked\r\n", "0\r\nX-Api-Key: k\r\n\r\n"},
		{"GET", "/x", "Content-Length: 0\r\nContent-Length: 0\r\n", ""},
		{"HEAD", "/dealer/openapi.json", "", ""},
		{"OPTIONS", "*", "", ""},
		{"GET", "/x", "Expect: 100-continue\r\nContent-Length: 2\r\n", "ab"},
	}
	for _, s := range seeds {
		f.Add(s.method, s.target, s.headers, s.body)
	}
	srv := newBenchServer(f, true)
	st := *srv.Settings()
	st.LookupRate, st.LookupBurst = 1e6, 1e6
	if err := srv.UpdateSettings(&st); err != nil {
		f.Fatal(err)
	}
	addr := serveLikeMain(f, srv)
	const req2 = "GET /no/such/route HTTP/1.1\r\nHost: edge.test\r\nX-Request-ID: marker-2\r\nConnection: close\r\n\r\n"
	f.Fuzz(func(t *testing.T, method, target, headers, body string) {
		req1 := method + " " + target + " HTTP/1.1\r\nHost: edge.test\r\nX-Request-ID: marker-1\r\n" + headers + "\r\n" + body
		all := req1 + req2
		// The reference framing.
		br := bufio.NewReader(strings.NewReader(all))
		r1, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if _, err := io.Copy(io.Discard, r1.Body); err != nil {
			return
		}
		if r1.Header.Get("X-Request-ID") != "marker-1" || r1.Close {
			return
		}
		r2, err := http.ReadRequest(br)
		if err != nil || r2.Header.Get("X-Request-ID") != "marker-2" || r2.URL.Path != "/no/such/route" || br.Buffered() != 0 {
			return
		}
		raw, ok := exchangeAll(t, addr, all, true)
		if !ok {
			return
		}
		rd := bufio.NewReader(bytes.NewReader(raw))
		var ids []string
		for i := 0; ; i++ {
			m := "GET"
			if i == 0 {
				m = method
			}
			resp, err := http.ReadResponse(rd, &http.Request{Method: m})
			if err != nil {
				break
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 100 {
				i--
				continue
			}
			ids = append(ids, resp.Header.Get("X-Request-ID"))
		}
		if len(ids) == 0 {
			return
		}
		bad := ids[0] == "marker-2" || len(ids) > 2 || (len(ids) == 2 && ids[1] != "marker-2")
		if bad {
			t.Fatalf("Go frames %q as one request (body %q) then the marker request; the edge answered request ids %q:\n%q",
				req1, body, ids, raw)
		}
	})
}

// FuzzHeaderView: a fuzzed header block on
// a listing request, read by net/http.ReadRequest as a reference for what
// a conforming proxy in front sees. The edge must not see a field the
// reference does not: a 200 needs an X-Api-Key or Authorization field in
// the reference's view holding the key, and a client X-Request-ID the edge
// echoes must be the reference's first one.
func FuzzHeaderView(f *testing.F) {
	for _, h := range []string{
		"X-Api-Key: bench-key-000\r\n",
		"Authorization: Bearer bench-key-000\r\nX-Request-ID: abc\r\n",
		"X-Request-ID: one\r\nX-Request-ID: two\r\nX-Api-Key: bench-key-001\r\n",
		"X-Note: a\r\nX-Api-Key: bench-key-000\r\nAccept-Encoding: gzip\r\n",
		"Transfer-Encoding: chunked\r\n",
		"Cookie: a=b\r\nX-Api-Key: bench-key-002\r\n",
	} {
		f.Add(h)
	}
	srv := newBenchServer(f, true)
	st := *srv.Settings()
	st.LookupRate, st.LookupBurst = 1e6, 1e6
	if err := srv.UpdateSettings(&st); err != nil {
		f.Fatal(err)
	}
	addr := serveLikeMain(f, srv)
	f.Fuzz(func(t *testing.T, headers string) {
		req := "GET /dealer/REWIND/listing?page_size=1 HTTP/1.1\r\nHost: edge.test\r\n" + headers + "Connection: close\r\n\r\n"
		r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(req)))
		if err != nil || r.ContentLength != 0 || len(r.TransferEncoding) > 0 {
			return
		}
		raw, ok := exchangeAll(t, addr, req, true)
		if !ok {
			return
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), &http.Request{Method: "GET"})
		if err != nil {
			return
		}
		resp.Body.Close()
		keyed := false
		for _, v := range append(r.Header.Values("X-Api-Key"), r.Header.Values("Authorization")...) {
			if strings.Contains(v, "bench-key-") {
				keyed = true
			}
		}
		if resp.StatusCode == 200 && !keyed {
			t.Fatalf("200 to a request whose reference view has no key:\n%q\nreference headers %q", req, r.Header)
		}
		got := resp.Header.Get("X-Request-ID")
		ids := r.Header.Values("X-Request-ID")
		if resp.StatusCode != 400 && strings.Contains(req, got) && (len(ids) == 0 || ids[0] != got) {
			t.Fatalf("the edge echoes X-Request-ID %q, the reference's first is %q:\n%q", got, ids, req)
		}
	})
}

// FuzzHeadMatchesGet: HEAD is answered as GET would be,
// without the body (RFC 9110 9.3.2; README "HEAD answered 200 like GET"):
// for any target and Accept-Encoding, the status and the representation
// headers of HEAD equal GET's.
func FuzzHeadMatchesGet(f *testing.F) {
	for _, s := range [][2]string{
		{"/dealer/REWIND/listing?page_size=3", "gzip"},
		{"/dealer/NLT/listing?page=2&page_size=1", ""},
		{"/dealer/content/hub?page_size=2", "gzip"},
		{"/dealer/content/search?q=noleggio", ""},
		{"/dealer/content/faq/listing?q=auto", "gzip;q=0"},
		{"/dealer/content/news/details?slug=x", "*"},
		{"/dealer/REWIND/details?id_auto=x", ""},
		{"/dealer/openapi.json", "gzip"},
		{"/dealer/content/guides/listing?page=999", ""},
		{"/dealer/NOS/listing?page=99999", "gzip"},
	} {
		f.Add(s[0], s[1])
	}
	srv := newBenchServer(f, true)
	st := *srv.Settings()
	st.LookupRate, st.LookupBurst = 1e6, 1e6
	if err := srv.UpdateSettings(&st); err != nil {
		f.Fatal(err)
	}
	addr := serveLikeMain(f, srv)
	do := func(t *testing.T, method, target, ae string) (*http.Response, []byte) {
		req := method + " " + target + " HTTP/1.1\r\nHost: edge.test\r\nX-Api-Key: bench-key-000\r\n"
		if ae != "" {
			req += "Accept-Encoding: " + ae + "\r\n"
		}
		req += "Connection: close\r\n\r\n"
		raw, ok := exchangeAll(t, addr, req, false)
		if !ok {
			return nil, nil
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), &http.Request{Method: method})
		if err != nil {
			return nil, raw
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, b
	}
	f.Fuzz(func(t *testing.T, target, ae string) {
		if strings.ContainsAny(target, " \r\n") || strings.ContainsAny(ae, "\r\n") || !strings.HasPrefix(target, "/") {
			return
		}
		g, gb := do(t, "GET", target, ae)
		h, _ := do(t, "HEAD", target, ae)
		if g == nil || h == nil || g.StatusCode == 429 || h.StatusCode == 429 || g.StatusCode >= 500 || h.StatusCode >= 500 {
			return
		}
		if g.StatusCode != h.StatusCode {
			t.Fatalf("%s (Accept-Encoding %q): GET %d, HEAD %d\n%s", target, ae, g.StatusCode, h.StatusCode, gb)
		}
		for _, k := range []string{"Content-Type", "Content-Encoding", "Content-Length", "ETag", "Vary", "Deprecation", "Allow"} {
			if g.Header.Get(k) != h.Header.Get(k) {
				t.Fatalf("%s (Accept-Encoding %q): %s GET %q, HEAD %q (status %d)", target, ae, k, g.Header.Get(k), h.Header.Get(k), g.StatusCode)
			}
		}
	})
}

// exchangeAll writes req on a new connection to addr (closing its write
// side after it when closeWrite) and reads everything the edge sends until
// it closes; ok is false when the write failed. A read error other than a
// reset fails the test when closeWrite (the edge must answer in full).
func exchangeAll(t *testing.T, addr, req string, closeWrite bool) (raw []byte, ok bool) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write([]byte(req)); err != nil {
		return nil, false
	}
	if closeWrite {
		_ = conn.(*net.TCPConn).CloseWrite()
	}
	raw, err = io.ReadAll(conn)
	if closeWrite && err != nil && !isReset(err) {
		t.Fatalf("reading the answers: %v", err)
	}
	return raw, true
}
