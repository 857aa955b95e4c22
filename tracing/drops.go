package tracing

import (
	"context"
	"sync"
	"sync/atomic"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Reasons a span is dropped: the values of the reason label of
// edge_trace_spans_dropped_total.
const (
	// DropQueueFull: the batch queue was full (the collector is slower
	// than the spans come, or does not answer).
	DropQueueFull = "queue_full"
	// DropExportFailed: the span's batch could not be exported (the
	// collector refused it, or kept failing until the export timeout).
	DropExportFailed = "export_failed"
	// DropRejected: the collector took the span's batch but refused the
	// span, saying so in its answer (an OTLP partial success with
	// rejected_spans).
	DropRejected = "rejected"
	// DropShutdown: the span ended after tracing began to shut down (its
	// final flush had started), when nothing exports any more.
	DropShutdown = "shutdown"
)

// Dropped counts the sampled spans that never reached the collector since
// start, by reason.
type Dropped struct {
	QueueFull, ExportFailed, Rejected, Shutdown uint64
}

// drops counts dropped spans, and the sampled spans ended but not yet
// handed to the exporter, which the gate bounds.
type drops struct {
	limit     int64 // the batch queue's size
	pending   atomic.Int64
	queueFull atomic.Uint64
	failed    atomic.Uint64
	rejected  atomic.Uint64
	shutdown  atomic.Uint64
}

// handedOver records that the batch processor handed n spans to the
// exporter: they have left its queue.
func (d *drops) handedOver(n int) {
	if d != nil {
		d.pending.Add(-int64(n))
	}
}

// exportFailed counts the n spans of a batch that failed.
func (d *drops) exportFailed(n int) {
	if d != nil {
		d.failed.Add(uint64(n))
	}
}

// rejectedByCollector counts n spans the collector refused in a partial
// success.
func (d *drops) rejectedByCollector(n int) {
	if d != nil {
		d.rejected.Add(uint64(n))
	}
}

// afterShutdown counts n spans that arrived when nothing exports any more.
func (d *drops) afterShutdown(n int) {
	if d != nil {
		d.shutdown.Add(uint64(n))
	}
}

// gate is the span processor in front of the SDK's batch span processor.
// The batch processor drops a span it finds its queue full with without a
// word outside (its count is its own), so the gate keeps the sampled spans
// ended but not yet handed to the exporter at most the queue's size, and
// counts the ones over it as dropped instead. Every span in the batch
// queue is one of those, so the queue is never full when the gate lets a
// span through, and no span is dropped uncounted. The bound is exact for
// the queue; the batch being formed (up to OTEL_BSP_MAX_EXPORT_BATCH_SIZE
// spans taken from the queue) is within it too, so under a stalled
// collector the gate may drop up to one batch sooner than the processor
// would have. (A ForceFlush marker takes a queue slot too; the edge never
// calls ForceFlush.)
//
// The gate also counts the spans that end once shutdown has begun: the
// batch processor stops taking spans when its Shutdown starts (it then
// drains its queue and exports a last time), and drops later ones without
// a word; the provider stops calling processors only when every
// processor's Shutdown has returned, which can take the whole flush.
type gate struct {
	next sdktrace.SpanProcessor
	d    *drops
	// mu makes stopping and handing a span on exclusive, so that no span
	// reaches the batch processor once its Shutdown has begun: OnEnd
	// holds it for reading, Shutdown for writing while it sets stopped.
	mu      sync.RWMutex
	stopped bool
}

func (g *gate) OnStart(ctx context.Context, s sdktrace.ReadWriteSpan) { g.next.OnStart(ctx, s) }

func (g *gate) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return // recorded but not sampled: the batch processor exports none
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.stopped {
		g.d.afterShutdown(1)
		return
	}
	if g.d.pending.Add(1) > g.d.limit {
		g.d.pending.Add(-1)
		g.d.queueFull.Add(1)
		return
	}
	g.next.OnEnd(s)
}

// Shutdown stops handing spans on (later ones are counted as
// DropShutdown), then shuts the batch processor down: it flushes its queue.
func (g *gate) Shutdown(ctx context.Context) error {
	g.mu.Lock()
	g.stopped = true
	g.mu.Unlock()
	return g.next.Shutdown(ctx)
}

func (g *gate) ForceFlush(ctx context.Context) error { return g.next.ForceFlush(ctx) }
