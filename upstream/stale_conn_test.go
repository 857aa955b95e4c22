package upstream

// A closed keep-alive connection retried; an unasked Content-Encoding refused.

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"
)

// TestStaleKeepAliveRetried: upstream/doc.go promises one retry
// "only when the connection ended before any byte of an answer (a
// keep-alive connection the service had closed)". A service that closes
// its idle keep-alive connections (Node's 5 s keepAliveTimeout, a gateway's
// idle timeout shorter than the client's 30 s MaxIdleConnDuration) makes
// the next call on that connection read EOF before any byte. fasthttp
// hands that to RetryIfErr as io.EOF (it converts it to
// ErrConnectionClosed only after the retry loop), so retryStaleConn never
// retries: the call fails and counts against the breaker.
func TestStaleKeepAliveRetried(t *testing.T) {
	const body = `{"id":7,"name":"x"}`
	srv := newScriptedServer(t, func(c net.Conn, n int64) bool {
		// Answer with keep-alive, then idle the connection out shortly
		// after (the service's idle timeout).
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		go func() { time.Sleep(30 * time.Millisecond); c.Close() }()
		return true
	})
	cl, err := New(Options{BaseURL: "http://" + srv.addr(),
		Breaker: BreakerSettings{ConsecutiveFailures: 1, OpenFor: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.Dealer(context.Background(), 7); err != nil {
		t.Fatalf("first call: %v", err)
	}
	time.Sleep(150 * time.Millisecond) // the service has closed the idle connection
	d, err := cl.Dealer(context.Background(), 7)
	t.Logf("second call: err=%v requests=%d conns=%d", err, srv.requests.Load(), srv.conns.Load())
	if err != nil || d.ID != 7 {
		t.Errorf("call on a keep-alive connection the service had closed: %v, want it retried on a new connection", err)
	}
	if st := cl.BreakerStates()[SvcDealers]; st != BreakerClosed {
		t.Errorf("breaker %s after a stale keep-alive connection, want closed", st)
	}
}

// TestUnaskedContentEncodingIsAFailure: upstream/doc.go: "a
// Content-Encoding the edge did not ask for is not decoded, and the
// answer is a failure". The client never looks at the header: a body
// labelled gzip (or br) whose bytes happen to be JSON is accepted as if
// it were plain, so the written contract and the behaviour disagree.
func TestUnaskedContentEncodingIsAFailure(t *testing.T) {
	const body = `{"id":7,"name":"x"}`
	for _, enc := range []string{"gzip", "br", "deflate"} {
		t.Run(enc, func(t *testing.T) {
			srv := newScriptedServer(t, func(c net.Conn, n int64) bool {
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: %s\r\nContent-Length: %d\r\n\r\n%s", enc, len(body), body)
				return true
			})
			cl, err := New(Options{BaseURL: "http://" + srv.addr()})
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			d, err := cl.Dealer(context.Background(), 7)
			if err == nil {
				t.Errorf("Content-Encoding %s answer accepted (%+v), want a failure (ErrUnavailable)", enc, d)
			}
		})
	}
}
