package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// TestTracingExportErrorsAreJSONEventLines: standard error carries JSON
// lines only, every event line behind log.max_event_lines_per_sec (README,
// Logs): the tracing SDK's error for a span export that fails (a collector
// that cannot be reached) is a JSON event line, and nothing is written
// with the standard library logger. Before 2026-11-27 the SDK's default
// error handler wrote it there as plain text ("2026/11/27 10:33:05
// tracing: export: Post ...").
func TestTracingExportErrorsAreJSONEventLines(t *testing.T) {
	// A port with nothing listening.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()

	var std syncBuffer
	log.SetOutput(&std) // where the stdlib default logger (and so the SDK's default error handler) writes
	defer log.SetOutput(os.Stderr)

	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+dead)
	t.Setenv("OTEL_TRACES_SAMPLER", "always_on")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20")
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "300")
	e := startEdge(t, "--demo")
	for i := range 5 {
		e.get(fmt.Sprintf("/dealer/NOS/listing?page_size=%d", 1+i), "demo-key-alpha")
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && std.String() == "" && !strings.Contains(e.stderr.String(), "export") {
		time.Sleep(50 * time.Millisecond)
	}
	if s := std.String(); s != "" {
		t.Errorf("the edge wrote a non-JSON line to standard error, outside the event log and its rate limit:\n%s", strings.TrimSpace(s))
	}
	if !strings.Contains(e.stderr.String(), "export") {
		t.Errorf("no JSON event line about the failed span export")
	}
}

// TestAdminErrorsAreProblemJSON: admin errors are
// application/problem+json (README, Admin endpoints), also for requests
// the admin server cannot take (a body over its 1 KiB limit, a header
// block too large) and for an unknown profile under /debug/pprof/. Before
// 2026-11-27 these got fasthttp's or the profiler's text/plain answers (a
// 2 KB body to /admin/reload was "400 Error when parsing request").
func TestAdminErrorsAreProblemJSON(t *testing.T) {
	e := startEdge(t, "--demo")
	check := func(name string, req *http.Request, wantStatus int) {
		t.Helper()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		ct := resp.Header.Get("Content-Type")
		var p struct {
			Status int `json:"status"`
		}
		if resp.StatusCode != wantStatus || ct != "application/problem+json" || json.Unmarshal(b, &p) != nil || p.Status != resp.StatusCode {
			t.Errorf("%s: %d %s %q; want %d application/problem+json", name, resp.StatusCode, ct, strings.TrimSpace(string(b)), wantStatus)
		}
	}

	big := `{"note":"` + strings.Repeat("a", 2000) + `"}`
	req, _ := http.NewRequest("POST", e.admin+"/admin/reload", strings.NewReader(big))
	req.Header.Set("Content-Type", "application/json")
	check("2 KB JSON body to /admin/reload", req, http.StatusRequestEntityTooLarge)

	req, _ = http.NewRequest("GET", e.admin+"/metrics", nil)
	req.Header.Set("X-Filler", strings.Repeat("b", 9000))
	check("9 KB header to /metrics", req, http.StatusRequestHeaderFieldsTooLarge)

	req, _ = http.NewRequest("GET", e.admin+"/debug/pprof/no-such-profile", nil)
	check("unknown pprof profile", req, http.StatusNotFound)
}
