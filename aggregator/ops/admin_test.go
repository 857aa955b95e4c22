package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"
)

// adminServer serves an Admin on an in-memory listener.
func adminServer(t *testing.T, o AdminOptions) *fasthttp.Client {
	t.Helper()
	if o.Metrics == nil {
		o.Metrics = NewMetrics(MetricsOptions{Routes: []string{"content_hub"}})
	}
	a, err := NewAdmin(o)
	if err != nil {
		t.Fatal(err)
	}
	ln := fasthttputil.NewInmemoryListener()
	srv := &fasthttp.Server{Handler: a.Handler()}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return &fasthttp.Client{Dial: func(string) (net.Conn, error) { return ln.Dial() }}
}

type answer struct {
	status int
	ctype  string
	body   map[string]any
	raw    string
	header *fasthttp.ResponseHeader
}

func call(t *testing.T, c *fasthttp.Client, method, uri, token string) answer {
	t.Helper()
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI("http://localhost" + uri) // a loopback Host: see TestAdminRefusesForeignPages
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if err := c.DoTimeout(req, resp, 5*time.Second); err != nil {
		t.Fatalf("%s %s: %v", method, uri, err)
	}
	a := answer{status: resp.StatusCode(), ctype: string(resp.Header.ContentType()), raw: string(resp.Body()), header: &fasthttp.ResponseHeader{}}
	resp.Header.CopyTo(a.header)
	if strings.Contains(a.ctype, "json") {
		if err := json.Unmarshal(resp.Body(), &a.body); err != nil {
			t.Fatalf("%s %s: body not JSON: %q", method, uri, resp.Body())
		}
	}
	return a
}

func TestAdminAuthAndRouting(t *testing.T) {
	var purged atomic.Int64
	c := adminServer(t, AdminOptions{
		Token:  "s3cret-admin-token",
		Purge:  func(_ context.Context, id int64) error { purged.Store(id); return nil },
		Reload: func() error { return nil },
	})
	const tok = "s3cret-admin-token"
	cases := []struct {
		name, method, uri, token string
		status                   int
		ctype                    string
	}{
		{"healthz needs no token", "GET", "/healthz", "", 200, "application/json"},
		{"readyz needs no token", "GET", "/readyz", "", 200, "application/json"},
		{"metrics without token", "GET", "/metrics", "", 401, "application/problem+json"},
		{"metrics with wrong token", "GET", "/metrics", "wrong", 401, "application/problem+json"},
		{"metrics with a longer token", "GET", "/metrics", tok + "x", 401, "application/problem+json"},
		{"metrics", "GET", "/metrics", tok, 200, "text/plain; version=0.0.4; charset=utf-8"},
		{"purge without token", "POST", "/admin/purge?dealer_id=101", "", 401, "application/problem+json"},
		{"purge by GET", "GET", "/admin/purge?dealer_id=101", tok, 405, "application/problem+json"},
		{"purge bad id", "POST", "/admin/purge?dealer_id=abc", tok, 422, "application/problem+json"},
		{"purge negative id", "POST", "/admin/purge?dealer_id=-3", tok, 422, "application/problem+json"},
		{"purge missing id", "POST", "/admin/purge", tok, 422, "application/problem+json"},
		{"purge", "POST", "/admin/purge?dealer_id=101", tok, 200, "application/json"},
		{"reload without token", "POST", "/admin/reload", "", 401, "application/problem+json"},
		{"reload by GET", "GET", "/admin/reload", tok, 405, "application/problem+json"},
		{"reload", "POST", "/admin/reload", tok, 200, "application/json"},
		{"pprof without token", "GET", "/debug/pprof/", "", 401, "application/problem+json"},
		{"pprof index", "GET", "/debug/pprof/", tok, 200, "text/html; charset=utf-8"},
		{"pprof heap", "GET", "/debug/pprof/heap?debug=1", tok, 200, "text/plain; charset=utf-8"},
		{"unknown path", "GET", "/admin/nope", tok, 404, "application/problem+json"},
		{"public API path", "GET", "/dealer/REWIND/listing", tok, 404, "application/problem+json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := call(t, c, tc.method, tc.uri, tc.token)
			if a.status != tc.status || a.ctype != tc.ctype {
				t.Fatalf("got %d %q, want %d %q: %s", a.status, a.ctype, tc.status, tc.ctype, a.raw)
			}
			if tc.status == 401 && !strings.HasPrefix(string(a.header.Peek("WWW-Authenticate")), "Bearer") {
				t.Error("401 without WWW-Authenticate: Bearer")
			}
			if tc.status == 405 && string(a.header.Peek("Allow")) == "" {
				t.Error("405 without Allow")
			}
			if strings.HasPrefix(tc.ctype, "application/problem") && (a.body["status"] != float64(tc.status) || a.body["title"] == "") {
				t.Errorf("problem body: %v", a.body)
			}
		})
	}
	if purged.Load() != 101 {
		t.Errorf("purge called with %d, want 101", purged.Load())
	}
}

