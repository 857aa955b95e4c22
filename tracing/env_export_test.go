package tracing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestHeadersNotValidatedAtStart: an OTEL_EXPORTER_OTLP_HEADERS name that
// is no HTTP token, or a value that decodes to a control character, is
// refused by WithEnv (README "Tracing": "a malformed value stops the start
// and --check-config with the variable's name"). Before 2026-11-27 it was
// accepted and every export then failed in net/http, retried for the
// whole export timeout, so the collector never got a span.
func TestHeadersNotValidatedAtStart(t *testing.T) {
	for _, hv := range []string{"x tenant=a", "x-token=abc%0D%0AX-Evil: 1", "x-token=abc%00"} {
		t.Run(hv, func(t *testing.T) {
			env := map[string]string{EnvHeaders: hv, EnvTimeout: "800"}
			cfg, err := Config{Endpoint: "http://127.0.0.1:1"}.WithEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
			if err != nil {
				return // refused at start: as documented
			}
			r := startReceiver(t)
			e, err := newExporter(r.srv.URL, cfg.Export)
			if err != nil {
				return
			}
			start := time.Now()
			err = e.ExportSpans(context.Background(), recorded(t))
			t.Errorf("%s=%q accepted at start, want it refused; export: calls %d, failed %v after %v: %v",
				EnvHeaders, hv, r.calls.Load(), err != nil, time.Since(start).Round(100*time.Millisecond), err)
		})
	}
}

// TestRetryAfterHTTPDate: the exporter honours Retry-After as an
// HTTP-date as well as in seconds (RFC 9110 10.2.3; README "Tracing":
// "Retry-After honoured, in seconds or as an HTTP-date"). Before
// 2026-11-27 it parsed seconds only and retried a date after its 250 ms
// backoff.
func TestRetryAfterHTTPDate(t *testing.T) {
	var mu sync.Mutex
	var times []time.Time
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		times = append(times, time.Now())
		mu.Unlock()
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After", time.Now().Add(3*time.Second).UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(200)
	}))
	defer srv.Close()
	e, _ := newExporter(srv.URL, ExportConfig{Timeout: 8 * time.Second})
	if err := e.ExportSpans(context.Background(), recorded(t)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(times) != 2 {
		t.Fatalf("%d calls, want 2 (the 503, then the retry)", len(times))
	}
	if gap := times[1].Sub(times[0]); gap < 2*time.Second {
		t.Errorf("retried %v after a 503 with Retry-After 3 s ahead (HTTP-date form), want >= 2s", gap.Round(10*time.Millisecond))
	}
}

// TestServiceNameFromResourceAttributes: service.name given in
// OTEL_RESOURCE_ATTRIBUTES names the service unless OTEL_SERVICE_NAME is
// set, and wins over the file's default (the OpenTelemetry resource
// specification; README "Tracing"). Before 2026-11-27 the edge dropped
// that key and exported service.name=dealer-edge.
func TestServiceNameFromResourceAttributes(t *testing.T) {
	r := startReceiver(t)
	env := map[string]string{EnvTracesEndpoint: r.srv.URL + "/v1/traces", EnvResourceAttributes: "service.name=checkout-edge,team=edge", EnvSampler: "always_on"}
	// The file's values as configs.Default gives them.
	file := Config{Sampler: DefaultSampler, SamplerArg: DefaultSamplerArg, ServiceName: DefaultServiceName}
	cfg, err := file.WithEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	tr, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, sp := tr.Tracer().Start(context.Background(), "x")
	sp.End()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reqs) != 1 {
		t.Fatalf("%d exports, want 1", len(r.reqs))
	}
	got := map[string]string{}
	for _, kv := range r.reqs[0].ResourceSpans[0].Resource.Attributes {
		got[kv.Key] = kv.Value.GetStringValue()
	}
	if got["service.name"] != "checkout-edge" {
		t.Errorf("service.name %q, want checkout-edge from %s (resource %v)", got["service.name"], EnvResourceAttributes, got)
	}
}

// TestShutdownDeadlineHungCollector: Shutdown returns by its deadline
// when the collector accepts and never answers.
func TestShutdownDeadlineHungCollector(t *testing.T) {
	block := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { <-block }))
	defer hung.Close()
	defer close(block)
	tr, err := New(Config{TracesEndpoint: hung.URL, Sampler: SamplerAlwaysOn}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		_, sp := tr.Tracer().Start(context.Background(), "x")
		sp.End()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	_ = tr.Shutdown(ctx)
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("Shutdown took %v, want it back by its 1s deadline", d)
	}
}
