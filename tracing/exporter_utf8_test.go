package tracing

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// TestExporterWritesValidUTF8: OTLP strings are protobuf strings, which
// must be UTF-8. A span whose name, attribute key or value, string slice,
// status description or event name holds other bytes is exported with
// U+FFFD for each run of such bytes, and the spans batched with it are exported too.
// Until 2026-11-27 the marshalled request was cut short at the first bad
// string and the collector refused the whole batch.
func TestExporterWritesValidUTF8(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tr := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("scope")
	_, ok1 := tr.Start(context.Background(), "before")
	ok1.End()
	_, bad := tr.Start(context.Background(), "GET /\xff", trace.WithAttributes(
		attribute.String("url.path", "/dealer/\xff\xfe"),
		attribute.String("k\xc3", "v"),
		attribute.StringSlice("list", []string{"ok", "\xe2\x82"}),
	))
	bad.AddEvent("ev\xff")
	bad.SetStatus(codes.Error, "bad \xff")
	bad.End()
	_, ok2 := tr.Start(context.Background(), "after")
	ok2.End()

	r := startReceiver(t)
	e, err := newExporter(r.srv.URL+"/v1/traces", ExportConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ExportSpans(context.Background(), rec.Ended()); err != nil {
		t.Fatalf("export: %v", err)
	}
	if len(r.reqs) != 1 {
		t.Fatalf("%d requests decoded", len(r.reqs))
	}
	names := map[string]bool{}
	for _, s := range r.reqs[0].ResourceSpans[0].ScopeSpans[0].Spans {
		names[s.Name] = true
		if s.Name != "GET /\uFFFD" {
			continue
		}
		got := map[string]string{}
		for _, kv := range s.Attributes {
			got[kv.Key] = kv.Value.GetStringValue()
			if a := kv.Value.GetArrayValue(); a != nil {
				got[kv.Key] = a.Values[0].GetStringValue() + "," + a.Values[1].GetStringValue()
			}
		}
		want := map[string]string{"url.path": "/dealer/\uFFFD", "k\uFFFD": "v", "list": "ok,\uFFFD"}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("attribute %q = %q, want %q (all: %q)", k, got[k], v, got)
			}
		}
		if s.Status.Message != "bad \uFFFD" || len(s.Events) != 1 || s.Events[0].Name != "ev\uFFFD" {
			t.Errorf("status %q events %v", s.Status.Message, s.Events)
		}
	}
	for _, n := range []string{"before", "GET /\uFFFD", "after"} {
		if !names[n] {
			t.Errorf("span %q not exported (got %v)", n, names)
		}
	}
}
