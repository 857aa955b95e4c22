package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// TestCheckConfigTracingCertificate: README (Tracing) says a
// malformed exporter variable "stops the start and --check-config with the
// variable's name", and --check-config promises to validate "exactly as
// start-up does". A CA file that does not exist, named by
// OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE, must fail both, both naming that
// variable.
func TestCheckConfigTracingCertificate(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-ca.pem")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "https://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", missing)
	const want = "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE"

	var out, errb bytes.Buffer
	check := run([]string{"--check-config", "../../configs/example.json", "--upstream", "http://127.0.0.1:9"}, &out, &errb, nil)
	checkMsg := strings.TrimSpace(out.String() + errb.String())

	out.Reset()
	errb.Reset()
	h := &hooks{signals: make(chan os.Signal, 1), getenv: func(string) string { return "" }}
	h.signals <- os.Interrupt // stop at once if it does start
	start := run([]string{"--config", "../../configs/example.json", "--upstream", "http://127.0.0.1:9",
		"--listen", "127.0.0.1:0", "--admin-listen", "off"}, &out, &errb, h)
	startMsg := lastLine(errb.String())

	if check != 2 || !strings.Contains(checkMsg, want) {
		t.Errorf("--check-config: exit %d, %q; want 2 naming %s (start-up refuses it: exit %d, %q)", check, checkMsg, want, start, startMsg)
	}
	if start == 0 || !strings.Contains(startMsg, want) {
		t.Errorf("start: exit %d, %q; want a failed start naming %s", start, startMsg, want)
	}
}

// TestDuplicateTraceparent: a request with two traceparent header
// lines. traceparent is a single-valued field: its lines combined (RFC 9110
// 5.3, as the edge does for tracestate) are not a valid traceparent, and
// the W3C Trace Context test suite (test_traceparent_duplicated) expects a
// new trace, neither of the two trace ids. The edge keeps the first line
// and passes it on.
func TestDuplicateTraceparent(t *testing.T) {
	fk := fake.NewServer(fake.Options{})
	var mu sync.Mutex
	var seen []string
	upstreamURL := serveUpstream(t, func(ctx *fasthttp.RequestCtx) {
		if !strings.HasPrefix(string(ctx.Path()), "/dealers/v1/key-index") {
			mu.Lock()
			for _, v := range ctx.Request.Header.PeekAll("traceparent") {
				seen = append(seen, string(ctx.Path())+" "+string(v))
			}
			mu.Unlock()
		}
		fk.Handler()(ctx)
	})
	e := startEdge(t, "--upstream", upstreamURL)

	req, err := http.NewRequest("GET", e.base+"/dealer/NOS/listing?page_size=2", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Api-Key", "demo-key-alpha")
	req.Header["Traceparent"] = []string{
		"00-12345678901234567890123456789011-1234567890123456-01",
		"00-12345678901234567890123456789012-1234567890123456-01",
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range seen {
		if strings.Contains(s, "1234567890123456789012345678901") {
			t.Errorf("a duplicated traceparent was continued: upstream call %s", s)
		}
	}
}
