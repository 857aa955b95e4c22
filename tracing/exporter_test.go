package tracing

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// receiver is an OTLP/HTTP traces endpoint decoding every request with the
// collector's own message type. status, when set, answers the n-th
// request (from 0) with that status instead.
type receiver struct {
	srv      *httptest.Server
	mu       sync.Mutex
	reqs     []*coltracepb.ExportTraceServiceRequest
	headers  []http.Header
	calls    atomic.Int32
	statuses []int
}

func startReceiver(t *testing.T, statuses ...int) *receiver {
	t.Helper()
	r := &receiver{statuses: statuses}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		n := int(r.calls.Add(1)) - 1
		if n < len(r.statuses) && r.statuses[n] != 200 {
			w.WriteHeader(r.statuses[n])
			return
		}
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			body = zr
		}
		b, _ := io.ReadAll(body)
		var msg coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &msg); err != nil || req.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "bad", 400)
			return
		}
		r.mu.Lock()
		r.reqs = append(r.reqs, &msg)
		r.headers = append(r.headers, req.Header.Clone())
		r.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// recorded makes finished spans through a real SDK provider: a server span
// continuing a remote parent, with every attribute type, an event, a link
// and an error status, and a client child of it.
func recorded(t *testing.T) []sdktrace.ReadOnlySpan {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "edge-test"))))
	tr := tp.Tracer("scope-a", trace.WithInstrumentationVersion("1.2.3"))
	remote := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6}, TraceFlags: trace.FlagsSampled, Remote: true,
	})
	link := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{9}, SpanID: trace.SpanID{8}})
	ctx, srv := tr.Start(trace.ContextWithRemoteSpanContext(context.Background(), remote), "GET /x",
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithLinks(trace.Link{SpanContext: link, Attributes: []attribute.KeyValue{attribute.String("why", "batch")}}),
		trace.WithAttributes(
			attribute.Bool("b", true), attribute.Int64("i", -7), attribute.Float64("f", 1.5), attribute.String("s", "v"),
			attribute.BoolSlice("bs", []bool{true, false}), attribute.Int64Slice("is", []int64{1, 2}),
			attribute.Float64Slice("fs", []float64{0.5}), attribute.StringSlice("ss", []string{"x", "y"}),
		))
	_, cl := tr.Start(ctx, "GET inventory", trace.WithSpanKind(trace.SpanKindClient))
	cl.SetStatus(codes.Ok, "")
	cl.End()
	srv.AddEvent("retry", trace.WithAttributes(attribute.Int("attempt", 2)))
	srv.SetStatus(codes.Error, "upstream down")
	srv.End()
	return rec.Ended()
}

