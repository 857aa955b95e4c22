package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAdminOverloadIsProblem: a connection beyond the admin server's
// Concurrency (256) is answered 503 application/problem+json, as every
// admin error is (README, Admin endpoints), not fasthttp's text/plain
// "The connection cannot be served because Server.Concurrency limit
// exceeded"; a probe or scrape met this during a flood of connections
// (before 2026-11-29).
func TestAdminOverloadIsProblem(t *testing.T) {
	e := startEdge(t, "--demo")
	addr := strings.TrimPrefix(e.admin, "http://")
	// Each answered once, then idle: every one holds a server worker.
	holdIdleConns(t, addr, adminConcurrency)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var p struct {
		Status int `json:"status"`
	}
	if resp.StatusCode != 503 || resp.Header.Get("Content-Type") != "application/problem+json" || json.Unmarshal(b, &p) != nil || p.Status != 503 {
		t.Errorf("connection %d: %d %s %q, want 503 application/problem+json", adminConcurrency+1, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
}
