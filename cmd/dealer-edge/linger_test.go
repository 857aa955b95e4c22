package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRefusedRequestAnswerSurvivesUnreadBytes: a request the edge refuses
// while the client is still sending it (a header block or request line
// too large, a body too large, a malformed head followed by more bytes) is
// answered with its problem, which the client reads in full, followed by
// the end of the connection (FIN), and the client's own writes all
// succeed, on the public and the admin listener, every time. Before
// 2026-11-29 the edge closed such a connection with the client's unread
// bytes in its socket: the kernel answered with a reset, and the client
// met "connection reset by peer" (on its write, or on its read, often
// before the answer) instead of the 4xx (TestAdminErrorsAreProblemJSON's
// 9 KB header failed so once under load). Now the close is lingering
// (listener.LingerOnClose).
func TestRefusedRequestAnswerSurvivesUnreadBytes(t *testing.T) {
	e := startEdge(t, "--demo")
	pub := strings.TrimPrefix(e.base, "http://")
	adm := strings.TrimPrefix(e.admin, "http://")
	const key = "X-Api-Key: demo-key-alpha\r\n"
	filler := strings.Repeat("f", 256<<10)
	for _, c := range []struct {
		name, addr, req string
		want            int
	}{
		{"public 431", pub, "GET /dealer/NOS/listing HTTP/1.1\r\nHost: e\r\n" + key + "X-A: " + filler + "\r\n\r\n", 431},
		{"public 414", pub, "GET /dealer/NOS/listing?q=" + filler + " HTTP/1.1\r\nHost: e\r\n" + key + "\r\n", 414},
		{"public 413", pub, "GET /dealer/NOS/listing HTTP/1.1\r\nHost: e\r\n" + key + "Content-Length: 262144\r\n\r\n" + filler, 413},
		{"public 400", pub, "GET /dealer/NOS/listing HTTP/1.1\r\nHost: e\r\n" + key + "Content-Length: x\r\n\r\n" + filler, 400},
		{"admin 431", adm, "GET /metrics HTTP/1.1\r\nHost: e\r\nX-A: " + filler + "\r\n\r\n", 431},
		{"admin 414", adm, "GET /metrics?q=" + filler + " HTTP/1.1\r\nHost: e\r\n\r\n", 414},
		{"admin 413", adm, "POST /admin/reload HTTP/1.1\r\nHost: e\r\nContent-Type: application/json\r\nContent-Length: 262144\r\n\r\n" + filler, 413},
		{"admin 400", adm, "GET /metrics HTTP/1.1\r\nHost: e\r\nContent-Length: x\r\n\r\n" + filler, 400},
		// Refused by the handlers before routing (their head or framing;
		// TestHTTP1Framing), with the client still sending: until
		// 2026-11-29 these closed at once and the client met a reset.
		{"public 400 bare LF", pub, "GET /dealer/NOS/listing HTTP/1.1\r\nHost: e\nX-A: b\r\n\r\n" + filler, 400},
		{"public 400 space in a field name", pub, "GET /dealer/NOS/listing HTTP/1.1\r\nHost: e\r\nX A: b\r\n\r\n" + filler, 400},
		{"public 400 identity", pub, "GET /dealer/NOS/listing HTTP/1.1\r\nHost: e\r\nTransfer-Encoding: identity\r\n\r\n" + filler, 400},
		{"admin 400 space in a field name", adm, "GET /metrics HTTP/1.1\r\nHost: e\r\nX A: b\r\n\r\n" + filler, 400},
		{"admin 400 identity", adm, "GET /metrics HTTP/1.1\r\nHost: e\r\nTransfer-Encoding: identity\r\n\r\n" + filler, 400},
	} {
		t.Run(c.name, func(t *testing.T) {
			for i := range 50 {
				if err := refusedExchange(c.addr, c.req, c.want); err != nil {
					t.Fatalf("attempt %d: %v", i+1, err)
				}
			}
		})
	}
}

// refusedExchange writes req in one go from a goroutine of its own while
// it reads the answer, which must be want as application/problem+json,
// then the end of the connection; the write must succeed.
func refusedExchange(addr, req string, want int) error {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	wrote := make(chan error, 1)
	go func() {
		_, err := io.WriteString(conn, req)
		if err == nil {
			err = conn.(*net.TCPConn).CloseWrite()
		}
		wrote <- err
	}()
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: "GET"})
	if err != nil {
		<-wrote
		return errors.New("reading the answer: " + err.Error())
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		<-wrote
		return errors.New("reading the answer's body: " + err.Error())
	}
	if resp.StatusCode != want || resp.Header.Get("Content-Type") != "application/problem+json" {
		<-wrote
		return errors.New("answer " + resp.Status + " " + resp.Header.Get("Content-Type"))
	}
	if n, err := br.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		<-wrote
		return errors.New("after the answer: not the end of the connection: " + errString(err))
	}
	if err := <-wrote; err != nil {
		return errors.New("writing the request: " + err.Error())
	}
	return nil
}

func errString(err error) string {
	if err == nil {
		return "more bytes"
	}
	return err.Error()
}

// TestShortGraceLingeringExitsZero: a connection in a lingering close (its
// error answer sent, its client still connected) is no request in flight:
// a shutdown whose grace ends before fasthttp sees its idle connections
// go, which the edge then judges by the listener's open connections,
// exits 0 with one lingering (README "Graceful shutdown" step 5).
func TestShortGraceLingeringExitsZero(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "edge.json")
	writeConfig(t, cfg, `{"watch_interval": "0s", "server": {"shutdown_grace": "0s"}}`)
	e := startEdge(t, "--demo", "--config", cfg)
	c, err := net.Dial("tcp", e.app.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "GET /dealer/NOS/listing HTTP/1.1\r\nHost: e\r\nX-A: "+strings.Repeat("a", 64<<10)+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: "GET"})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 431 {
		t.Fatalf("status %d, want 431", resp.StatusCode)
	}
	// That connection lingers now (its client neither sends nor closes).
	// And one idle keep-alive connection, so that fasthttp's shutdown
	// outlasts the grace (TestShortGraceIdleExitsZero, whose wait for the
	// server to count it idle this is).
	if r := e.get("/dealer/NOS/listing?page_size=1", "demo-key-alpha"); r.status != 200 {
		t.Fatalf("before the shutdown: %d", r.status)
	}
	time.Sleep(50 * time.Millisecond)
	e.signals <- syscall.SIGTERM
	code := <-e.exit
	e.exit <- 0 // for the cleanup
	if code != 0 {
		t.Fatalf("exit %d with a connection in a lingering close and shutdown_grace 0s, want 0\n%s", code, lastLine(e.stderr.String()))
	}
}
