//go:build linux

package listener

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// pathServer serves the stack with a fasthttp server that answers each
// request with its path (read timeout 5 s, idle timeout 30 s).
func pathServer(t *testing.T, o Options, reduce bool) (string, *Stack) {
	t.Helper()
	return serveServer(t, o, &fasthttp.Server{
		Handler:           func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("path=" + string(ctx.Path())) },
		ReadTimeout:       5 * time.Second,
		IdleTimeout:       30 * time.Second,
		ReduceMemoryUsage: reduce,
		Logger:            quiet{},
	})
}

// TestPipelinedTailNotParked: a pipelined second request whose end arrives
// 500 ms after its start (well within the 5 s read timeout) is answered
// like the first, with parking after 200 ms as without it. The server's
// buffer held the start after it answered the first request, with nothing
// read since that answer: the connection was parked, the rest of the
// request timed out at the parking deadline (408) and then came in as a
// request of its own (400), with reduce_memory (the default).
func TestPipelinedTailNotParked(t *testing.T) {
	for _, park := range []time.Duration{0, 200 * time.Millisecond} {
		for _, reduce := range []bool{true, false} {
			name := map[bool]string{true: "reduce", false: "noreduce"}[reduce] + "/park=" + park.String()
			t.Run(name, func(t *testing.T) {
				addr, s := pathServer(t, Options{Limits: LimitOptions{ParkAfter: park, ParkAbove: 0}}, reduce)
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				_, _ = c.Write([]byte("GET /one HTTP/1.1\r\nHost: e\r\n\r\nGET /two HTTP/1.1\r\nHo"))
				time.Sleep(500 * time.Millisecond)
				_, _ = c.Write([]byte("st: e\r\nConnection: close\r\n\r\n"))
				got, _ := io.ReadAll(c)
				if strings.Count(string(got), "HTTP/1.1 200") != 2 || !strings.Contains(string(got), "path=/two") || strings.Contains(string(got), "HTTP/1.1 4") {
					t.Fatalf("parked %d; got %q; want two 200s (/one, /two) and nothing else", s.Limits.Parked(), got)
				}
			})
		}
	}
}

// TestCloseSilent: CloseSilent closes only the connections that have not
// sent a byte: one that sent part of a request finishes it, and a
// keep-alive connection that was answered asks again.
func TestCloseSilent(t *testing.T) {
	addr, s := pathServer(t, Options{Limits: LimitOptions{BusyConns: 1000, BusyIdleTimeout: time.Minute}}, true)
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		return c
	}
	silent, partial, answered := dial(), dial(), dial()
	_, _ = partial.Write([]byte("GET /partial HTTP/1.1\r\nHo"))
	_, _ = answered.Write([]byte("GET /first HTTP/1.1\r\nHost: e\r\n\r\n"))
	buf := make([]byte, 4096)
	if n, err := answered.Read(buf); err != nil || !strings.Contains(string(buf[:n]), "path=/first") {
		t.Fatalf("first answer: %q %v", buf[:n], err)
	}
	waitFor(t, "three connections open", func() bool { return s.Limits.Open() == 3 })
	time.Sleep(50 * time.Millisecond) // the partial request is read
	if n := s.Limits.CloseSilent(); n != 1 {
		t.Fatalf("CloseSilent closed %d connections, want 1", n)
	}
	if _, err := silent.Read(buf); err == nil {
		t.Error("the silent connection is still open")
	}
	_, _ = partial.Write([]byte("st: e\r\nConnection: close\r\n\r\n"))
	if got, _ := io.ReadAll(partial); !strings.Contains(string(got), "path=/partial") {
		t.Errorf("the partial request after CloseSilent: %q", got)
	}
	_, _ = answered.Write([]byte("GET /second HTTP/1.1\r\nHost: e\r\nConnection: close\r\n\r\n"))
	if got, _ := io.ReadAll(answered); !strings.Contains(string(got), "path=/second") {
		t.Errorf("the keep-alive connection after CloseSilent: %q", got)
	}
}
