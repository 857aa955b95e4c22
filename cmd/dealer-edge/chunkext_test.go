package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestChunkExtensionBounded: a chunked GET whose chunk-size line carries an
// endless chunk extension ("3;aaaa...") is answered 413 request_too_large
// once the connection sent the listener's MaxUnansweredBytes (4 MiB at the
// default max_header_bytes) without an answer. fasthttp's parseChunkSize
// skips extension bytes one by one until CR, with no bound: until
// 2026-11-29 the edge read whatever the client sent (hundreds of MB in the
// 5 s read_timeout on loopback, at a core's worth of CPU) and only then
// answered 400.
func TestChunkExtensionBounded(t *testing.T) {
	e := startEdge(t, "--demo")
	addr := strings.TrimPrefix(e.base, "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(15 * time.Second))
	head := "GET /dealer/REWIND/listing?page_size=1 HTTP/1.1\r\nHost: edge\r\nX-Api-Key: demo-key-alpha\r\n" +
		"Transfer-Encoding: chunked\r\n\r\n3;"
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	answered := make(chan struct{})
	sent := floodExtension(c, answered)
	start := time.Now()
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: "GET"})
	close(answered)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("no answer after %v, %d MiB of chunk extension sent: %v", took, sent.Load()>>20, err)
	}
	resp.Body.Close()
	t.Logf("answer %d after %v; %d MiB of chunk extension written by then", resp.StatusCode, took.Round(time.Millisecond), sent.Load()>>20)
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("status %d, want 413", resp.StatusCode)
	}
	// The client's writes run ahead of the edge's reads by the sockets'
	// buffers (a few MiB on loopback).
	if took > 2*time.Second || sent.Load() > 16<<20 {
		t.Errorf("the edge read %d MiB of one chunk-size line and answered after %v: a chunk extension is not bounded (want 413 within 2 s, after at most 16 MiB sent)",
			sent.Load()>>20, took.Round(time.Millisecond))
	}
}

// floodExtension writes chunk-extension bytes ("aaa...") to c from a
// goroutine, 64 KiB at a time, until stop is closed, a write fails or 64
// MiB went out; it returns the count written so far.
func floodExtension(c net.Conn, stop <-chan struct{}) *atomic.Int64 {
	sent := new(atomic.Int64)
	go func() {
		blk := bytes.Repeat([]byte("a"), 64<<10)
		for sent.Load() < 64<<20 {
			select {
			case <-stop:
				return
			default:
			}
			n, err := c.Write(blk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}()
	return sent
}
