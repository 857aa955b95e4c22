package main

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// TestClientSampledCappedEndToEnd: a client that sends a sampled
// traceparent on every request has at most tracing.client_sampled_per_second
// of them traced (here 1 a second, a burst of 1) under the default
// parentbased_traceidratio sampler at ratio 0; the others are counted in
// edge_trace_client_sampled_capped_total, still answered 200, and the
// receiver gets exactly the server spans of the traced ones. Before
// 2026-11-29 each of the 30 was traced.
func TestClientSampledCappedEndToEnd(t *testing.T) {
	recv := startOTLPReceiver(t)
	cfgPath := t.TempDir() + "/edge.json"
	writeConfig(t, cfgPath, `{"tracing": {"sampler_arg": 0, "client_sampled_per_second": 1}}`)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", recv.url)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20")
	e := startEdge(t, "--demo", "--config", cfgPath)

	const n = 30
	start := time.Now()
	for i := range n {
		tp := fmt.Sprintf("00-%032x-%016x-01", i+1, i+1)
		if r := e.get("/dealer/REWIND/listing?page_size=3", "demo-key-alpha", "traceparent", tp, "X-Request-ID", fmt.Sprint("capped-", i)); r.status != 200 {
			t.Fatalf("request %d: status %d", i, r.status)
		}
	}
	elapsed := time.Since(start)
	capped := e.scrape()["edge_trace_client_sampled_capped_total"]
	traced := n - int(capped)
	// One token at once, one more each second since.
	if bound := 1 + int(math.Ceil(elapsed.Seconds())); traced < 1 || traced > bound {
		t.Fatalf("%d of %d client-sampled requests traced in %v (capped counted %v); want 1 to %d", traced, n, elapsed, capped, bound)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		recv.mu.Lock()
		servers := 0
		for _, s := range recv.spans {
			if len(s.ParentSpanId) == 8 && attr(s, "edge.request_id") != "" {
				servers++
			}
		}
		recv.mu.Unlock()
		if servers == traced {
			break
		}
		if servers > traced || time.Now().After(deadline) {
			t.Fatalf("receiver has %d server spans, want %d (the requests not capped)", servers, traced)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
