package aggregator

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestScanHeaderLinesEdgeBlocks: scanHeaderLines answers what the two
// scans it replaced answered (hasBareLF, hasObsFold in http_test.go) on
// the header blocks at the edges of its loop.
func TestScanHeaderLinesEdgeBlocks(t *testing.T) {
	for _, c := range []struct {
		name, raw    string
		bare, folded bool
	}{
		{"CR at the end", "A: b\r\nC: d\r", false, false},
		{"LF as the first byte", "\nA: b\r\n", true, false},
		{"CRLF as the first bytes", "\r\nA: b\r\n", false, false},
		{"fold right after the request line", " A: b\r\nC: d\r\n", false, true},
		{"tab right after the request line", "\tA: b\r\n", false, true},
		{"no final CRLF", "A: b\r\nC: d", false, false},
		{"no final CRLF, fold last", "A: b\r\n c", false, true},
		{"CR CR LF", "A: b\r\r\nC: d\r\n", false, false},
		{"lone CR inside a line", "A: b\rC: d\r\n", false, false},
		{"lone CR then a space", "A: b\r C: d\r\n", false, false},
		{"fold then bare LF", "A: b\r\n c\nD: e\r\n", true, false},
		{"bare LF then fold", "A: b\nC: d\r\n e\r\n", true, false},
		{"only CRLF", "\r\n", false, false},
		{"empty", "", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw := []byte(c.raw)
			checkScanHeaderLines(t, raw)
			if bare, folded := scanHeaderLines(raw); bare != c.bare || folded != c.folded {
				t.Errorf("scanHeaderLines(%q) = %v, %v; want %v, %v", c.raw, bare, folded, c.bare, c.folded)
			}
		})
	}
}

// TestLoneCRSmugglesNothing: scanHeaderLines does not look at a lone CR
// (nor did the scans it replaced): fasthttp itself refuses a header block
// with a CR not followed by LF (400 before the handler), so a key (or a
// second key) behind a lone CR, or a line ended by CR CR LF, is never
// acted on.
func TestLoneCRSmugglesNothing(t *testing.T) {
	s := newBenchServer(t, true)
	addr := strings.TrimPrefix(serveLoopback(t, s), "http://")
	for _, c := range []struct {
		name, hdrs string
		status     int
	}{
		{"key behind a lone CR", "X-Note: a\rX-Api-Key: demo-key-alpha\r\n", 400},
		{"second key behind a lone CR", "X-Api-Key: demo-key-alpha\r\nX-Note: a\rX-Api-Key: demo-key-beta\r\n", 400},
		{"CR CR LF", "X-Api-Key: demo-key-alpha\r\r\n", 400},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
			req := "GET /dealer/REWIND/listing?page_size=1 HTTP/1.1\r\nHost: edge.test\r\n" + c.hdrs + "\r\n"
			if _, err := conn.Write([]byte(req)); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			t.Logf("%d %s", resp.StatusCode, body)
			if resp.StatusCode != c.status {
				t.Errorf("status %d, want %d", resp.StatusCode, c.status)
			}
		})
	}
}
