package tracing

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestExportTimeoutBoundsTheProcessor: README (Tracing) and
// configs/README document OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT as "one
// export with its retries" in milliseconds, any positive number. Until
// 2026-11-29 New passed the batch processor its queue size, batch size and
// delay but not its export timeout, so the SDK's own
// (OTEL_BSP_EXPORT_TIMEOUT, default 30 s) cancelled every export's context
// at 30 s whatever the exporter was configured with: an operator who set
// 45000 for a collector that asks to be retried in 31 s got the batch
// dropped (export_failed) at 30 s. The test lowers the SDK's bound to 1 s
// (the variable the SDK reads) so that it runs in 2 s: the exporter's 5 s
// must win over it.
func TestExportTimeoutBoundsTheProcessor(t *testing.T) {
	t.Setenv("OTEL_BSP_EXPORT_TIMEOUT", "1000")
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	// As WithEnv reads OTEL_EXPORTER_OTLP_TIMEOUT=5000.
	cfg, err := Config{TracesEndpoint: srv.URL, Sampler: SamplerAlwaysOn}.WithEnv(func(k string) (string, bool) {
		if k == EnvTimeout {
			return "5000", true
		}
		return "", false
	})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := New(cfg, Options{BatchTimeout: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = tr.Shutdown(ctx)
	}()
	_, sp := tr.Tracer().Start(context.Background(), "x")
	sp.End()
	deadline := time.Now().Add(10 * time.Second)
	for calls.Load() < 2 && tr.Dropped().ExportFailed == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if d := tr.Dropped(); d.ExportFailed != 0 || calls.Load() != 2 {
		t.Errorf("export within its 5 s timeout: %d requests, dropped %+v; want the retry after 2 s sent and nothing dropped", calls.Load(), d)
	}
}

// TestProtocolOtherThanHTTPProtobufRefused: the exporter speaks
// http/protobuf only (configs/README.md); until 2026-11-29
// OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL was not read, so grpc started the
// edge and failed every export.
func TestProtocolOtherThanHTTPProtobufRefused(t *testing.T) {
	for _, c := range []struct {
		env     map[string]string
		refused bool
	}{
		{map[string]string{EnvProtocol: "grpc"}, true},
		{map[string]string{EnvTracesProtocol: "http/json"}, true},
		{map[string]string{EnvProtocol: "grpc", EnvTracesProtocol: "http/protobuf"}, false},
		{map[string]string{EnvProtocol: "http/protobuf"}, false},
		{map[string]string{}, false},
	} {
		_, err := Config{Endpoint: "http://c:4318"}.WithEnv(func(k string) (string, bool) { v, ok := c.env[k]; return v, ok })
		if (err != nil) != c.refused {
			t.Errorf("%v: err %v, refused %v", c.env, err, c.refused)
		}
	}
}

// TestTracesURLAppendsToPath: "/v1/traces" goes on the generic endpoint's
// path, before a query (it was appended to the whole string).
func TestTracesURLAppendsToPath(t *testing.T) {
	for in, want := range map[string]string{
		"http://c:4318":          "http://c:4318/v1/traces",
		"http://c:4318/":         "http://c:4318/v1/traces",
		"http://c:4318/otlp/":    "http://c:4318/otlp/v1/traces",
		"http://c:4318?x=1":      "http://c:4318/v1/traces?x=1",
		"https://c/base?t=a%2Fb": "https://c/base/v1/traces?t=a%2Fb",
	} {
		if got := (Config{Endpoint: in}).tracesURL(); got != want {
			t.Errorf("tracesURL(%q) = %q, want %q", in, got, want)
		}
	}
}
