package upstream

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"
)

// TestUnsolicitedAnswerNotTakenForTheNext: a service that writes an answer
// nobody asked for on an idle keep-alive connection (a second answer to
// one request; a "408 Request Timeout" before closing an idle connection)
// must not have it read as the next call's answer: the connection is
// dropped and the call made on another. Before, the second call read
// dealer 8's record as its answer to a call for dealer 7 (or the 408 as a
// failure counted against the breaker).
func TestUnsolicitedAnswerNotTakenForTheNext(t *testing.T) {
	answer := func(id int) string {
		body := fmt.Sprintf(`{"id":%d,"name":"d%d"}`, id, id)
		return fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	}
	extras := map[string]string{
		"another answer": answer(8),
		"408 on idle":    "HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n",
	}
	for name, extra := range extras {
		t.Run(name, func(t *testing.T) {
			srv := newScriptedServer(t, func(c net.Conn, n int64) bool {
				fmt.Fprint(c, answer(7))
				if n == 1 {
					time.Sleep(20 * time.Millisecond) // after the client read its answer
					fmt.Fprint(c, extra)
				}
				return true
			})
			cl, err := New(Options{BaseURL: "http://" + srv.addr(),
				Breaker: BreakerSettings{ConsecutiveFailures: 1, OpenFor: time.Minute}})
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			if d, err := cl.Dealer(context.Background(), 7); err != nil || d.ID != 7 {
				t.Fatalf("first call: %+v %v", d, err)
			}
			time.Sleep(80 * time.Millisecond) // the extra answer waits in the idle connection
			d, err := cl.Dealer(context.Background(), 7)
			if err != nil || d.ID != 7 {
				t.Fatalf("second call: %+v, %v; want dealer 7 read from a connection of its own (requests %d, connections %d)", d, err, srv.requests.Load(), srv.conns.Load())
			}
			if c := srv.conns.Load(); c != 2 {
				t.Errorf("%d connections, want 2 (the one holding the extra answer dropped)", c)
			}
			if st := cl.BreakerStates()[SvcDealers]; st != BreakerClosed {
				t.Errorf("breaker %s, want closed", st)
			}
		})
	}
}

// TestIdleGuardKeepsCleanConnections: a connection that holds nothing is
// reused (one connection for many sequential calls).
func TestIdleGuardKeepsCleanConnections(t *testing.T) {
	srv := newScriptedServer(t, func(c net.Conn, n int64) bool {
		body := `{"id":7,"name":"d"}`
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		return true
	})
	cl, err := New(Options{BaseURL: "http://" + srv.addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for i := range 20 {
		if _, err := cl.Dealer(context.Background(), 7); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if c := srv.conns.Load(); c != 1 {
		t.Errorf("%d connections for 20 sequential calls, want 1", c)
	}
}
