package listener

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/internal/testpki"
)

// TestTLSOverloadBlocksAcceptLoop: under TLS, a client that connects
// while the server is at its Concurrency and sends nothing does not stop
// the accept loop: once the busy connection ends, a new TLS client is
// served (README, "The public listener": a connection over the cap is
// closed unanswered). Before 2026-11-27 fasthttp's refusal, written from
// the accept loop through tls.Conn, waited for the silent client's
// ClientHello with no deadline.
func TestTLSOverloadBlocksAcceptLoop(t *testing.T) {
	cert, tcp, roots := tlsTestListener(t)
	s, err := New(tcp, Options{TLS: ServerConfig(cert)})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	srv := &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			if string(ctx.Path()) == "/block" {
				<-release
			}
			ctx.SetBodyString("ok")
		},
		Concurrency: 1,
		ReadTimeout: 2 * time.Second,
		IdleTimeout: 2 * time.Second,
		Logger:      quiet{},
	}
	done := make(chan struct{})
	go func() { _ = srv.Serve(s); close(done) }()
	defer func() { _ = srv.Shutdown(); <-done }()
	addr := tcp.Addr().String()

	// Fill the one slot with a request that blocks.
	busy, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: roots})
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	_, _ = busy.Write([]byte("GET /block HTTP/1.1\r\nHost: edge\r\nConnection: close\r\n\r\n"))
	time.Sleep(100 * time.Millisecond)

	// A client that connects while the edge is full and says nothing.
	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	time.Sleep(100 * time.Millisecond)

	// The busy request ends: the slot is free again.
	close(release)
	time.Sleep(200 * time.Millisecond)

	cl := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	resp, err := cl.Get("https://" + addr + "/")
	if err != nil {
		t.Fatalf("a new TLS client after the overload ended: %v, want it served (a silent connection's handshake must not hold the accept loop)", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("a new TLS client after the overload ended: status %d, want 200", resp.StatusCode)
	}
}

// TestTLSOverloadCounted: under TLS, a connection beyond
// server.concurrency is counted once as
// edge_listener_rejected_connections_total{reason="concurrency"}, like
// the plain-HTTP 503s (README, "The public listener"). Before 2026-11-27
// the limits layer saw only ciphertext and never counted it.
func TestTLSOverloadCounted(t *testing.T) {
	// MaxConns 1 as well: the edge sets both caps to server.concurrency,
	// and a connection over both is counted once.
	for _, maxConns := range []int{0, 1} {
		t.Run(fmt.Sprintf("max_conns=%d", maxConns), func(t *testing.T) { tlsOverloadCounted(t, maxConns) })
	}
}

func tlsOverloadCounted(t *testing.T, maxConns int) {
	cert, tcp, roots := tlsTestListener(t)
	var rejected []string
	rej := make(chan string, 10)
	s, err := New(tcp, Options{TLS: ServerConfig(cert), Limits: LimitOptions{MaxConns: maxConns, OnReject: func(r string) { rej <- r }}})
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
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		_, _ = c.Write([]byte("GET / HTTP/1.1\r\nHost: edge\r\n\r\n"))
		b := make([]byte, 512)
		n, _ := c.Read(b)
		t.Logf("over-concurrency TLS answer: %q", strings.SplitN(string(b[:n]), "\r\n", 2)[0])
		c.Close()
	} else {
		t.Logf("over-concurrency TLS dial: %v", err)
	}
	time.Sleep(100 * time.Millisecond)
	for len(rej) > 0 {
		rejected = append(rejected, <-rej)
	}
	if len(rejected) != 1 || rejected[0] != "concurrency" {
		t.Fatalf("rejections counted %v, want [concurrency]: one refused connection, counted once", rejected)
	}
}

