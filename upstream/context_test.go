package upstream

import (
	"context"
	"testing"
	"time"
)

type ctxKey struct{}

func TestWatchNeeded(t *testing.T) {
	deadlineOnly, cancel1 := WithTimeout(context.Background(), time.Minute)
	defer cancel1()
	cancellable, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	fromCancellable, cancel3 := WithTimeout(cancellable, time.Minute)
	defer cancel3()
	child, cancel4 := context.WithCancel(deadlineOnly)
	defer cancel4()
	childTimeout, cancel5 := context.WithTimeout(deadlineOnly, time.Minute)
	defer cancel5()
	plain, cancel6 := context.WithTimeout(context.Background(), time.Minute)
	defer cancel6()
	traced, cancel7 := WithTimeoutTrace(context.Background(), time.Minute, "r", "")
	defer cancel7()
	tracedOfCancellable, cancel8 := WithTimeoutTrace(cancellable, time.Minute, "r", "")
	defer cancel8()
	tracedOfDeadlineOnly, cancel9 := WithTimeoutTrace(deadlineOnly, time.Minute, "r", "")
	defer cancel9()
	childOfTraced, cancel10 := context.WithCancel(traced)
	defer cancel10()
	cases := []struct {
		name string
		ctx  context.Context
		want bool
	}{
		{"background", context.Background(), false},
		{"without cancel", context.WithoutCancel(cancellable), false},
		{"WithTimeout of background", deadlineOnly, false},
		{"value under WithTimeout", context.WithValue(deadlineOnly, ctxKey{}, 1), false},
		{"WithTrace under WithTimeout", WithTrace(deadlineOnly, "r", ""), false},
		{"WithTimeout of a cancellable parent", fromCancellable, true},
		{"WithCancel under WithTimeout", child, true},
		{"context.WithTimeout under WithTimeout", childTimeout, true},
		{"context.WithTimeout of background", plain, true},
		{"cancellable", cancellable, true},
		{"WithTimeoutTrace of background", traced, false},
		{"value under WithTimeoutTrace", context.WithValue(traced, ctxKey{}, 1), false},
		{"WithTimeoutTrace of a cancellable parent", tracedOfCancellable, true},
		// Its deadline's context is not deadlineOnly's: as for a
		// context.WithTimeout under WithTimeout, the call is watched.
		{"WithTimeoutTrace under WithTimeout", tracedOfDeadlineOnly, true},
		{"WithCancel under WithTimeoutTrace", childOfTraced, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := watchNeeded(c.ctx, c.ctx.Done()); got != c.want {
				t.Errorf("watchNeeded = %v, want %v", got, c.want)
			}
		})
	}
}

// TestWithTimeoutCalls checks that a call made with a WithTimeout context,
// run without the watcher goroutine, still ends at the context's deadline
// with the caller's error (not the service's timeout, so the breaker stays
// closed), and that a call made before the deadline answers.
func TestWithTimeoutCalls(t *testing.T) {
	ts := newTestServer(t)
	c := newTestClient(t, ts, func(o *Options) { o.Breaker.ConsecutiveFailures = 2 })
	const slack = 150 * time.Millisecond

	ts.set(200, `{"id":7}`, 0)
	ctx, cancel := WithTimeout(context.Background(), time.Second)
	d, err := c.Dealer(ctx, 7)
	cancel()
	if err != nil || d.ID != 7 {
		t.Fatalf("got %+v, %v", d, err)
	}

	ts.set(200, `{}`, 400*time.Millisecond)
	checkCallerDeadlines(t, c, WithTimeout, slack)
}

// TestWithTimeoutTrace: WithTimeoutTrace's context answers as
// WithTrace(WithTimeout(...)) does: the trace values (a tracestate the
// parent carries for the same traceparent kept, for another dropped), the
// parent's other values, a deadline, its cancel and its cause.
func TestWithTimeoutTrace(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	base := context.WithValue(context.Background(), ctxKey{}, "v")
	cases := []struct {
		name               string
		parent             context.Context
		reqID, traceparent string
		wantState          string
	}{
		{"no trace values", base, "r1", tp, ""},
		{"empty values", base, "", "", ""},
		{"parent's tracestate, same traceparent", WithTraceContext(base, "r0", tp, "k=v"), "r1", tp, "k=v"},
		{"parent's tracestate, another traceparent", WithTraceContext(base, "r0", "other", "k=v"), "r1", tp, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ref, cancelRef := WithTimeout(c.parent, time.Minute)
			defer cancelRef()
			ref = WithTrace(ref, c.reqID, c.traceparent)
			ctx, cancel := WithTimeoutTrace(c.parent, time.Minute, c.reqID, c.traceparent)
			if got, want := *traceOf(ctx), *traceOf(ref); got != want {
				t.Errorf("trace values %+v, want %+v", got, want)
			}
			if got := traceOf(ctx).tracestate; got != c.wantState {
				t.Errorf("tracestate %q, want %q", got, c.wantState)
			}
			if r, p := TraceFrom(ctx); r != c.reqID || p != c.traceparent {
				t.Errorf("TraceFrom = %q, %q", r, p)
			}
			if got := ctx.Value(ctxKey{}); got != "v" {
				t.Errorf("parent's value %v, want v", got)
			}
			if d, ok := ctx.Deadline(); !ok || time.Until(d) > time.Minute || time.Until(d) < 50*time.Second {
				t.Errorf("deadline %v, %v", d, ok)
			}
			if ctx.Err() != nil {
				t.Fatalf("Err before cancel: %v", ctx.Err())
			}
			cancel()
			select {
			case <-ctx.Done():
			default:
				t.Fatal("Done not closed by cancel")
			}
			if ctx.Err() != context.Canceled || context.Cause(ctx) != context.Canceled {
				t.Errorf("Err %v, Cause %v", ctx.Err(), context.Cause(ctx))
			}
		})
	}
}