func TestAdminNoToken(t *testing.T) {
	c := adminServer(t, AdminOptions{})
	for _, uri := range []string{"/metrics", "/healthz", "/readyz"} {
		if a := call(t, c, "GET", uri, ""); a.status != 200 {
			t.Errorf("%s without a configured token: %d", uri, a.status)
		}
	}
	if a := call(t, c, "POST", "/admin/purge?dealer_id=1", ""); a.status != 501 {
		t.Errorf("purge without a purge function: %d", a.status)
	}
}

// TestAdminReloadCertificateRejected: a reload whose config was applied
// but whose certificate was not says so, instead of claiming that the
// previous config stays in force (it did; found by an audit).
func TestAdminReloadCertificateRejected(t *testing.T) {
	c := adminServer(t, AdminOptions{Reload: func() error {
		return fmt.Errorf("config reloaded, but %w: open /etc/tls/tls.crt: no such file or directory", ErrCertificateNotReloaded)
	}})
	a := call(t, c, "POST", "/admin/reload", "")
	if a.status != 422 {
		t.Fatalf("got %d", a.status)
	}
	if title, _ := a.body["title"].(string); !strings.Contains(title, "config reloaded and in force") || strings.Contains(title, "previous config stays") {
		t.Errorf("title %q", title)
	}
}

func TestAdminReloadRejected(t *testing.T) {
	c := adminServer(t, AdminOptions{Reload: func() error {
		return errors.New("config /etc/edge.json: rate_limit.fail_mode: must be local, open or closed")
	}})
	a := call(t, c, "POST", "/admin/reload", "")
	if a.status != 422 || a.ctype != "application/problem+json" {
		t.Fatalf("got %d %q", a.status, a.ctype)
	}
	if d, _ := a.body["detail"].(string); !strings.Contains(d, "rate_limit.fail_mode") {
		t.Errorf("detail %q does not name the bad field", d)
	}
}

func TestReadiness(t *testing.T) {
	down := func(context.Context) error { return errors.New("dial tcp: connection refused") }
	up := func(context.Context) error { return nil }
	closed := func() map[string]string { return map[string]string{"inventory": "closed", "content": "closed"} }
	oneOpen := func() map[string]string { return map[string]string{"inventory": "open", "content": "closed"} }
	cases := []struct {
		name         string
		ready        bool
		redis        func(context.Context) error
		breakers     func() map[string]string
		status       int
		body         string
		degraded     []string
		redisState   string
		breakerState string // of inventory
	}{
		{"all well", true, up, closed, 200, "ready", nil, "up", "closed"},
		{"redis down is degraded, still ready", true, down, closed, 200, "degraded", []string{"redis"}, "down", "closed"},
		{"open breaker is degraded, still ready", true, up, oneOpen, 200, "degraded", []string{"upstream:inventory"}, "up", "open"},
		{"both", true, down, oneOpen, 200, "degraded", []string{"redis", "upstream:inventory"}, "down", "open"},
		{"not ready", false, up, closed, 503, "not_ready", nil, "", "closed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := adminServer(t, AdminOptions{Ready: func() bool { return tc.ready }, Redis: tc.redis, Breakers: tc.breakers})
			a := call(t, c, "GET", "/readyz", "")
			if rs, _ := a.body["redis"].(string); a.status != tc.status || a.body["status"] != tc.body || rs != tc.redisState {
				t.Fatalf("got %d %v", a.status, a.body)
			}
			if br, _ := a.body["breakers"].(map[string]any); br["inventory"] != tc.breakerState {
				t.Errorf("breakers: %v", a.body["breakers"])
			}
			var deg []string
			if l, ok := a.body["degraded"].([]any); ok {
				for _, v := range l {
					deg = append(deg, v.(string))
				}
			}
			if strings.Join(deg, ",") != strings.Join(tc.degraded, ",") {
				t.Errorf("degraded %v, want %v", deg, tc.degraded)
			}
		})
	}
}

