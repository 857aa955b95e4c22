package listener

import (
	"bytes"
	"crypto/tls"
	"io"
	"math/rand"
	"net"
	"strings"
	"testing"
	"time"
)

// lineOpenRef is what requestLine.open(n) must be after the stream s: a
// server buffer of n bytes full of the stream's last n bytes holds no LF.
func lineOpenRef(s []byte, n int) bool {
	return len(s) >= n && bytes.IndexByte(s[len(s)-n:], '\n') < 0
}

// TestRequestLineFollowsStream: whatever the reads' boundaries (a head end
// split across reads, pipelined requests in one read, single bytes),
// requestLine tells after every read whether a full server buffer of the
// last bytes holds no LF (the request line has not ended), as a look at
// the whole stream does.
func TestRequestLineFollowsStream(t *testing.T) {
	pieces := []string{"GET /a HTTP/1.1", "\r\n", "\r", "\n", "Host: e", "\r\n\r\n", "x", "aaaaaaaaaaaaaaaa"}
	r := rand.New(rand.NewSource(1))
	for iter := 0; iter < 3000; iter++ {
		var s []byte
		for n := r.Intn(12); n >= 0; n-- {
			s = append(s, pieces[r.Intn(len(pieces))]...)
		}
		var rl requestLine
		for off := 0; off < len(s); {
			n := 1 + r.Intn(min(len(s)-off, 1+r.Intn(9)))
			rl.note(s[off : off+n])
			off += n
			for _, bufSize := range []int{1, 4, 16, 40} {
				if want := lineOpenRef(s[:off], bufSize); rl.open(bufSize) != want {
					t.Fatalf("stream %q read up to %d, buffer %d: open %v, want %v", s, off, bufSize, rl.open(bufSize), want)
				}
			}
		}
	}
}

// TestRequestLineOpenOverTLS: under TLS the connection the server gets
// (tlsConn) follows the plaintext, not the records below it.
func TestRequestLineOpenOverTLS(t *testing.T) {
	cert, tcp, pool := tlsTestListener(t)
	ln := TLS(Limit(tcp, LimitOptions{ReadBufferSize: 2048}), ServerConfig(cert), nil)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	// The server's side of the handshake runs in its first Read: the
	// client dials while the server reads.
	raw, err := net.Dial("tcp", tcp.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	cl := tls.Client(raw, &tls.Config{RootCAs: pool, ServerName: "localhost"})
	defer cl.Close()
	_ = cl.SetDeadline(time.Now().Add(5 * time.Second))
	sc, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	defer sc.Close()
	_ = sc.SetDeadline(time.Now().Add(5 * time.Second))
	lo := sc.(interface{ RequestLineOpen() bool })
	for _, step := range []struct {
		send string
		open bool
	}{
		{"GET /" + strings.Repeat("a", 1000), false},
		{strings.Repeat("a", 2000), true},
		{" HTTP/1.1\r\nHost: e", false},
		{"\r\n\r\n", false},
		{"GET /" + strings.Repeat("b", 3000), true},
	} {
		read := make(chan error, 1)
		go func() { // the first read runs the server's handshake
			_, err := io.ReadFull(sc, make([]byte, len(step.send)))
			read <- err
		}()
		if _, err := cl.Write([]byte(step.send)); err != nil {
			t.Fatal(err)
		}
		if err := <-read; err != nil {
			t.Fatal(err)
		}
		if got := lo.RequestLineOpen(); got != step.open {
			t.Fatalf("after %.20q: RequestLineOpen %v, want %v", step.send, got, step.open)
		}
	}
}
