package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// framingCase is one request head sent as raw bytes, followed on the same
// connection by a GET that asks to close the connection after its answer
// (next): statuses are the answers the connection carries, in order, before
// it ends. A refusal that must close the connection lists its status alone:
// the GET after it must never be answered (read as a request it would be a
// smuggled one).
type framingCase struct {
	name     string
	req      string // {H}: the Host value, {P}: a path answered without a key
	statuses []int  // ok: the path's own answer
}

// ok in framingCase.statuses is the answer to a request for the path
// given to runFramingCases when nothing in it is refused.
const ok = 0

// runFramingCases sends each case on a new connection to addr and checks
// the answers: their statuses, that the connection then ends, and that
// every 400 is a problem+json answer with Connection: close.
func runFramingCases(t *testing.T, addr, host, path string, okStatus int, cases []framingCase) {
	t.Helper()
	next := "GET {P} HTTP/1.1\r\nHost: {H}\r\nConnection: close\r\n\r\n"
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := strings.NewReplacer("{H}", host, "{P}", path).Replace(tc.req + next)
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.WriteString(c, req); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			var got []int
			for {
				if _, err := br.Peek(1); errors.Is(err, io.EOF) {
					break // the connection ended (FIN) after the answers
				}
				resp, err := http.ReadResponse(br, &http.Request{Method: "GET"})
				if err != nil {
					t.Fatalf("after answers %v: %v", got, err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				got = append(got, resp.StatusCode)
				if resp.StatusCode == http.StatusBadRequest &&
					(resp.Header.Get("Content-Type") != "application/problem+json" || !resp.Close) {
					t.Errorf("400 with Content-Type %q, Connection %q: %s", resp.Header.Get("Content-Type"), resp.Header.Get("Connection"), body)
				}
				if len(got) > len(tc.statuses)+1 {
					break
				}
			}
			if len(got) != len(tc.statuses) {
				t.Fatalf("answers %v, want %v (%d: %d)", got, tc.statuses, ok, okStatus)
			}
			for i := range got {
				if want := tc.statuses[i]; got[i] != want && (want != ok || got[i] != okStatus) {
					t.Fatalf("answers %v, want %v (%d: %d)", got, tc.statuses, ok, okStatus)
				}
			}
		})
	}
}

// framingCommon are the cases the public and the admin listener answer
// alike: RFC 9112 and RFC 9110 MUSTs fasthttp v1.74.0 does not keep, and
// the well-formed neighbours that must still be served.
var framingCommon = []framingCase{
	// Served: the neighbours of what is refused.
	{"plain", "GET {P} HTTP/1.1\r\nHost: {H}\r\n\r\n", []int{ok, ok}},
	{"space inside a value", "GET {P} HTTP/1.1\r\nHost: {H}\r\nX-Note: a b:c\r\n\r\n", []int{ok, ok}},
	{"no space after the colon", "GET {P} HTTP/1.1\r\nHost: {H}\r\nX-Note:a b\r\n\r\n", []int{ok, ok}},
	{"Connection: keep-alive", "GET {P} HTTP/1.1\r\nHost: {H}\r\nConnection: keep-alive\r\n\r\n", []int{ok, ok}},
	{"Connection: closed is no close", "GET {P} HTTP/1.1\r\nHost: {H}\r\nConnection: closed, x-close\r\n\r\n", []int{ok, ok}},
	{"absolute-form target", "GET http://{H}{P} HTTP/1.1\r\nHost: {H}\r\n\r\n", []int{ok, ok}},

	// RFC 9112 section 9.6: a close option MUST close the connection
	// after the answer; connection options are case-insensitive (RFC 9110
	// section 7.6.1) and a list. fasthttp closed for an exact "close"
	// only, and a later Connection line cleared it.
	{"Connection: Close", "GET {P} HTTP/1.1\r\nHost: {H}\r\nConnection: Close\r\n\r\n", []int{ok}},
	{"Connection: keep-alive, close", "GET {P} HTTP/1.1\r\nHost: {H}\r\nConnection: keep-alive, close\r\n\r\n", []int{ok}},
	{"close, then keep-alive", "GET {P} HTTP/1.1\r\nHost: {H}\r\nConnection: close\r\nConnection: keep-alive\r\n\r\n", []int{ok}},
	{"HTTP/1.0 keep-alive, close", "GET {P} HTTP/1.0\r\nHost: {H}\r\nConnection: keep-alive, close\r\n\r\n", []int{ok}},

	// A field name is a token (RFC 9110 section 5.1): fasthttp refused
	// every other byte outside one but took a space, so "Content Length"
	// was no Content-Length and its body was read as the next request.
	{"space in a field name", "GET {P} HTTP/1.1\r\nHost: {H}\r\nX Note: a\r\n\r\n", []int{400}},
	{"Content Length with a space", "GET {P} HTTP/1.1\r\nHost: {H}\r\nContent Length: 5\r\n\r\nhello", []int{400}},

	// RFC 9112 section 3.2: an invalid Host value MUST be answered 400.
	{"Host with userinfo", "GET {P} HTTP/1.1\r\nHost: a@{H}\r\n\r\n", []int{400}},
	{"Host with a quote", "GET {P} HTTP/1.1\r\nHost: a\"b\r\n\r\n", []int{400}},
	{"Host with raw UTF-8", "GET {P} HTTP/1.1\r\nHost: caf\xc3\xa9\r\n\r\n", []int{400}},
	// RFC 9110 section 4.2.1: an http URI with an empty host MUST be
	// rejected; 4.2.4: userinfo is an error.
	{"absolute-form, empty host", "GET http://{P} HTTP/1.1\r\nHost: {H}\r\n\r\n", []int{400}},
	{"absolute-form with userinfo", "GET http://a@{H}{P} HTTP/1.1\r\nHost: {H}\r\n\r\n", []int{400}},

	// RFC 9110 section 10.1.1: an HTTP/1.0 request's 100-continue MUST be
	// ignored (no 100 Continue before the answer); a 1.1 one gets it.
	{"HTTP/1.0 Expect: 100-continue", "POST {P} HTTP/1.0\r\nHost: {H}\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}", []int{405}},
	{"HTTP/1.1 Expect: 100-continue", "POST {P} HTTP/1.1\r\nHost: {H}\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}", []int{100, 405, ok}},
}

