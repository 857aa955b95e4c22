package aggregator

import (
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/dealer-edge/dealer-edge/listener"
)

// serveLikeMainLimited is serveLikeMainBuf behind the listener's limits
// layer, as the edge's public listener is (the connection tells the error
// handler whether the request line had ended).
func serveLikeMainLimited(t testing.TB, s *Server, readBuf int) string {
	t.Helper()
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveLikeMainOn(t, s, listener.Limit(tcp, listener.LimitOptions{ReadBufferSize: readBuf}), readBuf)
	return tcp.Addr().String()
}

// TestRequestTargetTooLongIs414: a request line longer than
// server.max_header_bytes is 414 uri_too_long (RFC 9112 section 3: a
// server that receives a request-target longer than it wishes to parse
// MUST answer 414), problem+json, and the connection is closed; header
// fields too large stay 431 request_header_too_large. Before 2026-11-29 a
// 9 KB path or query was 431, which tells a client to trim its headers.
// A pipelined request after a good one is judged by its own line.
func TestRequestTargetTooLongIs414(t *testing.T) {
	s := newBenchServer(t, true)
	addr := serveLikeMainLimited(t, s, 8<<10)
	const key = "X-Api-Key: demo-key-alpha\r\n"
	longPath := "/dealer/REWIND/listing/" + strings.Repeat("a", 9<<10)
	longQuery := "/dealer/REWIND/listing?q=" + strings.Repeat("b", 9<<10)
	good := "GET /dealer/REWIND/listing?page_size=1 HTTP/1.1\r\nHost: e\r\n" + key + "\r\n"
	for _, c := range []struct {
		name    string
		req     string
		methods []string
		want    []int
		code    string
	}{
		{"long path", "GET " + longPath + " HTTP/1.1\r\nHost: e\r\n" + key + "\r\n", []string{"GET"}, []int{414}, codeURITooLong},
		{"long query", "GET " + longQuery + " HTTP/1.1\r\nHost: e\r\n" + key + "\r\n", []string{"GET"}, []int{414}, codeURITooLong},
		{"long HEAD target", "HEAD " + longQuery + " HTTP/1.1\r\nHost: e\r\n\r\n", []string{"HEAD"}, []int{414}, ""},
		{"long header", "GET /dealer/REWIND/listing HTTP/1.1\r\nHost: e\r\n" + key + "X-Note: " + strings.Repeat("c", 9<<10) + "\r\n\r\n", []string{"GET"}, []int{431}, codeHeaderTooLarge},
		{"many headers", "GET /dealer/REWIND/listing HTTP/1.1\r\nHost: e\r\n" + key + strings.Repeat("X-Note: "+strings.Repeat("d", 90)+"\r\n", 100) + "\r\n", []string{"GET"}, []int{431}, codeHeaderTooLarge},
		{"pipelined after a good request", good + "GET " + longQuery + " HTTP/1.1\r\nHost: e\r\n\r\n", []string{"GET", "GET"}, []int{200, 414}, codeURITooLong},
		{"pipelined long header after a good request", good + "GET /x HTTP/1.1\r\nX-Note: " + strings.Repeat("e", 9<<10) + "\r\n\r\n", []string{"GET", "GET"}, []int{200, 431}, codeHeaderTooLarge},
	} {
		t.Run(c.name, func(t *testing.T) {
			resps, bodies, _ := rawExchange(t, addr, c.req, c.methods...)
			for i, want := range c.want {
				if resps[i].StatusCode != want {
					t.Fatalf("answer %d: status %d, want %d: %.200s", i+1, resps[i].StatusCode, want, bodies[i])
				}
			}
			last := len(resps) - 1
			r, b := resps[last], bodies[last]
			if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("Content-Type %q", ct)
			}
			if !r.Close {
				t.Error("the connection is kept open after the refusal")
			}
			if c.code != "" {
				var p struct {
					Status    int    `json:"status"`
					Code      string `json:"code"`
					RequestID string `json:"request_id"`
				}
				if err := json.Unmarshal(b, &p); err != nil || p.Code != c.code || p.Status != c.want[last] || p.RequestID == "" {
					t.Errorf("problem %s, want code %s status %d with a request_id", b, c.code, c.want[last])
				}
			}
		})
	}
}
