package listener

import (
	"io"
	"net"
	"testing"
	"time"
)

// FuzzConnectionStart feeds arbitrary first bytes of a connection (a PROXY
// v1 or v2 header, a broken one, plain HTTP) through the PROXY protocol and
// limits layers, as the public listener stacks them: reading never panics
// or hangs, a connection whose header fails is never served with data,
// and a client address taken from a header is a valid one.
func FuzzConnectionStart(f *testing.F) {
	for _, seed := range []string{
		"PROXY TCP4 203.0.113.7 192.0.2.1 40000 443\r\nGET / HTTP/1.1\r\n\r\n",
		"PROXY TCP6 2001:db8::7 2001:db8::1 40000 443\r\n",
		"PROXY UNKNOWN\r\n",
		"PROXY TCP4 999.1.1.1 192.0.2.1 1 2\r\n",
		"\r\n\r\n\x00\r\nQUIT\n\x21\x11\x00\x0c\xcb\x00\x71\x07\xc0\x00\x02\x01\x9c\x40\x01\xbb",
		"\r\n\r\n\x00\r\nQUIT\n\x20\x00\x00\x00",
		"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
		"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		server, client := net.Pipe()
		sl := newScripted()
		sl.conns <- server
		p, err := Proxy(sl, ProxyOptions{HeaderTimeout: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		ln := Limit(p, LimitOptions{MaxConnsPerIP: 1})
		go func() {
			_ = client.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = client.Write(data)
			_ = client.Close()
		}()
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		got, err := io.ReadAll(c)
		if err != nil && len(got) > 0 {
			// Data after a failed header would be served as a request.
			if _, isTimeout := err.(net.Error); !isTimeout {
				t.Fatalf("read %q then %v", got, err)
			}
		}
		if a, ok := c.RemoteAddr().(*net.TCPAddr); ok && a.IP == nil {
			t.Fatalf("client address without IP: %v", a)
		}
		if len(got) > len(data) {
			t.Fatalf("read %d bytes from %d sent", len(got), len(data))
		}
	})
}
