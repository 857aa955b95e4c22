package upstream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// TestIPv6BaseURL: a BaseURL naming an IPv6 address (an IPv6-only
// cluster, or a literal) reaches the services. The client dials with
// fasthttp.DialTimeout, which is tcp4 only and drops every AAAA record:
// every call failed ("couldn't find dns entries").
func TestIPv6BaseURL(t *testing.T) {
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("application/json")
		ctx.SetBodyString(`{"id":101,"name":"x"}`)
	}}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown() })

	c, err := New(Options{BaseURL: "http://" + ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d, err := c.Dealer(context.Background(), 101)
	if err != nil || d.ID != 101 {
		t.Fatalf("dealer over IPv6 (%s): %+v, %v", ln.Addr(), d, err)
	}
}

// TestHTTPSHandshakeKeepsCallerDeadline: the deadline of a call is the
// earlier of the service's timeout and the caller's (doc.go), also while
// the TLS handshake of a new connection runs. The handshake's deadline is
// the dial's start plus the service's whole timeout (WriteTimeout), so a
// call made with a context of upstream.WithTimeout (a fill's: run on the
// caller's goroutine, not watched) with 150ms left waited the service's
// 800ms on a terminator that accepted and said nothing.
func TestHTTPSHandshakeKeepsCallerDeadline(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, conn) // silent
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range held {
			_ = c.Close()
		}
		mu.Unlock()
	})
	c, err := New(Options{BaseURL: "https://" + ln.Addr().String()}) // dealers: 800ms
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = c.Dealer(ctx, 101)
	el := time.Since(start)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("silent TLS service: %v, want ErrUnavailable", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("handshake cut by the caller's deadline: %v, want the caller's (excluded by the breaker)", err)
	}
	if el > 400*time.Millisecond {
		t.Fatalf("call with 150ms left took %v (the service's 800ms timeout): the handshake ignores the caller's deadline; err %v", el, err)
	}
}

// TestGoneOutsideKeyChangesIsAFailure: 410 Gone means "cursor expired"
// on the key index's change feed only (doc.go); on any other path it is
// "any other status": ErrUnavailable, counted by the breaker. Every 410
// was ErrCursorExpired, which wraps neither ErrUnavailable nor
// ErrNotFound and which the breaker counts as a success: a gateway
// answering 410 for a retired route made every key lookup, profile,
// listing and detail an unexpected error (500, "internal error" logged,
// no stale answer or principal kept, which need ErrUnavailable), and the
// breaker never opened.
func TestGoneOutsideKeyChangesIsAFailure(t *testing.T) {
	srv := newScriptedServer(t, func(c net.Conn, n int64) bool {
		fmt.Fprintf(c, "HTTP/1.1 410 Gone\r\nContent-Type: application/json\r\nContent-Length: 17\r\n\r\n{\"error\":\"gone\"}\n")
		return true
	})
	c, err := New(Options{BaseURL: "http://" + srv.addr(), Breaker: BreakerSettings{ConsecutiveFailures: 2, OpenFor: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.KeyChanges(ctx, "c1", 0); !errors.Is(err, ErrCursorExpired) {
		t.Fatalf("key changes 410: %v, want ErrCursorExpired", err)
	}
	if _, err := c.LookupKey(ctx, strings.Repeat("a", 64)); !errors.Is(err, ErrUnavailable) {
		t.Errorf("key lookup 410: %v, want ErrUnavailable", err)
	}
	if _, err := c.Vehicle(ctx, 1, "REWIND", "x"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("vehicle 410: %v, want ErrUnavailable", err)
	}
	_, _ = c.Vehicle(ctx, 1, "REWIND", "x")
	if st := c.BreakerStates()[SvcInventory]; st != BreakerOpen {
		t.Errorf("inventory breaker after consecutive 410s: %s, want open", st)
	}
}
