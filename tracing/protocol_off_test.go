package tracing

import "testing"

// TestProtocolIgnoredWhenTracingOff: since 2026-11-29 an
// OTEL_EXPORTER_OTLP_PROTOCOL other than http/protobuf is refused at start,
// so that a platform asking for grpc does not start an edge whose every
// export fails. But the check runs whatever the state of tracing: with the
// SDK disabled (OTEL_SDK_DISABLED=true), the trace exporter turned off
// (OTEL_TRACES_EXPORTER=none) or no endpoint at all, nothing is exported,
// yet a platform-wide OTEL_EXPORTER_OTLP_PROTOCOL=grpc (valid, and meant
// for the pod's other SDKs) now stops the edge from starting: an upgrade
// that refuses a deployment that ran the day before.
func TestProtocolIgnoredWhenTracingOff(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"sdk disabled":  {EnvEndpoint: "http://otel-collector:4317", EnvProtocol: "grpc", "OTEL_SDK_DISABLED": "true"},
		"exporter none": {EnvEndpoint: "http://otel-collector:4317", EnvProtocol: "grpc", "OTEL_TRACES_EXPORTER": "none"},
		"no endpoint":   {EnvProtocol: "grpc"},
	} {
		c, err := Config{}.WithEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		if err != nil {
			t.Errorf("%s: tracing enabled %v, start refused: %v", name, c.Enabled(), err)
		}
	}
}
