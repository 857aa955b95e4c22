package upstream_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/internal/testpki"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// TestHTTPSBaseURL: an https BaseURL reaches its services over TLS, with
// the certificate checked against Options.TLSConfig's roots. Every call
// used to fail before it was sent (a bare path is http to fasthttp, which
// refuses it on a TLS pool), opening every breaker (found by an audit).
func TestHTTPSBaseURL(t *testing.T) {
	ca := testpki.NewCA(t)
	certPEM, keyPEM := ca.Leaf(t, 2, time.Now().Add(time.Hour))
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: fake.NewServer(fake.Options{}).Handler()}
	go func() { _ = srv.Serve(tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{pair}})) }()
	t.Cleanup(func() { _ = srv.Shutdown() })

	c, err := upstream.New(upstream.Options{BaseURL: "https://" + ln.Addr().String(), TLSConfig: &tls.Config{RootCAs: ca.Pool}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d, err := c.Dealer(context.Background(), 101)
	if err != nil || d.ID != 101 {
		t.Fatalf("dealer over https: %+v, %v", d, err)
	}
	if _, err := c.ListVehicles(context.Background(), 101, upstream.VehicleQuery{Service: "REWIND", Page: 1, PageSize: 5}); err != nil {
		t.Fatalf("listing over https: %v", err)
	}

	// A certificate the roots do not vouch for is refused.
	other, err := upstream.New(upstream.Options{BaseURL: "https://" + ln.Addr().String(), TLSConfig: &tls.Config{RootCAs: testpki.NewCA(t).Pool}})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Dealer(context.Background(), 101); !errors.Is(err, upstream.ErrUnavailable) {
		t.Fatalf("untrusted certificate: %v, want upstream.ErrUnavailable", err)
	}
}

// TestHTTPSHandshakeBounded: a service that accepts TCP and then says
// nothing (a stalled TLS terminator) fails the call within its timeout,
// counted against the service; the handshake had no deadline, so the call
// and its connection were held for good (found by an audit).
func TestHTTPSHandshakeBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 16)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			held <- conn // silent, open until the test ends
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		for {
			select {
			case conn := <-held:
				_ = conn.Close()
			default:
				return
			}
		}
	})
	c, err := upstream.New(upstream.Options{BaseURL: "https://" + ln.Addr().String(), Timeouts: map[string]time.Duration{upstream.SvcDealers: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	done := make(chan error, 1)
	start := time.Now()
	go func() { _, err := c.Dealer(context.Background(), 101); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, upstream.ErrUnavailable) {
			t.Fatalf("silent service: %v, want upstream.ErrUnavailable", err)
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Fatalf("silent service: failed after %v, want about its 200ms timeout", el)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a call to a service silent in the TLS handshake still blocked after 5 s (timeout 200ms)")
	}
}