// TestExporterWireFormat: what the exporter sends decodes as the
// collector's ExportTraceServiceRequest with every field of the spans.
func TestExporterWireFormat(t *testing.T) {
	for _, gz := range []bool{false, true} {
		t.Run(map[bool]string{false: "identity", true: "gzip"}[gz], func(t *testing.T) {
			r := startReceiver(t)
			e, err := newExporter(r.srv.URL+"/v1/traces", ExportConfig{Gzip: gz, Headers: map[string]string{"Authorization": "Bearer tok"}})
			if err != nil {
				t.Fatal(err)
			}
			spans := recorded(t)
			if err := e.ExportSpans(context.Background(), spans); err != nil {
				t.Fatal(err)
			}
			if len(r.reqs) != 1 {
				t.Fatalf("%d requests decoded", len(r.reqs))
			}
			if got := r.headers[0].Get("Authorization"); got != "Bearer tok" {
				t.Errorf("Authorization %q", got)
			}
			if gz != (r.headers[0].Get("Content-Encoding") == "gzip") {
				t.Errorf("Content-Encoding %q", r.headers[0].Get("Content-Encoding"))
			}
			rss := r.reqs[0].ResourceSpans
			if len(rss) != 1 || len(rss[0].ScopeSpans) != 1 || len(rss[0].ScopeSpans[0].Spans) != 2 {
				t.Fatalf("shape: %v", rss)
			}
			if kv := rss[0].Resource.Attributes; len(kv) != 1 || kv[0].Key != "service.name" || kv[0].Value.GetStringValue() != "edge-test" {
				t.Errorf("resource %v", kv)
			}
			sc := rss[0].ScopeSpans[0].Scope
			if sc.Name != "scope-a" || sc.Version != "1.2.3" {
				t.Errorf("scope %v", sc)
			}
			var srv, cl *tracepb.Span
			for _, s := range rss[0].ScopeSpans[0].Spans {
				if s.Kind == tracepb.Span_SPAN_KIND_SERVER {
					srv = s
				} else {
					cl = s
				}
			}
			if srv == nil || cl == nil || cl.Kind != tracepb.Span_SPAN_KIND_CLIENT {
				t.Fatalf("kinds: %v", rss[0].ScopeSpans[0].Spans)
			}
			orig := map[string]sdktrace.ReadOnlySpan{}
			for _, s := range spans {
				orig[s.Name()] = s
			}
			o := orig["GET /x"]
			tid, sid := o.SpanContext().TraceID(), o.SpanContext().SpanID()
			if !bytes.Equal(srv.TraceId, tid[:]) || !bytes.Equal(srv.SpanId, sid[:]) ||
				!bytes.Equal(srv.ParentSpanId, []byte{4, 5, 6, 0, 0, 0, 0, 0}) || srv.Name != "GET /x" {
				t.Errorf("ids: %x %x %x %q", srv.TraceId, srv.SpanId, srv.ParentSpanId, srv.Name)
			}
			if srv.StartTimeUnixNano != uint64(o.StartTime().UnixNano()) || srv.EndTimeUnixNano != uint64(o.EndTime().UnixNano()) {
				t.Errorf("times %d %d", srv.StartTimeUnixNano, srv.EndTimeUnixNano)
			}
			// Sampled, parent remote and known to be.
			if srv.Flags != 0x301 {
				t.Errorf("server flags %#x, want 0x301", srv.Flags)
			}
			if cl.Flags != 0x101 || !bytes.Equal(cl.ParentSpanId, srv.SpanId) {
				t.Errorf("client flags %#x parent %x", cl.Flags, cl.ParentSpanId)
			}
			if srv.Status.Code != tracepb.Status_STATUS_CODE_ERROR || srv.Status.Message != "upstream down" {
				t.Errorf("server status %v", srv.Status)
			}
			if cl.Status.Code != tracepb.Status_STATUS_CODE_OK {
				t.Errorf("client status %v", cl.Status)
			}
			attrs := map[string]*commonpb.AnyValue{}
			for _, kv := range srv.Attributes {
				attrs[kv.Key] = kv.Value
			}
			checks := map[string]bool{
				"b":  attrs["b"].GetBoolValue(),
				"i":  attrs["i"].GetIntValue() == -7,
				"f":  attrs["f"].GetDoubleValue() == 1.5,
				"s":  attrs["s"].GetStringValue() == "v",
				"bs": len(attrs["bs"].GetArrayValue().GetValues()) == 2 && attrs["bs"].GetArrayValue().Values[0].GetBoolValue(),
				"is": len(attrs["is"].GetArrayValue().GetValues()) == 2 && attrs["is"].GetArrayValue().Values[1].GetIntValue() == 2,
				"fs": len(attrs["fs"].GetArrayValue().GetValues()) == 1 && attrs["fs"].GetArrayValue().Values[0].GetDoubleValue() == 0.5,
				"ss": len(attrs["ss"].GetArrayValue().GetValues()) == 2 && attrs["ss"].GetArrayValue().Values[1].GetStringValue() == "y",
			}
			for k, ok := range checks {
				if !ok {
					t.Errorf("attribute %s: %v", k, attrs[k])
				}
			}
			if len(srv.Events) != 1 || srv.Events[0].Name != "retry" || srv.Events[0].Attributes[0].Value.GetIntValue() != 2 || srv.Events[0].TimeUnixNano == 0 {
				t.Errorf("events %v", srv.Events)
			}
			if len(srv.Links) != 1 || srv.Links[0].TraceId[0] != 9 || srv.Links[0].SpanId[0] != 8 || srv.Links[0].Attributes[0].Key != "why" {
				t.Errorf("links %v", srv.Links)
			}
		})
	}
}

