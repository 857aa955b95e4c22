package listener

import (
	"net"
	"strings"
	"testing"
	"time"
)

// TestLinkLocalClientServedWithProxyFrom: with server.proxy_protocol_from
// set, "a connection from any other source is served as it is, with its
// TCP peer as the client" (ProxyOptions.From, README). A client reaching
// the edge from an IPv6 link-local address has a zone in its RemoteAddr
// ("[fe80::1%eth0]:port"), which the PROXY policy cannot parse: the
// connection is closed in the accept loop, unanswered and uncounted.
func TestLinkLocalClientServedWithProxyFrom(t *testing.T) {
	var ll *net.IPNet
	var zone string
	ifs, _ := net.Interfaces()
	for _, ifc := range ifs {
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.IsLinkLocalUnicast() && n.IP.To4() == nil {
				ll, zone = n, ifc.Name
			}
		}
	}
	if ll == nil {
		t.Skip("no IPv6 link-local address")
	}
	tcp, err := net.Listen("tcp", "[::]:0")
	if err != nil {
		t.Skip(err)
	}
	p, err := Proxy(tcp, ProxyOptions{From: []string{"10.0.0.0/8"}, HeaderTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ln := Limit(p, LimitOptions{})
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	port := tcp.Addr().(*net.TCPAddr).Port
	client, err := net.Dial("tcp", net.JoinHostPort(ll.IP.String()+"%"+zone, itoa(port)))
	if err != nil {
		t.Skip(err)
	}
	defer client.Close()
	_, _ = client.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	select {
	case c := <-accepted:
		defer c.Close()
		b := make([]byte, 64)
		n, err := c.Read(b)
		if !strings.HasPrefix(string(b[:n]), "GET /") {
			t.Fatalf("served connection read %q, %v", b[:n], err)
		}
	case <-time.After(2 * time.Second):
		t.Fatalf("a connection from %s%%%s (not a listed balancer) was never handed to the server", ll.IP, zone)
	}
}

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}
