package tracing

import (
	"slices"
	"strings"
	"testing"
)

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

// TestSamplerVariablesIgnoredWhenTracingOff: the sampler variables are
// read as OTEL_EXPORTER_OTLP_PROTOCOL is. A platform that injects
// OTEL_TRACES_SAMPLER=parentbased_jaeger_remote with its argument
// ("endpoint=http://jaeger:5778,pollingIntervalMs=5000,
// initialSamplingRate=0.25", the form the specification gives it) into
// every container, for SDKs that have that sampler, stopped an edge whose
// tracing is off (no endpoint, OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER=none)
// from starting, and --check-config failed it; so did a zipkin exporter
// list. With tracing on they are still refused, naming the variable, and a
// value that is not taken leaves the file's.
func TestSamplerVariablesIgnoredWhenTracingOff(t *testing.T) {
	jaeger := map[string]string{EnvSampler: "parentbased_jaeger_remote",
		EnvSamplerArg: "endpoint=http://jaeger:5778,pollingIntervalMs=5000,initialSamplingRate=0.25"}
	with := func(m map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	file := Config{Sampler: SamplerParentBasedTraceIDRatio, SamplerArg: 0.01}
	for name, env := range map[string]map[string]string{
		"no endpoint":         jaeger,
		"sdk disabled":        with(jaeger, EnvEndpoint, "http://otel-collector:4318", EnvSDKDisabled, "true"),
		"exporter none":       with(jaeger, EnvEndpoint, "http://otel-collector:4318", EnvTracesExporter, "none"),
		"xray, ratio 2":       {EnvSampler: "xray", EnvSamplerArg: "2"},
		"zipkin, no endpoint": {EnvTracesExporter: "zipkin"},
		// On, with a sampler that reads no argument: the argument is
		// not read (the specification: an invalid one is ignored).
		"always_on with a jaeger argument": with(jaeger, EnvSampler, "always_on", EnvEndpoint, "http://otel-collector:4318"),
	} {
		c, err := file.WithEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		if err == nil {
			err = c.Validate()
		}
		if err != nil {
			t.Errorf("%s: tracing enabled %v, start refused: %v", name, c.Enabled(), err)
		}
		wantSampler := file.Sampler
		if slices.Contains(Samplers, env[EnvSampler]) {
			wantSampler = env[EnvSampler] // a sampler the edge has is taken
		}
		if c.Sampler != wantSampler || c.SamplerArg != file.SamplerArg {
			t.Errorf("%s: sampler %q arg %v, want %q and the file's arg", name, c.Sampler, c.SamplerArg, wantSampler)
		}
	}
	for name, c := range map[string]struct {
		env  map[string]string
		want string
	}{
		"jaeger sampler":                   {with(jaeger, EnvSamplerArg, "0.5", EnvEndpoint, "http://otel-collector:4318"), EnvSampler},
		"jaeger argument":                  {with(jaeger, EnvSampler, "traceidratio", EnvEndpoint, "http://otel-collector:4318"), EnvSamplerArg},
		"jaeger argument, default sampler": {with(jaeger, EnvSampler, "", EnvEndpoint, "http://otel-collector:4318"), EnvSamplerArg},
		"ratio 2":                          {map[string]string{EnvSamplerArg: "2", EnvEndpoint: "http://otel-collector:4318"}, EnvSamplerArg},
		"zipkin":                           {map[string]string{EnvTracesExporter: "zipkin", EnvEndpoint: "http://otel-collector:4318"}, EnvTracesExporter},
	} {
		got, err := file.WithEnv(func(k string) (string, bool) { v, ok := c.env[k]; return v, ok })
		if err == nil {
			err = got.Validate() // as start-up and --check-config do next
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s, tracing on: error %v, want one naming %s", name, err, c.want)
		}
	}
}
