package aggregator

import (
	"context"
	"errors"
	"unicode/utf8"

	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// Attributes of the server span. None holds the API key or its hash: the
// caller is named by its dealer id only.
var (
	attrMethod      = attribute.Key("http.request.method")
	attrRoute       = attribute.Key("http.route")
	attrPath        = attribute.Key("url.path")
	attrStatus      = attribute.Key("http.response.status_code")
	attrCache       = attribute.Key("edge.cache")
	attrDealerID    = attribute.Key("edge.dealer_id")
	attrRequestID   = attribute.Key("edge.request_id")
	attrProblemCode = attribute.Key("edge.problem_code")
	attrRouteName   = attribute.Key("edge.route")
	attrSection     = attribute.Key("edge.section")
)

// routeTemplates maps route names to their path templates (http.route and
// the span name).
var routeTemplates = map[string]string{
	RouteInventoryListing: "/dealer/{service}/listing",
	RouteInventoryDetails: "/dealer/{service}/details",
	RouteContentHub:       "/dealer/content/hub",
	RouteContentSearch:    "/dealer/content/search",
	RouteContentListing:   "/dealer/content/{content_type}/listing",
	RouteContentDetails:   "/dealer/content/{content_type}/details",
	RouteOpenAPI:          "/dealer/openapi.json",
}

// startTrace makes the head sampling decision of the request and, when it
// is sampled, starts its server span. An unsampled request pays one random
// number here (none when it brings an unsampled traceparent) and nothing
// else anywhere: no context, no span.
func (s *Server) startTrace(ctx *fasthttp.RequestCtx, rs *reqState) {
	var tp []byte
	if rs.traceparent != "" {
		tp = s2b(rs.traceparent)
	}
	d := s.tracing.Decide(tp)
	if !d.Sampled() {
		return
	}
	m := spanMethod(ctx.Method())
	rs.tctx, rs.span = s.tracing.StartServer(d, s2b(rs.tracestate), m,
		trace.WithTimestamp(rs.start),
		trace.WithAttributes(attrMethod.String(m), attrPath.String(string(spanPath(ctx.Path())))))
}

// maxSpanPath bounds the url.path attribute.
const maxSpanPath = 256

// spanPath is the request's path as the url.path attribute holds it: at
// most maxSpanPath bytes (a hostile path does not make a huge span), cut
// before a UTF-8 character that would not fit whole rather than inside it
// (the exporter would send the split character's first bytes as U+FFFD).
// A path that is not UTF-8 there is cut at most 3 bytes short of the
// bound. It returns a subslice of path: it allocates nothing.
func spanPath(path []byte) []byte {
	if len(path) <= maxSpanPath {
		return path
	}
	n := maxSpanPath
	for n > maxSpanPath-utf8.UTFMax+1 && !utf8.RuneStart(path[n]) {
		n-- // path[n] continues the character that starts before it
	}
	return path[:n]
}

// spanMethod is the method as HTTP semantic conventions record it: a
// known method, or "_OTHER" (a client's arbitrary token is not a name).
func spanMethod(m []byte) string {
	for _, k := range []string{"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT"} {
		if string(m) == k {
			return k
		}
	}
	return "_OTHER"
}

// endTrace completes and ends the server span with what the request did.
func (s *Server) endTrace(ctx *fasthttp.RequestCtx, rs *reqState) {
	sp := rs.span
	status := ctx.Response.StatusCode()
	attrs := []attribute.KeyValue{
		attrStatus.Int(status),
		attrRequestID.String(string(rs.reqID)),
		attrRouteName.String(rs.route),
	}
	if tmpl := routeTemplates[rs.route]; tmpl != "" {
		attrs = append(attrs, attrRoute.String(tmpl))
		sp.SetName(spanMethod(ctx.Method()) + " " + tmpl)
	}
	if rs.cache != "" {
		attrs = append(attrs, attrCache.String(rs.cache))
	}
	if rs.p != nil && rs.p.dealerID != 0 {
		attrs = append(attrs, attrDealerID.Int64(rs.p.dealerID))
	}
	if rs.code != "" {
		attrs = append(attrs, attrProblemCode.String(rs.code))
	}
	sp.SetAttributes(attrs...)
	if status >= 500 {
		sp.SetStatus(codes.Error, rs.code)
	}
	sp.End()
	rs.span, rs.tctx = nil, nil
}

// context is the context of the request's own work (key lookup, rate
// limit): its server span when traced, else the background context, so an
// untraced request allocates nothing for it.
func (rs *reqState) context() context.Context {
	if rs.tctx != nil {
		return rs.tctx
	}
	return context.Background()
}

// fillParent is the context handed to the cache for a lookup that may
// fill: the request's context, with the client's tracestate for the
// upstream calls when it sent one (the fill's own WithTrace keeps it).
func (rs *reqState) fillParent() context.Context {
	ctx := rs.context()
	if rs.tracestate != "" {
		ctx = upstream.WithTraceContext(ctx, string(rs.reqID), rs.traceparent, rs.tracestate)
	}
	return ctx
}

// spanning reports whether startSpan would start a span in ctx: the server
// traces and the span in ctx is recording.
func (s *Server) spanning(ctx context.Context) bool {
	return s.tracer != nil && trace.SpanFromContext(ctx).IsRecording()
}

// startSpan starts a child span of the span in ctx when that span is
// recording (a traced request); otherwise it returns ctx and a nil span.
func (s *Server) startSpan(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if s.tracer == nil || !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, nil
	}
	return s.tracer.Start(ctx, name, trace.WithAttributes(attrs...))
}

// endSpan ends a span of startSpan (nil is fine), marking it failed when
// err is not nil. The error's text is not recorded (it could carry a
// detail of an internal service); its class is.
func endSpan(sp trace.Span, err error) {
	if sp == nil {
		return
	}
	if err != nil {
		sp.SetStatus(codes.Error, errorClass(err))
	}
	sp.End()
}

// errorClass is a fixed word for an error, safe for span attributes.
func errorClass(err error) string {
	var ae *apiError
	var pe *partialError
	switch {
	case errors.As(err, &pe):
		return "partial"
	case errors.Is(err, upstream.ErrCircuitOpen):
		return "circuit_open"
	case errors.Is(err, upstream.ErrNotFound):
		return "not_found"
	case errors.Is(err, upstream.ErrUnavailable):
		return "unavailable"
	case errors.As(err, &ae):
		return ae.code
	}
	return "error"
}
