package listener

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	proxyproto "github.com/pires/go-proxyproto"
	"github.com/valyala/fasthttp"
)

// serve runs a fasthttp server over a stack built with o on a loopback
// port; the handler answers the client address it sees.
func serve(t *testing.T, o Options) (addr string, s *Stack) {
	t.Helper()
	addr, s, _ = serveStack(t, o, 5*time.Second)
	return addr, s
}

// serveStack is serve with the server's idle timeout, serving parked
// connections again, and returning the server too.
func serveStack(t *testing.T, o Options, idle time.Duration) (addr string, s *Stack, srv *fasthttp.Server) {
	t.Helper()
	srv = &fasthttp.Server{
		Handler:     func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString(ctx.RemoteAddr().String()) },
		ReadTimeout: 5 * time.Second,
		IdleTimeout: idle,
		Logger:      quiet{},
	}
	addr, s = serveServer(t, o, srv)
	return addr, s, srv
}

// serveServer serves a stack made with o on a loopback port with srv,
// parked connections served again by it, until the test ends.
func serveServer(t *testing.T, o Options, srv *fasthttp.Server) (string, *Stack) {
	t.Helper()
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(tcp, o)
	if err != nil {
		t.Fatal(err)
	}
	s.Limits.ServeParked(func(c net.Conn) { _ = srv.ServeConn(c) })
	done := make(chan struct{})
	go func() { _ = srv.Serve(s); close(done) }()
	t.Cleanup(func() { _ = srv.Shutdown(); <-done })
	return tcp.Addr().String(), s
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// ask sends one GET over c after prefix (a PROXY header or nothing) and
// returns the answer's status and body, or the error.
func ask(c net.Conn, prefix []byte) (int, string, error) {
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(append(prefix, "GET / HTTP/1.1\r\nHost: edge\r\n\r\n"...)); err != nil {
		return 0, "", err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func header(t *testing.T, version byte, src string) []byte {
	t.Helper()
	ap := netip.MustParseAddrPort(src)
	dst := netip.MustParseAddrPort("192.0.2.1:443")
	tp := proxyproto.TCPv4
	if ap.Addr().Is6() {
		tp = proxyproto.TCPv6
		dst = netip.MustParseAddrPort("[2001:db8::1]:443")
	}
	h := proxyproto.HeaderProxyFromAddrs(version, net.TCPAddrFromAddrPort(ap), net.TCPAddrFromAddrPort(dst))
	h.TransportProtocol = tp
	b, err := h.Format()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestProxyProtocol(t *testing.T) {
	type exp struct {
		served bool
		client string // the address the handler saw; "peer" for the TCP peer
	}
	for _, tc := range []struct {
		name   string
		from   []string
		prefix func(t *testing.T) []byte
		want   exp
	}{
		{"v1 required", nil, func(t *testing.T) []byte { return header(t, 1, "203.0.113.7:40000") }, exp{true, "203.0.113.7:40000"}},
		{"v2 required", nil, func(t *testing.T) []byte { return header(t, 2, "203.0.113.8:40001") }, exp{true, "203.0.113.8:40001"}},
		{"v2 ipv6", nil, func(t *testing.T) []byte { return header(t, 2, "[2001:db8::7]:40002") }, exp{true, "[2001:db8::7]:40002"}},
		{"v1 text by hand", nil, func(*testing.T) []byte { return []byte("PROXY TCP4 198.51.100.9 192.0.2.1 5555 443\r\n") }, exp{true, "198.51.100.9:5555"}},
		{"missing header refused", nil, func(*testing.T) []byte { return nil }, exp{false, ""}},
		{"broken header refused", nil, func(*testing.T) []byte { return []byte("PROXY TCP4 not-an-ip 192.0.2.1 1 2\r\n") }, exp{false, ""}},
		{"listed source must send it", []string{"127.0.0.0/8"}, func(*testing.T) []byte { return nil }, exp{false, ""}},
		{"listed source sends v2", []string{"127.0.0.1"}, func(t *testing.T) []byte { return header(t, 2, "203.0.113.9:1") }, exp{true, "203.0.113.9:1"}},
		// An IPv4-mapped source (as a dual-stack listener logs an IPv4
		// peer) matches as its IPv4 one (go-proxyproto matches with
		// net.IPNet; server.trusted_proxies needed a fix for the same).
		{"listed as a mapped CIDR", []string{"::ffff:127.0.0.0/104"}, func(t *testing.T) []byte { return header(t, 2, "203.0.113.11:1") }, exp{true, "203.0.113.11:1"}},
		{"listed as a mapped address", []string{"::ffff:127.0.0.1"}, func(t *testing.T) []byte { return header(t, 1, "203.0.113.12:1") }, exp{true, "203.0.113.12:1"}},
		{"unlisted source served as itself", []string{"10.0.0.0/8"}, func(*testing.T) []byte { return nil }, exp{true, "peer"}},
		{"unlisted source may not claim an address", []string{"10.0.0.0/8"}, func(t *testing.T) []byte { return header(t, 1, "203.0.113.10:1") }, exp{false, ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, _ := serve(t, Options{Proxy: &ProxyOptions{From: tc.from, HeaderTimeout: time.Second}})
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			status, body, err := ask(c, tc.prefix(t))
			if !tc.want.served {
				if err == nil {
					t.Fatalf("served (%d %q), want the connection refused", status, body)
				}
				return
			}
			if err != nil || status != 200 {
				t.Fatalf("status %d, err %v", status, err)
			}
			want := tc.want.client
			if want == "peer" {
				want = c.LocalAddr().String()
			}
			if body != want {
				t.Fatalf("client address %q, want %q", body, want)
			}
		})
	}
}

func TestProxyRejectsBadSources(t *testing.T) {
	tcp, _ := net.Listen("tcp", "127.0.0.1:0")
	defer tcp.Close()
	if _, err := New(tcp, Options{Proxy: &ProxyOptions{From: []string{"10.0.0.0/33"}}}); err == nil {
		t.Fatal("bad CIDR accepted")
	}
}

func TestMaxConnsPerIP(t *testing.T) {
	var rejected atomic.Int32
	addr, s := serve(t, Options{
		Proxy: &ProxyOptions{},
		Limits: LimitOptions{MaxConnsPerIP: 2, OnReject: func(string) { rejected.Add(1) },
			RejectResponse: []byte("HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")},
	})
	dial := func(src string) (net.Conn, int, error) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		st, _, err := ask(c, header(t, 2, src))
		return c, st, err
	}
	// Two connections of one client (kept open), a third refused; another
	// client (by its PROXY address, same TCP peer) is not affected.
	a, st, err := dial("203.0.113.1:1")
	if err != nil || st != 200 {
		t.Fatalf("first: %d %v", st, err)
	}
	defer a.Close()
	b, st, err := dial("203.0.113.1:2")
	if err != nil || st != 200 {
		t.Fatalf("second: %d %v", st, err)
	}
	c, st, _ := dial("203.0.113.1:3")
	c.Close()
	if st != 429 {
		t.Fatalf("third connection of one client: %d, want 429", st)
	}
	d, st, err := dial("203.0.113.2:1")
	if err != nil || st != 200 {
		t.Fatalf("other client: %d %v", st, err)
	}
	d.Close()
	// IPv6 clients count by /64.
	e, st, _ := dial("[2001:db8:0:1::1]:1")
	defer e.Close()
	f, st2, _ := dial("[2001:db8:0:1::2]:1")
	defer f.Close()
	g, st3, _ := dial("[2001:db8:0:1:ffff::3]:1")
	g.Close()
	if st != 200 || st2 != 200 || st3 != 429 {
		t.Fatalf("one /64: %d %d %d, want 200 200 429", st, st2, st3)
	}
	// A closed connection frees its slot.
	b.Close()
	deadline := time.Now().Add(3 * time.Second)
	for {
		h, st, _ := dial("203.0.113.1:4")
		h.Close()
		if st == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("slot not freed after close")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if rejected.Load() < 2 {
		t.Fatalf("OnReject called %d times", rejected.Load())
	}
	if s.Limits.Open() < 2 {
		t.Fatalf("Open() = %d with at least two connections open", s.Limits.Open())
	}
}

func TestBusyIdleTimeout(t *testing.T) {
	// Busy from 2 open connections: an idle keep-alive connection is
	// closed after the busy idle timeout (200 ms), not the server's 5 s.
	addr, _ := serve(t, Options{Limits: LimitOptions{BusyConns: 2, BusyIdleTimeout: 200 * time.Millisecond}})
	var conns []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if st, _, err := ask(c, nil); err != nil || st != 200 {
			t.Fatalf("%d %v", st, err)
		}
		conns = append(conns, c)
	}
	start := time.Now()
	_ = conns[0].SetReadDeadline(time.Now().Add(4 * time.Second))
	if _, err := conns[0].Read(make([]byte, 1)); err != io.EOF && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("idle connection: %v, want closed by the server", err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("closed after %s, want about the busy idle timeout", el)
	}
}

// TestOverloadAnswer: a connection beyond the server's Concurrency gets
// OverloadResponse instead of fasthttp's text/plain 503, counted as
// "concurrency"; the answer waits for the request (a client that writes
// it 50 ms after connecting reads the answer as the reply to it, not as
// an unsolicited one before it), and the connection then ends with FIN,
// not a reset, even though the server never read the request: the client
// reads the whole answer and then EOF. Without the answer waiting, a
// client reading only after it wrote could find the connection reset.
func TestOverloadAnswer(t *testing.T) {
	resp := []byte("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\nContent-Type: application/problem+json\r\nContent-Length: 2\r\n\r\n{}")
	for _, tc := range []struct {
		name  string
		delay time.Duration // before the client writes its request
	}{
		{"request at once", 0},
		{"request after 50 ms", 50 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rejected atomic.Int32
			tcp, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			s, err := New(tcp, Options{Limits: LimitOptions{OverloadResponse: resp, OnReject: func(r string) {
				if r == "concurrency" {
					rejected.Add(1)
				}
			}}})
			if err != nil {
				t.Fatal(err)
			}
			release := make(chan struct{})
			srv := &fasthttp.Server{
				Handler:     func(ctx *fasthttp.RequestCtx) { <-release },
				Concurrency: 1,
				Logger:      quiet{},
			}
			done := make(chan struct{})
			go func() { _ = srv.Serve(s); close(done) }()
			defer func() { close(release); _ = srv.Shutdown(); <-done }()
			busy, err := net.Dial("tcp", tcp.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer busy.Close()
			_, _ = busy.Write([]byte("GET / HTTP/1.1\r\nHost: edge\r\n\r\n"))
			time.Sleep(50 * time.Millisecond) // the one worker is now busy

			c, err := net.Dial("tcp", tcp.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			time.Sleep(tc.delay)
			if tc.delay > 0 {
				// Nothing may have arrived before the request.
				_ = c.SetReadDeadline(time.Now().Add(time.Millisecond))
				if n, _ := c.Read(make([]byte, 1)); n != 0 {
					t.Fatal("answered before the request was sent")
				}
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			}
			if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: edge\r\n\r\n")); err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(c) // the whole answer, then EOF (FIN), not ECONNRESET
			if err != nil {
				t.Fatalf("read %q, then %v", got, err)
			}
			if undated := checkDated(t, got); string(undated) != string(resp) {
				t.Fatalf("answer %q, want %q with a Date", got, resp)
			}
			if rejected.Load() != 1 {
				t.Fatalf("%d counted as concurrency, want 1", rejected.Load())
			}
		})
	}
}

// checkDated fails t unless answer has a Date field after its status line
// with the time now (RFC 9110 6.6.1: every 4xx of an origin server with a
// clock, the refusals' 429 among them), and returns answer without it.
func checkDated(t *testing.T, answer []byte) []byte {
	t.Helper()
	status, rest, _ := bytes.Cut(answer, []byte("\r\n"))
	line, rest, _ := bytes.Cut(rest, []byte("\r\n"))
	v, ok := bytes.CutPrefix(line, []byte("Date: "))
	if !ok {
		t.Fatalf("answer %q: no Date after the status line", answer)
	}
	d, err := http.ParseTime(string(v))
	if err != nil || time.Since(d) > 5*time.Second || time.Until(d) > time.Second {
		t.Fatalf("Date %q (%v), now %v", v, err, time.Now().UTC())
	}
	return append(append(append([]byte(nil), status...), "\r\n"...), rest...)
}

// TestRefusalIsDated: the answer to a connection over its address's cap,
// a 429, carries the Date an origin server must send on a 4xx (RFC 9110
// 6.6.1); it was made once at start and had none. An answer that has a
// Date already keeps it alone.
func TestRefusalIsDated(t *testing.T) {
	resp := []byte("HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nRetry-After: 1\r\nContent-Length: 0\r\n\r\n")
	addr, _ := serve(t, Options{Limits: LimitOptions{MaxConnsPerIP: 1, RejectResponse: resp}})
	first, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if st, _, err := ask(first, nil); err != nil || st != 200 {
		t.Fatalf("first connection: %d %v", st, err)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: edge\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("read %q, then %v", got, err)
	}
	if undated := checkDated(t, got); string(undated) != string(resp) {
		t.Fatalf("answer %q, want %q with a Date", got, resp)
	}
	withDate := []byte("HTTP/1.1 429 Too Many Requests\r\ndate: Thu, 01 Jan 2026 00:00:00 GMT\r\nContent-Length: 0\r\n\r\n")
	if got := dated(withDate, time.Now()); string(got) != string(withDate) {
		t.Fatalf("an answer with a Date got another: %q", got)
	}
	noDateInBody := []byte("HTTP/1.1 429 Too Many Requests\r\nContent-Length: 9\r\n\r\nDate: x\r\n")
	if got := dated(noDateInBody, time.Now()); !bytes.Contains(got, []byte("Too Many Requests\r\nDate: ")) {
		t.Fatalf("a Date line in the body counted as a field: %q", got)
	}
}
