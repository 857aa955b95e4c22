package aggregator

import (
	"strings"
	"testing"
)

// TestTransferEncodingChunkedFinalOnce: a request whose Transfer-Encoding
// does not end with chunked, or applies chunked twice, is answered 400 and
// its connection closed (RFC 9112 sections 6.1 and 6.3). fasthttp takes a
// "Transfer-Encoding: identity" line as no body and two lines as chunked
// once: before 2026-11-29 the edge answered such a request 200 and read
// the bytes after its header block as the next request, which a proxy in
// front may have framed as this one's body (a smuggled request).
func TestTransferEncodingChunkedFinalOnce(t *testing.T) {
	s := newBenchServer(t, true)
	addr := serveLikeMain(t, s)
	const head = "GET /dealer/REWIND/listing?page_size=1 HTTP/1.1\r\nHost: e\r\nX-Api-Key: demo-key-alpha\r\n"
	const body = "5\r\nhello\r\n0\r\n\r\n"
	const next = head + "Connection: close\r\n\r\n"
	cases := []struct {
		name, te string
		want     int
	}{
		{"identity", "Transfer-Encoding: identity\r\n", 400},
		{"identity in capitals", "TRANSFER-ENCODING: IDENTITY\r\n", 400},
		{"chunked then identity on two lines", "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n", 400},
		{"identity then chunked on two lines", "Transfer-Encoding: identity\r\nTransfer-Encoding: chunked\r\n", 400},
		{"chunked twice on two lines", "Transfer-Encoding: chunked\r\ntransfer-encoding: chunked\r\n", 400},
		{"chunked", "Transfer-Encoding: chunked\r\n", 200},
		{"chunked after an empty list element", "Transfer-Encoding: ,chunked\r\n", 0}, // fasthttp's answer, whatever it is
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resps, bodies, rest := rawExchange(t, addr, head+c.te+"\r\n"+body+next, "GET")
			got := resps[0].StatusCode
			if c.want == 0 {
				if got >= 500 {
					t.Fatalf("status %d", got)
				}
				return
			}
			if got != c.want {
				t.Fatalf("status %d, want %d: %.200s", got, c.want, bodies[0])
			}
			if c.want == 400 {
				if !strings.Contains(string(bodies[0]), `"code":"bad_request"`) {
					t.Errorf("body %.200s, want a bad_request problem", bodies[0])
				}
				if rest != "" {
					t.Errorf("the connection stayed open and answered the bytes after the header block: %.120q", rest)
				}
				if !resps[0].Close {
					t.Errorf("the 400 did not announce Connection: close")
				}
			} else if !strings.HasPrefix(rest, "HTTP/1.1 200") {
				t.Errorf("the pipelined request after a chunked one: %.80q, want its 200", rest)
			}
		})
	}
}

// TestScanHeaderBlockTE: scanHeaderBlock reports a Transfer-Encoding line
// wherever it is in the block, in any case, and no other line.
func TestScanHeaderBlockTE(t *testing.T) {
	for raw, want := range map[string]bool{
		"Transfer-Encoding: identity\r\n\r\n":                 true,
		"Host: a\r\ntransfer-encoding: chunked\r\n\r\n":       true,
		"Host: a\r\nTRANSFER-ENCODING:chunked\r\n\r\n":        true,
		"Host: a\r\nTransfer-Encodings: x\r\n\r\n":            false,
		"Host: a\r\nX-Transfer-Encoding: identity\r\n\r\n":    false,
		"Host: a\r\nTransfer-Encoding : identity\r\n\r\n":     false, // fasthttp refuses the space
		"Host: a\r\nTrailer: x\r\nTE: trailers\r\n\r\n":       false,
		"Host: a\r\nX-A: Transfer-Encoding: identity\r\n\r\n": false,
	} {
		if _, _, te := scanHeaderBlock([]byte(raw)); te != want {
			t.Errorf("scanHeaderBlock(%q) te = %v, want %v", raw, te, want)
		}
	}
}

// TestLongestFilterNeedsHeaderBytes: the README's sizing of
// server.max_header_bytes for filters (Listings and content): a category
// of 1024 non-ASCII characters, percent-encoded, is 414 uri_too_long at
// the default 8 KiB (the request line does not fit; 431 before 2026-11-29)
// and a 200 listing at 32 KiB.
func TestLongestFilterNeedsHeaderBytes(t *testing.T) {
	target := "/dealer/content/faq/listing?category=" + strings.Repeat("%E2%82%AC", 1024) // "€" x 1024
	for _, c := range []struct {
		readBuf, want int
	}{{8 << 10, 414}, {32 << 10, 200}} {
		s := newBenchServer(t, true)
		addr := serveLikeMainLimited(t, s, c.readBuf)
		resps, bodies, _ := rawExchange(t, addr, "GET "+target+" HTTP/1.1\r\nHost: e\r\nX-Api-Key: demo-key-alpha\r\nConnection: close\r\n\r\n", "GET")
		if resps[0].StatusCode != c.want {
			t.Errorf("max_header_bytes %d: status %d, want %d: %.200s", c.readBuf, resps[0].StatusCode, c.want, bodies[0])
		}
	}
}
