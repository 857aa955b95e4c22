package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestCheckConfigHidesCollectorToken: --check-config (and start-up) refuse
// a malformed OTEL_EXPORTER_OTLP_HEADERS without printing it: the README
// promises that no secret is printed (the collector's token was, whole;
// found by an audit).
func TestCheckConfigHidesCollectorToken(t *testing.T) {
	const secret = "s3cr3t-collector-token-0123"
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization: Bearer "+secret)
	var stdout, stderr bytes.Buffer
	code := run([]string{"--check-config", "../../configs/example.json", "--upstream", "http://127.0.0.1:9"}, &stdout, &stderr, nil)
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	if strings.Contains(stdout.String()+stderr.String(), secret) {
		t.Errorf("the collector token was printed: %q", stderr.String())
	}
}

// TestStartLogHidesEndpointPassword: the "tracing on" start line logs the
// endpoint with the password of its userinfo (basic authentication to the
// collector) redacted.
func TestStartLogHidesEndpointPassword(t *testing.T) {
	const secret = "s3cr3t-basic-pass"
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://user:"+secret+"@127.0.0.1:1")
	t.Setenv("OTEL_TRACES_SAMPLER", "always_off")
	e := startEdge(t, "--demo")
	if strings.Contains(e.stderr.String(), secret) {
		t.Errorf("the collector password is in the log")
	}
}
