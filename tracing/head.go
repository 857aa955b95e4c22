package tracing

import (
	"context"
	"encoding/binary"
	"math/rand/v2"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// head is the sampler in force, in the form the request path evaluates
// before it creates any span or context. It decides exactly as the SDK
// sampler built from the same settings (sdkSampler) does, which stays the
// authority: a request the head samples is started through the SDK, whose
// sampler then sees the same trace id and parent and agrees.
type head struct {
	name        string
	parentBased bool
	root        int // rootOn, rootOff or rootRatio
	fraction    float64
	bound       uint64 // TraceIDRatioBased's bound: uint64(fraction * 2^63)
}

const (
	rootOn = iota
	rootOff
	rootRatio
)

func newHead(name string, arg float64) head {
	h := head{name: name, fraction: arg}
	switch name {
	case SamplerAlwaysOn, SamplerParentBasedAlwaysOn:
		h.root = rootOn
	case SamplerAlwaysOff, SamplerParentBasedAlwaysOff:
		h.root = rootOff
	default: // the two ratio samplers (names are validated before)
		h.root = rootRatio
		switch {
		case arg >= 1:
			h.root = rootOn
		case arg <= 0:
			h.root = rootOff
		default:
			h.bound = uint64(arg * (1 << 63))
		}
	}
	h.parentBased = name == SamplerParentBasedAlwaysOn || name == SamplerParentBasedAlwaysOff || name == SamplerParentBasedTraceIDRatio
	return h
}

// sdkSampler is the SDK sampler of the same settings.
func (h head) sdkSampler() sdktrace.Sampler {
	var root sdktrace.Sampler
	switch h.name {
	case SamplerAlwaysOn, SamplerParentBasedAlwaysOn:
		root = sdktrace.AlwaysSample()
	case SamplerAlwaysOff, SamplerParentBasedAlwaysOff:
		root = sdktrace.NeverSample()
	default:
		root = sdktrace.TraceIDRatioBased(h.fraction)
	}
	if h.parentBased {
		return sdktrace.ParentBased(root)
	}
	return root
}

// ratio is TraceIDRatioBased's test on the low 8 bytes of a trace id.
func (h head) ratio(low uint64) bool { return low>>1 < h.bound }

// Decision is the head sampling decision of one request: whether it is
// traced, and the trace it belongs to. Its zero value is "not traced".
type Decision struct {
	sampled bool
	parent  bool // the client sent a valid traceparent
	tid     trace.TraceID
	sid     trace.SpanID // the client's span id
	flags   trace.TraceFlags
}

// Sampled reports whether the request is traced.
func (d Decision) Sampled() bool { return d.sampled }

// Decide makes the head sampling decision of a request from its
// traceparent header in its version-00 form, which the caller has
// validated (see aggregator.ParseTraceparent, which also rewrites a later
// version as 00), or nil. It allocates nothing and, for a
// request without traceparent, costs one random number: what an unsampled
// request pays for tracing. A nil *Tracing samples nothing.
func (t *Tracing) Decide(traceparent []byte) Decision {
	if t == nil {
		return Decision{}
	}
	h := &t.head
	var d Decision
	if len(traceparent) == 55 {
		d.parent = true
		decodeHex(d.tid[:], traceparent[3:35])
		decodeHex(d.sid[:], traceparent[36:52])
		var f [1]byte
		decodeHex(f[:], traceparent[53:55])
		// Only the sampled flag is defined (W3C Trace Context 3.2.2.5:
		// other flags are set to zero), so no other bit reaches a span or
		// the traceparent of a call the span makes.
		d.flags = trace.TraceFlags(f[0]) & trace.FlagsSampled
		if h.parentBased {
			// ParentBased's defaults for a remote parent: follow its
			// sampled flag, within the bound of clientCap unless the
			// root samples every request anyway.
			d.sampled = d.flags.IsSampled() && (h.root == rootOn || t.clientCap.allow())
			return d
		}
	}
	switch h.root {
	case rootOff:
		return d
	case rootOn:
		d.sampled = true
	default:
		if d.parent {
			// The client chose this trace id, and may have chosen it
			// below the bound: within clientCap's bound too.
			d.sampled = h.ratio(binary.BigEndian.Uint64(d.tid[8:])) && t.clientCap.allow()
			return d
		}
		low := rand.Uint64()
		binary.BigEndian.PutUint64(d.tid[8:], low)
		if !h.ratio(low) {
			return d
		}
		d.sampled = true
	}
	if !d.parent {
		binary.BigEndian.PutUint64(d.tid[:8], rand.Uint64()|1) // never the invalid all-zero id
		if h.root == rootOn {
			binary.BigEndian.PutUint64(d.tid[8:], rand.Uint64())
		}
	}
	return d
}

// maxTraceState bounds the client's tracestate that a server span keeps:
// the span's children inherit it, so every span of the trace carries it,
// and one client must not make them all kilobytes larger. It is the bound
// of what the edge passes on to the internal services (upstream's
// maxTracestate), so a tracestate kept here is also passed on.
const maxTraceState = 512

// StartServer starts the server span of a request whose Decision is
// sampled, as a child of the client's traceparent (with its tracestate,
// when that parses and is at most maxTraceState characters) or as the
// root of the trace the decision chose. The
// returned context carries the span: hand it to whatever the request does.
func (t *Tracing) StartServer(d Decision, tracestate []byte, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	ctx := context.Background()
	if d.parent {
		cfg := trace.SpanContextConfig{TraceID: d.tid, SpanID: d.sid, TraceFlags: d.flags, Remote: true}
		if len(tracestate) > 0 {
			if ts, err := trace.ParseTraceState(string(tracestate)); err == nil && len(ts.String()) <= maxTraceState {
				cfg.TraceState = ts
			}
		}
		ctx = trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(cfg))
	} else {
		ctx = context.WithValue(ctx, presetKey{}, d.tid)
	}
	opts = append(opts, trace.WithSpanKind(trace.SpanKindServer))
	return t.tracer.Start(ctx, name, opts...)
}

func decodeHex(dst, src []byte) {
	for i := range dst {
		dst[i] = unhex(src[2*i])<<4 | unhex(src[2*i+1])
	}
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return 0
}

// presetKey is the context key of a root trace id chosen by Decide.
type presetKey struct{}

// idGenerator is the SDK's id generator: the trace id of a root span is the
// one Decide chose (so the SDK's ratio sampler sees the id the head
// sampled), span ids and other trace ids are random.
type idGenerator struct{}

func (idGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	tid, ok := ctx.Value(presetKey{}).(trace.TraceID)
	if !ok || !tid.IsValid() {
		binary.BigEndian.PutUint64(tid[:8], rand.Uint64()|1)
		binary.BigEndian.PutUint64(tid[8:], rand.Uint64())
	}
	return tid, newSpanID()
}

func (idGenerator) NewSpanID(context.Context, trace.TraceID) trace.SpanID { return newSpanID() }

func newSpanID() trace.SpanID {
	var sid trace.SpanID
	binary.BigEndian.PutUint64(sid[:], rand.Uint64()|1)
	return sid
}