// TestNotReadyChecksNoRedis: a /readyz while the edge is not ready (the
// shutdown began: README, Graceful shutdown, step 1) is 503 not_ready at
// once, without the Redis check: it waited for that check whenever the
// shared result had expired, up to RedisCheckTimeout with a slow Redis
// (this one never answers: 1 s), so a balancer polling a draining edge
// learnt of the drain that much later, and the draining edge kept sending
// the check's commands to Redis.
func TestNotReadyChecksNoRedis(t *testing.T) {
	var checks atomic.Int64
	stalled := func(ctx context.Context) error { // a Redis that answers nothing
		checks.Add(1)
		<-ctx.Done()
		return ctx.Err()
	}
	c := adminServer(t, AdminOptions{Ready: func() bool { return false }, Redis: stalled,
		Breakers: func() map[string]string { return map[string]string{"inventory": "closed"} }})
	a := call(t, c, "GET", "/readyz", "")
	if a.status != 503 || a.body["status"] != "not_ready" {
		t.Fatalf("got %d %v, want 503 not_ready", a.status, a.body)
	}
	if n := checks.Load(); n != 0 {
		t.Errorf("%d Redis checks for a not-ready answer, want none", n)
	}
	if _, ok := a.body["redis"]; ok {
		t.Errorf("redis %v in a not-ready answer that checked none", a.body["redis"])
	}
}

