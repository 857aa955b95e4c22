package contracttests

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/aggregator"
	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/cache/ratelimit"
	"github.com/dealer-edge/dealer-edge/contracttests/check"
	"github.com/dealer-edge/dealer-edge/contracttests/procs"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

func loadContract(t testing.TB) *check.Contract {
	t.Helper()
	c, err := check.Public()
	if err != nil {
		t.Fatalf("load OpenAPI document: %v", err)
	}
	return c
}

// scanInternal reports every internal-only field or value in body
// (check.InternalLeaks).
func scanInternal(t testing.TB, where string, body []byte) {
	t.Helper()
	for _, leak := range check.InternalLeaks(body) {
		t.Errorf("%s: %s", where, leak)
	}
}

// env is one edge under test, serving on a loopback port.
type env struct {
	t        testing.TB
	base     string
	fake     *fake.Server
	api      *aggregator.Server
	cache    *cache.Cache
	limiter  *ratelimit.Limiter
	up       *upstream.Client
	contract *check.Contract
	client   *http.Client
	// logs collects everything the edge logged.
	logs *syncBuffer
}

// syncBuffer collects the edge's log output for concurrent readers.
type syncBuffer = procs.Buffer

type envOptions struct {
	redisAddrs []string // empty: miniredis
	settings   func(*aggregator.Settings)
	fake       *fake.Server // shared fake (several edges); nil: a new one
	// backend, when set, wraps the upstream client the edge is given
	// (a service answering what the fake does not).
	backend func(*upstream.Client) aggregator.Backend
}

