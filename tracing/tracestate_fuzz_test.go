package tracing

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// FuzzClientTraceContext feeds a client's traceparent and tracestate, as
// any bytes, to the request path's tracing: Decide (which the aggregator
// hands only a validated version-00 traceparent, but which must not panic
// on anything) and StartServer with the client's tracestate. Properties:
// no panic; a header that is not 55 bytes is no parent (the trace
// restarts); a continued trace (valid ids) carries the client's ids and only the
// sampled flag; the server span's tracestate, which every span of the
// trace inherits, is at most maxTraceState characters of printable ASCII,
// is the client's list as parsed when that parses within the bound, and is
// empty otherwise. (The header reader, aggregator.ParseTraceparent, has
// its property in aggregator's FuzzRequestHeaders.)
func FuzzClientTraceContext(f *testing.F) {
	f.Add([]byte("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"), []byte("vendor=abc,other=x"))
	f.Add([]byte("00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-FF"), []byte("a=1, b=2 ,c=3"))
	f.Add([]byte("00-00000000000000000000000000000000-0000000000000000-01"), []byte("k@v=x"))
	f.Add([]byte("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"), []byte("a=\x00,b=\xff"))
	f.Add([]byte("\xff\xfe-zz"), []byte(",,,,a=b,,a=c"))
	h := newHead(SamplerParentBasedAlwaysOn, 0)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(h.sdkSampler()), sdktrace.WithIDGenerator(idGenerator{}))
	f.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tr := &Tracing{provider: tp, tracer: tp.Tracer("fuzz"), head: h, drops: &drops{}}
	f.Fuzz(func(t *testing.T, traceparent, tracestate []byte) {
		d := tr.Decide(traceparent)
		if d.parent != (len(traceparent) == 55) {
			t.Fatalf("traceparent of %d bytes: parent %v", len(traceparent), d.parent)
		}
		if d.flags&^trace.FlagsSampled != 0 {
			t.Fatalf("flags %#02x kept beyond the sampled bit", byte(d.flags))
		}
		if !d.Sampled() {
			return
		}
		ctx, sp := tr.StartServer(d, tracestate, "GET")
		_, child := tr.Tracer().Start(ctx, "child")
		child.End()
		sp.End()
		sc := sp.SpanContext()
		// An all-zero id (which ParseTraceparent refuses before) is no
		// parent to the SDK: the span starts a trace of its own.
		parent := d.parent && d.tid.IsValid() && d.sid.IsValid()
		if parent && (sc.TraceID() != d.tid || child.SpanContext().TraceID() != d.tid) {
			t.Fatalf("trace %s, want the client's %s", sc.TraceID(), d.tid)
		}
		if !sc.TraceID().IsValid() || !sc.SpanID().IsValid() {
			t.Fatalf("span context %v not valid", sc)
		}
		got := sc.TraceState().String()
		if child.SpanContext().TraceState().String() != got {
			t.Fatalf("child tracestate %q, server span's %q", child.SpanContext().TraceState().String(), got)
		}
		if len(got) > maxTraceState {
			t.Fatalf("tracestate of %d characters kept", len(got))
		}
		for i := 0; i < len(got); i++ {
			if c := got[i]; c < 0x20 || c > 0x7e {
				t.Fatalf("tracestate %q: byte %#x", got, c)
			}
		}
		want := ""
		if d.parent {
			if ts, err := trace.ParseTraceState(string(tracestate)); err == nil && len(ts.String()) <= maxTraceState {
				want = ts.String()
			}
		}
		if got != want {
			t.Fatalf("tracestate %q, want %q", got, want)
		}
	})
}
