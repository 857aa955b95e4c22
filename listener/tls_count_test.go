package listener

import (
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// TestTLSOverloadCountedOnceWithMaxConns: the edge sets both
// LimitOptions.MaxConns and fasthttp's Concurrency to server.concurrency.
// Under TLS a connection over both caps must be counted once.
func TestTLSOverloadCountedOnceWithMaxConns(t *testing.T) {
	cert, tcp, roots := tlsTestListener(t)
	rej := make(chan string, 10)
	s, err := New(tcp, Options{TLS: ServerConfig(cert), Limits: LimitOptions{MaxConns: 1, OnReject: func(r string) { rej <- r }}})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	srv := &fasthttp.Server{
		Handler:     func(ctx *fasthttp.RequestCtx) { <-release },
		Concurrency: 1,
		ReadTimeout: 2 * time.Second,
		Logger:      quiet{},
	}
	done := make(chan struct{})
	go func() { _ = srv.Serve(s); close(done) }()
	defer func() { _ = srv.Shutdown(); <-done }()
	defer close(release)
	addr := tcp.Addr().String()
	busy, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: roots})
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	_, _ = busy.Write([]byte("GET / HTTP/1.1\r\nHost: edge\r\n\r\n"))
	time.Sleep(100 * time.Millisecond)

	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", addr, &tls.Config{RootCAs: roots})
	if err == nil {
		c.Close()
	}
	time.Sleep(200 * time.Millisecond)
	var rejected []string
	for len(rej) > 0 {
		rejected = append(rejected, <-rej)
	}
	if len(rejected) != 1 {
		t.Fatalf("one refused connection counted %d times: %v", len(rejected), rejected)
	}
}
