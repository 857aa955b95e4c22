package reliability

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	proxyproto "github.com/pires/go-proxyproto"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/dealer-edge/dealer-edge/contracttests/procs"
	"github.com/dealer-edge/dealer-edge/internal/testpki"
)

// issue writes a certificate with serial for 127.0.0.1 into dir as a
// Kubernetes Secret volume holds it (tls.crt and tls.key are links through
// ..data, swapped with one rename).
func issue(t *testing.T, ca *testpki.CA, dir string, serial int64) (certFile, keyFile string) {
	t.Helper()
	certPEM, keyPEM := ca.Leaf(t, serial, time.Now().Add(time.Hour))
	return testpki.WritePair(t, dir, serial, certPEM, keyPEM)
}

// TestTLSRotationUnderLoad is issue 13's TLS acceptance on the real
// binary: HTTPS with a certificate the test made (TLS 1.2 minimum, ALPN
// http/1.1 even when h2 is offered), then two rotations under load from
// clients on new and kept-alive connections, one by a Secret-style
// ..data swap (the config watch), one by SIGHUP: no request fails, new
// handshakes present the new certificate, and the process never restarts.
func TestTLSRotationUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real binaries")
	}
	ca := testpki.NewCA(t)
	dir := t.TempDir()
	certFile, keyFile := issue(t, ca, dir, 100)
	s := &stack{redis: redistest.Start(t)}
	s.fake = procs.StartFake(t)
	s.edge = procs.StartEdge(t, map[string]any{
		"tls":            map[string]any{"cert_file": certFile, "key_file": keyFile},
		"watch_interval": "200ms",
	}, "--upstream", s.fake.URL(), "--redis", s.redis.Addr)
	if !strings.HasPrefix(s.edge.Base, "https://") {
		t.Fatalf("banner %q: not https", s.edge.Base)
	}
	addr := strings.TrimPrefix(s.edge.Base, "https://")
	for _, tc := range []struct {
		name string
		cfg  *tls.Config
		ok   bool
	}{
		{"TLS 1.3, h2 offered: http/1.1", &tls.Config{NextProtos: []string{"h2", "http/1.1"}}, true},
		{"TLS 1.2", &tls.Config{MaxVersion: tls.VersionTLS12}, true},
		{"TLS 1.1 refused", &tls.Config{MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}, false},
		{"plain HTTP on the TLS port refused", nil, false},
	} {
		if tc.cfg == nil {
			if st := probe("http://" + addr + listing); st != 0 && st != 400 {
				t.Errorf("%s: %d", tc.name, st)
			}
			continue
		}
		tc.cfg.RootCAs = ca.Pool
		c, err := tls.Dial("tcp", addr, tc.cfg)
		if !tc.ok {
			if err == nil {
				c.Close()
				t.Errorf("%s: handshake succeeded", tc.name)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if p := c.ConnectionState().NegotiatedProtocol; len(tc.cfg.NextProtos) > 0 && p != "http/1.1" {
			t.Errorf("%s: ALPN %q", tc.name, p)
		}
		c.Close()
	}

	var serials sync.Map
	client := func(keepAlive bool) *http.Client {
		return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
			DisableKeepAlives: !keepAlive, ForceAttemptHTTP2: true,
			TLSClientConfig: &tls.Config{RootCAs: ca.Pool, VerifyConnection: func(cs tls.ConnectionState) error {
				serials.Store(cs.PeerCertificates[0].SerialNumber.Int64(), true)
				return nil
			}},
		}}
	}
	var ok, failed atomic.Int64
	var firstErr atomic.Value
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := client(i%2 == 0)
			for {
				select {
				case <-done:
					return
				default:
				}
				r, err := procs.Get(context.Background(), c, s.edge.Base, listing, "X-Api-Key: bench-key-000")
				if err == nil && r.Status != 200 {
					err = fmt.Errorf("status %d", r.Status)
				}
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				ok.Add(1)
			}
		}()
	}
	waitSerial := func(serial int64, how string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			if _, seen := serials.Load(serial); seen {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("certificate %d (%s) not presented within 5 s", serial, how)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	time.Sleep(300 * time.Millisecond)
	issue(t, ca, dir, 101) // the config watch sees the swap
	waitSerial(101, "file change")
	time.Sleep(300 * time.Millisecond)
	// SIGHUP with the watch slower than the test: write the files in
	// place (no ..data swap) and signal.
	issue(t, ca, dir, 102)
	s.edge.Signal(syscall.SIGHUP)
	waitSerial(102, "SIGHUP or file change")
	time.Sleep(300 * time.Millisecond)
	close(done)
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d of %d requests failed during the rotations; first: %v", n, n+ok.Load(), firstErr.Load())
	}
	if v, _ := s.edge.Metric("edge_tls_certificate_reloads_total", `result="ok"`); v < 2 {
		t.Errorf("edge_tls_certificate_reloads_total{ok} = %v, want 2 or more", v)
	}
	if code := s.edge.Wait(0); code != -1 {
		t.Fatalf("edge exited (%d)", code)
	}
	t.Logf("%d requests over 3 certificates, 0 failed", ok.Load())
}

