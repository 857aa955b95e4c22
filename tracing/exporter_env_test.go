package tracing

import "testing"

// TestTracesExporterNoneTurnsTracingOff: OTEL_TRACES_EXPORTER=none is the
// OpenTelemetry configuration specification's way to say "no trace
// exporter" (sdk-environment-variables, Exporter selection). The README
// promises the OTEL_* variables are read "as the OpenTelemetry SDKs read
// their configuration" and are what "a platform that injects OTEL_* into
// every pod" expects; such a platform (or an operator) sets the generic
// OTEL_EXPORTER_OTLP_ENDPOINT for metrics and logs and
// OTEL_TRACES_EXPORTER=none for traces. The edge ignores the variable and
// turns tracing on, exporting to a collector told it gets no traces.
func TestTracesExporterNoneTurnsTracingOff(t *testing.T) {
	env := map[string]string{
		EnvEndpoint:            "http://otel-collector:4318",
		"OTEL_TRACES_EXPORTER": "none",
	}
	c, err := Config{}.WithEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	if c.Enabled() {
		t.Errorf("OTEL_TRACES_EXPORTER=none with OTEL_EXPORTER_OTLP_ENDPOINT set: tracing enabled, want off")
	}
}