// TestReadinessRedisErrorIsAKind: the open probe says what kind of
// failure made Redis "down", never the error's text, which names internal
// addresses (it did; found by an audit).
func TestReadinessRedisErrorIsAKind(t *testing.T) {
	cases := []struct {
		err  error
		kind string
	}{
		{errors.New("dial tcp 10.0.3.4:6379: connect: connection refused"), "connection refused"},
		{fmt.Errorf("ping: %w", context.DeadlineExceeded), "timeout"},
		{&net.OpError{Op: "dial", Net: "tcp", Err: timeoutErr{}}, "timeout"},
		{errors.New("WRONGPASS invalid username-password pair or user is disabled."), "authentication failed"},
		{errors.New("NOAUTH Authentication required."), "authentication failed"},
		{errors.New("NOPERM this user has no permissions to run the 'ping' command"), "permission denied"},
		{errors.New("LOADING Redis is loading the dataset in memory"), "loading"},
		{errors.New("READONLY You can't write against a read only replica."), "read only"},
		{errors.New("dial tcp: lookup redis.internal.example on 10.0.0.2:53: no such host"), "error"},
	}
	for _, tc := range cases {
		c := adminServer(t, AdminOptions{Redis: func(context.Context) error { return tc.err }})
		a := call(t, c, "GET", "/readyz", "")
		if a.body["redis"] != "down" || a.body["redis_error"] != tc.kind {
			t.Errorf("%v: redis %v, redis_error %q, want down, %q", tc.err, a.body["redis"], a.body["redis_error"], tc.kind)
		}
		if raw, _ := json.Marshal(a.body); strings.Contains(string(raw), "10.0.") || strings.Contains(string(raw), "internal.example") {
			t.Errorf("%v: the probe shows an address: %s", tc.err, raw)
		}
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestIsLoopback(t *testing.T) {
	cases := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:9091", true},
		{"127.9.9.9:9091", true},
		{"[::1]:9091", true},
		{"localhost:9091", true},
		{":9091", false},
		{"0.0.0.0:9091", false},
		{"[::]:9091", false},
		{"10.0.0.5:9091", false},
		{"admin.internal:9091", false},
		{"garbage", false},
	}
	for _, tc := range cases {
		t.Run(tc.addr, func(t *testing.T) {
			if got := IsLoopback(tc.addr); got != tc.want {
				t.Errorf("IsLoopback(%q) = %v, want %v", tc.addr, got, tc.want)
			}
		})
	}
}

// TestAdminRefusesForeignPages: a page of another origin (a cross-site
// form POST, a DNS-rebinding page under its own name) gets 403, a body
// that is not JSON 415/400; tools, probes and the admin's own page pass.
// The listener is real TCP on 127.0.0.1, so the port check runs.
func TestAdminRefusesForeignPages(t *testing.T) {
	var purges atomic.Int64
	start := func(token string) string {
		a, err := NewAdmin(AdminOptions{
			Token: token, Metrics: NewMetrics(MetricsOptions{}),
			Purge:  func(context.Context, int64) error { purges.Add(1); return nil },
			Reload: func() error { return nil },
		})
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &fasthttp.Server{Handler: a.Handler(), MaxRequestBodySize: 1024}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Shutdown() })
		return ln.Addr().String()
	}
	open := start("")
	withToken := start("s3cret-admin-token")
	_, port, _ := net.SplitHostPort(open)
	c := &fasthttp.Client{}
	for _, tc := range []struct {
		name   string
		addr   string // the listener to call
		method string
		path   string
		hdr    []string // name, value pairs; "Host" replaces the Host
		body   string
		want   int
	}{
		{"curl: loopback address", open, "POST", "/admin/purge?dealer_id=1", nil, "", 200},
		{"localhost by name", open, "GET", "/metrics", []string{"Host", "localhost:" + port}, "", 200},
		{"IPv6 loopback", open, "GET", "/healthz", []string{"Host", "[::1]:" + port}, "", 200},
		{"the admin's own page POSTs", open, "POST", "/admin/reload", []string{"Origin", "http://" + open, "Sec-Fetch-Site", "same-origin"}, "", 200},
		{"JSON body", open, "POST", "/admin/reload", []string{"Content-Type", "application/json; charset=utf-8"}, `{"why":"test"}`, 200},
		{"cross-site form POST (the audit's)", open, "POST", "/admin/purge?dealer_id=1", []string{"Origin", "https://evil.example", "Content-Type", "text/plain"}, "x", 403},
		{"cross-site POST without a body", open, "POST", "/admin/reload", []string{"Origin", "https://evil.example"}, "", 403},
		{"Origin null", open, "POST", "/admin/reload", []string{"Origin", "null"}, "", 403},
		{"another port of localhost", open, "POST", "/admin/reload", []string{"Origin", "http://127.0.0.1:8080"}, "", 403},
		{"Sec-Fetch-Site cross-site", open, "GET", "/metrics", []string{"Sec-Fetch-Site", "cross-site"}, "", 403},
		{"Sec-Fetch-Site same-site", open, "GET", "/metrics", []string{"Sec-Fetch-Site", "same-site"}, "", 403},
		{"DNS rebinding: foreign Host", open, "GET", "/metrics", []string{"Host", "evil.example:" + port}, "", 403},
		{"foreign Host on a probe", open, "GET", "/readyz", []string{"Host", "evil.example"}, "", 403},
		{"loopback Host, other port", open, "GET", "/metrics", []string{"Host", "127.0.0.1:1"}, "", 403},
		{"loopback Host without port", open, "GET", "/metrics", []string{"Host", "localhost"}, "", 403},
		{"localhost look-alike", open, "GET", "/metrics", []string{"Host", "localhost.evil.example:" + port}, "", 403},
		{"text/plain body", open, "POST", "/admin/purge?dealer_id=1", []string{"Content-Type", "text/plain"}, "dealer_id=1", 415},
		{"form body", open, "POST", "/admin/reload", []string{"Content-Type", "application/x-www-form-urlencoded"}, "a=b", 415},
		{"bad JSON body", open, "POST", "/admin/reload", []string{"Content-Type", "application/json"}, "{", 400},
		{"token set: any Host with the token", withToken, "GET", "/metrics", []string{"Host", "edge.internal:9091", "Authorization", "Bearer s3cret-admin-token"}, "", 200},
		{"token set: cross-origin still refused", withToken, "POST", "/admin/reload", []string{"Host", "edge.internal:9091", "Origin", "https://evil.example", "Authorization", "Bearer s3cret-admin-token"}, "", 403},
		// Authentication comes before the body's rules: a caller without
		// the token learns nothing of what a state-changing endpoint takes.
		{"token set: no token, text/plain body", withToken, "POST", "/admin/purge?dealer_id=1", []string{"Host", "edge.internal:9091", "Content-Type", "text/plain"}, "dealer_id=1", 401},
		{"token set: no token, bad JSON body", withToken, "POST", "/admin/reload", []string{"Host", "edge.internal:9091", "Content-Type", "application/json"}, "{", 401},
		{"token set: wrong token, form body", withToken, "POST", "/admin/reload", []string{"Host", "edge.internal:9091", "Authorization", "Bearer wrong", "Content-Type", "application/x-www-form-urlencoded"}, "a=b", 401},
		{"token set: the token, text/plain body", withToken, "POST", "/admin/reload", []string{"Host", "edge.internal:9091", "Authorization", "Bearer s3cret-admin-token", "Content-Type", "text/plain"}, "x", 415},
		{"token set: own origin", withToken, "POST", "/admin/reload", []string{"Host", "edge.internal:9091", "Origin", "http://edge.internal:9091", "Authorization", "Bearer s3cret-admin-token"}, "", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			req.Header.SetMethod(tc.method)
			req.SetRequestURI("http://" + tc.addr + tc.path)
			for i := 0; i+1 < len(tc.hdr); i += 2 {
				if tc.hdr[i] == "Host" {
					req.UseHostHeader = true
					req.Header.SetHost(tc.hdr[i+1])
					continue
				}
				req.Header.Set(tc.hdr[i], tc.hdr[i+1])
			}
			if tc.body != "" {
				req.SetBodyString(tc.body)
			}
			before := purges.Load()
			if err := c.DoTimeout(req, resp, 5*time.Second); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode() != tc.want {
				t.Fatalf("%d %s, want %d", resp.StatusCode(), resp.Body(), tc.want)
			}
			if tc.want != 200 {
				if ct := string(resp.Header.ContentType()); ct != "application/problem+json" {
					t.Errorf("Content-Type %q", ct)
				}
				if purges.Load() != before {
					t.Error("a refused request purged")
				}
			}
		})
	}
}