// TestProxyProtocolOnTheBinary is issue 12's PROXY acceptance on the real
// binary (server.proxy_protocol, server.max_conns_per_ip 2): v1 and v2
// headers from a real client are served; a connection without one is
// closed unanswered; and the per-address limit counts the addresses in
// the headers, so it limits the clients behind the balancer, not the
// balancer: a third connection from 203.0.113.5 is refused while
// 203.0.113.6 on the same TCP peer is served.
func TestProxyProtocolOnTheBinary(t *testing.T) {
	s := startStack(t, map[string]any{"server": map[string]any{"proxy_protocol": true, "max_conns_per_ip": 2}})
	addr := strings.TrimPrefix(s.edge.Base, "http://")
	header := func(version byte, src string) []byte {
		h := proxyproto.HeaderProxyFromAddrs(version, net.TCPAddrFromAddrPort(netip.MustParseAddrPort(src)),
			net.TCPAddrFromAddrPort(netip.MustParseAddrPort("192.0.2.1:443")))
		b, err := h.Format()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// open sends prefix and one request on a new connection and returns
	// the connection (still open) with the status, 0 for none.
	open := func(prefix []byte) (net.Conn, int) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(3 * time.Second))
		req := "GET " + listing + " HTTP/1.1\r\nHost: edge\r\nX-Api-Key: demo-key-alpha\r\n\r\n"
		if _, err := c.Write(append(prefix, req...)); err != nil {
			return c, 0
		}
		buf := make([]byte, 64<<10)
		n, _ := io.ReadAtLeast(c, buf, 12)
		var st int
		fmt.Sscanf(string(buf[:n]), "HTTP/1.1 %d", &st)
		return c, st
	}
	for _, tc := range []struct {
		name   string
		prefix []byte
		want   int
	}{
		{"v1", header(1, "198.51.100.7:5000"), 200},
		{"v2", header(2, "198.51.100.8:5000"), 200},
		{"v2 IPv6", header(2, "[2001:db8::8]:5000"), 200},
		{"no header", nil, 0},
		{"garbage header", []byte("PROXY TCP4 x y 1 2\r\n"), 0},
	} {
		c, st := open(tc.prefix)
		c.Close()
		if st != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, st, tc.want)
		}
	}
	a, st1 := open(header(2, "203.0.113.5:1"))
	defer a.Close()
	b, st2 := open(header(1, "203.0.113.5:2"))
	defer b.Close()
	c, st3 := open(header(2, "203.0.113.5:3"))
	c.Close()
	d, st4 := open(header(2, "203.0.113.6:1"))
	d.Close()
	if st1 != 200 || st2 != 200 || st3 != 429 || st4 != 200 {
		t.Errorf("client 203.0.113.5 x3 then 203.0.113.6: %d %d %d %d, want 200 200 429 200", st1, st2, st3, st4)
	}
	if v, _ := s.edge.Metric("edge_listener_rejected_connections_total", `reason="per_ip"`); v != 1 {
		t.Errorf("edge_listener_rejected_connections_total{per_ip} = %v, want 1", v)
	}
}
