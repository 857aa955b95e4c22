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

// TestObsFoldRejected: a header block with a line that starts with a space
// or a tab (a folded field, obs-fold, or whitespace before the first field)
// is 400 bad_request and closes the connection (RFC 9112 sections 5.2 and
// 2.2; README, Decisions). Before 2026-11-27 such blocks were acted on
// (a folded key was refused as unknown, a tab-folded note or a folded
// Forwarded served 200): fasthttp joins a folded value into its field,
// while the edge's own raw readers (a chunked request's header reader,
// the forwarding fields' reader) keep the first line only, so the same
// bytes could mean two things inside the edge and a third in a proxy in
// front.
func TestObsFoldRejected(t *testing.T) {
	s := newBenchServer(t, true)
	addr := strings.TrimPrefix(serveLoopback(t, s), "http://")
	const chunked = "Transfer-Encoding: chunked\r\n"
	for _, c := range []struct {
		name, hdrs, body string
		status           int
	}{
		{"no fold", "X-Api-Key: demo-key-alpha\r\nX-Request-ID: abc\r\n", "", 200},
		{"no fold, chunked", "X-Api-Key: demo-key-alpha\r\nX-Request-ID: abc\r\n" + chunked, "0\r\n\r\n", 200},
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

func FuzzHasObsFold(f *testing.F) {
	for _, s := range []string{"", " a: b\r\n", "a: b\r\n c\r\n", "a: b\r\n\tc", "a: b\r\n", "a: b \r\n", "\n ", "a\n"} {
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
	})
}
