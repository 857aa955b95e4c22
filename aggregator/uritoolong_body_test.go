package aggregator

import (
	"strings"
	"testing"
)

// TestRequestTargetTooLongAfterBody: a request line longer than the read
// buffer is 414 whatever the request before it on the connection sent,
// a body with line feeds in it included (a GET's body is read and the
// connection kept). Before the fix the line tracking reset only at a
// CRLFCRLF and took any LF after it, the body's, as the end of the next
// request line: the pipelined long line was 431
// request_header_too_large.
func TestRequestTargetTooLongAfterBody(t *testing.T) {
	s := newBenchServer(t, true)
	addr := serveLikeMainLimited(t, s, 8<<10)
	const key = "X-Api-Key: demo-key-alpha\r\n"
	long := "GET /dealer/REWIND/listing?q=" + strings.Repeat("b", 9<<10) + " HTTP/1.1\r\nHost: e\r\n\r\n"
	for _, c := range []struct{ name, first string }{
		{"body with LF", "GET /dealer/REWIND/listing?page_size=1 HTTP/1.1\r\nHost: e\r\n" + key + "Content-Length: 3\r\n\r\na\nb"},
		{"body of CRLFs", "GET /dealer/REWIND/listing?page_size=1 HTTP/1.1\r\nHost: e\r\n" + key + "Content-Length: 6\r\n\r\n\r\n\r\n\r\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resps, bodies, _ := rawExchange(t, addr, c.first+long, "GET", "GET")
			if resps[0].StatusCode != 200 {
				t.Fatalf("first answer %d: %.200s", resps[0].StatusCode, bodies[0])
			}
			if resps[1].StatusCode != 414 || !strings.Contains(string(bodies[1]), codeURITooLong) {
				t.Fatalf("second answer %d, want 414 %s: %.200s", resps[1].StatusCode, codeURITooLong, bodies[1])
			}
		})
	}
}
