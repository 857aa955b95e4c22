package main

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/internal/testpki"
)

// TestSilentTCPOnTLSListener: README "Graceful shutdown" step 2
// closes "the connections that have not sent a byte" at once. Under TLS a
// connection that has sent not one byte (no ClientHello: a TCP health
// check, a scanner, a client that stalled) is not seen as silent
// (limitConn.silent wants the handshake done), so it holds the shutdown
// for the server's 5 s, and past a 2 s grace the edge exits 1 with no
// request in flight.
func TestSilentTCPOnTLSListener(t *testing.T) {
	ca := testpki.NewCA(t)
	cp, kp := ca.Leaf(t, 1, time.Now().Add(time.Hour))
	certFile, keyFile := testpki.WritePair(t, t.TempDir(), 1, cp, kp)
	e := startSilentEdge(t, `"shutdown_grace": "2s", "read_timeout": "5s"`, fmt.Sprintf(`"tls": {"cert_file": %q, "key_file": %q}`, certFile, keyFile))
	c, err := net.Dial("tcp", e.app.addr) // TCP only: no ClientHello
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	stopsAtOnce(t, e, "one silent TCP connection on the TLS listener")
}
