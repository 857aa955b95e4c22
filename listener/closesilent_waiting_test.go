//go:build linux

package listener

import (
	"net"
	"testing"
	"time"
)

// TestCloseSilentKeepsWaitingRequest: at shutdown the edge calls
// CloseSilent at once and every 100 ms. It decides "silent" from what the
// server has read, not from what the client has sent: a connection that
// was accepted just before the listener closed, whose whole request is in
// its socket but whose server goroutine has not read yet (a busy
// 2-core box at the moment of a rolling deploy), is closed unanswered,
// a sent request dropped while the README promises in-flight requests
// finish. Here the server's read is simply not made yet.
func TestCloseSilentKeepsWaitingRequest(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Limit(tcp, LimitOptions{BusyConns: 1000, BusyIdleTimeout: time.Minute})
	defer l.Close()
	client, err := net.Dial("tcp", tcp.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sc, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if _, err := client.Write([]byte("GET /dealer/NOS/listing HTTP/1.1\r\nHost: e\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the request is in the server's socket, not read yet
	if n := l.CloseSilent(); n != 0 {
		t.Errorf("CloseSilent closed %d connection(s) holding a whole unread request, want 0", n)
	}
}
