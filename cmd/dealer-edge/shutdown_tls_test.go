package main

import (
	"crypto/tls"
	"fmt"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/internal/testpki"
)

// TestShutdownWithSilentTLSConnection: README "Graceful shutdown" step 2
// closes "the connections that have not sent a byte" at once (the server
// counts a new connection idle only 5 s after its accept). Under TLS a
// client that completed its handshake and sent no request (a browser's
// preconnect, a balancer's warm connection) has sent TLS bytes but not one
// byte of HTTP: CloseSilent skips it (everRead is set by the handshake's
// reads), so the shutdown waits the server's 5 s, and with a shorter
// shutdown_grace the edge exits 1 with no request in flight.
func TestShutdownWithSilentTLSConnection(t *testing.T) {
	ca := testpki.NewCA(t)
	cp, kp := ca.Leaf(t, 1, time.Now().Add(time.Hour))
	certFile, keyFile := testpki.WritePair(t, t.TempDir(), 1, cp, kp)
	e := startSilentEdge(t, `"shutdown_grace": "2s", "read_timeout": "5s"`, fmt.Sprintf(`"tls": {"cert_file": %q, "key_file": %q}`, certFile, keyFile))
	c, err := tls.Dial("tcp", e.app.addr, &tls.Config{RootCAs: ca.Pool, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	stopsAtOnce(t, e, "one handshaken, silent TLS connection open")
}
