package tracing

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestDroppedSpansCounted: every sampled span that does not reach the
// collector is counted, by reason (README, "Tracing" and the metrics
// table, edge_trace_spans_dropped_total): with the collector stalled,
// the spans over the batch queue's size are queue_full, and the spans of
// each batch whose export timed out are export_failed. Before 2026-11-27
// the batch processor dropped them without a word outside.
func TestDroppedSpansCounted(t *testing.T) {
	const queue, burst = 8, 100
	var requests atomic.Int32
	arrived := make(chan struct{}, 16)
	release := make(chan struct{})
	stalled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		_, _ = io.Copy(io.Discard, r.Body) // so that the server sees the client give up
		arrived <- struct{}{}
		select { // never answers; the exporter gives up at its timeout
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer stalled.Close()
	defer close(release)
	tr, err := New(Config{TracesEndpoint: stalled.URL, Sampler: SamplerAlwaysOn, Export: ExportConfig{Timeout: 300 * time.Millisecond}},
		Options{MaxQueueSize: queue, BatchTimeout: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = tr.Shutdown(ctx)
	}()
	end := func(n int) {
		for range n {
			_, sp := tr.Tracer().Start(context.Background(), "x")
			sp.End()
		}
	}
	if d := tr.Dropped(); d != (Dropped{}) {
		t.Fatalf("dropped %+v before any span", d)
	}

	// One span, whose export the collector holds: the batch processor is
	// now busy exporting, and nothing leaves its queue.
	end(1)
	select {
	case <-arrived:
	case <-time.After(5 * time.Second):
		t.Fatal("no export reached the collector")
	}
	end(burst)
	if d := tr.Dropped(); d.QueueFull != burst-queue {
		t.Errorf("after %d spans into a queue of %d behind a stalled export: %d counted queue_full, want %d", burst, queue, d.QueueFull, burst-queue)
	}

	// The held export times out (1 span), then the queued spans' export
	// does (8): each is counted once, as export_failed.
	deadline := time.Now().Add(10 * time.Second)
	for tr.Dropped().ExportFailed < 1+queue && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if d := tr.Dropped(); d != (Dropped{QueueFull: burst - queue, ExportFailed: 1 + queue}) {
		t.Errorf("dropped %+v, want queue_full %d and export_failed %d: every span of the %d counted once", d, burst-queue, 1+queue, 1+burst)
	}
	if n := requests.Load(); n < 2 {
		t.Errorf("%d export requests, want 2 (the first span, then the queue)", n)
	}
}
