//go:build linux

package listener

import (
	"crypto/tls"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/internal/testpki"
)

// holdConn passes the first write (the ClientHello) through and keeps every
// later one, so the test decides how the client's bytes reach the socket.
type holdConn struct {
	net.Conn
	mu      sync.Mutex
	writes  int
	pending []byte
}

func (c *holdConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	if c.writes == 1 {
		return c.Conn.Write(b)
	}
	c.pending = append(c.pending, b...)
	return len(b), nil
}

// TestCloseSilentKeepsTLSRequestInFlight: a TLS 1.3 client sends its
// Finished and its request right after (one flight, often one TCP
// segment). When the socket read that completes the server's handshake
// also takes the first part of the request's record, the rest of it (the
// next segment, a retransmission) is read after the handshake, but the TLS
// layer is then in the middle of a record: the connection is not silent.
// CloseSilent (the shutdown's sweep, at once and every 100 ms) takes it
// for silent (tlsDone, no socket byte since, nothing handed to the
// server, a socket read waiting) and closes a request in flight.
func TestCloseSilentKeepsTLSRequestInFlight(t *testing.T) {
	ca := testpki.NewCA(t)
	cp, kp := ca.Leaf(t, 1, time.Now().Add(time.Hour))
	cf, kf := testpki.WritePair(t, t.TempDir(), 1, cp, kp)
	cert, err := LoadCertificate(cf, kf)
	if err != nil {
		t.Fatal(err)
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	st, err := New(tcp, Options{TLS: ServerConfig(cert), Limits: LimitOptions{BusyConns: 1000, BusyIdleTimeout: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	type result struct {
		b   []byte
		err error
	}
	got := make(chan result, 1)
	go func() {
		c, err := st.Accept()
		if err != nil {
			got <- result{nil, err}
			return
		}
		defer c.Close()
		b := make([]byte, 4096)
		n, err := c.Read(b) // as the server's worker: handshake, then the request
		got <- result{b[:n], err}
	}()
	raw, err := net.Dial("tcp", tcp.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	hc := &holdConn{Conn: raw}
	cc := tls.Client(hc, &tls.Config{RootCAs: ca.Pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS13})
	if err := cc.Handshake(); err != nil {
		t.Fatal(err)
	}
	req := []byte("GET /dealer/inventory/listing?page=1 HTTP/1.1\r\nHost: edge\r\nX-Api-Key: k\r\n\r\n")
	if _, err := cc.Write(req); err != nil {
		t.Fatal(err)
	}
	hc.mu.Lock()
	flight := append([]byte(nil), hc.pending...)
	hc.mu.Unlock()
	// The Finished and all but the last 20 bytes of the request's record
	// in one segment; the rest follows later.
	cut := len(flight) - 20
	if _, err := raw.Write(flight[:cut]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // handshake done, the server waits for the record's end
	closed := st.Limits.CloseSilent()
	if _, err := raw.Write(flight[cut:]); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		if closed != 0 || r.err != nil || string(r.b) != string(req) {
			t.Fatalf("CloseSilent closed %d connection(s) in the middle of a request's record; the server read %q, %v (want the request)", closed, r.b, r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no read")
	}
}
