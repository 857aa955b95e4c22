package cache

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestNoscriptSpanNotFailed: the README's span table says the entry's
// store and the lock's release are one `redis EVALSHA`, "followed by
// `redis EVAL` when a restarted Redis answered NOSCRIPT". NOSCRIPT is an
// expected answer the cache handles (redisResult does not count it as an
// L2 error), and the store succeeds through EVAL; yet the EVALSHA span is
// marked Error, so after every Redis restart or failover each key's first
// store shows up as a failed Redis call in the tracing backend's error
// rates and "traces with errors" searches.
func TestNoscriptSpanNotFailed(t *testing.T) {
	_, rdb := newMiniRedis(t)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	c := newCache(t, Options{Redis: rdb, TracerProvider: tp, LockWait: 100 * time.Millisecond})
	ctx, root := tp.Tracer("t").Start(context.Background(), "server")
	f := newFiller(`{"a":1}`)
	if _, _, err := c.Get(ctx, 1, []byte("k"), Policy{TTL: time.Minute}, f.fill); err != nil {
		t.Fatal(err)
	}
	root.End()
	sawEval := false
	for _, s := range rec.Ended() {
		if s.Name() == "redis EVAL" {
			sawEval = true
		}
	}
	if !sawEval {
		t.Skip("no NOSCRIPT round (the script was known)")
	}
	for _, s := range rec.Ended() {
		if s.Name() == "redis EVALSHA" && s.Status().Code == codes.Error {
			t.Errorf("redis EVALSHA answered NOSCRIPT (then EVAL stored the entry) is marked %v %q", s.Status().Code, s.Status().Description)
		}
	}
}
