package tracing

import (
	"context"
	"fmt"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestServerSpanTracestateBounded: a client's tracestate is kept in the
// spans of its sampled request only within the 512 characters the edge
// also bounds it to when passing it on (upstream.maxTracestate). The
// tracestate is copied into every span of the trace (server, cache,
// upstream calls); before 2026-11-27 any tracestate that parsed was (up
// to 32 members of 256-character values, about 16 KB, or what
// server.max_header_bytes lets in: 6.6 KB here fits the default 8 KiB), so
// one client sending a sampled traceparent with it made every span of its
// requests kilobytes larger in each export.
func TestServerSpanTracestateBounded(t *testing.T) {
	member := func(i, n int) string { return fmt.Sprintf("k%d=%s", i, strings.Repeat("v", n)) }
	list := func(members, n int) string {
		var m []string
		for i := range members {
			m = append(m, member(i, n))
		}
		return strings.Join(m, ",")
	}
	for _, c := range []struct {
		name, tracestate string
		kept             bool
	}{
		{"short", "vendor=abc", true},
		{"512 characters", list(1, 512-len("k0=")), false}, // a value is at most 256: does not parse
		{"32 members within 512", list(32, 10), true},      // 32 × "kNN=vvvvvvvvvv" + commas < 512
		{"over 512", list(3, 200), false},
		{"32 long members", list(32, 200), false}, // 6.6 KB: fits the default 8 KiB header block
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tr := newTestTracing(t, rec)
			d := tr.Decide([]byte("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
			ctx, sp := tr.StartServer(d, []byte(c.tracestate), "GET")
			_, child := tr.Tracer().Start(ctx, "child")
			child.End()
			sp.End()
			for _, s := range rec.Ended() {
				got := s.SpanContext().TraceState().String()
				if len(got) > 512 {
					t.Errorf("span %q carries a tracestate of %d characters", s.Name(), len(got))
				}
				if c.kept && got != c.tracestate {
					t.Errorf("span %q tracestate %q, want the client's %q", s.Name(), got, c.tracestate)
				}
				if !c.kept && got != "" {
					t.Errorf("span %q tracestate of %d characters, want none", s.Name(), len(got))
				}
			}
		})
	}
}

// newTestTracing is a Tracing whose spans go to rec, with the
// parent-based always-on sampler.
func newTestTracing(t *testing.T, rec *tracetest.SpanRecorder) *Tracing {
	t.Helper()
	h := newHead(SamplerParentBasedAlwaysOn, 0)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithSampler(h.sdkSampler()),
		sdktrace.WithIDGenerator(idGenerator{}))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return &Tracing{provider: tp, tracer: tp.Tracer("test"), head: h, drops: &drops{}}
}