func TestLoopbackHost(t *testing.T) {
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9091}
	for _, tc := range []struct {
		host string
		want bool
	}{
		{"127.0.0.1:9091", true}, {"localhost:9091", true}, {"LOCALHOST:9091", true}, {"app.localhost:9091", true},
		{"[::1]:9091", true}, {"127.8.9.10:9091", true},
		{"127.0.0.1:9092", false}, {"127.0.0.1", false}, {"10.0.0.1:9091", false}, {"evil.example:9091", false},
		{"localhost.evil.example:9091", false}, {"", false}, {"[::1]", false}, {"0.0.0.0:9091", false},
	} {
		if got := loopbackHost(tc.host, local); got != tc.want {
			t.Errorf("loopbackHost(%q) = %v, want %v", tc.host, got, tc.want)
		}
	}
	if !loopbackHost("127.0.0.1:80", &net.TCPAddr{Port: 80}) || !loopbackHost("localhost", &net.TCPAddr{Port: 80}) {
		t.Error("port 80 may be left out")
	}
}

// TestAdminAllowListsHead: a 405 lists in Allow every method the endpoint
// takes (RFC 9110 section 10.2.1): a GET endpoint answers HEAD too, so its
// Allow is "GET, HEAD", as the public API's is. Before 2026-11-29 it was
// "GET", though HEAD was served.
func TestAdminAllowListsHead(t *testing.T) {
	c := adminServer(t, AdminOptions{Reload: func() error { return nil }})
	for _, tc := range []struct{ method, uri, allow string }{
		{"POST", "/metrics", "GET, HEAD"},
		{"DELETE", "/healthz", "GET, HEAD"},
		{"PUT", "/", "GET, HEAD"},
		{"GET", "/admin/reload", "POST"},
		{"PATCH", "/admin/purge", "POST"},
	} {
		a := call(t, c, tc.method, tc.uri, "")
		if a.status != 405 || string(a.header.Peek("Allow")) != tc.allow {
			t.Errorf("%s %s: %d Allow %q, want 405 Allow %q", tc.method, tc.uri, a.status, a.header.Peek("Allow"), tc.allow)
		}
	}
}
