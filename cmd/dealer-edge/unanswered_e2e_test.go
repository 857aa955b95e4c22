package main

import (
	"bufio"
	"bytes"
	"crypto/tls"

	"fmt"
	"github.com/dealer-edge/dealer-edge/internal/testpki"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestPipelinedNotRefused: 10,000 small GETs pipelined on one
// connection, the client reading its answers slowly (it starts reading
// only after 1 s, so the edge's writes block and its reads run ahead of
// its answers as far as the sockets let them), each request carrying a
// 6 KB header: none is answered 413 by MaxUnansweredBytes and every one
// is answered.
func TestPipelinedNotRefused(t *testing.T) {
	for _, reduce := range []string{"true", "false"} {
		t.Run("reduce_memory="+reduce, func(t *testing.T) {
			cfg := t.TempDir() + "/edge.json"
			writeConfig(t, cfg, `{"server": {"reduce_memory": `+reduce+`}}`)
			e := startEdge(t, "--demo", "--config", cfg)
			addr := strings.TrimPrefix(e.base, "http://")
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(120 * time.Second))
			const n = 10000
			pad := strings.Repeat("p", 6000)
			go func() {
				w := bufio.NewWriterSize(c, 256<<10)
				for i := range n {
					fmt.Fprintf(w, "GET /dealer/REWIND/listing?page_size=1&i=%d HTTP/1.1\r\nHost: edge\r\nX-Api-Key: demo-key-alpha\r\nX-Pad: %s\r\n\r\n", i%50, pad)
				}
				_ = w.Flush()
			}()
			time.Sleep(time.Second)
			br := bufio.NewReader(c)
			codes := map[int]int{}
			for i := range n {
				resp, err := http.ReadResponse(br, &http.Request{Method: "GET"})
				if err != nil {
					t.Fatalf("answer %d: %v (codes so far %v)", i, err, codes)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				codes[resp.StatusCode]++
				if resp.StatusCode == http.StatusRequestEntityTooLarge {
					t.Fatalf("request %d of a pipelined run answered 413 (codes so far %v)", i, codes)
				}
			}
			t.Logf("codes %v", codes)
		})
	}
}

// TestChunkExtensionTLSAndProxy: the 413 of TestChunkExtensionBounded
// goes out under TLS and under the PROXY protocol too (the error handler
// asks ctx.Conn(), which is then the TLS layer or the limits layer over
// the PROXY one), and the connection is closed after it.
func TestChunkExtensionTLSAndProxy(t *testing.T) {
	ca := testpki.NewCA(t)
	cp, kp := ca.Leaf(t, 1, time.Now().Add(time.Hour))
	certFile, keyFile := testpki.WritePair(t, t.TempDir(), 1, cp, kp)
	for _, mode := range []string{"tls", "proxy"} {
		t.Run(mode, func(t *testing.T) {
			var e *edge
			if mode == "tls" {
				e = startSilentEdge(t, `"read_timeout": "5s"`, fmt.Sprintf(`"tls": {"cert_file": %q, "key_file": %q}`, certFile, keyFile))
			} else {
				e = startSilentEdge(t, `"read_timeout": "5s", "proxy_protocol": true`, "")
			}
			raw, err := net.Dial("tcp", e.app.addr)
			if err != nil {
				t.Fatal(err)
			}
			var c net.Conn = raw
			if mode == "tls" {
				c = tls.Client(raw, &tls.Config{InsecureSkipVerify: true})
			} else {
				_, _ = io.WriteString(c, "PROXY TCP4 192.0.2.7 192.0.2.1 4444 443\r\n")
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(15 * time.Second))
			head := "GET /dealer/REWIND/listing?page_size=1 HTTP/1.1\r\nHost: edge\r\nX-Api-Key: demo-key-alpha\r\nTransfer-Encoding: chunked\r\n\r\n3;"
			if _, err := io.WriteString(c, head); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			sent := floodExtension(c, stop)
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, &http.Request{Method: "GET"})
			close(stop)
			if err != nil {
				t.Fatalf("no answer (%d MiB sent): %v", sent.Load()>>20, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			t.Logf("%s: %d %s after %d MiB; Connection: %q", mode, resp.StatusCode, bytes.TrimSpace(b), sent.Load()>>20, resp.Header.Get("Connection"))
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Errorf("status %d, want 413", resp.StatusCode)
			}
			if _, err := br.ReadByte(); err == nil {
				t.Errorf("connection still open after the 413")
			}
		})
	}
}
