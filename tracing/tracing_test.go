package tracing

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// TestDecideAgreesWithSDKSampler: for every sampler and ratio, the head
// decision is the SDK sampler's decision on the same trace id and parent,
// so the cheap check in front of the SDK never samples a request the SDK
// would drop, nor drops one it would keep.
func TestDecideAgreesWithSDKSampler(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	parents := []struct {
		name string
		tp   func() []byte
	}{
		{"no parent", func() []byte { return nil }},
		{"sampled parent", func() []byte { return randomTraceparent(rng, true) }},
		{"unsampled parent", func() []byte { return randomTraceparent(rng, false) }},
	}
	for _, sampler := range Samplers {
		for _, arg := range []float64{0, 0.01, 0.5, 1} {
			tr := &Tracing{head: newHead(sampler, arg)}
			sdk := tr.head.sdkSampler()
			for _, p := range parents {
				t.Run(sampler+"/"+p.name, func(t *testing.T) {
					const n = 4000
					for range n {
						tp := p.tp()
						d := tr.Decide(tp)
						ctx := context.Background()
						tid := d.tid
						if d.parent {
							ctx = trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
								TraceID: d.tid, SpanID: d.sid, TraceFlags: d.flags, Remote: true}))
						}
						// An unsampled root has only the low half of its id
						// drawn: the half the ratio rule reads.
						res := sdk.ShouldSample(sdktrace.SamplingParameters{ParentContext: ctx, TraceID: tid, Name: "x"})
						if got := res.Decision == sdktrace.RecordAndSample; got != d.sampled {
							t.Fatalf("arg %v traceparent %s trace %s: head %v, SDK %v", arg, tp, tid, d.sampled, got)
						}
					}
				})
			}
		}
	}
}

// TestDecideRatio: roots are sampled at the configured ratio (within a wide
// statistical margin) and carry a valid trace id.
func TestDecideRatio(t *testing.T) {
	for _, c := range []struct {
		name  string
		ratio float64
	}{{"1%", 0.01}, {"25%", 0.25}, {"none", 0}, {"all", 1}} {
		t.Run(c.name, func(t *testing.T) {
			tr := &Tracing{head: newHead(SamplerParentBasedTraceIDRatio, c.ratio)}
			const n = 200000
			got := 0
			for range n {
				d := tr.Decide(nil)
				if d.Sampled() {
					got++
					if !d.tid.IsValid() {
						t.Fatal("sampled root with an invalid trace id")
					}
				}
			}
			want := c.ratio * n
			if diff := float64(got) - want; diff > 5*sqrt(want)+1 || -diff > 5*sqrt(want)+1 {
				t.Errorf("sampled %d of %d, want about %.0f", got, n, want)
			}
		})
	}
}

func sqrt(x float64) float64 {
	z := x/2 + 1
	for range 30 {
		z = (z + x/z) / 2
	}
	return z
}

// TestDecideAllocatesNothing: the per-request decision costs no allocation,
// sampled or not, with or without a client's traceparent.
func TestDecideAllocatesNothing(t *testing.T) {
	tr := &Tracing{head: newHead(SamplerParentBasedTraceIDRatio, 0.5)}
	tp := []byte("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	if a := testing.AllocsPerRun(1000, func() { _ = tr.Decide(nil); _ = tr.Decide(tp) }); a != 0 {
		t.Errorf("Decide allocates %.1f times", a)
	}
	var off *Tracing
	if off.Decide(tp).Sampled() {
		t.Error("a nil Tracing sampled a request")
	}
}

// TestDecideKeepsSampledFlagOnly: of a client's trace-flags only the
// sampled bit reaches the server span (and the traceparent of its calls):
// W3C Trace Context 3.2.2.5, the other flags are not defined and vendors
// set them to zero. Before 2026-11-27 every bit was copied.
func TestDecideKeepsSampledFlagOnly(t *testing.T) {
	tr := &Tracing{head: newHead(SamplerParentBasedAlwaysOn, 0)}
	for _, c := range []struct {
		name, flags string
		want        trace.TraceFlags
	}{
		{"sampled", "01", 0x01},
		{"unsampled", "00", 0x00},
		{"all flags", "ff", 0x01},
		{"all but sampled", "fe", 0x00},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := tr.Decide([]byte("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-" + c.flags))
			if d.flags != c.want || d.Sampled() != c.want.IsSampled() {
				t.Errorf("flags %s: decision flags %#02x sampled %v, want %#02x", c.flags, byte(d.flags), d.Sampled(), byte(c.want))
			}
		})
	}
}

func randomTraceparent(rng *rand.Rand, sampled bool) []byte {
	var id [24]byte
	for i := 0; i < 24; i += 8 {
		binary.BigEndian.PutUint64(id[i:], rng.Uint64()|1)
	}
	flags := "00"
	if sampled {
		flags = "01"
	}
	return []byte("00-" + hex.EncodeToString(id[:16]) + "-" + hex.EncodeToString(id[16:]) + "-" + flags)
}

