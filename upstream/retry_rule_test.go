package upstream

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"
)

// TestNoRetryAfterPartialAnswer: a call is retried only when the
// connection ended before any byte of an answer (upstream/doc.go); an
// answer whose head was cut short (then FIN or RST) reaches the service
// once.
func TestNoRetryAfterPartialAnswer(t *testing.T) {
	for _, tc := range []struct {
		name string
		ans  func(c net.Conn)
	}{
		{"head cut, FIN", func(c net.Conn) { fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Ty"); time.Sleep(20 * time.Millisecond) }},
		{"head cut, RST", func(c net.Conn) {
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Ty")
			time.Sleep(20 * time.Millisecond)
			reset(c)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newScriptedServer(t, func(c net.Conn, n int64) bool { tc.ans(c); return false })
			cl, err := New(Options{BaseURL: "http://" + srv.addr(), Timeouts: map[string]time.Duration{SvcDealers: 300 * time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			_, err = cl.Dealer(context.Background(), 7)
			t.Logf("err=%v", err)
			if n := srv.requests.Load(); n != 1 {
				t.Errorf("%d requests for one call after a partial answer, want 1", n)
			}
		})
	}
}
