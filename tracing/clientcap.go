package tracing

import (
	"sync/atomic"
	"time"
)

// DefaultClientSampledPerSecond is how many requests a second an edge
// traces because a client's traceparent asked for it (Config.
// ClientSampledPerSecond): the default parent-based sampler follows a
// client's sampled flag, so without a bound any client could have every
// one of its requests traced.
const DefaultClientSampledPerSecond = 10

// clientCap bounds the rate of requests sampled on a client's say: a
// client's sampled flag under a parent-based sampler whose root would not
// sample every request, or a client's trace id under traceidratio (which
// the client may pick below the ratio's bound). Each such decision takes
// a token; over the rate the request is not traced (its traceparent is
// still passed on unchanged). Before 2026-11-29 a client that set the
// flag on every request had every request traced: about 11-14 µs more CPU
// each, and spans enough to fill the batch queue, whose overflow dropped
// (queue_full) the spans of the traces the operator's ratio chose
// (TestClientSampledCapped).
//
// It is a GCRA token bucket: one atomic word, no allocation, and a clock
// read only for a request that brings a sampled traceparent.
type clientCap struct {
	interval int64 // ns between tokens
	window   int64 // ns of burst: the burst's tokens × interval
	tat      atomic.Int64
	capped   atomic.Uint64 // decisions turned down
	start    time.Time
	now      func() int64 // ns since start; tests replace it
}

func newClientCap(perSecond float64) *clientCap {
	if perSecond < 0 {
		return nil // no bound
	}
	if perSecond == 0 {
		perSecond = DefaultClientSampledPerSecond
	}
	// The interval in float first: a tiny rate (1e-300) would overflow
	// int64 into a negative, i.e. no bound at all. Clamped to a year.
	iv := min(max(float64(time.Second)/perSecond, 1), float64(365*24*time.Hour))
	c := &clientCap{interval: int64(iv), start: time.Now()}
	burst := max(int64(perSecond), 1) // a second's worth, at least one
	c.window = burst * c.interval
	c.now = func() int64 { return int64(time.Since(c.start)) }
	return c
}

// allow takes a token, reporting false (and counting it) when there is
// none. A nil *clientCap allows everything.
func (c *clientCap) allow() bool {
	if c == nil {
		return true
	}
	now := c.now()
	for {
		old := c.tat.Load()
		t := max(old, now)
		if t+c.interval-now > c.window {
			c.capped.Add(1)
			return false
		}
		if c.tat.CompareAndSwap(old, t+c.interval) {
			return true
		}
	}
}

// count is how many decisions were turned down (0 for a nil cap).
func (c *clientCap) count() uint64 {
	if c == nil {
		return 0
	}
	return c.capped.Load()
}
