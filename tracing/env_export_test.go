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

// TestHeadersNotValidatedAtStart: README "Tracing": "a malformed value
// stops the start and --check-config with the variable's name". A header
// name that is no HTTP token, or a value that decodes to a control
// character, is accepted by WithEnv and New; then every export fails in
// net/http before it is sent, and is retried as a connection failure for
// the whole export timeout (the batch processor is blocked that long per
// batch), so the collector never gets a span.
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
			t.Errorf("%s=%q accepted at start; export: calls %d, %v after %v: %v",
				EnvHeaders, hv, r.calls.Load(), err != nil, time.Since(start).Round(100*time.Millisecond), err)
		})
	}
}

// TestRetryAfterHTTPDate: README "Tracing": "429, 502, 503, 504 are
// retried with backoff (Retry-After honoured)". RFC 9110 10.2.3 allows
// Retry-After as an HTTP-date as well as seconds; the exporter only parses
// seconds and retries a date form after its 250 ms backoff.
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
		t.Fatalf("%d calls", len(times))
	}
	if gap := times[1].Sub(times[0]); gap < 2*time.Second {
		t.Errorf("retried %v after a 503 with Retry-After 3 s ahead (HTTP-date form), want >= 2s", gap.Round(10*time.Millisecond))
	}
}

// TestServiceNameFromResourceAttributes: the OpenTelemetry resource
// specification, which the README follows for OTEL_* ("that is how the
// OpenTelemetry SDKs read their configuration"): service.name given in
// OTEL_RESOURCE_ATTRIBUTES is the service name unless OTEL_SERVICE_NAME is
// set. The edge drops that key and exports service.name=dealer-edge (the
// file default), so spans land under the wrong service.
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
		t.Fatalf("%d exports", len(r.reqs))
	}
	got := map[string]string{}
	for _, kv := range r.reqs[0].ResourceSpans[0].Resource.Attributes {
		got[kv.Key] = kv.Value.GetStringValue()
	}
	if got["service.name"] != "checkout-edge" {
		t.Errorf("service.name %q, want checkout-edge from %s (resource %v)", got["service.name"], EnvResourceAttributes, got)
	}
}

// TestShutdownDeadlineHungCollector: checks that Shutdown returns by
// its deadline when the collector accepts and never answers, and that a
// healthy collector gets the queued spans at Shutdown.
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
		t.Errorf("Shutdown took %v with a 1s deadline", d)
	}
}
