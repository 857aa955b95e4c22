package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestURITooLongFollowsMaxHeaderBytes: the public listener tells a
// request line longer than server.max_header_bytes (414 uri_too_long)
// from a header field that is (431) at a max_header_bytes other than
// fasthttp's 4096 default: the listener is given the server's read buffer
// size. Without it the listener judged by 4096 bytes: a 10 KB header line
// under a 16 KiB max_header_bytes that still did not fit was 414.
func TestURITooLongFollowsMaxHeaderBytes(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "edge.json")
	writeConfig(t, cfg, `{"watch_interval": "0s", "server": {"max_header_bytes": 16384}}`)
	e := startEdge(t, "--demo", "--config", cfg)
	addr := strings.TrimPrefix(e.base, "http://")
	const key = "X-Api-Key: demo-key-alpha\r\n"
	for _, c := range []struct {
		name, req string
		want      int
	}{
		{"header line", "GET /dealer/NOS/listing HTTP/1.1\r\nHost: e\r\n" + key + "X-A: " + strings.Repeat("a", 10<<10) + "\r\nX-B: " + strings.Repeat("b", 10<<10) + "\r\n\r\n", 431},
		{"request line", "GET /dealer/NOS/listing?q=" + strings.Repeat("q", 20<<10) + " HTTP/1.1\r\nHost: e\r\n" + key + "\r\n", 414},
		{"fits", "GET /dealer/NOS/listing?page_size=1 HTTP/1.1\r\nHost: e\r\n" + key + "X-A: " + strings.Repeat("a", 10<<10) + "\r\nConnection: close\r\n\r\n", 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, _ := rawExchange(t, addr, c.req)
			if resp.StatusCode != c.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, c.want)
			}
		})
	}
}
