package upstream

import (
	"context"
	"sync"
	"sync/atomic"
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
//
// When parent can never be cancelled and has no earlier deadline (a fill
// that bypasses the cache), the context is a lazyCtx: no timer is armed
// and no channel made unless something asks for its Done (a call made with
// it directly does not: the deadline alone ends it, as above). A listing
// miss spent about a microsecond arming and stopping the timer of a
// context.WithTimeout that nothing ever waited on.
func WithTimeoutTrace(parent context.Context, d time.Duration, requestID, traceparent string) (context.Context, context.CancelFunc) {
	tv := traceValues{requestID: requestID, traceparent: traceparent}
	if prev := traceOf(parent); prev != nil && prev.traceparent == traceparent {
		tv.tracestate = prev.tracestate
	}
	if parent.Done() == nil {
		deadline := time.Now().Add(d)
		if pd, ok := parent.Deadline(); !ok || !pd.Before(deadline) {
			c := &lazyCtx{parent: parent, deadline: deadline, tv: tv}
			return c, c.cancel
		}
	}
	ctx, cancel := context.WithTimeout(parent, d)
	return &callCtx{Context: ctx, deadlineOnly: parent.Done() == nil, tv: tv}, cancel
}

// lazyCtx is WithTimeoutTrace's context under a parent that can never be
// cancelled: context.WithDeadline(parent, deadline) made only when its Done
// is first asked for (or a context is derived from it by WithCancel,
// WithTimeout, WithDeadline or AfterFunc, which ask), with the trace values
// and WithTimeout's record. Until then Err reports the deadline by reading
// the clock, and cancel only records itself; once made, the inner context
// answers Done, Err and (beyond the keys answered here) Value, so a child
// registers with it as with any context.WithDeadline.
type lazyCtx struct {
	parent   context.Context // Done() == nil
	deadline time.Time
	tv       traceValues
	inner    atomic.Pointer[lazyInner]
	mu       sync.Mutex // held to make inner and to read or set err
	err      error      // before inner: Canceled or DeadlineExceeded once observed
}

type lazyInner struct {
	ctx    context.Context
	cancel context.CancelFunc
}

func (c *lazyCtx) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *lazyCtx) Done() <-chan struct{} { return c.made().Done() }

// made returns the inner context, making it on the first call: ended as
// Err has reported (cancelled, or past its deadline), else with the
// deadline's timer armed.
func (c *lazyCtx) made() context.Context {
	if in := c.inner.Load(); in != nil {
		return in.ctx
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if in := c.inner.Load(); in != nil {
		return in.ctx
	}
	var in lazyInner
	if c.err == context.Canceled {
		in.ctx, in.cancel = context.WithCancel(c.parent)
		in.cancel()
	} else {
		in.ctx, in.cancel = context.WithDeadline(c.parent, c.deadline)
	}
	c.inner.Store(&in)
	return in.ctx
}

func (c *lazyCtx) Err() error {
	if in := c.inner.Load(); in != nil {
		return in.ctx.Err()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if in := c.inner.Load(); in != nil {
		return in.ctx.Err()
	}
	if c.err == nil && !time.Now().Before(c.deadline) {
		c.err = context.DeadlineExceeded
	}
	return c.err
}

func (c *lazyCtx) cancel() {
	c.mu.Lock()
	in := c.inner.Load()
	if in == nil && c.err == nil {
		c.err = context.Canceled
	}
	c.mu.Unlock()
	if in != nil {
		in.cancel()
	}
}

// Value answers deadlineOnlyKey (itself: its Done is ended only by the
// deadline or cancel) and traceKey, then asks the inner context once made
// (context's own keys find its cancelCtx there), else parent.
func (c *lazyCtx) Value(key any) any {
	switch key.(type) {
	case deadlineOnlyKey:
		return context.Context(c)
	case traceKey:
		return &c.tv
	}
	if in := c.inner.Load(); in != nil {
		return in.ctx.Value(key)
	}
	return c.parent.Value(key)
}

func (c *lazyCtx) String() string { return "upstream.WithTimeoutTrace" }

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

// callDone is what a call made with ctx watches beside its exchange, and
// whether it must: nothing for a lazyCtx itself, whose Done it does not ask
// for (that would arm its timer), else watchNeeded's answer.
func callDone(ctx context.Context) (<-chan struct{}, bool) {
	if _, ok := ctx.(*lazyCtx); ok {
		return nil, false
	}
	done := ctx.Done()
	return done, watchNeeded(ctx, done)
}
