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
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(tcp, o)
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{
		Handler:           func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("path=" + string(ctx.Path())) },
		ReadTimeout:       5 * time.Second,
		IdleTimeout:       30 * time.Second,
		ReduceMemoryUsage: reduce,
		Logger:            quiet{},
	}
	s.Limits.ServeParked(func(c net.Conn) { _ = srv.ServeConn(c) })
	done := make(chan struct{})
	go func() { _ = srv.Serve(s); close(done) }()
	t.Cleanup(func() { _ = srv.Shutdown(); <-done })
	return tcp.Addr().String(), s
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
