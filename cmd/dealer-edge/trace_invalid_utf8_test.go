package main

import (
	"strings"
	"sync"
	"testing"
)

// A client chooses the url.path attribute of its request's server span
// (the percent-decoded path) and, under the default parent-based sampler,
// whether the request is traced at all (a sampled traceparent). OTLP
// carries strings as protobuf strings, which must be valid UTF-8: the
// exporter writes every name and string attribute as valid UTF-8 (a bad
// byte becomes U+FFFD), so a path like /dealer/%FF is recorded and the
// other spans of its batch are exported with it. Until 2026-11-27 the
// marshalling failed on such a span, the exporter sent the truncated
// message anyway, and the collector refused the whole batch (up to 512
// spans of other clients): one such request per batch interval hid every
// trace of the instance.
func TestInvalidUTF8PathDoesNotDropTheBatch(t *testing.T) {
	recv := startOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", recv.url)
	t.Setenv("OTEL_TRACES_SAMPLER", "parentbased_always_off")
	// A long batch interval puts both requests in one export.
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "300")
	e := startEdge(t, "--demo")

	const sampled = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	var wg sync.WaitGroup
	for _, rq := range []struct{ path, id string }{
		{"/dealer/%FF%FE/listing", "hostile-path"},
		{"/dealer/NOS/listing?page_size=2", "honest-client"},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.get(rq.path, "demo-key-alpha", "X-Request-ID", rq.id, "traceparent", sampled)
		}()
	}
	wg.Wait()
	// trace fails the test when an export does not decode.
	tr := recv.trace(t, "honest-client", func(spanTree) bool { return true })
	if attr(tr.root, "http.response.status_code") != "200" {
		t.Errorf("honest request's span: %v", attrs(tr.root))
	}
	hostile := recv.trace(t, "hostile-path", func(spanTree) bool { return true })
	if got := attr(hostile.root, "url.path"); !strings.HasPrefix(got, "/dealer/\uFFFD") {
		t.Errorf("url.path %q, want the bad bytes as U+FFFD", got)
	}
}

// TestLongPathCutAtCharacter: url.path is cut to 256 bytes before a
// character that does not fit whole. Until 2026-11-27 a path whose 256th
// byte was inside a multi-byte character (here a percent-encoded "€" whose
// first byte is the 256th) was cut inside it and exported ending in U+FFFD.
func TestLongPathCutAtCharacter(t *testing.T) {
	recv := startOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", recv.url)
	t.Setenv("OTEL_TRACES_SAMPLER", "always_on")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20")
	e := startEdge(t, "--demo")

	prefix := "/dealer/" + strings.Repeat("a", 255-len("/dealer/")) // 255 bytes
	r := e.get(prefix+"%E2%82%AC/listing", "demo-key-alpha", "X-Request-ID", "long-euro")
	if r.status < 400 || r.status >= 500 { // not a service: a problem, whichever
		t.Fatalf("status %d", r.status)
	}
	tr := recv.trace(t, "long-euro", func(spanTree) bool { return true })
	if got := attr(tr.root, "url.path"); got != prefix {
		t.Errorf("url.path %q (%d bytes), want the %d bytes before the \"€\"", got, len(got), len(prefix))
	}
}
