package aggregator

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// serveLikeMain serves s with the public fasthttp.Server settings of
// cmd/dealer-edge (main.go, configs defaults) and returns its address.
func serveLikeMain(t testing.TB, s *Server) string {
	t.Helper()
	return serveLikeMainBuf(t, s, 8<<10)
}

// serveLikeMainBuf is serveLikeMain with a read buffer of readBuf bytes
// (server.max_header_bytes).
func serveLikeMainBuf(t testing.TB, s *Server, readBuf int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveLikeMainOn(t, s, ln, readBuf)
	return ln.Addr().String()
}

// serveLikeMainOn serves s on ln as cmd/dealer-edge configures its public
// server, with a read buffer of readBuf bytes, until the test ends.
func serveLikeMainOn(t testing.TB, s *Server, ln net.Listener, readBuf int) {
	t.Helper()
	srv := &fasthttp.Server{
		Handler: s.Handler(), ErrorHandler: s.ErrorHandler, HeaderReceived: s.HeaderReceived, Name: "dealer-edge",
		ReadTimeout: 2 * time.Second, WriteTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second,
		ReadBufferSize: readBuf, MaxRequestBodySize: 1024, ReduceMemoryUsage: true,
		NoDefaultServerHeader: true, NoDefaultContentType: true, CloseOnShutdown: true,
		SecureErrorLogMessage: true,
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
}

// rawExchange writes req on a fresh connection and reads the answers
// of the requests named by methods (one per pipelined request), then
// whatever else arrives until EOF or the deadline.
func rawExchange(t *testing.T, addr, req string, methods ...string) ([]*http.Response, [][]byte, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := conn.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	var resps []*http.Response
	var bodies [][]byte
	for _, m := range methods {
		resp, err := http.ReadResponse(br, &http.Request{Method: m})
		if err != nil {
			t.Fatalf("reading answer %d: %v", len(resps)+1, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resps = append(resps, resp)
		bodies = append(bodies, b)
	}
	rest, _ := io.ReadAll(br)
	return resps, bodies, string(rest)
}

// TestTrailerFieldsNotMergedIntoHeaders: the trailer fields of a
// chunked request are not request headers (RFC 9110 6.5.1: a recipient
// MUST NOT merge a trailer field into the header section unless its
// definition allows it; README, Decisions): an API key, If-None-Match or
// X-Request-ID sent there, or a key behind a bare LF in the trailer, is
// never acted on. Before 2026-11-27 they were: fasthttp appends trailer
// fields to the parsed headers, and the bare-LF check scanned the header
// block only.
func TestTrailerFieldsNotMergedIntoHeaders(t *testing.T) {
	s := newBenchServer(t, true)
	addr := serveLikeMain(t, s)
	const target = "/dealer/REWIND/listing?page_size=1"
	chunked := func(hdrs, trailer string) string {
		return "GET " + target + " HTTP/1.1\r\nHost: edge.test\r\n" + hdrs +
			"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n" + trailer + "\r\n"
	}
	t.Run("API key in the trailer", func(t *testing.T) {
		resps, body, _ := rawExchange(t, addr, chunked("", "X-Api-Key: demo-key-alpha\r\n"), "GET")
		if resps[0].StatusCode != 401 && resps[0].StatusCode != 400 {
			t.Errorf("a request whose only API key is a trailer field: status %d, want 401 missing_api_key (or 400): %.120s", resps[0].StatusCode, body[0])
		}
	})
	t.Run("API key behind a bare LF in the trailer", func(t *testing.T) {
		resps, body, _ := rawExchange(t, addr, chunked("", "X-Note: a\nX-Api-Key: demo-key-alpha\r\n"), "GET")
		if resps[0].StatusCode != 401 && resps[0].StatusCode != 400 {
			t.Errorf("key behind a bare LF in a trailer: status %d, want 400 or 401: %.120s", resps[0].StatusCode, body[0])
		}
	})
	t.Run("If-None-Match in the trailer", func(t *testing.T) {
		resps, _, _ := rawExchange(t, addr, chunked("X-Api-Key: demo-key-alpha\r\n", "If-None-Match: *\r\n"), "GET")
		if resps[0].StatusCode == http.StatusNotModified {
			t.Errorf("an unconditional request (If-None-Match only in the trailer) answered 304")
		}
	})
	t.Run("X-Request-ID in the trailer", func(t *testing.T) {
		resps, _, _ := rawExchange(t, addr, chunked("X-Api-Key: demo-key-alpha\r\n", "X-Request-ID: from-the-trailer\r\n"), "GET")
		if got := resps[0].Header.Get("X-Request-Id"); got == "from-the-trailer" {
			t.Errorf("X-Request-Id %q taken from a trailer field", got)
		}
	})
}

// TestNo100ContinueToHTTP10: an HTTP/1.0 request's Expect:
// 100-continue is ignored and the client gets the final answer only (RFC
// 9110 10.1.1: "MUST ignore that expectation"; 15.2: "MUST NOT send a 1xx
// response to an HTTP/1.0 client"; README, Decisions). Before 2026-11-27
// fasthttp sent "HTTP/1.1 100 Continue" first, which such a client reads
// as the final answer (its body running to the close, over the real 200).
func TestNo100ContinueToHTTP10(t *testing.T) {
	s := newBenchServer(t, true)
	addr := serveLikeMain(t, s)
	req := "GET /dealer/REWIND/listing?page_size=1 HTTP/1.0\r\nX-Api-Key: demo-key-alpha\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello"
	resps, _, _ := rawExchange(t, addr, req, "GET")
	if resps[0].StatusCode == http.StatusContinue {
		t.Errorf("HTTP/1.0 request with Expect: 100-continue: first answer is %q, want the final 200", resps[0].Status)
	}
}

// TestIfNoneMatchOverSeveralLines: If-None-Match sent as two field
// lines is one list (RFC 9110 5.3; README, Decisions), so the current ETag
// on the second line gets 304 as it does on one line (RFC 9110 13.1.2:
// the condition is false when any listed tag matches). Before 2026-11-27
// only the first line was read.
func TestIfNoneMatchOverSeveralLines(t *testing.T) {
	s := newBenchServer(t, true)
	addr := serveLikeMain(t, s)
	get := func(hdrs string) string {
		return "GET /dealer/REWIND/listing?page_size=1 HTTP/1.1\r\nHost: edge.test\r\nX-Api-Key: demo-key-alpha\r\nConnection: close\r\n" + hdrs + "\r\n"
	}
	resps, _, _ := rawExchange(t, addr, get(""), "GET")
	etag := resps[0].Header.Get("Etag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	one, _, _ := rawExchange(t, addr, get(`If-None-Match: "other", `+etag+"\r\n"), "GET")
	two, _, _ := rawExchange(t, addr, get("If-None-Match: \"other\"\r\nIf-None-Match: "+etag+"\r\n"), "GET")
	if one[0].StatusCode != http.StatusNotModified {
		t.Fatalf("one line: %d", one[0].StatusCode)
	}
	if two[0].StatusCode != http.StatusNotModified {
		t.Errorf("the same list over two If-None-Match lines: status %d, want 304 as for one line", two[0].StatusCode)
	}
}

// TestUnauthorizedHasChallenge: every public 401 carries
// WWW-Authenticate (RFC 9110 11.6.1 / 15.5.2: "A server generating a 401
// (Unauthorized) response MUST send a WWW-Authenticate header field
// containing at least one challenge"; README, Decisions, Authentication).
// Before 2026-11-27 only the admin listener's 401s did.
func TestUnauthorizedHasChallenge(t *testing.T) {
	s := newBenchServer(t, true)
	addr := serveLikeMain(t, s)
	for _, hdr := range []string{"", "X-Api-Key: not-a-key\r\n", "Authorization: Basic eDp5\r\n"} {
		req := "GET /dealer/REWIND/listing?page_size=1 HTTP/1.1\r\nHost: edge.test\r\nConnection: close\r\n" + hdr + "\r\n"
		resps, body, _ := rawExchange(t, addr, req, "GET")
		if resps[0].StatusCode != 401 {
			t.Fatalf("%q: status %d: %s", hdr, resps[0].StatusCode, body[0])
		}
		if resps[0].Header.Get("Www-Authenticate") == "" {
			t.Errorf("401 for %q without WWW-Authenticate", strings.TrimSpace(hdr))
		}
	}
}
