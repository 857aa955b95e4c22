package listener

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// tcpPair returns the two ends of a loopback TCP connection, the server's
// wrapped as the listener wraps it.
func tcpPair(t *testing.T) (server *limitConn, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close(); _ = sc.Close() })
	return &limitConn{Conn: sc, l: &LimitListener{}, checked: true}, client
}

// readAll reads n bytes from c with reads of the given sizes in turn (the
// last repeats), as fasthttp does: a one-byte wait, then buffered reads.
func readAll(t *testing.T, c *limitConn, n int, sizes ...int) []byte {
	t.Helper()
	var got []byte
	for i := 0; len(got) < n; i++ {
		b := make([]byte, sizes[min(i, len(sizes)-1)])
		m, err := c.Read(b)
		if err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		got = append(got, b[:m]...)
	}
	return got
}

// TestOneByteReadStash: fasthttp's one-byte wait for the next request
// (server.reduce_memory) takes everything the socket holds in one read,
// hands out the rest from memory, in order, and holds no buffer once it
// is drained; deadlines, EOF and a peer's reset still reach the server.
func TestOneByteReadStash(t *testing.T) {
	req := []byte("GET /dealer/REWIND/listing HTTP/1.1\r\nHost: x\r\nX-Api-Key: k\r\n\r\n")
	t.Run("requests", func(t *testing.T) {
		c, client := tcpPair(t)
		for round := range 3 {
			if _, err := client.Write(req); err != nil {
				t.Fatal(err)
			}
			b := make([]byte, 1)
			if n, err := c.Read(b); n != 1 || err != nil {
				t.Fatalf("round %d: one-byte read: %d, %v", round, n, err)
			}
			if len(c.stash) != len(req)-1 {
				t.Fatalf("round %d: the one-byte read took %d bytes, want the whole request (%d)", round, len(c.stash)+1, len(req))
			}
			got := append(b, readAll(t, c, len(req)-1, 10, 4096)...)
			if !bytes.Equal(got, req) {
				t.Fatalf("round %d: read %q, want %q", round, got, req)
			}
			if c.stash != nil || c.stashBuf != nil {
				t.Fatalf("round %d: the stash holds a buffer once drained", round)
			}
		}
	})
	t.Run("more than the stash holds", func(t *testing.T) {
		c, client := tcpPair(t)
		big := bytes.Repeat([]byte("0123456789"), stashSize/5)
		go func() { _, _ = client.Write(big) }()
		got := readAll(t, c, len(big), 1, 8192)
		if !bytes.Equal(got, big) {
			t.Fatalf("read %d bytes, not what was sent", len(got))
		}
	})
	t.Run("deadline", func(t *testing.T) {
		c, _ := tcpPair(t)
		_ = c.Conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		n, err := c.Read(make([]byte, 1))
		if n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read %d, %v; want the deadline's error", n, err)
		}
		if c.stashBuf != nil {
			t.Fatal("a failed read holds a buffer")
		}
	})
	t.Run("EOF", func(t *testing.T) {
		c, client := tcpPair(t)
		_ = client.Close()
		if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Fatalf("read %d, %v; want io.EOF", n, err)
		}
	})
	t.Run("reset", func(t *testing.T) {
		c, client := tcpPair(t)
		_ = client.(*net.TCPConn).SetLinger(0)
		_ = client.Close()
		time.Sleep(20 * time.Millisecond)
		if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil || err == io.EOF {
			t.Fatalf("read %d, %v; want the reset", n, err)
		}
	})
}

// chunkConn is a net.Conn (not TCP) whose reads return the next of chunks
// (at most len(b) of it), then io.EOF.
type chunkConn struct {
	net.Conn
	chunks [][]byte
}

func (c *chunkConn) Read(b []byte) (int, error) {
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(b, c.chunks[0])
	if c.chunks[0] = c.chunks[0][n:]; len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	return n, nil
}

// TestOneByteReadOtherConns: a connection that is not plain TCP (PROXY
// protocol buffers above its socket) reads one byte as asked.
func TestOneByteReadOtherConns(t *testing.T) {
	req := []byte("GET / HTTP/1.1\r\n\r\n")
	c := &limitConn{Conn: &chunkConn{chunks: [][]byte{append([]byte(nil), req...)}}, l: &LimitListener{}, checked: true}
	b := make([]byte, 1)
	if n, err := c.Read(b); n != 1 || err != nil || c.stash != nil {
		t.Fatalf("one-byte read: %d, %v, stash %q", n, err, c.stash)
	}
	if got := append(b, readAll(t, c, len(req)-1, 4096)...); !bytes.Equal(got, req) {
		t.Fatalf("read %q, want %q", got, req)
	}
}