func startEnv(t testing.TB, o envOptions) *env {
	t.Helper()
	e := &env{t: t, contract: loadContract(t), logs: &syncBuffer{}}
	logger := newTestLogger(e.logs)
	e.fake = o.fake
	if e.fake == nil {
		e.fake = fake.NewServer(fake.Options{})
		if _, err := e.fake.Start("127.0.0.1:0"); err != nil {
			t.Fatalf("start fake: %v", err)
		}
		t.Cleanup(e.fake.Close)
	}
	addrs := o.redisAddrs
	if len(addrs) == 0 {
		mr := miniredis.RunT(t)
		addrs = []string{mr.Addr()}
	}
	// A generous Redis budget: the suite checks the contract, not the
	// budget (the cache and limiter packages' tests do). At 200 ms a busy
	// box (CI running packages side by side) held a call past it now and
	// then: Redis was marked down and the limiter fell back to its local
	// buckets, which admitted 15 requests of TestRateLimit's burst of 10.
	// A dead Redis still fails at once (connection refused, EOF).
	const redisTimeout = 2 * time.Second
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: addrs, ReadTimeout: redisTimeout, WriteTimeout: redisTimeout, DialTimeout: redisTimeout, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	up, err := upstream.New(upstream.Options{BaseURL: "http://" + e.fake.Addr(), Breaker: upstream.BreakerSettings{ConsecutiveFailures: 3, OpenFor: 500 * time.Millisecond, HalfOpenRequests: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(up.Close)
	e.up = up
	e.cache, err = cache.New(cache.Options{Redis: rdb, Logger: logger, ServeStaleOn: aggregator.ServeStaleOn, DropOn: aggregator.DropOn, RedisTimeout: redisTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.cache.Close() })
	e.limiter, err = ratelimit.New(ratelimit.Options{Redis: rdb, Logger: logger, RedisTimeout: redisTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.limiter.Close() })
	var backend aggregator.Backend = up
	if o.backend != nil {
		backend = o.backend(up)
	}
	st := aggregator.DefaultSettings()
	// The suite sends far more than a dealer site would; only the limited
	// plan keeps its low limit (TestRateLimit).
	st.Limits["default"] = ratelimit.Limit{Rate: 1e5, Burst: 1e5}
	if o.settings != nil {
		o.settings(st)
	}
	e.api, err = aggregator.New(aggregator.Options{
		Backend: backend, Cache: e.cache, Limiter: e.limiter,
		KeySecret: []byte("contract-tests-secret-0123456789"),
		Settings:  st, Logger: logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{
		Handler: e.api.Handler(), ErrorHandler: e.api.ErrorHandler,
		ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second, IdleTimeout: 10 * time.Second,
		ReadBufferSize: 8192, MaxRequestBodySize: 1024, NoDefaultServerHeader: true, NoDefaultContentType: true,
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	e.base = "http://" + ln.Addr().String()
	// Compression off: the tests see the bytes the edge sent, and ask for
	// gzip themselves (do decodes a gzip body before checking it).
	e.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableCompression: true}}
	return e
}

// resp is one checked response.
type resp struct {
	status int
	header http.Header
	body   []byte // decoded when the edge sent Content-Encoding: gzip
	wire   int    // bytes of the body as sent
	json   map[string]any
}

// get sends GET path with the given headers ("Name: value"), validates the
// response against the contract and the public boundary, and returns it.
func (e *env) get(path string, headers ...string) *resp {
	e.t.Helper()
	return e.do("GET", path, headers...)
}

func (e *env) do(method, path string, headers ...string) *resp {
	e.t.Helper()
	req, err := http.NewRequest(method, e.base+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	hr, err := e.client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer hr.Body.Close()
	body, err := io.ReadAll(hr.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	r := &resp{status: hr.StatusCode, header: hr.Header, body: body, wire: len(body)}
	if r.body, err = procs.DecodeBody(hr.Header.Get("Content-Encoding"), body); err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	_ = json.Unmarshal(r.body, &r.json)
	e.check(method, req.URL.Path, r)
	return r
}

// check applies the rules every response must keep.
func (e *env) check(method, path string, r *resp) {
	e.t.Helper()
	where := method + " " + path
	rid := r.header.Get("X-Request-ID")
	if rid == "" {
		e.t.Errorf("%s: no X-Request-ID", where)
	}
	scanInternal(e.t, where, r.body)
	if r.status >= 400 {
		if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
			e.t.Errorf("%s: status %d with content type %q", where, r.status, ct)
		}
		if got, _ := r.json["request_id"].(string); got != rid {
			e.t.Errorf("%s: problem request_id %q != X-Request-ID %q", where, got, rid)
		}
		if st, _ := r.json["status"].(float64); int(st) != r.status {
			e.t.Errorf("%s: problem status %v != %d", where, r.json["status"], r.status)
		}
		if r.status >= 500 && r.status != 503 {
			e.t.Errorf("%s: unexpected %d: %s", where, r.status, r.body)
		}
	}
	if method != "GET" || r.status == 405 {
		return // not an operation of the document
	}
	if _, ok := e.contract.OperationPath(path); !ok {
		if r.status != 404 {
			e.t.Errorf("%s: undocumented path answered %d", where, r.status)
		}
		return
	}
	if err := e.contract.Validate(path, r.status, r.header.Get("Content-Type"), r.body); err != nil {
		e.t.Errorf("%s: response %d does not match the OpenAPI document: %v\nbody: %.600s", where, r.status, err, r.body)
	}
}

func (r *resp) code() string { s, _ := r.json["code"].(string); return s }

func (r *resp) items() []map[string]any {
	raw, _ := r.json["items"].([]any)
	out := make([]map[string]any, 0, len(raw))
	for _, it := range raw {
		m, _ := it.(map[string]any)
		out = append(out, m)
	}
	return out
}

func (r *resp) num(field string) int { f, _ := r.json[field].(float64); return int(f) }

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

const (
	keyAlpha   = "X-Api-Key: demo-key-alpha"
	keyBeta    = "X-Api-Key: demo-key-beta"
	keyGamma   = "X-Api-Key: demo-key-gamma"
	keyLimited = "X-Api-Key: demo-key-limited"
)

func isCI() bool { return os.Getenv("CI") != "" }
