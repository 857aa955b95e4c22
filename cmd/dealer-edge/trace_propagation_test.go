package main

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// TestTracingSampledTracestateUnbounded: a tracestate forwarded to the
// internal services is at most 512 printable characters, for an unsampled
// request and for a sampled one (a client traceparent with flag 01 under
// the default parentbased sampler) alike (README, "Propagation"), so a
// client's large tracestate never makes internal calls too large for a
// service's 4 KiB header buffer nor opens the breakers for other clients.
// Before 2026-11-27 a sampled request forwarded its span's tracestate
// whole (a 5.7 KB one: 431 from the services, 503s, breakers open).
func TestTracingSampledTracestateUnbounded(t *testing.T) {
	recv := startOTLPReceiver(t)
	rds := redistest.Start(t)
	fk := fake.NewServer(fake.Options{})
	var mu sync.Mutex
	var seenLens []int
	upstreamURL := serveUpstream(t, func(ctx *fasthttp.RequestCtx) {
		mu.Lock()
		seenLens = append(seenLens, len(ctx.Request.Header.Peek("tracestate")))
		mu.Unlock()
		fk.Handler()(ctx)
	})

	cfgPath := t.TempDir() + "/edge.json"
	writeConfig(t, cfgPath, `{}`) // default sampler: parentbased_traceidratio 1%
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", recv.url)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20")
	e := startEdge(t, "--config", cfgPath, "--redis", rds.Addr, "--upstream", upstreamURL)

	// 22 valid list members of 250-character values: ~5.7 KB, well under
	// the edge's 8 KiB header limit.
	var members []string
	for i := range 22 {
		members = append(members, fmt.Sprintf("v%02d=%s", i, strings.Repeat("a", 250)))
	}
	ts := strings.Join(members, ",")
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"

	// Unsampled: the tracestate is over 512 and is dropped; the call works.
	r := e.get("/dealer/REWIND/listing?page_size=3", "demo-key-alpha",
		"traceparent", "00-"+traceID+"-00f067aa0ba902b7-00", "tracestate", ts)
	if r.status != 200 {
		t.Fatalf("unsampled request: status %d %s", r.status, r.body)
	}
	mu.Lock()
	for _, n := range seenLens {
		if n > 512 {
			t.Errorf("unsampled: upstream got a %d-byte tracestate, want at most 512", n)
		}
	}
	seenLens = nil
	mu.Unlock()

	// Sampled: the same tracestate reaches the internal services whole.
	for i := range 6 {
		r = e.get(fmt.Sprintf("/dealer/NOS/listing?page_size=%d", 3+i), "demo-key-alpha",
			"traceparent", "00-"+traceID+"-00f067aa0ba902b7-01", "tracestate", ts, "X-Request-ID", fmt.Sprintf("big-ts-%d", i))
		if r.status != 200 {
			t.Errorf("sampled request %d: status %d %s, want 200", i, r.status, r.body)
		}
	}
	mu.Lock()
	for _, n := range seenLens {
		if n > 512 {
			t.Errorf("sampled: upstream got a %d-byte tracestate, want at most 512 (README)", n)
			break
		}
	}
	mu.Unlock()

	// Nor do its spans carry it (every span of the trace inherits the
	// server span's tracestate): before 2026-11-27 each exported span
	// held the 5.7 KB.
	tr := recv.trace(t, "big-ts-0", func(st spanTree) bool { return len(st.spans) > 1 })
	for _, sp := range tr.spans {
		if len(sp.TraceState) > 512 {
			t.Errorf("span %q exported with a %d-byte tracestate, want at most 512", sp.Name, len(sp.TraceState))
		}
	}

	// Another client, no trace headers at all.
	r = e.get("/dealer/NOS/listing?page_size=20", "demo-key-beta")
	if r.status != 200 {
		t.Errorf("an unrelated client's request: status %d %s, want 200 (another client's tracestate must not open the breaker)", r.status, r.body)
	}
}

// TestTracingTracestateSplitOverLines: a tracestate sent as two header
// lines is one list, forwarded joined with "," whether the request is
// sampled or not (W3C Trace Context 3.3.1.1: "Multiple tracestate headers
// MUST be combined"; RFC 9110 5.3; README, "Propagation"). Before
// 2026-11-27 the edge kept the first line only.
func TestTracingTracestateSplitOverLines(t *testing.T) {
	recv := startOTLPReceiver(t)
	rds := redistest.Start(t)
	fk := fake.NewServer(fake.Options{})
	var mu sync.Mutex
	var seen []string
	upstreamURL := serveUpstream(t, func(ctx *fasthttp.RequestCtx) {
		if strings.Contains(string(ctx.Path()), "key-index") {
			fk.Handler()(ctx) // the key index's background reads are no request's
			return
		}
		mu.Lock()
		var all []string
		for _, v := range ctx.Request.Header.PeekAll("tracestate") {
			all = append(all, string(v))
		}
		seen = append(seen, strings.Join(all, ","))
		mu.Unlock()
		fk.Handler()(ctx)
	})
	cfgPath := t.TempDir() + "/edge.json"
	writeConfig(t, cfgPath, `{}`)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", recv.url)
	e := startEdge(t, "--config", cfgPath, "--redis", rds.Addr, "--upstream", upstreamURL)

	for i, flag := range []string{"00", "01"} {
		mu.Lock()
		seen = nil
		mu.Unlock()
		req, _ := http.NewRequest("GET", e.base+fmt.Sprintf("/dealer/REWIND/listing?page_size=%d", 4+i), nil)
		req.Header.Set("X-Api-Key", "demo-key-alpha")
		req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-"+flag)
		req.Header.Add("tracestate", "a=1")
		req.Header.Add("tracestate", "b=2")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		mu.Lock()
		if len(seen) == 0 {
			t.Errorf("flag %s: no upstream call (status %d)", flag, resp.StatusCode)
		}
		for _, s := range seen {
			if s != "a=1,b=2" {
				t.Errorf("flag %s: upstream tracestate %q, want \"a=1,b=2\" (all calls: %q)", flag, s, seen)
				break
			}
		}
		mu.Unlock()
	}
}

// serveUpstream serves h on loopback as an internal service (fasthttp's
// default 4 KiB read buffer, as fake.Server.Start) until the test ends,
// and returns its base URL.
func serveUpstream(t *testing.T, h fasthttp.RequestHandler) string {
	t.Helper()
	ln, err := netListen()
	if err != nil {
		t.Fatal(err)
	}
	up := &fasthttp.Server{Handler: h}
	go func() { _ = up.Serve(ln) }()
	t.Cleanup(func() { _ = up.Shutdown() })
	return "http://" + ln.Addr().String()
}
