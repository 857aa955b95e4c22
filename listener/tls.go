package listener

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Certificate is the public listener's TLS certificate, read from a
// certificate file (PEM, leaf first, then intermediates) and a key file.
// Reload reads them again and swaps the certificate atomically: a
// handshake uses whichever certificate is installed when it starts, and
// connections already open are not touched. The caller decides when to
// reload (cmd/dealer-edge: on every config reload, and the config watcher
// also watches these two files).
type Certificate struct {
	certFile, keyFile string
	cur               atomic.Pointer[tls.Certificate]
	mu                sync.Mutex // serialises Reload
	sum               [sha256.Size]byte
}

// LoadCertificate reads the pair; the error says which file is wrong.
func LoadCertificate(certFile, keyFile string) (*Certificate, error) {
	c := &Certificate{certFile: certFile, keyFile: keyFile}
	if _, err := c.Reload(); err != nil {
		return nil, err
	}
	return c, nil
}

// Reload reads the files again. It installs the pair when it is valid
// and differs from the one in force, and reports whether it did; on an
// error (a missing file, a key that does not match, a certificate that
// has expired) the certificate in force stays.
func (c *Certificate) Reload() (changed bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	certPEM, err := os.ReadFile(c.certFile)
	if err != nil {
		return false, fmt.Errorf("tls.cert_file: %w", err)
	}
	keyPEM, err := os.ReadFile(c.keyFile)
	if err != nil {
		return false, fmt.Errorf("tls.key_file: %w", err)
	}
	h := sha256.New()
	h.Write(certPEM)
	h.Write([]byte{0})
	h.Write(keyPEM)
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	if c.cur.Load() != nil && bytes.Equal(sum[:], c.sum[:]) {
		return false, nil
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return false, fmt.Errorf("tls.cert_file and tls.key_file: %w", err)
	}
	leaf := pair.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return false, fmt.Errorf("tls.cert_file: %w", err)
		}
		pair.Leaf = leaf
	}
	if time.Now().After(leaf.NotAfter) {
		return false, fmt.Errorf("tls.cert_file: the certificate expired at %s", leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	c.cur.Store(&pair)
	c.sum = sum
	return true, nil
}

// NotAfter is the expiry of the certificate in force.
func (c *Certificate) NotAfter() time.Time { return c.cur.Load().Leaf.NotAfter }

// Files returns the certificate and key file paths.
func (c *Certificate) Files() (certFile, keyFile string) { return c.certFile, c.keyFile }

// get is tls.Config.GetCertificate.
func (c *Certificate) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if p := c.cur.Load(); p != nil {
		return p, nil
	}
	return nil, errors.New("listener: no certificate")
}

// ServerConfig is the TLS configuration of the public listener: TLS 1.2
// and 1.3 only; under 1.2 only ECDHE key exchange with AEAD ciphers (Go's
// 1.3 suites are not configurable and all modern); ALPN offers http/1.1
// only (HTTP/2 and HTTP/3 are the load balancer's job); the certificate
// comes from c at each handshake.
func ServerConfig(c *Certificate) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		CipherSuites: []uint16{
			tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
			tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
			tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
			tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
		},
		NextProtos:     []string{"http/1.1"},
		GetCertificate: c.get,
	}
}

// TLS wraps ln: every accepted connection speaks TLS with cfg (the
// handshake runs on the connection's first Read, in its own goroutine).
// onReject, when set, is told "concurrency" for each connection refused
// before it was read (see tlsConn.Write).
func TLS(ln net.Listener, cfg *tls.Config, onReject func(reason string)) net.Listener {
	return &tlsListener{Listener: ln, cfg: cfg, onReject: onReject}
}

type tlsListener struct {
	net.Listener
	cfg      *tls.Config
	onReject func(string)
}

func (l *tlsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	onReject := l.onReject
	if lc, ok := c.(*limitConn); ok && lc.overCap {
		onReject = nil // counted already, by the limits layer's cap
	}
	tc := &tlsConn{Conn: tls.Server(c, l.cfg), onReject: onReject}
	if lc, ok := c.(*limitConn); ok {
		lc.tlsUnder.Store(true)
		tc.lc = lc
	}
	return tc, nil
}

// tlsConn is a server-side TLS connection that never runs its handshake
// for an answer written before any read. A server over its concurrency
// writes its 503 from its accept loop before reading (fasthttp does); on a
// *tls.Conn that Write would first run the handshake, which reads the
// client's hello with no deadline: one client that connects while the edge
// is full and sends nothing would stop the accept loop for as long as it
// stays silent. Such a connection is closed unanswered instead (an answer
// needs a handshake) and counted as a concurrency refusal.
type tlsConn struct {
	*tls.Conn
	read     atomic.Bool
	refused  atomic.Bool
	onReject func(string)
	// lc is the limits layer's connection below, when there is one: told
	// when the handshake is done and when application data moves, so that
	// a graceful shutdown closes a handshaken connection that never sent a
	// request at once (LimitListener.CloseSilent), as a plain one.
	lc   *limitConn
	line requestLine // of the plaintext handed to the server
}

func (c *tlsConn) Read(b []byte) (int, error) {
	c.read.Store(true)
	if c.lc == nil {
		n, err := c.Conn.Read(b)
		c.line.note(b[:max(n, 0)])
		return n, err
	}
	if !c.lc.tlsDone.Load() {
		// What Read would run first; done here so the layer below knows
		// which of its bytes are the handshake's.
		if err := c.Conn.Handshake(); err != nil {
			return 0, err
		}
		c.lc.tlsDone.Store(true)
		c.lc.resetUnanswered() // the handshake's bytes are not a request's
	}
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.lc.tlsAppIO.Store(true)
		c.line.note(b[:n])
	}
	return n, err
}

func (c *tlsConn) Write(b []byte) (int, error) {
	if !c.read.Load() && !c.refused.Load() && bytes.HasPrefix(b, status503) {
		c.refused.Store(true)
		if c.onReject != nil {
			c.onReject("concurrency")
		}
		return len(b), nil
	}
	if c.refused.Load() {
		return len(b), nil
	}
	if c.lc != nil {
		c.lc.tlsAppIO.Store(true)
	}
	n, err := c.Conn.Write(b)
	if n > 0 && c.lc != nil {
		c.lc.resetUnanswered()
	}
	return n, err
}

// RequestLineOpen is limitConn.RequestLineOpen over the plaintext.
func (c *tlsConn) RequestLineOpen() bool {
	n := 0
	if c.lc != nil {
		n = c.lc.l.o.ReadBufferSize
	}
	return c.line.open(n)
}

// RequestTooLarge is the limits layer's (limitConn.RequestTooLarge).
func (c *tlsConn) RequestTooLarge() bool { return c.lc != nil && c.lc.RequestTooLarge() }

func (c *tlsConn) Close() error {
	if c.refused.Load() {
		return c.Conn.NetConn().Close() // no handshake, so nothing to close in TLS
	}
	return c.Conn.Close()
}
