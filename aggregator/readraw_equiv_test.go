package aggregator

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

func showHdr(h reqHeaders) string {
	return fmt.Sprintf("key=%q(%d,nil=%v) auth=%q(%d) rid=%q(%d,nil=%v) tp=%q(%d) ts=%q inm=%q ae=%q cl=%v",
		h.apiKey, h.apiKeys, h.apiKey == nil, h.authorization, h.authorizations, h.requestID, h.requestIDs, h.requestID == nil,
		h.traceparent, h.traceparents, h.tracestate, h.ifNoneMatch, h.acceptEncoding, h.contentLength)
}

// The same header block read through fasthttp's parsed headers (read) and
// the raw bytes (readRaw) must give the same reqHeaders: serve picks one by
// the block's size and line count alone.
func TestReadRawMatchesRead(t *testing.T) {
	cases := map[string]string{
		"dups":     "Host: h\r\nX-Api-Key: a\r\nx-api-key: b\r\nAuthorization: Bearer x\r\nAUTHORIZATION: Bearer y\r\nIf-None-Match: \"a\"\r\nIf-None-Match: \"b\", \"c\"\r\nAccept-Encoding: gzip\r\nAccept-Encoding: br;q=0\r\ntraceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\r\ntraceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\r\ntracestate: a=1\r\ntracestate: b=2\r\nX-Request-ID: abc\r\nX-Request-ID: def\r\nX-Forwarded-For: 1.2.3.4\r\nForwarded: for=1.2.3.4\r\n",
		"spaces":   "Host: h\r\nX-Api-Key:   \t k1 \t \r\nX-Request-ID:\t id1  \r\nIf-None-Match:  W/\"x\"  \r\n",
		"emptyRID": "Host: h\r\nX-Request-ID:\r\nX-Request-ID: second\r\n",
		"emptyKey": "Host: h\r\nX-Api-Key:\r\nX-Api-Key: real\r\n",
		"emptyINM": "Host: h\r\nIf-None-Match:\r\nIf-None-Match: \"a\"\r\n",
		"emptyAE":  "Host: h\r\nAccept-Encoding:\r\n",
		"cl0":      "Host: h\r\nContent-Length: 0\r\n",
		"cookies":  "Host: h\r\nCookie: a=1\r\nCookie: b=2\r\nX-Api-Key: k\r\n",
		"uaCT":     "Host: h\r\nUser-Agent: x\r\nContent-Type: text/plain\r\nX-Api-Key: k\r\n",
	}
	for name, block := range cases {
		t.Run(name, func(t *testing.T) {
			var padded strings.Builder
			padded.WriteString(block)
			for i := 0; padded.Len() < 1100 || strings.Count(padded.String(), "\n") <= maxParsedHeaderLines; i++ {
				fmt.Fprintf(&padded, "X-Pad-%d: %s\r\n", i, strings.Repeat("p", 30))
			}
			for _, b := range []string{block, padded.String()} {
				var h fasthttp.RequestHeader
				req := "GET /v1/dealers HTTP/1.1\r\n" + b + "\r\n"
				if err := h.Read(bufio.NewReader(strings.NewReader(req))); err != nil {
					t.Fatalf("read: %v", err)
				}
				var a, r reqHeaders
				a.read(&h)
				r.readRaw(h.RawHeaders())
				if sa, sr := showHdr(a), showHdr(r); sa != sr {
					t.Errorf("lines=%d len=%d\nread:    %s\nreadRaw: %s", bytes.Count(h.RawHeaders(), []byte("\n")), len(h.RawHeaders()), sa, sr)
				}
			}
		})
	}
}
