package upstream

import "context"

// traceKey is the context key of the trace values; unexported so no other
// package can collide with it.
type traceKey struct{}

type traceValues struct {
	requestID   string
	traceparent string
}

// WithTrace returns a copy of ctx carrying the public request id and the
// W3C traceparent of the request being served. The Client sends them as the
// X-Request-ID and traceparent headers of every call made with the returned
// context; an empty value is not sent.
func WithTrace(ctx context.Context, requestID, traceparent string) context.Context {
	return context.WithValue(ctx, traceKey{}, traceValues{requestID: requestID, traceparent: traceparent})
}

// TraceFrom returns the request id and traceparent stored in ctx by
// WithTrace, or empty strings when there are none.
func TraceFrom(ctx context.Context) (requestID, traceparent string) {
	if ctx == nil {
		return "", ""
	}
	tv, _ := ctx.Value(traceKey{}).(traceValues)
	return tv.requestID, tv.traceparent
}

// headerSafe reports whether v can be sent as a header value as is:
// printable ASCII only (no CR/LF header injection) and of a sane length.
// Values that are not are dropped rather than mangled.
func headerSafe(v string) bool {
	if len(v) == 0 || len(v) > 256 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}
