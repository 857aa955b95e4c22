package tracing

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// TestNegativeQueueSize: OTEL_BSP_MAX_QUEUE_SIZE=-1 (a value outside
// the item's range). The OpenTelemetry configuration specification: such a
// value SHOULD produce a warning and be treated as not set; the README: a
// malformed tracing value stops the start with an error naming it. New
// panics instead (make(chan, -1) in the batch processor), so the edge
// crashes with a Go stack trace at start.
func TestNegativeQueueSize(t *testing.T) {
	rec := startReceiver(t)
	t.Setenv(EnvBSPMaxQueueSize, "-1")
	var tr *Tracing
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("New panicked with %s=-1: %v", EnvBSPMaxQueueSize, r)
			}
		}()
		tr, err = New(Config{TracesEndpoint: rec.srv.URL, Sampler: SamplerAlwaysOn}, Options{})
	}()
	if err != nil {
		return // refused with an error: fine
	}
	_, sp := tr.Tracer().Start(context.Background(), "x")
	sp.End()
	_ = tr.Shutdown(context.Background())
	if d := tr.Dropped(); d.QueueFull != 0 {
		t.Errorf("span dropped as queue_full with %s=-1: %+v", EnvBSPMaxQueueSize, d)
	}
}

// TestZeroQueueSize: OTEL_BSP_MAX_QUEUE_SIZE=0 is outside the
// valid range too (a queue must hold a span); the gate's limit of 0 drops
// every sampled span as queue_full, silently turning tracing off.
func TestZeroQueueSize(t *testing.T) {
	rec := startReceiver(t)
	t.Setenv(EnvBSPMaxQueueSize, "0")
	tr, err := New(Config{TracesEndpoint: rec.srv.URL, Sampler: SamplerAlwaysOn}, Options{})
	if err != nil {
		return
	}
	for range 10 {
		_, sp := tr.Tracer().Start(context.Background(), "x")
		sp.End()
	}
	_ = tr.Shutdown(context.Background())
	if d := tr.Dropped(); d.QueueFull != 0 {
		t.Errorf("%d of 10 spans dropped as queue_full with %s=0 (want the value ignored, or refused at start)", d.QueueFull, EnvBSPMaxQueueSize)
	}
}

// TestZeroScheduleDelayIdle: OTEL_BSP_SCHEDULE_DELAY=0 (or a
// negative value), which the README says the batch processor reads, makes
// its timer fire at once and be re-armed at zero after every (empty)
// export: the processor's goroutine spins, burning a CPU core while the
// edge is idle, for as long as it runs.
func TestZeroScheduleDelayIdle(t *testing.T) {
	rec := startReceiver(t)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "0")
	before := cpuTime(t)
	start := time.Now()
	tr, err := New(Config{TracesEndpoint: rec.srv.URL, Sampler: SamplerAlwaysOn}, Options{})
	if err != nil {
		return // refused at start: fine
	}
	time.Sleep(500 * time.Millisecond) // idle: no span at all
	used, wall := cpuTime(t)-before, time.Since(start)
	_ = tr.Shutdown(context.Background())
	if used > wall/4 {
		t.Errorf("idle tracer with OTEL_BSP_SCHEDULE_DELAY=0 used %v of CPU in %v", used, wall)
	}
}

func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestScheduleDelayOverflowIdle: a positive OTEL_BSP_SCHEDULE_DELAY too
// large for a time.Duration in milliseconds wrapped negative, and the
// batch processor spun as with 0.
func TestScheduleDelayOverflowIdle(t *testing.T) {
	rec := startReceiver(t)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "9300000000000") // 9.3e12 ms * 1e6 > MaxInt64
	before := cpuTime(t)
	start := time.Now()
	tr, err := New(Config{TracesEndpoint: rec.srv.URL, Sampler: SamplerAlwaysOn}, Options{})
	if err != nil {
		return
	}
	time.Sleep(500 * time.Millisecond)
	used, wall := cpuTime(t)-before, time.Since(start)
	_ = tr.Shutdown(context.Background())
	if used > wall/4 {
		t.Errorf("idle tracer with OTEL_BSP_SCHEDULE_DELAY=9300000000000 used %v of CPU in %v", used, wall)
	}
}
