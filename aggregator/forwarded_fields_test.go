package aggregator

import (
	"bufio"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestTrailerForwardedNotClientAddr: the client address (the failed-auth
// and openapi per-address limits) comes from the header block alone: a
// Forwarded field in a chunked request's trailer, which fasthttp accepts
// and adds to the parsed headers, names no address (RFC 9110 6.5.1).
// Before 2026-11-27 a client behind a trusted proxy chose its own address
// that way.
func TestTrailerForwardedNotClientAddr(t *testing.T) {
	s := newBenchServer(t, true)
	st := *s.settings.Load()
	set := *st.Settings
	set.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	st.Settings = &set
	raw := "GET /dealer/REWIND/listing HTTP/1.1\r\nHost: edge\r\nTrailer: Forwarded\r\n" +
		"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nForwarded: for=203.0.113.99\r\n\r\n"
	var req fasthttp.Request
	if err := req.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
		t.Fatal(err)
	}
	var ctx fasthttp.RequestCtx
	ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 5000}, nil)
	got := s.clientAddr(&ctx, &st)
	t.Logf("client address %v (no forwarding header; trailer said 203.0.113.99)", got)
	if got != netip.MustParseAddr("10.1.2.3") {
		t.Errorf("client address %v taken from a trailer field, want the peer 10.1.2.3", got)
	}
}

// TestForwardedAndXFFBothSent: with both Forwarded and X-Forwarded-For
// from a trusted proxy, the client is the address they name. Before
// 2026-11-27 fasthttp's PeekAll, whose result the next PeekAll reuses,
// made the client the proxy itself (every client behind it shared one
// failed-auth bucket).
func TestForwardedAndXFFBothSent(t *testing.T) {
	s := newBenchServer(t, true)
	st := *s.settings.Load()
	set := *st.Settings
	set.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	st.Settings = &set
	var req fasthttp.Request
	req.SetRequestURI("/dealer/REWIND/listing")
	req.Header.Add("Forwarded", "for=198.51.100.7")
	req.Header.Add("X-Forwarded-For", "198.51.100.7")
	var ctx fasthttp.RequestCtx
	ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 5000}, nil)
	if f := ClientAddr(netip.MustParseAddr("10.1.2.3"), [][]byte{[]byte("for=198.51.100.7")}, [][]byte{[]byte("198.51.100.7")}, set.TrustedProxies); f != netip.MustParseAddr("198.51.100.7") {
		t.Fatalf("ClientAddr itself: %v", f)
	}
	if got := s.clientAddr(&ctx, &st); got != netip.MustParseAddr("198.51.100.7") {
		t.Errorf("client address %v, want 198.51.100.7 (Forwarded and X-Forwarded-For agree)", got)
	}
}

// TestForwardedHeaderChoice: the edge reads the one forwarding header the
// trusted proxies write (server.forwarded_header), never the other, which
// the client writes. Before 2026-11-29 Forwarded was read whenever present:
// behind a proxy that appends only X-Forwarded-For (nginx's
// $proxy_add_x_forwarded_for, a cloud balancer) a client chose its own
// address, a new one per request, with a Forwarded header, and so escaped
// the failed-authentication limit.
func TestForwardedHeaderChoice(t *testing.T) {
	s := newBenchServer(t, true)
	const proxy, fromClient, fromProxy = "10.1.2.3", "198.51.100.77", "203.0.113.5"
	for _, c := range []struct {
		header string // server.forwarded_header
		fwd    string // Forwarded, as sent
		xff    string // X-Forwarded-For, as sent
		want   string
	}{
		{"", "for=" + fromClient, fromProxy, fromProxy},
		{"x-forwarded-for", "for=" + fromClient, fromProxy, fromProxy},
		{"x-forwarded-for", "for=" + fromClient, "", proxy},
		{"x-forwarded-for", "garbage", fromProxy, fromProxy},
		{"forwarded", "for=" + fromProxy, fromClient, fromProxy},
		{"forwarded", "", fromClient, proxy},
	} {
		st := *s.settings.Load()
		set := *st.Settings
		set.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
		set.ForwardedHeader = c.header
		st.Settings = &set
		raw := "GET /dealer/REWIND/listing HTTP/1.1\r\nHost: edge\r\n"
		if c.fwd != "" {
			raw += "Forwarded: " + c.fwd + "\r\n"
		}
		if c.xff != "" {
			raw += "X-Forwarded-For: " + c.xff + "\r\n"
		}
		var req fasthttp.Request
		if err := req.Read(bufio.NewReader(strings.NewReader(raw + "\r\n"))); err != nil {
			t.Fatal(err)
		}
		var ctx fasthttp.RequestCtx
		ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP(proxy), Port: 5000}, nil)
		if got := s.clientAddr(&ctx, &st); got != netip.MustParseAddr(c.want) {
			t.Errorf("forwarded_header %q, Forwarded %q, X-Forwarded-For %q: client %v, want %s", c.header, c.fwd, c.xff, got, c.want)
		}
	}
}
