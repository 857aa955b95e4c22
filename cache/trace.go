package cache

import (
	"context"
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Attributes of the cache's spans. Redis spans name the command, never
// the key (it holds the dealer and the request's query).
var (
	attrRefresh = attribute.Key("cache.refresh")
	// attrRevalidated marks a fill whose upstream answers were those of
	// the entry it replaced (ErrUnchanged): nothing was built.
	attrRevalidated = attribute.Bool("cache.revalidated", true)
	attrDBSys       = attribute.String("db.system.name", "redis")
	attrDBOp        = attribute.Key("db.operation.name")
	attrKeyKind     = attribute.Key("cache.redis_key")
)

// keyKind names what a hot-path command's key is: "entry" (a cached
// response), "lock" (the cross-instance fill lock) or "other".
func keyKind(cmd redis.Cmder) string {
	args := cmd.Args()
	if n := cmd.Name(); n == "evalsha" || n == "eval" {
		args = args[2:] // a script's first key comes after the script and the key count
	}
	if len(args) < 2 {
		return "other"
	}
	k, _ := args[1].(string)
	if i := strings.Index(k, "}:"); i >= 0 && i+2 < len(k) {
		switch k[i+2] {
		case 'g':
			return "entry"
		case 'l':
			return "lock"
		}
	}
	return "other"
}

// traced reports whether ctx belongs to a sampled trace: its span is
// sampled, recording or not. A background stale-while-revalidate refresh
// runs with the context of the request that found the entry stale, whose
// server span has ended by then (IsRecording is false after End): asking
// IsRecording left every refresh untraced (TestStaleRefreshTraced).
func traced(ctx context.Context) bool {
	return trace.SpanContextFromContext(ctx).IsSampled()
}

// startSpan starts a child span of the span in ctx when that one is
// recording; otherwise it returns ctx and a nil span at the cost of one
// context lookup.
func (c *Cache) startSpan(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if c.tracer == nil || !traced(ctx) {
		return ctx, nil
	}
	return c.tracer.Start(ctx, name, trace.WithAttributes(attrs...))
}

// redisSpan starts the span of one Redis command (op) for a traced
// request.
func (c *Cache) redisSpan(ctx context.Context, op string) (context.Context, trace.Span) {
	if c.tracer == nil || !traced(ctx) {
		return ctx, nil
	}
	op = strings.ToUpper(op)
	return c.tracer.Start(ctx, "redis "+op, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attrDBSys, attrDBOp.String(op)))
}

// endSpan ends a span of startSpan or redisSpan (nil is fine); an error
// other than a Redis nil reply marks it failed, by class only.
func endSpan(span trace.Span, err error) {
	if span == nil {
		return
	}
	switch {
	case err == nil, errors.Is(err, redis.Nil), redis.HasErrorPrefix(err, "NOSCRIPT"):
		// NOSCRIPT is answered by sending the script (runScript's EVAL),
		// not a failure (TestNoscriptSpanNotFailed).
	case errors.Is(err, context.DeadlineExceeded):
		span.SetStatus(codes.Error, "timeout")
	default:
		span.SetStatus(codes.Error, "error")
	}
	span.End()
}
