package listener

import (
	"net"
	"testing"
	"time"
)

// TestSilentConnectionsCountedPerIP: server.max_conns_per_ip caps the
// open connections of one client address. Without the PROXY protocol a
// connection is counted on its first Read, before that read waits, so a
// client that opens connections and sends nothing has at most the cap of
// them open (the rest are answered 429 and closed). With
// server.proxy_protocol_from set, a client that is not a listed balancer
// is its TCP peer, known at accept, yet it is counted only once the PROXY
// layer has looked for a header (RemoteAddr waits for the first bytes, up
// to the header timeout, server.read_timeout): its silent connections are
// not counted at all, so one address holds any number of them (up to
// server.concurrency: 503 for everyone else), each for read_timeout.
func TestSilentConnectionsCountedPerIP(t *testing.T) {
	const limit, opened = 2, 6
	for _, tc := range []struct {
		name  string
		proxy *ProxyOptions
	}{
		{"no PROXY protocol", nil},
		{"PROXY protocol from a balancer, direct client", &ProxyOptions{From: []string{"10.0.0.0/8"}, HeaderTimeout: 5 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, s := serve(t, Options{
				Proxy: tc.proxy,
				Limits: LimitOptions{MaxConnsPerIP: limit,
					RejectResponse: []byte("HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")},
			})
			var conns []net.Conn
			for range opened {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				conns = append(conns, c)
			}
			waitFor(t, "all accepted", func() bool { return s.Limits.Open() >= 1 })
			time.Sleep(time.Second) // the refused ones are answered after 100 ms
			refused := 0
			for _, c := range conns {
				_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
				var b [64]byte
				if _, err := c.Read(b[:]); err == nil || !isTimeout(err) {
					refused++ // answered 429 (or closed)
				}
			}
			if want := opened - limit; refused < want {
				t.Errorf("%d of %d silent connections from one address refused after 1 s (open %d), want %d: max_conns_per_ip %d",
					refused, opened, s.Limits.Open(), want, limit)
			}
		})
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
