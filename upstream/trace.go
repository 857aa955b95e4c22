package upstream

import (
	"context"
	"encoding/hex"
	"unsafe"

	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/trace"
)

// traceKey is the context key of the trace values; unexported so no other
// package can collide with it.
type traceKey struct{}

// traceValues are a request's trace values, stored under traceKey as a
// *traceValues (a pointer in an interface: a lookup boxes nothing).
type traceValues struct {
	requestID   string
	traceparent string
	tracestate  string
}

// traceOf returns the trace values ctx carries, or nil.
func traceOf(ctx context.Context) *traceValues {
	tv, _ := ctx.Value(traceKey{}).(*traceValues)
	return tv
}

// WithTrace returns a copy of ctx carrying the public request id and the
// W3C traceparent of the request being served. The Client sends them as the
// X-Request-ID and traceparent headers of every call made with the returned
// context; an empty value is not sent. A tracestate that ctx carries for
// the same traceparent (WithTraceContext) is kept.
func WithTrace(ctx context.Context, requestID, traceparent string) context.Context {
	tv := traceValues{requestID: requestID, traceparent: traceparent}
	if prev := traceOf(ctx); prev != nil && prev.traceparent == traceparent {
		tv.tracestate = prev.tracestate
	}
	return context.WithValue(ctx, traceKey{}, &tv)
}

// WithTraceContext is WithTrace with the request's W3C tracestate, sent
// beside the traceparent (and only with it).
func WithTraceContext(ctx context.Context, requestID, traceparent, tracestate string) context.Context {
	return context.WithValue(ctx, traceKey{}, &traceValues{requestID: requestID, traceparent: traceparent, tracestate: tracestate})
}

// TraceFrom returns the request id and traceparent stored in ctx by
// WithTrace, or empty strings when there are none.
func TraceFrom(ctx context.Context) (requestID, traceparent string) {
	if ctx == nil {
		return "", ""
	}
	if tv := traceOf(ctx); tv != nil {
		return tv.requestID, tv.traceparent
	}
	return "", ""
}

// setTraceHeaders writes X-Request-ID and the W3C trace context of a call.
// When ctx carries an OpenTelemetry span (the request is traced), the
// traceparent names that span, the call's own client span when the Client
// has a TracerProvider, and the tracestate is the span's; otherwise the
// client's traceparent and tracestate are passed on unchanged, so
// propagation works the same with tracing off.
func setTraceHeaders(ctx context.Context, h *fasthttp.RequestHeader) {
	var tv traceValues
	if p := traceOf(ctx); p != nil {
		tv = *p
	}
	if headerSafe(tv.requestID) {
		h.SetCanonical(hdrRequestID, s2b(tv.requestID))
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		var b [55]byte
		tid, sid := sc.TraceID(), sc.SpanID()
		copy(b[:], "00-")
		hex.Encode(b[3:35], tid[:])
		b[35] = '-'
		hex.Encode(b[36:52], sid[:])
		b[52] = '-'
		hex.Encode(b[53:55], []byte{byte(sc.TraceFlags())})
		h.SetBytesV("traceparent", b[:])
		if ts := sc.TraceState(); ts.Len() > 0 {
			// The span's tracestate is the client's, parsed: the same
			// bound as an unsampled request's, so that no client can make
			// every call's headers too large for the services (and open
			// their breakers for everyone).
			if v := ts.String(); printable(v, maxTracestate) {
				h.Set("tracestate", v)
			}
		}
		return
	}
	if headerSafe(tv.traceparent) {
		h.Set("traceparent", tv.traceparent)
		if printable(tv.tracestate, maxTracestate) {
			h.Set("tracestate", tv.tracestate)
		}
	}
}

// s2b views s as bytes, for fasthttp setters that copy their value.
func s2b(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// maxTracestate bounds a forwarded tracestate: W3C trace context allows 32
// list members, which fit in 512 characters as the specification expects
// vendors to keep them.
const maxTracestate = 512

// headerSafe reports whether v can be sent as a header value as is:
// printable ASCII only (no CR/LF header injection) and of a sane length.
// Values that are not are dropped rather than mangled.
func headerSafe(v string) bool { return printable(v, 256) }

// printable reports whether v is 1 to max bytes of printable ASCII.
func printable(v string, max int) bool {
	if len(v) == 0 || len(v) > max {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}
