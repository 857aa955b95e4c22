package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestTracingDroppedSpansMetric: spans the exporter drops are counted on
// the admin /metrics, by reason (README, metrics table and "Tracing"):
// against a collector that never answers, a batch queue of 4
// (OTEL_BSP_MAX_QUEUE_SIZE) overflows, queue_full, and the export that
// times out (OTEL_EXPORTER_OTLP_TIMEOUT) loses its batch, export_failed.
// Before 2026-11-27 nothing said a span was lost.
func TestTracingDroppedSpansMetric(t *testing.T) {
	release := make(chan struct{})
	stalled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so that the server sees the client give up
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(stalled.Close)
	t.Cleanup(func() { close(release) })

	cfgPath := t.TempDir() + "/edge.json"
	writeConfig(t, cfgPath, `{}`)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", stalled.URL)
	t.Setenv("OTEL_TRACES_SAMPLER", "always_on")
	t.Setenv("OTEL_BSP_MAX_QUEUE_SIZE", "4")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20")
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "500")
	e := startEdge(t, "--demo", "--config", cfgPath)

	const queueFull = `edge_trace_spans_dropped_total{reason="queue_full"}`
	const exportFailed = `edge_trace_spans_dropped_total{reason="export_failed"}`
	m := e.scrape()
	if _, ok := m[queueFull]; !ok {
		t.Fatalf("%s not exported with tracing on", queueFull)
	}
	if _, ok := m[exportFailed]; !ok {
		t.Fatalf("%s not exported with tracing on", exportFailed)
	}
	for _, reason := range []string{"rejected", "shutdown"} {
		s := `edge_trace_spans_dropped_total{reason="` + reason + `"}`
		if v, ok := m[s]; !ok {
			t.Errorf("%s not exported with tracing on", s)
		} else if v != 0 {
			t.Errorf("%s = %v at start, want 0", s, v)
		}
	}

	// Each request ends several spans (server, rate limit, cache, upstream
	// calls): far more than a queue of 4 behind a stalled export holds.
	for i := range 20 {
		if r := e.get(fmt.Sprintf("/dealer/REWIND/listing?page_size=%d", i+1), "demo-key-alpha"); r.status != 200 {
			t.Fatalf("request %d: status %d", i, r.status)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		m = e.scrape()
		if m[queueFull] > 0 && m[exportFailed] > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 20 traced requests against a stalled collector: %s = %v, %s = %v; want both above 0",
				queueFull, m[queueFull], exportFailed, m[exportFailed])
		}
		time.Sleep(100 * time.Millisecond)
	}
}
