package ops

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// FuzzAdminRequest sends a request assembled from fuzzed parts (method,
// target, Host, extra header lines, body; with or without the admin token)
// to the admin handler and checks what the README promises of the admin
// listener: never a panic or a 5xx (every function it calls succeeds), every
// error an application/problem+json body whose status field is the
// answer's, and no state change (purge, reload) unless the request is
// authorized, same-origin, a POST to that endpoint, with no body or a
// valid JSON one sent as application/json, and (for a purge) one positive
// dealer_id or all=true alone.
func FuzzAdminRequest(f *testing.F) {
	seeds := []struct {
		method, target, host, headers, body string
		token                               uint8
	}{
		{"POST", "/admin/purge?dealer_id=101", "localhost", "", "", 1},
		{"POST", "/admin/purge?all=true", "127.0.0.1", "Content-Type: application/json", "{}", 1},
		{"POST", "/admin/reload", "[::1]", "Content-Type: application/json; charset=utf-8", `{"x":[1]}`, 1},
		{"POST", "/admin/purge?dealer_id=101&dealer_id=102", "localhost", "", "", 1},
		{"POST", "/admin/purge?dealer_id=-1", "localhost", "Content-Type: text/plain", "a=b", 1},
		{"POST", "/admin/reload", "evil.example", "Origin: http://evil.example", "", 2},
		{"POST", "/admin/reload", "localhost", "Sec-Fetch-Site: cross-site", "", 1},
		{"GET", "/admin/status", "localhost", "Authorization: Bearer wrong", "", 2},
		{"HEAD", "/metrics", "localhost", "", "", 1},
		{"GET", "/readyz", "a.localhost", "", "", 0},
		{"GET", "/healthz?x=%zz", "localhost", "", "", 0},
		{"GET", "/", "localhost", "Origin: null", "", 0},
		{"DELETE", "/admin/purge", "localhost", "", "", 1},
		{"POST", "/admin/purge?all=TRUE", "localhost", "Transfer-Encoding: chunked", "2\r\n{}\r\n0\r\n\r\n", 1},
	}
	for _, s := range seeds {
		f.Add(s.method, s.target, s.host, s.headers, s.body, s.token)
	}
	const token = "admin-secret"
	f.Fuzz(func(t *testing.T, method, target, host, headers, body string, mode uint8) {
		var purged, purgedAll, reloaded int
		var purgedID int64
		o := AdminOptions{
			Metrics:  NewMetrics(MetricsOptions{Routes: []string{"content_hub"}}),
			Purge:    func(_ context.Context, id int64) error { purged++; purgedID = id; return nil },
			PurgeAll: func(context.Context) error { purgedAll++; return nil },
			Reload:   func() error { reloaded++; return nil },
		}
		// mode 0: no token configured; 1: the token sent; 2: configured,
		// only what the fuzzer sends.
		mode %= 3
		if mode != 0 {
			o.Token = token
		}
		a, err := NewAdmin(o)
		if err != nil {
			t.Fatal(err)
		}
		var raw strings.Builder
		raw.WriteString(method + " " + target + " HTTP/1.1\r\nHost: " + host + "\r\n")
		if mode == 1 {
			raw.WriteString("Authorization: Bearer " + token + "\r\n")
		}
		if headers != "" {
			raw.WriteString(headers + "\r\n")
		}
		if !strings.Contains(strings.ToLower(headers), "transfer-encoding") {
			raw.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n")
		}
		raw.WriteString("\r\n" + body)
		var req fasthttp.Request
		if err := req.Read(bufio.NewReader(strings.NewReader(raw.String()))); err != nil {
			return // fasthttp refuses it before the handler (ErrorHandler's part)
		}
		path := string(req.URI().Path())
		if strings.HasPrefix(path, "/debug/pprof") {
			return // Go's profiler: a CPU profile or trace takes seconds
		}
		// The admin listener at 127.0.0.1:80, so that a Host of
		// "localhost" is its own (loopbackHost).
		var ctx fasthttp.RequestCtx
		ctx.Init2(addrConn{}, quietLogger{}, false)
		req.CopyTo(&ctx.Request)
		a.Handler()(&ctx)

		status := ctx.Response.StatusCode()
		if status >= 500 {
			t.Fatalf("%d to %q:\n%s", status, raw.String(), ctx.Response.Body())
		}
		if status >= 400 {
			if ct := string(ctx.Response.Header.ContentType()); ct != "application/problem+json" {
				t.Fatalf("%d with Content-Type %q to %q", status, ct, raw.String())
			}
			var p struct {
				Status int    `json:"status"`
				Title  string `json:"title"`
			}
			if err := json.Unmarshal(ctx.Response.Body(), &p); err != nil || p.Status != status || p.Title == "" {
				t.Fatalf("%d with problem %q to %q", status, ctx.Response.Body(), raw.String())
			}
		}
		changed := purged + purgedAll + reloaded
		if changed == 0 {
			return
		}
		if changed != 1 || status != fasthttp.StatusOK {
			t.Fatalf("purge %d, purge all %d, reload %d, status %d to %q", purged, purgedAll, reloaded, status, raw.String())
		}
		if mode == 2 {
			t.Fatalf("a state change without the token: %q", raw.String())
		}
		if string(req.Header.Method()) != "POST" {
			t.Fatalf("a state change by %q: %q", req.Header.Method(), raw.String())
		}
		if site := string(req.Header.Peek("Sec-Fetch-Site")); site == "cross-site" || site == "same-site" {
			t.Fatalf("a state change from another site: %q", raw.String())
		}
		if origin := string(req.Header.Peek("Origin")); origin != "" {
			// What a browser sends: "null" or scheme://host[:port].
			scheme, host, _ := strings.Cut(origin, "://")
			if origin == "null" || (scheme == "http" || scheme == "https") && !strings.ContainsAny(host, "/?#@") && !strings.EqualFold(host, string(req.Host())) {
				t.Fatalf("a state change from origin %q for host %q: %q", origin, req.Host(), raw.String())
			}
		}
		if b := req.Body(); len(b) > 0 {
			mt, _, _ := strings.Cut(string(req.Header.ContentType()), ";")
			if !strings.EqualFold(strings.TrimSpace(mt), "application/json") || !json.Valid(b) {
				t.Fatalf("a state change with body %q (Content-Type %q): %q", b, req.Header.ContentType(), raw.String())
			}
		}
		args := req.URI().QueryArgs()
		switch {
		case reloaded == 1:
			if path != "/admin/reload" {
				t.Fatalf("reloaded by %q", raw.String())
			}
		case purgedAll == 1:
			if path != "/admin/purge" || len(args.PeekMulti("all")) != 1 || string(args.Peek("all")) != "true" || args.Has("dealer_id") {
				t.Fatalf("purged everything by %q", raw.String())
			}
		case purged == 1:
			all := args.PeekMulti("dealer_id")
			if len(all) != 1 {
				t.Fatalf("purged dealer %d with %d dealer_id: %q", purgedID, len(all), raw.String())
			}
			id, err := strconv.ParseInt(string(all[0]), 10, 64)
			if path != "/admin/purge" || args.Has("all") || purgedID <= 0 || err != nil || id != purgedID {
				t.Fatalf("purged dealer %d by %q", purgedID, raw.String())
			}
		}
	})
}

// addrConn is the connection of a request handled in place: only its
// addresses are asked for.
type addrConn struct{ net.Conn }

func (addrConn) LocalAddr() net.Addr  { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }
func (addrConn) RemoteAddr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000} }

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}
