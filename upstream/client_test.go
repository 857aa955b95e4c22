package upstream

import (
	"bufio"
	"context"
	"errors"
	"net"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/trace"
)

// testServer is a hand-written stand-in for the internal services: it
// records what it receives and answers with whatever the test sets.
type testServer struct {
	addr  string
	srv   *fasthttp.Server
	calls atomic.Int64

	mu      sync.Mutex
	status  int
	body    string
	delay   time.Duration
	held    chan struct{} // while set, requests wait for it to close (hold)
	lastURI string
	lastHdr map[string]string
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	ts := &testServer{status: 200, body: "{}"}
	ts.srv = &fasthttp.Server{Handler: ts.handle, DisablePreParseMultipartForm: true}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.addr = ln.Addr().String()
	go func() { _ = ts.srv.Serve(ln) }()
	t.Cleanup(func() { _ = ts.srv.Shutdown() })
	return ts
}

func (ts *testServer) handle(ctx *fasthttp.RequestCtx) {
	ts.calls.Add(1)
	ts.mu.Lock()
	ts.lastURI = string(ctx.RequestURI())
	ts.lastHdr = map[string]string{}
	for _, h := range []string{"X-Request-ID", "traceparent", "tracestate", "Accept"} {
		if v := ctx.Request.Header.Peek(h); v != nil {
			ts.lastHdr[h] = string(v)
		}
	}
	status, body, delay, held := ts.status, ts.body, ts.delay, ts.held
	ts.mu.Unlock()
	if held != nil {
		<-held
	}
	if delay > 0 {
		time.Sleep(delay)
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBodyString(body)
}

func (ts *testServer) set(status int, body string, delay time.Duration) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.status, ts.body, ts.delay = status, body, delay
}

// hold keeps every request from now on unanswered until release, at the
// latest after backstop (then answered as set) or at the test's end: a call
// that returns meanwhile returned without an answer, whatever the time.
func (ts *testServer) hold(t *testing.T, backstop time.Duration) (release func()) {
	ch := make(chan struct{})
	ts.mu.Lock()
	ts.held = ch
	ts.mu.Unlock()
	var once sync.Once
	release = func() {
		once.Do(func() {
			ts.mu.Lock()
			ts.held = nil
			ts.mu.Unlock()
			close(ch)
		})
	}
	tm := time.AfterFunc(backstop, release)
	t.Cleanup(func() { tm.Stop(); release() })
	return release
}

func (ts *testServer) last() (string, map[string]string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.lastURI, ts.lastHdr
}

