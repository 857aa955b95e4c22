package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAdminURITooLong: the admin listener tells a request line longer than
// its server's read buffer (414) from header fields that are (431), as the
// public listener does, each as problem+json. Before 2026-11-29 the admin
// listener was not wrapped in the listener layer that follows the request
// line (listener.LimitOptions.ReadBufferSize; off loopback it was wrapped
// for the per-address cap only, without it): a 6 KB request target was
// "431 request headers too large".
func TestAdminURITooLong(t *testing.T) {
	e := startEdge(t, "--demo")
	addr := strings.TrimPrefix(e.admin, "http://")
	for _, c := range []struct {
		name, req string
		want      int
	}{
		{"request line", "GET /metrics?q=" + strings.Repeat("q", 6<<10) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 414},
		{"request line, no query", "GET /" + strings.Repeat("a", 6<<10) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 414},
		{"header line", "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: " + strings.Repeat("a", 6<<10) + "\r\n\r\n", 431},
		{"headers, each short", "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n" + strings.Repeat("X-A: "+strings.Repeat("a", 90)+"\r\n", 64) + "\r\n", 431},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, b := rawExchange(t, addr, c.req)
			var p struct {
				Status int    `json:"status"`
				Title  string `json:"title"`
			}
			if resp.StatusCode != c.want || resp.Header.Get("Content-Type") != "application/problem+json" || json.Unmarshal(b, &p) != nil || p.Status != c.want {
				t.Fatalf("%d %s %q; want %d application/problem+json", resp.StatusCode, resp.Header.Get("Content-Type"), b, c.want)
			}
		})
	}
}