// TestParkingBypassesConcurrency: parked connections count against the
// cap, so with Concurrency 2 at most two of six keep-alive connections are
// open and served (README, "The public listener": "The cap counts every
// open connection, parked ones included"; "Memory per idle connection":
// "at most server.concurrency connections"). Before 2026-11-27 a parked
// connection left the worker pool's count and all six got 200.
func TestParkingBypassesConcurrency(t *testing.T) {
	if !parkSupported {
		t.Skip("no parking here")
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(tcp, Options{Limits: LimitOptions{ParkAfter: 50 * time.Millisecond, ParkAbove: 0, MaxConns: 2,
		OverloadResponse: []byte("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{
		Handler:     func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("ok") },
		Concurrency: 2,
		ReadTimeout: 5 * time.Second,
		IdleTimeout: 30 * time.Second,
		Logger:      quiet{},
	}
	s.Limits.ServeParked(func(c net.Conn) { _ = srv.ServeConn(c) })
	done := make(chan struct{})
	go func() { _ = srv.Serve(s); close(done) }()
	defer func() { _ = srv.Shutdown(); <-done }()
	const n = 6
	ok := 0
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", tcp.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if st, _, err := ask(c, nil); err == nil && st == 200 {
			ok++
		}
		time.Sleep(150 * time.Millisecond) // idle past ParkAfter: parked
	}
	t.Logf("open %d, parked %d, served %d of %d with Concurrency 2", s.Limits.Open(), s.Limits.Parked(), ok, n)
	if s.Limits.Open() > 2 || ok > 2 {
		t.Fatalf("%d connections open and %d served with Concurrency 2, want at most 2 of each: parked connections count against server.concurrency", s.Limits.Open(), ok)
	}
}

// TestRefusedConnectionsReachErrorHandler: the error fasthttp hands its
// ErrorHandler for a connection refused by max_conns_per_ip, or one whose
// required PROXY header is missing (with server.reduce_memory false), is
// one IsRefusal names, so the edge's ErrorHandler neither logs nor counts
// it as a 400 (README, "The public listener": "A refused connection ... is
// never logged or counted as a 400 request"). Before 2026-11-27 each was
// counted as a 400 no client received.
func TestRefusedConnectionsReachErrorHandler(t *testing.T) {
	for _, tc := range []struct {
		name   string
		o      Options
		prefix []byte
		hold   int // connections opened first (and kept) from the same client
	}{
		{"per-ip refusal", Options{Limits: LimitOptions{MaxConnsPerIP: 1,
			RejectResponse: []byte("HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")}}, nil, 1},
		{"missing PROXY header", Options{Proxy: &ProxyOptions{HeaderTimeout: time.Second}}, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tcp, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			s, err := New(tcp, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			errs := make(chan error, 10)
			srv := &fasthttp.Server{
				Handler:           func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("ok") },
				ErrorHandler:      func(ctx *fasthttp.RequestCtx, err error) { errs <- err; ctx.SetStatusCode(400) },
				ReadTimeout:       5 * time.Second,
				ReduceMemoryUsage: false,
				Logger:            quiet{},
			}
			done := make(chan struct{})
			go func() { _ = srv.Serve(s); close(done) }()
			defer func() { _ = srv.Shutdown(); <-done }()
			for i := 0; i < tc.hold; i++ {
				c, err := net.Dial("tcp", tcp.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if st, _, err := ask(c, nil); err != nil || st != 200 {
					t.Fatalf("held connection: %d %v, want 200", st, err)
				}
			}
			c, err := net.Dial("tcp", tcp.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			st, _, err := ask(c, tc.prefix)
			c.Close()
			t.Logf("client saw status %d, err %v", st, err)
			select {
			case e := <-errs:
				// fasthttp hands the first read's error to its
				// ErrorHandler; the edge's skips what IsRefusal names.
				if !IsRefusal(e) {
					t.Fatalf("ErrorHandler called with %v, which IsRefusal does not name, want a refusal: the edge must not log or count a 400 for a refused connection", e)
				}
			case <-time.After(300 * time.Millisecond):
			}
		})
	}
}

// emfileFirst returns EMFILE from its first n Accepts, then accepts from
// the real TCP listener below.
type emfileFirst struct {
	net.Listener
	mu sync.Mutex
	n  int
}

// SetDeadline is the TCP listener's, as the edge's RetryListener wraps a
// *net.TCPListener.
func (l *emfileFirst) SetDeadline(t time.Time) error {
	return l.Listener.(*net.TCPListener).SetDeadline(t)
}

func (l *emfileFirst) Accept() (net.Conn, error) {
	l.mu.Lock()
	if l.n > 0 {
		l.n--
		l.mu.Unlock()
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	l.mu.Unlock()
	return l.Listener.Accept()
}

// TestReadinessRecoversWithoutTraffic: once accept stops failing after a
// burst of EMFILE, Accepting() turns true without a client connecting
// (README, "The public listener": "ready again as soon as accept works");
// a pod that is not ready gets no new connections, so waiting for one
// would leave it unready for good. Before 2026-11-27 Accepting() stayed
// false until a client connected.
func TestReadinessRecoversWithoutTraffic(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rl := Retry(&emfileFirst{Listener: tcp, n: 4}, RetryOptions{Name: "public"})
	defer rl.Close()
	go func() {
		for {
			c, err := rl.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	time.Sleep(100 * time.Millisecond) // 5+10+20+40 ms of backoff: the errors are over
	if rl.Accepting() {
		t.Skip("recovered immediately")
	}
	deadline := time.Now().Add(3 * time.Second)
	for !rl.Accepting() {
		if time.Now().After(deadline) {
			t.Fatal("accept stopped failing 3 s ago, but Accepting() is still false, want true without a client connecting (a not-ready pod gets none)")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestParkedPipelinedAndHalfClosed: with the edge's defaults
// (ReduceMemoryUsage on), a parked connection that receives two pipelined
// requests gets both answers; one that sends a request and half-closes
// gets its answer, then EOF.
func TestParkedPipelinedAndHalfClosed(t *testing.T) {
	if !parkSupported {
		t.Skip("no parking here")
	}
	for _, proxy := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "proxy"}[proxy], func(t *testing.T) {
			o := Options{Limits: LimitOptions{ParkAfter: 50 * time.Millisecond, MaxConnsPerIP: 100}}
			if proxy {
				o.Proxy = &ProxyOptions{HeaderTimeout: time.Second}
			}
			addr, s := serveServer(t, o, &fasthttp.Server{
				Handler:           func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString(string(ctx.Path())) },
				ReadTimeout:       5 * time.Second,
				IdleTimeout:       30 * time.Second,
				ReduceMemoryUsage: true,
				Logger:            quiet{},
			})
			dial := func() *net.TCPConn {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				var prefix []byte
				if proxy {
					prefix = header(t, 1, "203.0.113.5:999")
				}
				if st, _, err := ask(c, prefix); err != nil || st != 200 {
					t.Fatalf("%d %v", st, err)
				}
				return c.(*net.TCPConn)
			}
			a, b := dial(), dial()
			waitFor(t, "parking", func() bool { return s.Limits.Parked() == 2 })
			_ = a.SetDeadline(time.Now().Add(5 * time.Second))
			_, _ = a.Write([]byte("GET /one HTTP/1.1\r\nHost: e\r\n\r\nGET /two HTTP/1.1\r\nHost: e\r\nConnection: close\r\n\r\n"))
			got, err := io.ReadAll(a)
			if err != nil || !strings.Contains(string(got), "/one") || !strings.Contains(string(got), "/two") {
				t.Fatalf("pipelined to a parked connection: %q %v", got, err)
			}
			_ = b.SetDeadline(time.Now().Add(5 * time.Second))
			_, _ = b.Write([]byte("GET /half HTTP/1.1\r\nHost: e\r\n\r\n"))
			_ = b.CloseWrite()
			got, err = io.ReadAll(b)
			if err != nil || !strings.Contains(string(got), "/half") {
				t.Fatalf("half-closed after a request to a parked connection: %q %v", got, err)
			}
			waitFor(t, "all closed", func() bool { return s.Limits.Open() == 0 })
			s.Limits.mu.Lock()
			left := len(s.Limits.perIP)
			s.Limits.mu.Unlock()
			if left != 0 {
				t.Fatalf("per-IP counts left after every connection closed: %v", s.Limits.perIP)
			}
		})
	}
}

// TestProxyEdgeCases: PROXY protocol corner cases: valid v1 and v2
// headers (TLVs, LOCAL, UNKNOWN) give the right client address; malformed,
// oversize or split v1 headers are refused.
func TestProxyEdgeCases(t *testing.T) {
	v2 := func(cmd byte, fam byte, addr []byte, tlv []byte) []byte {
		b := []byte("\r\n\r\n\x00\r\nQUIT\n")
		b = append(b, 0x20|cmd, fam)
		body := append(append([]byte{}, addr...), tlv...)
		b = append(b, byte(len(body)>>8), byte(len(body)))
		return append(b, body...)
	}
	ipv4 := []byte{203, 0, 113, 44, 192, 0, 2, 1, 0x1f, 0x90, 0x01, 0xbb} // 203.0.113.44:8080 -> 192.0.2.1:443
	for _, tc := range []struct {
		name   string
		prefix []byte
		slow   bool
		served bool
		client string
	}{
		{"v2 with TLVs", v2(1, 0x11, ipv4, []byte{0x01, 0x00, 0x02, 'h', '2', 0x04, 0x00, 0x00}), false, true, "203.0.113.44:8080"},
		{"v2 LOCAL", v2(0, 0x00, nil, nil), false, true, "peer"},
		{"v2 truncated address block", v2(1, 0x11, ipv4[:6], nil), false, false, ""},
		{"v1 oversize", []byte("PROXY TCP4 " + strings.Repeat("1", 120) + "\r\n"), false, false, ""},
		{"v1 UNKNOWN", []byte("PROXY UNKNOWN\r\n"), false, true, "peer"},
		// A v1 header split over several reads is dropped (go-proxyproto; the spec allows it).
		{"v1 split over reads dropped", []byte("PROXY TCP4 198.51.100.1 192.0.2.1 1234 443\r\n"), true, false, ""},
		{"v2 huge TLV length", append(v2(1, 0x11, ipv4, nil)[:14], 0xff, 0xff), false, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, _ := serve(t, Options{Proxy: &ProxyOptions{HeaderTimeout: 2 * time.Second}, Limits: LimitOptions{MaxConnsPerIP: 10}})
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if tc.slow {
				for _, b := range tc.prefix {
					_, _ = c.Write([]byte{b})
					time.Sleep(10 * time.Millisecond)
				}
				tc.prefix = nil
			}
			st, body, err := ask(c, tc.prefix)
			if !tc.served {
				if err == nil {
					t.Fatalf("served %d %q, want the connection refused", st, body)
				}
				return
			}
			if err != nil || st != 200 {
				t.Fatalf("%d %v", st, err)
			}
			want := tc.client
			if want == "peer" {
				want = c.LocalAddr().String()
			}
			if body != want {
				t.Fatalf("client %q, want %q", body, want)
			}
		})
	}
}

// TestTLSHandshakeTimeout: a TLS connection that never sends its
// ClientHello (below the concurrency) is closed after the read timeout.
func TestTLSHandshakeTimeout(t *testing.T) {
	ca := testpki.NewCA(t)
	cp, kp := ca.Leaf(t, 10, time.Now().Add(time.Hour))
	cf, kf := testpki.WritePair(t, t.TempDir(), 1, cp, kp)
	cert, err := LoadCertificate(cf, kf)
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := serve(t, Options{TLS: ServerConfig(cert)}) // ReadTimeout 5 s
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_ = c.SetReadDeadline(time.Now().Add(8 * time.Second))
	_, err = c.Read(make([]byte, 1))
	if el := time.Since(start); err == nil || el > 6500*time.Millisecond || el < 4*time.Second {
		t.Fatalf("silent TLS connection: %v after %v, want closed after the 5 s read timeout", err, el)
	}
}

// tlsTestListener is a loopback listener and a certificate for the TLS
// tests of this file.
func tlsTestListener(t *testing.T) (*Certificate, net.Listener, *x509.CertPool) {
	t.Helper()
	ca := testpki.NewCA(t)
	cp, kp := ca.Leaf(t, 10, time.Now().Add(time.Hour))
	cf, kf := testpki.WritePair(t, t.TempDir(), 1, cp, kp)
	cert, err := LoadCertificate(cf, kf)
	if err != nil {
		t.Fatal(err)
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return cert, tcp, ca.Pool
}
