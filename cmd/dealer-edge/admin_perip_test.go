package main

import (
	"bufio"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// holdAdminConns opens n connections to addr from local (a source
// address), each sending one tokenless /healthz, and counts the answers
// that were not 200 (the listener's 429 over the per-address cap).
func holdAdminConns(t *testing.T, local, addr string, n int) (refused int, held []net.Conn) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	for i := 0; i < n; i++ {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		if _, err := c.Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
			refused++
			continue
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != 200 {
			refused++
			continue
		}
		resp.Body.Close()
	}
	return refused, held
}

// TestAdminPerIPCapIPv6: the README promises the admin listener,
// off loopback, "takes at most 32 from one client address". fasthttp's
// MaxConnsPerIP counts IPv4 peers only (getUint32IP returns 0, no cap,
// for an IPv6 peer): on an admin listener bound to [::] (dual-stack, or
// an IPv6 / dual-stack cluster) one IPv6 client holds all 256
// connections and every probe and scrape is a 503 again.
func TestAdminPerIPCapIPv6(t *testing.T) {
	if l, err := net.Listen("tcp", "[::1]:0"); err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	} else {
		l.Close()
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.json")
	if err := os.WriteFile(cfg, []byte(`{"admin_token": "review-admin-token-0123456789"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e := startEdge(t, "--demo", "--config", cfg, "--admin-listen", "[::]:0")
	_, port, _ := net.SplitHostPort(e.app.adminAddr)
	r4, h4 := holdAdminConns(t, "127.0.0.1", net.JoinHostPort("127.0.0.1", port), 40)
	for _, c := range h4 {
		c.Close()
	}
	r6, h6 := holdAdminConns(t, "::1", net.JoinHostPort("::1", port), 40)
	for _, c := range h6 {
		c.Close()
	}
	t.Logf("40 connections from 127.0.0.1: %d refused; from ::1: %d refused", r4, r6)
	if r4 != 8 {
		t.Fatalf("IPv4 baseline: want 8 of 40 refused, got %d", r4)
	}
	if r6 != 8 {
		t.Errorf("an IPv6 client had %d of 40 admin connections refused, want 8 (cap 32 per client address off loopback; fasthttp's MaxConnsPerIP, used before, ignores IPv6 peers)", r6)
	}
}
