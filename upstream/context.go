package upstream

import (
	"context"
	"time"
)

// deadlineOnlyKey is the context key under which WithTimeout records a
// context that only its deadline, or its cancel after the calls made with
// it, ends (the context itself: its Done channel is made only when a call
// asks for it).
type deadlineOnlyKey struct{}

// WithTimeout is context.WithTimeout for the calls of a Client. When parent
// can never be cancelled (its Done is nil: context.Background, a
// context.WithoutCancel), the returned context ends only at its deadline or
// by cancel, and the Client runs each call made with it (or with a context
// derived from it by context.WithValue) on the caller's goroutine: fasthttp
// enforces the same deadline, so there is no need for the goroutine and
// channel that let a call return early when its caller is cancelled.
//
// cancel must then be called only once the calls made with the context
// have returned (a deferred cancel in the function that waits for them); a
// call in flight does not see it and runs to its answer or its deadline.
// Calls made with a context derived by context.WithCancel, WithTimeout or
// WithDeadline are watched as with any other context.
func WithTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(parent, d)
	if parent.Done() != nil {
		return ctx, cancel
	}
	return context.WithValue(ctx, deadlineOnlyKey{}, ctx), cancel
}

// WithTimeoutTrace is WithTrace(WithTimeout(parent, d), requestID,
// traceparent) as one context: the trace values and WithTimeout's record
// are answered by one value, not two WithValue layers and a boxed copy of
// the trace values (a fill's context cost six allocations, now four).
func WithTimeoutTrace(parent context.Context, d time.Duration, requestID, traceparent string) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(parent, d)
	c := &callCtx{Context: ctx, deadlineOnly: parent.Done() == nil}
	c.tv = traceValues{requestID: requestID, traceparent: traceparent}
	if prev := traceOf(parent); prev != nil && prev.traceparent == traceparent {
		c.tv.tracestate = prev.tracestate
	}
	return c, cancel
}

// callCtx is WithTimeoutTrace's context: the timeout's context with the
// values that WithTimeout and WithTrace would have layered over it.
type callCtx struct {
	context.Context
	deadlineOnly bool // WithTimeout's record: parent can never be cancelled
	tv           traceValues
}

// Value answers deadlineOnlyKey (when WithTimeout would have recorded the
// context) and traceKey itself, and asks the timeout's context otherwise.
func (c *callCtx) Value(key any) any {
	switch key.(type) {
	case deadlineOnlyKey:
		if c.deadlineOnly {
			return c.Context
		}
	case traceKey:
		return &c.tv
	}
	return c.Context.Value(key)
}

// watchNeeded reports whether a call made with ctx must watch ctx.Done
// beside the exchange: done (ctx.Done()) is not nil and is not a channel
// that WithTimeout recorded as closed only by the deadline.
func watchNeeded(ctx context.Context, done <-chan struct{}) bool {
	if done == nil {
		return false
	}
	d, _ := ctx.Value(deadlineOnlyKey{}).(context.Context)
	return d == nil || d.Done() != done
}