func newTestClient(t *testing.T, ts *testServer, mod func(*Options)) *Client {
	t.Helper()
	o := Options{BaseURL: "http://" + ts.addr}
	if mod != nil {
		mod(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestNewValidation(t *testing.T) {
	cases := []struct {
		name  string
		opts  Options
		field string // "" = valid
	}{
		{"valid", Options{BaseURL: "http://127.0.0.1:9090"}, ""},
		{"valid prefix", Options{BaseURL: "https://gw.internal/edge/"}, ""},
		{"valid timeouts", Options{BaseURL: "http://h", Timeouts: map[string]time.Duration{SvcCatalog: time.Second, SvcDealers: 0}}, ""},
		{"missing base", Options{}, "BaseURL"},
		{"bad scheme", Options{BaseURL: "ftp://h"}, "BaseURL"},
		{"no host", Options{BaseURL: "http://"}, "BaseURL"},
		{"query", Options{BaseURL: "http://h/?a=b"}, "BaseURL"},
		{"unparsable", Options{BaseURL: "http://h:port:x"}, "BaseURL"},
		{"negative conns", Options{BaseURL: "http://h", MaxConnsPerHost: -1}, "MaxConnsPerHost"},
		{"unknown service", Options{BaseURL: "http://h", Timeouts: map[string]time.Duration{"billing": time.Second}}, `Timeouts["billing"]`},
		{"negative timeout", Options{BaseURL: "http://h", Timeouts: map[string]time.Duration{SvcMedia: -time.Second}}, `Timeouts["media"]`},
		{"negative open", Options{BaseURL: "http://h", Breaker: BreakerSettings{OpenFor: -1}}, "Breaker.OpenFor"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl, err := New(c.opts)
			if c.field == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				cl.Close()
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.field) {
				t.Fatalf("error %v, want one naming %s", err, c.field)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	c, err := New(Options{BaseURL: "http://h", Timeouts: map[string]time.Duration{SvcInventory: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := map[string]time.Duration{SvcDealers: 800 * time.Millisecond, SvcInventory: time.Second, SvcCatalog: 500 * time.Millisecond, SvcMedia: 500 * time.Millisecond, SvcContent: 800 * time.Millisecond}
	for _, s := range c.all {
		if s.timeout != want[s.name] {
			t.Errorf("%s timeout %v, want %v", s.name, s.timeout, want[s.name])
		}
		if s.hc.MaxConns != DefaultMaxConnsPerHost {
			t.Errorf("%s max conns %d", s.name, s.hc.MaxConns)
		}
	}
	states := c.BreakerStates()
	if len(states) != len(Services) {
		t.Fatalf("states %v", states)
	}
	for _, svc := range Services {
		if states[svc] != BreakerClosed {
			t.Errorf("%s: %q", svc, states[svc])
		}
	}
}

func TestDecodingAndPaths(t *testing.T) {
	ts := newTestServer(t)
	c := newTestClient(t, ts, func(o *Options) { o.BaseURL += "/gw" })
	ctx := context.Background()
	exp := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	price := 12990.0
	cases := []struct {
		name string
		body string
		uri  string
		call func() (any, error)
		want any
	}{
		{
			"key", `{"key_id":"k1","dealer_id":101,"status":"active","expires_at":"2024-01-01T00:00:00Z","plan":"default"}`,
			"/gw/dealers/v1/keys/abc123",
			func() (any, error) { return c.LookupKey(ctx, "abc123") },
			KeyRecord{KeyID: "k1", DealerID: 101, Status: "active", ExpiresAt: &exp, Plan: "default"},
		},
		{
			"dealer", `{"id":101,"name":"Autosalone Alpha S.r.l.","city":"Milano","crm_source_id":"x"}`,
			"/gw/dealers/v1/dealers/101",
			func() (any, error) { return c.Dealer(ctx, 101) },
			Dealer{ID: 101, Name: "Autosalone Alpha S.r.l.", City: "Milano", CRMSourceID: "x"},
		},
		{
			"vehicles", `{"total":7,"items":[{"id_auto":"a","dealer_id":101,"service":"REWIND","make":"Fiat","sale_price_eur":12990,"has_podcast":true,"has_video":false,"updated_at":"2024-01-01T00:00:00Z"}]}`,
			"/gw/inventory/v1/dealers/101/vehicles?service=REWIND&page=2&page_size=5&q=fiat%20panda&catalog_type=vcom&upfit=furgone-isotermico&view=summary",
			func() (any, error) {
				return c.ListVehicles(ctx, 101, VehicleQuery{Service: "REWIND", Page: 2, PageSize: 5, Q: "fiat panda", CatalogType: "vcom", Upfit: "furgone-isotermico"})
			},
			VehiclePage{Total: 7, Items: []Vehicle{{IDAuto: "a", DealerID: 101, Service: "REWIND", Make: "Fiat", SalePrice: &price, HasPodcast: true, UpdatedAt: exp}}},
		},
		{
			"vehicles empty", `{"total":0,"items":null}`,
			"/gw/inventory/v1/dealers/101/vehicles?service=NOS&view=summary",
			func() (any, error) { return c.ListVehicles(ctx, 101, VehicleQuery{Service: "NOS"}) },
			VehiclePage{Items: []Vehicle{}},
		},
		{
			"vehicle escaped", `{"id_auto":"a/b?c"}`,
			"/gw/inventory/v1/dealers/101/vehicles/a%2Fb%3Fc?service=NOS",
			func() (any, error) { return c.Vehicle(ctx, 101, "NOS", "a/b?c") },
			Vehicle{IDAuto: "a/b?c"},
		},
		{
			"vehicle dotdot", `{"id_auto":".."}`,
			"/gw/inventory/v1/dealers/101/vehicles/%2E%2E",
			func() (any, error) { return c.Vehicle(ctx, 101, "", "..") },
			Vehicle{IDAuto: ".."},
		},
		{
			"offers", `{"total":1,"items":[{"id_offerta":5,"quotations":[{"months":36,"km_per_year":15000,"monthly_fee_eur":299.9}]}]}`,
			"/gw/inventory/v1/dealers/102/offers?page=1&q=a%26b%3Dc",
			func() (any, error) { return c.ListOffers(ctx, 102, OfferQuery{Page: 1, Q: "a&b=c"}) },
			OfferPage{Total: 1, Items: []Offer{{IDOfferta: 5}}}, // a listing's offers come without their quotations
		},
		{
			"offers no params", `{"total":0,"items":[]}`,
			"/gw/inventory/v1/dealers/102/offers",
			func() (any, error) { return c.ListOffers(ctx, 102, OfferQuery{}) },
			OfferPage{Items: []Offer{}},
		},
		{
			"offer", `{"id_offerta":9,"slug":"s"}`,
			"/gw/inventory/v1/dealers/103/offers/9",
			func() (any, error) { return c.Offer(ctx, 103, 9) },
			Offer{IDOfferta: 9, Slug: "s"},
		},
		{
			"equipment", `{"version_code":"V 1","standard":[{"code":"S1","name":"Clima","category":"comfort"}],"optionals":[],"packages":[]}`,
			"/gw/catalog/v1/versions/V%201/equipment",
			func() (any, error) { return c.Equipment(ctx, 1, "V 1") },
			Equipment{VersionCode: "V 1", Standard: []EquipmentItem{{Code: "S1", Name: "Clima", Category: "comfort"}}, Optionals: []EquipmentItem{}, Packages: []EquipmentPackage{}},
		},
		{
			"media none", `{}`,
			"/gw/media/v1/dealers/101/vehicles/x",
			func() (any, error) { return c.VehicleMedia(ctx, 101, "x") },
			Media{},
		},
		{
			"content", `{"items":[{"id":1,"type":"faq","slug":"a","title":"T","body_text":"B","updated_at":"2024-01-01T00:00:00Z"}]}`,
			"/gw/content/v1/dealers/101/faq?q=tagliando%20auto&category=servizi",
			func() (any, error) {
				return c.Content(ctx, 101, "faq", ContentFilter{Q: "tagliando auto", Category: "servizi"})
			},
			[]ContentRecord{{ID: 1, Type: "faq", Slug: "a", Title: "T", BodyText: "B", UpdatedAt: exp}},
		},
		{
			"content empty", `{"items":null}`,
			"/gw/content/v1/dealers/101/news?brand=Fiat",
			func() (any, error) { return c.Content(ctx, 101, "news", ContentFilter{Brand: "Fiat"}) },
			[]ContentRecord{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts.set(200, tc.body, 0)
			got, err := tc.call()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("decoded\n %#v\nwant\n %#v", got, tc.want)
			}
			if uri, _ := ts.last(); uri != tc.uri {
				t.Errorf("request URI %q, want %q", uri, tc.uri)
			}
		})
	}
}

func TestEmptyIdentifiersAreNotFoundWithoutCall(t *testing.T) {
	ts := newTestServer(t)
	c := newTestClient(t, ts, nil)
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"key":       func() error { _, err := c.LookupKey(ctx, ""); return err },
		"vehicle":   func() error { _, err := c.Vehicle(ctx, 1, "REWIND", ""); return err },
		"equipment": func() error { _, err := c.Equipment(ctx, 1, ""); return err },
		"media":     func() error { _, err := c.VehicleMedia(ctx, 1, ""); return err },
		"content":   func() error { _, err := c.Content(ctx, 1, "", ContentFilter{}); return err },
	} {
		if err := call(); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if n := ts.calls.Load(); n != 0 {
		t.Errorf("%d calls", n)
	}
}

func TestStatusMapping(t *testing.T) {
	ts := newTestServer(t)
	c := newTestClient(t, ts, func(o *Options) { o.Breaker.ConsecutiveFailures = 100 })
	cases := []struct {
		name   string
		status int
		body   string
		want   error
	}{
		{"ok", 200, `{"id":101}`, nil},
		{"not found", 404, `{"error":"not found"}`, ErrNotFound},
		{"server error", 500, `{}`, ErrUnavailable},
		{"unavailable", 503, ``, ErrUnavailable},
		{"bad request", 400, `{}`, ErrUnavailable},
		{"bad json", 200, `{"id":`, ErrUnavailable},
		{"wrong type", 200, `{"id":"x"}`, ErrUnavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts.set(tc.status, tc.body, 0)
			_, err := c.Dealer(context.Background(), 101)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "upstream dealers: ") {
				t.Errorf("error %q does not name the service", err)
			}
			if errors.Is(err, ErrNotFound) && errors.Is(err, ErrUnavailable) {
				t.Error("both not found and unavailable")
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, err := New(Options{BaseURL: "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Dealer(context.Background(), 1); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("got %v", err)
	}
}

func TestTimeouts(t *testing.T) {
	ts := newTestServer(t)
	// Each call below must end at one timer (the service's 60 ms timeout,
	// the caller's 20 ms deadline or cancellation) while the server holds
	// every request unanswered: what ended it is told by its error, and it
	// must return well before the other timer could have ended it (long,
	// the other services' timeout, or the backstop that releases the
	// server), never by an idle box's slack: with a 150 ms slack a loaded
	// CI box failed a 20 ms deadline's call that took 275 ms.
	const long = 5 * time.Second
	c := newTestClient(t, ts, func(o *Options) {
		o.Timeouts = map[string]time.Duration{SvcCatalog: 60 * time.Millisecond, SvcDealers: long, SvcInventory: long}
		o.Breaker.ConsecutiveFailures = 2
	})
	ts.hold(t, long)

	t.Run("service timeout", func(t *testing.T) {
		start := time.Now()
		_, err := c.Equipment(context.Background(), 1, "v")
		if d := time.Since(start); d > long/2 {
			t.Errorf("took %v: not ended by the 60 ms service timeout", d)
		}
		if !errors.Is(err, ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("caller deadline is earlier", func(t *testing.T) {
		checkCallerDeadlines(t, c, context.WithTimeout, long/2)
	})
	t.Run("cancellation returns early", func(t *testing.T) {
		for i := 0; i < 3; i++ {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(20*time.Millisecond, cancel)
			start := time.Now()
			_, err := c.ListOffers(ctx, 1, OfferQuery{})
			if d := time.Since(start); d > long/2 {
				t.Errorf("took %v: not ended by the cancellation after 20 ms", d)
			}
			if !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v", err)
			}
		}
		if st := c.BreakerStates()[SvcInventory]; st != BreakerClosed {
			t.Errorf("cancellations tripped the breaker: %s", st)
		}
	})
	t.Run("already done: no call", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		before := ts.calls.Load()
		if _, err := c.Dealer(ctx, 1); !errors.Is(err, context.Canceled) || !errors.Is(err, ErrUnavailable) {
			t.Fatalf("got %v", err)
		}
		if ts.calls.Load() != before {
			t.Error("a call was made with a done context")
		}
	})
}

func TestBreaker(t *testing.T) {
	ts := newTestServer(t)
	var mu sync.Mutex
	var changes []string
	var calls atomic.Int64
	c := newTestClient(t, ts, func(o *Options) {
		o.Breaker = BreakerSettings{ConsecutiveFailures: 3, OpenFor: 150 * time.Millisecond, HalfOpenRequests: 1}
		o.OnBreakerChange = func(svc, from, to string) {
			mu.Lock()
			changes = append(changes, svc+":"+from+"->"+to)
			mu.Unlock()
		}
		o.OnCall = func(string, time.Duration, error) { calls.Add(1) }
	})
	ctx := context.Background()

	// 404s are answers, not failures.
	ts.set(404, `{}`, 0)
	for i := 0; i < 10; i++ {
		if _, err := c.Vehicle(ctx, 1, "REWIND", "x"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("got %v", err)
		}
	}
	if st := c.BreakerStates()[SvcInventory]; st != BreakerClosed {
		t.Fatalf("404s tripped the breaker: %s", st)
	}

	// Three failures open it.
	ts.set(500, `{}`, 0)
	for i := 0; i < 3; i++ {
		if _, err := c.Vehicle(ctx, 1, "REWIND", "x"); !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrCircuitOpen) {
			t.Fatalf("failure %d: %v", i, err)
		}
	}
	if st := c.BreakerStates(); st[SvcInventory] != BreakerOpen || st[SvcDealers] != BreakerClosed {
		t.Fatalf("states %v", st)
	}

	// Open: fails fast, no network call, other services unaffected.
	before := ts.calls.Load()
	start := time.Now()
	for i := 0; i < 20; i++ {
		_, err := c.ListVehicles(ctx, 1, VehicleQuery{Service: "REWIND"})
		if !errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrCircuitOpen) {
			t.Fatalf("open breaker: %v", err)
		}
	}
	if d := time.Since(start); d > 200*time.Millisecond { // no network wait (each would cost the 800 ms timeout); the bound leaves room for a loaded VM
		t.Errorf("20 refused calls took %v", d)
	}
	if n := ts.calls.Load() - before; n != 0 {
		t.Errorf("open breaker let %d calls through", n)
	}
	ts.set(200, `{"id":1}`, 0)
	if _, err := c.Dealer(ctx, 1); err != nil {
		t.Errorf("dealers affected by the inventory breaker: %v", err)
	}

	// After OpenFor: half-open, one trial call, success closes.
	time.Sleep(170 * time.Millisecond)
	ts.set(200, `{"total":0,"items":[]}`, 0)
	if _, err := c.ListVehicles(ctx, 1, VehicleQuery{Service: "REWIND"}); err != nil {
		t.Fatalf("trial call: %v", err)
	}
	if st := c.BreakerStates()[SvcInventory]; st != BreakerClosed {
		t.Fatalf("after a successful trial: %s", st)
	}
	mu.Lock()
	got := strings.Join(changes, " ")
	mu.Unlock()
	want := "inventory:closed->open inventory:open->half-open inventory:half-open->closed"
	if got != want {
		t.Errorf("changes %q, want %q", got, want)
	}
	if calls.Load() != 10+3+20+1+1 {
		t.Errorf("OnCall saw %d calls", calls.Load())
	}
}

func TestTraceHeaders(t *testing.T) {
	ts := newTestServer(t)
	c := newTestClient(t, ts, nil)
	tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	// A span in the context (a traced request) names the call instead.
	sid, _ := trace.SpanIDFromHex("1112131415161718")
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	state, _ := trace.ParseTraceState("ours=1,theirs=2")
	spanCtx := trace.ContextWithSpanContext(WithTraceContext(context.Background(), "req-6", tp, "client=x"),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, TraceState: state}))
	cases := []struct {
		name    string
		ctx     context.Context
		wantRID string
		wantTP  string
		wantTS  string
	}{
		{"both", WithTrace(context.Background(), "req-1", tp), "req-1", tp, ""},
		{"request id only", WithTrace(context.Background(), "req-2", ""), "req-2", "", ""},
		{"none", context.Background(), "", "", ""},
		{"unsafe dropped", WithTrace(context.Background(), "a\r\nX-Evil: 1", tp), "", tp, ""},
		{"tracestate with traceparent", WithTraceContext(context.Background(), "req-3", tp, "a=1,b=2"), "req-3", tp, "a=1,b=2"},
		{"tracestate kept by WithTrace", WithTrace(WithTraceContext(context.Background(), "x", tp, "a=1"), "req-4", tp), "req-4", tp, "a=1"},
		{"tracestate without traceparent dropped", WithTraceContext(context.Background(), "req-5", "", "a=1"), "req-5", "", ""},
		{"unsafe tracestate dropped", WithTraceContext(context.Background(), "req-7", tp, "a=1\r\nX-Evil: 1"), "req-7", tp, ""},
		{"span context wins", spanCtx, "req-6", "00-4bf92f3577b34da6a3ce929d0e0e4736-1112131415161718-01", "ours=1,theirs=2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts.set(200, `{}`, 0)
			if _, err := c.Dealer(tc.ctx, 1); err != nil {
				t.Fatal(err)
			}
			_, h := ts.last()
			if h["X-Request-ID"] != tc.wantRID || h["traceparent"] != tc.wantTP || h["tracestate"] != tc.wantTS {
				t.Errorf("headers %v", h)
			}
			if h["Accept"] != "application/json" {
				t.Errorf("accept %q", h["Accept"])
			}
		})
	}
	rid, gotTP := TraceFrom(WithTrace(context.Background(), "r", "t"))
	if rid != "r" || gotTP != "t" {
		t.Errorf("TraceFrom: %q %q", rid, gotTP)
	}
	if rid, gotTP := TraceFrom(context.Background()); rid != "" || gotTP != "" {
		t.Errorf("TraceFrom of a bare context: %q %q", rid, gotTP)
	}
}

func TestClosed(t *testing.T) {
	ts := newTestServer(t)
	c := newTestClient(t, ts, nil)
	c.Close()
	if _, err := c.Dealer(context.Background(), 1); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("got %v", err)
	}
	if ts.calls.Load() != 0 {
		t.Error("closed client made a call")
	}
}

func BenchmarkDealer(b *testing.B) {
	ts := &testServer{status: 200, body: `{"id":101,"name":"Autosalone Alpha S.r.l.","brand_name":"Alpha Motori","city":"Milano","province":"MI","primary_domain":"www.alphamotori.it"}`}
	ts.srv = &fasthttp.Server{Handler: ts.handle}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = ts.srv.Serve(ln) }()
	defer func() { _ = ts.srv.Shutdown() }()
	c, err := New(Options{BaseURL: "http://" + ln.Addr().String()})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(WithTrace(context.Background(), "bench", ""), time.Minute)
	defer cancel()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Dealer(ctx, 101); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// checkCallerDeadlines makes three Dealer calls (more than the breaker's
// ConsecutiveFailures) under a 20 ms context made by withTimeout against a
// server slower than that: each must end at the caller's deadline (within
// slack) with ErrUnavailable wrapping context.DeadlineExceeded, and the
// breaker must stay closed (the caller's deadline says nothing of the
// service).
// checkCallerDeadlines: calls of c with a 20 ms deadline from withTimeout,
// against a server that holds them (testServer.hold), end with the
// caller's error, within bound (well before the dealers' timeout or the
// server's backstop), and leave the breaker closed.
func checkCallerDeadlines(t *testing.T, c *Client, withTimeout func(context.Context, time.Duration) (context.Context, context.CancelFunc), bound time.Duration) {
	t.Helper()
	for i := 0; i < 3; i++ {
		ctx, cancel := withTimeout(context.Background(), 20*time.Millisecond)
		start := time.Now()
		_, err := c.Dealer(ctx, 1)
		cancel()
		if d := time.Since(start); d > bound {
			t.Errorf("took %v: not ended by the 20 ms deadline", d)
		}
		if !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v", err)
		}
	}
	if st := c.BreakerStates()[SvcDealers]; st != BreakerClosed {
		t.Errorf("caller deadlines tripped the breaker: %s", st)
	}
}

// TestContentBreakerPerType: one content type failing every call opens its
// own breaker only; the other types are still called and answered, and the
// content service's reported state is the worst of its types'.
func TestContentBreakerPerType(t *testing.T) {
	var newsDown atomic.Bool
	newsDown.Store(true)
	addr, _ := newCountingServer(t, func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("application/json")
		if newsDown.Load() && strings.HasSuffix(string(ctx.Path()), "/news") {
			ctx.SetStatusCode(503)
			return
		}
		ctx.SetBodyString(`{"items":[]}`)
	})
	var mu sync.Mutex
	var serviceChanges, typeChanges []string
	c, err := New(Options{
		BaseURL: "http://" + addr,
		Breaker: BreakerSettings{ConsecutiveFailures: 3, OpenFor: 200 * time.Millisecond, HalfOpenRequests: 1},
		OnBreakerChange: func(svc, from, to string) {
			mu.Lock()
			serviceChanges = append(serviceChanges, svc+":"+from+">"+to)
			mu.Unlock()
		},
		OnContentTypeBreakerChange: func(ct, from, to string) {
			mu.Lock()
			typeChanges = append(typeChanges, ct+":"+from+">"+to)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		if _, err := c.Content(ctx, 101, ContentNews, ContentFilter{Summary: true}); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("news call %d: %v", i, err)
		}
	}
	if _, err := c.Content(ctx, 101, ContentNews, ContentFilter{}); !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("news after 5 failures: %v, want the breaker open", err)
	}
	for _, ct := range ContentTypes {
		if ct == ContentNews {
			continue
		}
		if _, err := c.Content(ctx, 101, ct, ContentFilter{}); err != nil {
			t.Errorf("%s with news's breaker open: %v", ct, err)
		}
		if _, err := c.ContentPage(ctx, 101, ct, ContentFilter{}, func([]ContentRecord) []int32 { return nil }); err != nil {
			t.Errorf("%s page with news's breaker open: %v", ct, err)
		}
	}
	states := c.ContentBreakerStates()
	for _, ct := range ContentTypes {
		want := BreakerClosed
		if ct == ContentNews {
			want = BreakerOpen
		}
		if states[ct] != want {
			t.Errorf("breaker of %s: %s, want %s", ct, states[ct], want)
		}
	}
	if st := c.BreakerStates()[SvcContent]; st != BreakerOpen {
		t.Errorf("content service state %s, want open (the worst of its types)", st)
	}
	// News back: after the open period one trial call closes its breaker,
	// and the service's state with it.
	newsDown.Store(false)
	time.Sleep(250 * time.Millisecond)
	if _, err := c.Content(ctx, 101, ContentNews, ContentFilter{}); err != nil {
		t.Fatalf("news back, trial call: %v", err)
	}
	if st := c.BreakerStates()[SvcContent]; st != BreakerClosed {
		t.Errorf("content service state %s after news recovered, want closed", st)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"content:closed>open", "content:open>half-open", "content:half-open>closed"}; !reflect.DeepEqual(serviceChanges, want) {
		t.Errorf("service changes %v, want %v", serviceChanges, want)
	}
	if want := []string{"news:closed>open", "news:open>half-open", "news:half-open>closed"}; !reflect.DeepEqual(typeChanges, want) {
		t.Errorf("type changes %v, want %v", typeChanges, want)
	}
}

// TestCallerEndDuringBodyRead: the caller's own deadline (earlier than the
// service's timeout) running out, or the caller cancelling, while the body
// of a 200 is read ends the call then, with an error wrapping
// ErrUnavailable and the context's error, which the breaker does not
// count: as before the headers (checkCallerDeadlines, "cancellation
// returns early"). It was reported as a service timeout ("timeout after
// 2s reading the body"), which opened the breaker, and a cancelled caller
// waited for the service's timeout.
func TestCallerEndDuringBodyRead(t *testing.T) {
	cases := []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		}, context.DeadlineExceeded},
		{"deadline of WithTimeout (not watched)", func() (context.Context, context.CancelFunc) {
			return WithTimeout(context.Background(), 50*time.Millisecond)
		}, context.DeadlineExceeded},
		{"cancel", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Headers at once, then a body that stalls.
			addr := rawServer(t, func(w *bufio.Writer) {
				w.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"id\":1,")
			})
			c, err := New(Options{BaseURL: "http://" + addr,
				Timeouts: map[string]time.Duration{SvcDealers: 2 * time.Second},
				Breaker:  BreakerSettings{ConsecutiveFailures: 2}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for i := 0; i < 3; i++ { // more than ConsecutiveFailures
				ctx, cancel := tc.ctx()
				start := time.Now()
				_, err := c.Dealer(ctx, 1)
				cancel()
				if d := time.Since(start); d > time.Second {
					t.Errorf("call %d took %v, want about 50ms", i, d)
				}
				if !errors.Is(err, ErrUnavailable) || !errors.Is(err, tc.want) {
					t.Fatalf("call %d: got %v, want ErrUnavailable wrapping %v", i, err, tc.want)
				}
			}
			if st := c.BreakerStates()[SvcDealers]; st != BreakerClosed {
				t.Errorf("the caller's end tripped the breaker: %s", st)
			}
		})
	}
}
