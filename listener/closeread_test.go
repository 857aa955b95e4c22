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
