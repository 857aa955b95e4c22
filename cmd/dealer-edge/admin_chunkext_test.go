package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAdminChunkExtensionBounded: on the admin port, which takes requests
// without a token (the probes; the body is read before any handler runs),
// a chunked POST whose chunk-size line is an endless chunk extension is
// answered 413 problem+json soon, as on the public port
// (TestChunkExtensionBounded). Before 2026-11-29 the admin listener had no
// MaxUnansweredBytes: the admin server read the line for its whole 5 s
// read timeout (hundreds of MB, a core's worth of CPU, per connection; 256
// connections on loopback) and then answered 400.
func TestAdminChunkExtensionBounded(t *testing.T) {
	e := startEdge(t, "--demo")
	c, err := net.Dial("tcp", strings.TrimPrefix(e.admin, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(15 * time.Second))
	head := "POST /admin/reload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n3;"
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	answered := make(chan struct{})
	sent := floodExtension(c, answered)
	start := time.Now()
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: "POST"})
	close(answered)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("no answer after %v, %d MiB of chunk extension sent: %v", took, sent.Load()>>20, err)
	}
	resp.Body.Close()
	t.Logf("answer %d %s after %v; %d MiB written by then", resp.StatusCode, resp.Header.Get("Content-Type"), took.Round(time.Millisecond), sent.Load()>>20)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || resp.Header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("status %d %s, want 413 application/problem+json", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	// The client's writes run ahead of the edge's reads by the sockets'
	// buffers (a few MiB on loopback).
	if sent.Load() > 16<<20 {
		t.Errorf("the admin server read %d MiB of one chunk-size line before it answered: not bounded", sent.Load()>>20)
	}
}
