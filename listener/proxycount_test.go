package listener

import (
	"net"
	"testing"
	"time"
)

// TestCloseDuringProxyHeaderRead: a connection closed from another
// goroutine (a server's shutdown closing it) while its first Read waits
// for its PROXY header leaves no per-address count behind, and the two
// goroutines do not race: the first Read's registration under the
// client's address and Close's reading of it were unsynchronised (the
// race detector reported it; the suite runs this package under -race).
func TestCloseDuringProxyHeaderRead(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Proxy(tcp, ProxyOptions{From: []string{"127.0.0.0/8"}, HeaderTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ln := Limit(p, LimitOptions{MaxConnsPerIP: 1})
	defer ln.Close()
	client, err := net.Dial("tcp", tcp.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	// Half a header: the first Read waits for the rest.
	if _, err := client.Write([]byte("PROXY TCP4 203.0.113.5 ")); err != nil {
		t.Fatal(err)
	}
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 16))
		read <- err
	}()
	time.Sleep(100 * time.Millisecond) // the Read is waiting for the header
	_ = c.Close()
	select {
	case err := <-read:
		if err == nil {
			t.Fatal("Read of a closed connection succeeded")
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Read did not return after Close")
	}
	ln.mu.Lock()
	left := len(ln.perIP)
	ln.mu.Unlock()
	if left != 0 {
		t.Fatalf("per-address counts left after the connection closed: %v", ln.perIP)
	}
}

// TestProxyUnixSourceCounted: a PROXY v2 header whose source is an AF_UNIX
// address (a balancer's local client) counts the connection under the
// balancer's address, so the per-address cap applies; it used to apply
// to none of them.
func TestProxyUnixSourceCounted(t *testing.T) {
	addr, _ := serve(t, Options{Proxy: &ProxyOptions{HeaderTimeout: 2 * time.Second}, Limits: LimitOptions{MaxConnsPerIP: 1}})
	header := func(path string) []byte {
		b := []byte("\r\n\r\n\x00\r\nQUIT\n\x21\x31\x00\xd8") // v2 PROXY, AF_UNIX stream, 216 bytes
		var src, dst [108]byte
		copy(src[:], path)
		copy(dst[:], "/run/lb.sock")
		return append(append(b, src[:]...), dst[:]...)
	}
	first, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if st, _, err := ask(first, header("/run/client-a")); err != nil || st != 200 {
		t.Fatalf("first AF_UNIX client: %d %v", st, err)
	}
	second, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if st, body, err := ask(second, header("/run/client-b")); err == nil && st == 200 {
		t.Fatalf("second AF_UNIX client over the cap of 1 served: %d %q", st, body)
	}
}
