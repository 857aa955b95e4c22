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
	const long = 5 * time.Second // the dealers' timeout and the server's backstop (see TestTimeouts)
	c := newTestClient(t, ts, func(o *Options) {
		o.Breaker.ConsecutiveFailures = 2
		o.Timeouts = map[string]time.Duration{SvcDealers: long}
	})

	ts.set(200, `{"id":7}`, 0)
	ctx, cancel := WithTimeout(context.Background(), time.Second)
	d, err := c.Dealer(ctx, 7)
	cancel()
	if err != nil || d.ID != 7 {
		t.Fatalf("got %+v, %v", d, err)
	}

	ts.set(200, `{}`, 0)
	ts.hold(t, long)
	checkCallerDeadlines(t, c, WithTimeout, long/2)
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

// TestLazyCtxSemantics checks WithTimeoutTrace's timer-less context under a
// parent that can never be cancelled against the context package's rules:
// Err nil until cancel or the deadline, then the same error for good; Done
// made on demand and closed by either; a child derived by WithCancel or
// AfterFunc ended with it; Cause and Deadline as context.WithTimeout's.
func TestLazyCtxSemantics(t *testing.T) {
	t.Run("cancel before Done", func(t *testing.T) {
		ctx, cancel := WithTimeoutTrace(context.Background(), time.Minute, "r", "")
		if _, ok := ctx.(*lazyCtx); !ok {
			t.Fatalf("context %T, want *lazyCtx", ctx)
		}
		if err := ctx.Err(); err != nil {
			t.Fatalf("Err before cancel = %v", err)
		}
		cancel()
		cancel()
		if err := ctx.Err(); err != context.Canceled {
			t.Fatalf("Err = %v, want Canceled", err)
		}
		select {
		case <-ctx.Done():
		default:
			t.Fatal("Done not closed after cancel")
		}
		if err := ctx.Err(); err != context.Canceled {
			t.Fatalf("Err after Done = %v, want Canceled", err)
		}
		if err := context.Cause(ctx); err != context.Canceled {
			t.Fatalf("Cause = %v", err)
		}
	})
	t.Run("cancel after Done", func(t *testing.T) {
		ctx, cancel := WithTimeoutTrace(context.Background(), time.Minute, "r", "")
		done := ctx.Done()
		child, cancelChild := context.WithCancel(context.WithValue(ctx, ctxKey{}, 1))
		defer cancelChild()
		fired := make(chan struct{})
		context.AfterFunc(ctx, func() { close(fired) })
		cancel()
		<-done
		<-child.Done()
		<-fired
		if ctx.Err() != context.Canceled || child.Err() != context.Canceled {
			t.Fatalf("Err %v, child's %v", ctx.Err(), child.Err())
		}
	})
	t.Run("child before Done", func(t *testing.T) {
		ctx, cancel := WithTimeoutTrace(context.Background(), time.Minute, "r", "")
		child, cancelChild := context.WithCancel(ctx)
		defer cancelChild()
		cancel()
		<-child.Done()
		if child.Err() != context.Canceled {
			t.Fatalf("child's Err %v", child.Err())
		}
	})
	t.Run("deadline without Done", func(t *testing.T) {
		ctx, cancel := WithTimeoutTrace(context.Background(), time.Nanosecond, "r", "")
		defer cancel()
		for ctx.Err() == nil { // the clock, read by Err: no timer to wait for
		}
		if err := ctx.Err(); err != context.DeadlineExceeded {
			t.Fatalf("Err = %v", err)
		}
		cancel()
		if err := ctx.Err(); err != context.DeadlineExceeded {
			t.Fatalf("Err after cancel = %v, want the deadline's still", err)
		}
		<-ctx.Done()
		if err := ctx.Err(); err != context.DeadlineExceeded {
			t.Fatalf("Err after Done = %v", err)
		}
	})
	t.Run("deadline after Done", func(t *testing.T) {
		ctx, cancel := WithTimeoutTrace(context.Background(), 20*time.Millisecond, "r", "")
		defer cancel()
		child, cancelChild := context.WithCancel(ctx)
		defer cancelChild()
		<-ctx.Done() // the timer, armed when Done was asked for
		<-child.Done()
		if ctx.Err() != context.DeadlineExceeded || child.Err() != context.DeadlineExceeded {
			t.Fatalf("Err %v, child's %v", ctx.Err(), child.Err())
		}
	})
	t.Run("deadline and values", func(t *testing.T) {
		parent := context.WithValue(context.Background(), ctxKey{}, "v")
		before := time.Now()
		ctx, cancel := WithTimeoutTrace(parent, time.Minute, "req", "tp")
		defer cancel()
		if d, ok := ctx.Deadline(); !ok || d.Before(before.Add(time.Minute)) || d.After(time.Now().Add(time.Minute)) {
			t.Fatalf("Deadline = %v, %v", d, ok)
		}
		if v := ctx.Value(ctxKey{}); v != "v" {
			t.Fatalf("parent's value %v", v)
		}
		if id, tp := TraceFrom(ctx); id != "req" || tp != "tp" {
			t.Fatalf("trace %q %q", id, tp)
		}
		_ = ctx.Done()
		if v := ctx.Value(ctxKey{}); v != "v" {
			t.Fatalf("parent's value after Done %v", v)
		}
		if id, _ := TraceFrom(ctx); id != "req" {
			t.Fatalf("trace after Done %q", id)
		}
	})
	t.Run("parent's earlier deadline", func(t *testing.T) {
		pd := time.Now().Add(time.Second)
		ctx, cancel := WithTimeoutTrace(deadlineParent{context.Background(), pd}, time.Minute, "r", "")
		defer cancel()
		if d, ok := ctx.Deadline(); !ok || !d.Equal(pd) {
			t.Fatalf("Deadline = %v, %v, want the parent's %v", d, ok, pd)
		}
		if watchNeeded(ctx, ctx.Done()) {
			t.Fatal("a parent never cancelled: want no watch")
		}
	})
}

// deadlineParent is a context never cancelled (its Done is nil) that has a
// deadline.
type deadlineParent struct {
	context.Context
	d time.Time
}

func (p deadlineParent) Deadline() (time.Time, bool) { return p.d, true }

// TestLazyCtxCallArmsNoTimer checks that a call made with WithTimeoutTrace's
// context under a parent never cancelled does not make its Done (the timer
// and channel the context saves), and answers.
func TestLazyCtxCallArmsNoTimer(t *testing.T) {
	ts := newTestServer(t)
	c := newTestClient(t, ts, nil)
	ts.set(200, `{"id":7}`, 0)
	ctx, cancel := WithTimeoutTrace(context.Background(), time.Second, "r", "")
	defer cancel()
	if d, err := c.Dealer(ctx, 7); err != nil || d.ID != 7 {
		t.Fatalf("got %+v, %v", d, err)
	}
	if ctx.(*lazyCtx).inner.Load() != nil {
		t.Fatal("the call made the context's Done (its timer armed)")
	}
}