// TestHTTP1Framing: the public listener, over raw sockets, answers the
// framingCommon cases as listed, and a trailer field is never taken for a
// header (RFC 9110 section 6.5.1). Before 2026-11-29 an API key in the
// trailer of an empty chunked body authenticated the request: fasthttp
// sets such a request's Content-Length to 0 once it has read the body,
// and the handler took that for "no chunked body" and read the parsed
// headers, trailer included.
func TestHTTP1Framing(t *testing.T) {
	e := startEdge(t, "--demo")
	addr := strings.TrimPrefix(e.base, "http://")
	cases := append([]framingCase{
		{"API key in the trailer of an empty body",
			"GET /dealer/REWIND/listing?page_size=1 HTTP/1.1\r\nHost: {H}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-Api-Key: demo-key-alpha\r\n\r\n",
			[]int{401, ok}},
		{"API key in the trailer of a body",
			"GET /dealer/REWIND/listing?page_size=1 HTTP/1.1\r\nHost: {H}\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\nX-Api-Key: demo-key-alpha\r\n\r\n",
			[]int{401, ok}},
		{"API key in the header, chunked",
			"GET /dealer/REWIND/listing?page_size=1 HTTP/1.1\r\nHost: {H}\r\nX-Api-Key: demo-key-alpha\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
			[]int{200, ok}},
	}, framingCommon...)
	// A path on no route: answered 404 not_found without a key, and not
	// limited per address as /dealer/openapi.json is.
	runFramingCases(t, addr, "127.0.0.1", "/x", http.StatusNotFound, cases)
}

// TestAdminHTTP1Framing: the admin listener answers the framingCommon
// cases as the public one does, and refuses the framing the public handler
// refuses (RFC 9112 sections 6.1 and 6.3: a Transfer-Encoding that does
// not end with chunked is answered 400 and the connection closed; after
// Content-Length beside Transfer-Encoding the connection MUST be closed).
// Before 2026-11-29 the admin server took all of them: the bytes after
// "Transfer-Encoding: identity" were read as a second request.
func TestAdminHTTP1Framing(t *testing.T) {
	e := startEdge(t, "--demo")
	addr := strings.TrimPrefix(e.admin, "http://")
	cases := append([]framingCase{
		{"Transfer-Encoding: identity", "GET {P} HTTP/1.1\r\nHost: {H}\r\nTransfer-Encoding: identity\r\n\r\n", []int{400}},
		{"chunked not last", "GET {P} HTTP/1.1\r\nHost: {H}\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n", []int{400}},
		{"Content-Length and Transfer-Encoding", "GET {P} HTTP/1.1\r\nHost: {H}\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", []int{400}},
		{"obs-fold", "GET {P} HTTP/1.1\r\nHost: {H}\r\nX-Note: a\r\n b\r\n\r\n", []int{400}},
		{"bare LF", "GET {P} HTTP/1.1\r\nHost: {H}\nX-Note: a\r\n\r\n", []int{400}},
		{"chunked", "GET {P} HTTP/1.1\r\nHost: {H}\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n", []int{ok, ok}},
	}, framingCommon...)
	runFramingCases(t, addr, addr, "/healthz", http.StatusOK, cases)
}