// TestWithEnv: each variable that is set wins over its field; unset or
// empty ones leave the file's value; bad values are errors naming the
// variable.
func TestWithEnv(t *testing.T) {
	file := Config{Endpoint: "http://file:4318", Sampler: SamplerTraceIDRatio, SamplerArg: 0.2, ServiceName: "file",
		ResourceAttributes: map[string]string{"a": "file", "b": "file"}}
	cases := []struct {
		name    string
		env     map[string]string
		check   func(Config) bool
		wantErr string
	}{
		{"nothing set keeps the file", map[string]string{}, func(c Config) bool {
			return c.Endpoint == "http://file:4318" && c.Sampler == SamplerTraceIDRatio && c.SamplerArg == 0.2 && c.ServiceName == "file" && !c.Disabled
		}, ""},
		{"empty values are unset", map[string]string{EnvEndpoint: "", EnvSampler: " "}, func(c Config) bool {
			return c.Endpoint == "http://file:4318" && c.Sampler == SamplerTraceIDRatio
		}, ""},
		{"every variable wins", map[string]string{
			EnvEndpoint: "http://env:4318", EnvTracesEndpoint: "http://env:4318/custom", EnvSampler: "ALWAYS_ON",
			EnvSamplerArg: "0.5", EnvServiceName: "env", EnvResourceAttributes: "b=env%20b,c=env"},
			func(c Config) bool {
				return c.Endpoint == "http://env:4318" && c.TracesEndpoint == "http://env:4318/custom" && c.Sampler == SamplerAlwaysOn &&
					c.SamplerArg == 0.5 && c.ServiceName == "env" &&
					c.ResourceAttributes["a"] == "file" && c.ResourceAttributes["b"] == "env b" && c.ResourceAttributes["c"] == "env"
			}, ""},
		{"sdk disabled", map[string]string{EnvSDKDisabled: "TRUE"}, func(c Config) bool { return c.Disabled && !c.Enabled() }, ""},
		{"sdk disabled false", map[string]string{EnvSDKDisabled: "false"}, func(c Config) bool { return !c.Disabled && c.Enabled() }, ""},
		{"bad ratio", map[string]string{EnvSamplerArg: "half"}, nil, EnvSamplerArg},
		{"bad resource attributes", map[string]string{EnvResourceAttributes: "novalue"}, nil, EnvResourceAttributes},
		{"exporter variables", map[string]string{
			EnvHeaders: "authorization=Bearer%20t,x-tenant=a", EnvTimeout: "2500", EnvCompression: "GZIP",
			EnvCertificate: "/ca.pem", EnvClientCertificate: "/c.pem", EnvClientKey: "/k.pem"},
			func(c Config) bool {
				e := c.Export
				return e.Headers["authorization"] == "Bearer t" && e.Headers["x-tenant"] == "a" && len(e.Headers) == 2 &&
					e.Timeout == 2500*time.Millisecond && e.Gzip && e.CAFile == "/ca.pem" && e.ClientCertFile == "/c.pem" && e.ClientKeyFile == "/k.pem"
			}, ""},
		{"traces variables win over the generic ones", map[string]string{
			EnvHeaders: "a=generic", EnvTracesHeaders: "b=traces", EnvTimeout: "1000", EnvTracesTimeout: "3000",
			EnvCompression: "gzip", EnvTracesCompression: "none"},
			func(c Config) bool {
				e := c.Export
				return e.Headers["b"] == "traces" && len(e.Headers) == 1 && e.Timeout == 3*time.Second && !e.Gzip
			}, ""},
		{"bad timeout", map[string]string{EnvTracesTimeout: "10s"}, nil, EnvTracesTimeout},
		{"zero timeout", map[string]string{EnvTimeout: "0"}, nil, EnvTimeout},
		{"bad compression", map[string]string{EnvCompression: "zstd"}, nil, EnvCompression},
		{"bad headers", map[string]string{EnvHeaders: "novalue"}, nil, EnvHeaders},
		{"client certificate without key", map[string]string{EnvClientCertificate: "/c.pem"}, nil, EnvClientKey},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := file.WithEnv(func(k string) (string, bool) { v, ok := c.env[k]; return v, ok })
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one naming %s", err, c.wantErr)
				}
				return
			}
			if err != nil || !c.check(got) {
				t.Errorf("got %+v, %v", got, err)
			}
			if file.ResourceAttributes["b"] != "file" {
				t.Error("WithEnv changed the file's map")
			}
		})
	}
}

// TestValidate: bad fields are errors naming them.
func TestValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"unknown sampler", Config{Sampler: "jaeger_remote"}, "tracing.sampler"},
		{"ratio above 1", Config{SamplerArg: 1.5}, "tracing.sampler_arg"},
		{"negative ratio", Config{SamplerArg: -0.1}, "tracing.sampler_arg"},
		{"endpoint not a URL", Config{Endpoint: "collector:4318"}, "tracing.endpoint"},
		{"traces endpoint with another scheme", Config{TracesEndpoint: "grpc://c:4317"}, "tracing.traces_endpoint"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one naming %s", err, c.want)
			}
		})
	}
	if err := (Config{Endpoint: "http://c:4318", Sampler: SamplerAlwaysOn, SamplerArg: 0.3}).Validate(); err != nil {
		t.Errorf("valid config: %v", err)
	}
}

// TestNewOffWithoutEndpoint: no endpoint, or disabled, is tracing off (nil).
func TestNewOffWithoutEndpoint(t *testing.T) {
	for _, cfg := range []Config{{}, {Endpoint: "http://c:4318", Disabled: true}} {
		tr, err := New(cfg, Options{})
		if err != nil || tr != nil {
			t.Errorf("New(%+v) = %v, %v; want nil, nil", cfg, tr, err)
		}
	}
	tr, err := New(Config{Endpoint: "http://127.0.0.1:1/"}, Options{})
	if err != nil || tr == nil {
		t.Fatalf("New with an endpoint: %v, %v", tr, err)
	}
	defer tr.Shutdown(context.Background())
	if tr.URL() != "http://127.0.0.1:1/v1/traces" || !strings.Contains(tr.Sampler(), "ParentBased") {
		t.Errorf("url %s sampler %s", tr.URL(), tr.Sampler())
	}
}