// TestExporterRetries: 503 and 429 are retried (Retry-After honoured, all
// within the timeout), 400 is not, and a collector that keeps failing
// ends the export at the timeout with an error.
func TestExporterRetries(t *testing.T) {
	cases := []struct {
		name     string
		statuses []int
		timeout  time.Duration
		wantErr  bool
		calls    int32
	}{
		{"503 then ok", []int{503, 200}, 5 * time.Second, false, 2},
		{"429, 502, 504 then ok", []int{429, 502, 504, 200}, 10 * time.Second, false, 4},
		{"400 is final", []int{400, 200}, 5 * time.Second, true, 1},
		{"keeps failing until the timeout", []int{503, 503, 503, 503, 503, 503, 503, 503, 503, 503}, 700 * time.Millisecond, true, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := startReceiver(t, c.statuses...)
			e, err := newExporter(r.srv.URL, ExportConfig{Timeout: c.timeout})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			err = e.ExportSpans(context.Background(), recorded(t))
			if (err != nil) != c.wantErr {
				t.Fatalf("err %v, want error %v", err, c.wantErr)
			}
			if c.calls > 0 && r.calls.Load() != c.calls {
				t.Errorf("%d calls, want %d", r.calls.Load(), c.calls)
			}
			if c.calls == 0 && (r.calls.Load() < 2 || time.Since(start) > c.timeout+2*time.Second) {
				t.Errorf("%d calls in %v: want retries, ended by the %v timeout", r.calls.Load(), time.Since(start), c.timeout)
			}
			if !c.wantErr && len(r.reqs) != 1 {
				t.Errorf("%d requests decoded", len(r.reqs))
			}
		})
	}
}

// TestExporterCertificates: an https collector signed by the CA of
// OTEL_EXPORTER_OTLP_CERTIFICATE is accepted; without it the export
// fails; a CA file that holds no certificate is an error at start.
func TestExporterCertificates(t *testing.T) {
	r := &receiver{}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.calls.Add(1)
		w.WriteHeader(200)
	}))
	defer r.srv.Close()
	dir := t.TempDir()
	ca := dir + "/ca.pem"
	writePEM(t, ca, r.srv.Certificate().Raw)
	e, err := newExporter(r.srv.URL, ExportConfig{CAFile: ca, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ExportSpans(context.Background(), recorded(t)); err != nil {
		t.Fatalf("with the CA: %v", err)
	}
	plain, _ := newExporter(r.srv.URL, ExportConfig{Timeout: 300 * time.Millisecond})
	if err := plain.ExportSpans(context.Background(), recorded(t)); err == nil {
		t.Error("without the CA: exported")
	}
	bad := dir + "/bad.pem"
	writeFile(t, bad, "not a certificate")
	if _, err := newExporter(r.srv.URL, ExportConfig{CAFile: bad}); err == nil || !strings.Contains(err.Error(), EnvCertificate) {
		t.Errorf("bad CA file: %v", err)
	}
	if _, err := newExporter(r.srv.URL, ExportConfig{ClientCertFile: dir + "/none.pem", ClientKeyFile: dir + "/none.key"}); err == nil {
		t.Error("missing client pair: no error")
	}
}

// TestExporterShutdown: after Shutdown nothing is sent.
func TestExporterShutdown(t *testing.T) {
	r := startReceiver(t)
	e, _ := newExporter(r.srv.URL, ExportConfig{})
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := e.ExportSpans(context.Background(), recorded(t)); err != nil || r.calls.Load() != 0 {
		t.Errorf("after shutdown: %v, %d calls", err, r.calls.Load())
	}
}

func writePEM(t *testing.T, path string, der []byte) {
	t.Helper()
	writeFile(t, path, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}
