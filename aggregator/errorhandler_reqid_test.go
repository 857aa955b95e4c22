package aggregator

import (
	"strings"
	"testing"
)

// TestErrorHandlerTrustsNoSmuggledRequestID: the answers fasthttp's
// ErrorHandler writes (413, 400 of a broken chunked body, ...) echo an
// X-Request-ID only from where serve would take it. The README promises
// that nothing of a header block with a bare LF or a folded line is
// trusted ("a request id of the edge's own") and that a chunked request's
// trailer fields are never read as headers (an X-Request-ID sent after
// the body is a header no proxy in front saw). serve keeps those
// promises; ErrorHandler reads fasthttp's parsed headers as they are and
// echoes the smuggled id.
func TestErrorHandlerTrustsNoSmuggledRequestID(t *testing.T) {
	s := newBenchServer(t, true)
	addr := serveLikeMain(t, s)
	const smuggled = "smuggled-id"
	big := "Content-Length: 5000\r\n\r\n"
	cases := []struct{ name, req string }{
		{"bare LF, body too large", "GET /dealer/REWIND/listing HTTP/1.1\r\nHost: x\r\nX-Note: a\nX-Request-ID: " + smuggled + "\r\n" + big},
		{"folded line, body too large", "GET /dealer/REWIND/listing HTTP/1.1\r\nHost: x\r\nX-Note: a\r\n b\r\nX-Request-ID: " + smuggled + "\r\n" + big},
		{"trailer field, broken trailer", "GET /dealer/REWIND/listing HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"5\r\nhello\r\n0\r\nX-Request-ID: " + smuggled + "\r\nbad line\r\n\r\n"},
		{"trailer field, Content-Length trailer", "GET /dealer/REWIND/listing HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"5\r\nhello\r\n0\r\nX-Request-ID: " + smuggled + "\r\nContent-Length: 3\r\n\r\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resps, bodies, _ := rawExchange(t, addr, c.req, "GET")
			r := resps[0]
			if r.StatusCode < 400 {
				t.Fatalf("status %d, want an error answer", r.StatusCode)
			}
			if id := r.Header.Get("X-Request-Id"); id == smuggled || strings.Contains(string(bodies[0]), smuggled) {
				t.Errorf("%d answer echoes the smuggled X-Request-ID: header %q, body %s", r.StatusCode, id, bodies[0])
			}
		})
	}
}
