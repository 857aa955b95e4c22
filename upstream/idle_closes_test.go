package upstream

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCallAfterIdleClosesSucceeds: a service that closes idle keep-alive
// connections sooner than the edge's 30 s MaxIdleConnDuration (Node's
// 5 s keepAliveTimeout, a gateway's idle timeout) leaves several closed
// connections in the pool after a burst. The first call after the quiet
// period must still be answered: the idle guard sees each closed
// connection before writing to it (nothing was sent, nothing to repeat),
// yet every such look counts as one of fasthttp's two attempts, so the
// call fails (503, counted by the breaker) on a healthy service.
func TestCallAfterIdleClosesSucceeds(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(30 * time.Millisecond) // the burst's calls overlap: one connection each
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":7,"name":"d"}`))
	}))
	srv.Config.IdleTimeout = 100 * time.Millisecond
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	cl, err := New(Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := cl.Dealer(context.Background(), 7); err != nil {
				t.Errorf("burst call: %v", err)
			}
		}()
	}
	wg.Wait()
	time.Sleep(400 * time.Millisecond) // the service closed every idle connection
	if _, err := cl.Dealer(context.Background(), 7); err != nil {
		t.Fatalf("first call after the service closed %d idle connections: %v", conns.Load(), err)
	}
}
