package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuf is a goroutine-safe bytes.Buffer for log.SetOutput.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestTracingExportErrorsAreJSONEventLines: README "Logs" promises
// JSON lines (log/slog) on standard error, every event line behind
// log.max_event_lines_per_sec. A collector that cannot be reached makes
// the OpenTelemetry SDK report the exporter's error through its global
// error handler, which the edge never sets: the default writes it with the
// standard library logger ("2026/11/27 10:33:05 tracing: export: Post
// ..."), a plain-text line outside the JSON log and its rate limit.
func TestTracingExportErrorsAreJSONEventLines(t *testing.T) {
	// A port with nothing listening.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()

	var std lockedBuf
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

// TestAdminErrorsAreProblemJSON: README "Admin endpoints": "Answers
// are JSON; errors are application/problem+json". The admin fasthttp
// server has no ErrorHandler, so requests it cannot take (a body over its
// 1 KiB MaxRequestBodySize, a header block too large, garbage) get
// fasthttp's text/plain answers, a JSON body over 1 KiB to /admin/reload
// being told "400 Error when parsing request"; and an unknown profile
// under /debug/pprof/ gets the profiler's text/plain 404.
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
