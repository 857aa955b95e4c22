package tracing

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Sampler names, as OTEL_TRACES_SAMPLER spells them.
const (
	SamplerAlwaysOn                = "always_on"
	SamplerAlwaysOff               = "always_off"
	SamplerTraceIDRatio            = "traceidratio"
	SamplerParentBasedAlwaysOn     = "parentbased_always_on"
	SamplerParentBasedAlwaysOff    = "parentbased_always_off"
	SamplerParentBasedTraceIDRatio = "parentbased_traceidratio"
)

// Samplers lists the supported sampler names.
var Samplers = []string{
	SamplerAlwaysOn, SamplerAlwaysOff, SamplerTraceIDRatio,
	SamplerParentBasedAlwaysOn, SamplerParentBasedAlwaysOff, SamplerParentBasedTraceIDRatio,
}

// Defaults of Config.
const (
	DefaultSampler     = SamplerParentBasedTraceIDRatio
	DefaultSamplerArg  = 0.01
	DefaultServiceName = "dealer-edge"
)

// Config is the tracing configuration. Each field mirrors one standard
// OpenTelemetry environment variable, which wins over the field when set
// (see WithEnv). Tracing is on when an endpoint is set and Disabled is
// false.
type Config struct {
	// Disabled turns tracing off whatever else is set
	// (OTEL_SDK_DISABLED).
	Disabled bool
	// Endpoint is the OTLP/HTTP base URL of the collector, e.g.
	// "http://otel-collector:4318"; "/v1/traces" is appended
	// (OTEL_EXPORTER_OTLP_ENDPOINT).
	Endpoint string
	// TracesEndpoint is the full OTLP/HTTP URL of the traces signal, used
	// as is; it wins over Endpoint (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT).
	TracesEndpoint string
	// Sampler is one of Samplers (OTEL_TRACES_SAMPLER). Empty means
	// DefaultSampler.
	Sampler string
	// SamplerArg is the sampling ratio of the traceidratio samplers, in
	// [0, 1] (OTEL_TRACES_SAMPLER_ARG). Ignored by the other samplers.
	SamplerArg float64
	// ServiceName is the service.name resource attribute
	// (OTEL_SERVICE_NAME). Empty means DefaultServiceName.
	ServiceName string
	// ResourceAttributes are added to the resource
	// (OTEL_RESOURCE_ATTRIBUTES, "k=v,k2=v2" with percent-encoded values;
	// the variable's pairs are merged over these).
	ResourceAttributes map[string]string
	// ClientSampledPerSecond bounds the requests a second traced on a
	// client's say (a sampled flag the parent-based samplers follow, a
	// trace id the ratio sampler reads; see clientCap): 0 means
	// DefaultClientSampledPerSecond, a negative value no bound. Not an
	// OpenTelemetry variable: the file only.
	ClientSampledPerSecond float64
	// Export is how spans are sent (headers, timeout, compression,
	// certificates): environment only, filled by WithEnv.
	Export ExportConfig
}

// Env variable names read by WithEnv.
const (
	EnvSDKDisabled        = "OTEL_SDK_DISABLED"
	EnvEndpoint           = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint     = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvSampler            = "OTEL_TRACES_SAMPLER"
	EnvSamplerArg         = "OTEL_TRACES_SAMPLER_ARG"
	EnvServiceName        = "OTEL_SERVICE_NAME"
	EnvResourceAttributes = "OTEL_RESOURCE_ATTRIBUTES"
	EnvTracesExporter     = "OTEL_TRACES_EXPORTER"
)

// WithEnv returns c with every OTEL_* variable that is set (non-empty)
// in place of the field it mirrors: the environment wins over the file,
// variable by variable, as the OpenTelemetry SDKs' own configuration does,
// so a platform that injects OTEL_* variables (a collector sidecar, the
// OpenTelemetry operator) needs no config edit. lookup is os.LookupEnv in
// production. Malformed values are errors naming the variable.
func (c Config) WithEnv(lookup func(string) (string, bool)) (Config, error) {
	get := func(k string) (string, bool) {
		v, ok := lookup(k)
		v = strings.TrimSpace(v)
		return v, ok && v != ""
	}
	var errs []error
	if v, ok := get(EnvSDKDisabled); ok {
		// The specification: only a case-insensitive "true" disables.
		c.Disabled = strings.EqualFold(v, "true")
	}
	// unsupported are values other OpenTelemetry SDKs take but the edge
	// does not (a jaeger_remote or xray sampler and its argument, a zipkin
	// exporter): an error only when tracing is on, as for
	// OTEL_EXPORTER_OTLP_PROTOCOL (TestSamplerVariablesIgnoredWhenTracingOff).
	var unsupported []error
	if v, ok := get(EnvTracesExporter); ok {
		// Exporter selection: "none" is no trace exporter (tracing off);
		// the edge has the OTLP one only (TestTracesExporterNoneTurnsTracingOff).
		switch names := strings.Split(strings.ToLower(v), ","); {
		case len(names) == 1 && strings.TrimSpace(names[0]) == "none":
			c.Disabled = true
		case !slices.ContainsFunc(names, func(n string) bool { return strings.TrimSpace(n) == "otlp" }):
			unsupported = append(unsupported, fmt.Errorf("tracing: %s: %q: only otlp (or none) is supported", EnvTracesExporter, v))
		}
	}
	if v, ok := get(EnvEndpoint); ok {
		c.Endpoint = v
	}
	if v, ok := get(EnvTracesEndpoint); ok {
		c.TracesEndpoint = v
	}
	if v, ok := get(EnvSampler); ok {
		if s := strings.ToLower(v); slices.Contains(Samplers, s) {
			c.Sampler = s
		} else {
			unsupported = append(unsupported, fmt.Errorf("tracing: %s: %q is not one of %s", EnvSampler, v, strings.Join(Samplers, ", ")))
		}
	}
	var argErr error
	if v, ok := get(EnvSamplerArg); ok {
		// A jaeger_remote sampler's argument is "endpoint=...,...": not
		// a number, and an error only when tracing is on with a ratio
		// sampler, the samplers that read it.
		f, err := strconv.ParseFloat(v, 64)
		switch {
		case err != nil:
			argErr = fmt.Errorf("tracing: %s: %q is not a number", EnvSamplerArg, v)
		case f < 0 || f > 1 || f != f:
			argErr = fmt.Errorf("tracing: %s: must be within [0, 1], got %v", EnvSamplerArg, v)
		default:
			c.SamplerArg = f
		}
	}
	if v, ok := get(EnvServiceName); ok {
		c.ServiceName = v
	}
	if v, ok := get(EnvResourceAttributes); ok {
		attrs, err := parseResourceAttributes(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("tracing: %s: %w", EnvResourceAttributes, err))
		} else {
			m := maps.Clone(c.ResourceAttributes)
			if m == nil {
				m = map[string]string{}
			}
			maps.Copy(m, attrs)
			c.ResourceAttributes = m
			// The OpenTelemetry specification: service.name in the
			// resource attributes names the service unless
			// OTEL_SERVICE_NAME does.
			if sn, ok := attrs[string(semconv.ServiceNameKey)]; ok && sn != "" {
				if _, set := get(EnvServiceName); !set {
					c.ServiceName = sn
				}
			}
		}
	}
	errs = append(errs, c.Export.readEnv(get)...)
	if c.Export.badProtocol != nil && c.Enabled() {
		errs = append(errs, c.Export.badProtocol)
	}
	if c.Enabled() {
		errs = append(errs, unsupported...)
		if sm := cmp.Or(c.Sampler, DefaultSampler); argErr != nil && (sm == SamplerTraceIDRatio || sm == SamplerParentBasedTraceIDRatio) {
			errs = append(errs, argErr)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return c, err
	}
	return c, nil
}

// parseResourceAttributes parses "k=v,k2=v2" (values percent-encoded, the
// W3C Baggage octet rules OTEL_RESOURCE_ATTRIBUTES uses). It reads the
// exporter's headers too, whose values are credentials: its errors name an
// entry by its position (and a key once one is found), never by what it
// holds, since start-up and --check-config print them ("authorization:
// Bearer <token>", a colon for the "=", would otherwise be printed whole).
func parseResourceAttributes(s string) (map[string]string, error) {
	m := map[string]string{}
	for i, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("entry %d is not key=value (its text is not shown: it may be a credential)", i+1)
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("value of %q is not percent-encoded text", k)
		}
		m[k] = dv
	}
	return m, nil
}

// Enabled reports whether c turns tracing on: an endpoint is set and the
// SDK is not disabled.
func (c Config) Enabled() bool {
	return !c.Disabled && (c.Endpoint != "" || c.TracesEndpoint != "")
}

// Validate checks c; errors name the field.
func (c Config) Validate() error {
	var errs []error
	if c.Sampler != "" && !slices.Contains(Samplers, c.Sampler) {
		errs = append(errs, fmt.Errorf("tracing.sampler (%s): %q is not one of %s", EnvSampler, c.Sampler, strings.Join(Samplers, ", ")))
	}
	if c.ClientSampledPerSecond != c.ClientSampledPerSecond || c.ClientSampledPerSecond > 1e6 {
		errs = append(errs, fmt.Errorf("tracing.client_sampled_per_second: must be at most 1000000 (or negative: no bound), got %v", c.ClientSampledPerSecond))
	}
	if c.SamplerArg < 0 || c.SamplerArg > 1 || c.SamplerArg != c.SamplerArg {
		errs = append(errs, fmt.Errorf("tracing.sampler_arg (%s): must be within [0, 1], got %v", EnvSamplerArg, c.SamplerArg))
	}
	for name, v := range map[string]string{"tracing.endpoint (" + EnvEndpoint + ")": c.Endpoint, "tracing.traces_endpoint (" + EnvTracesEndpoint + ")": c.TracesEndpoint} {
		if v == "" {
			continue
		}
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			shown := "the value" // unparsed: it may hold credentials
			if err == nil {
				shown = strconv.Quote(u.Redacted())
			}
			errs = append(errs, fmt.Errorf("%s: %s is not an http(s) URL", name, shown))
		}
	}
	for k := range c.ResourceAttributes {
		if k == "" {
			errs = append(errs, errors.New("tracing.resource_attributes: empty key"))
		}
	}
	return errors.Join(errs...)
}

// CheckFiles loads the exporter's certificate files as New does, when c
// enables tracing, so that --check-config refuses what start-up would.
func (c Config) CheckFiles() error {
	if !c.Enabled() {
		return nil
	}
	_, err := c.Export.tlsConfig()
	return err
}

// tracesURL is where spans are sent.
func (c Config) tracesURL() string {
	if c.TracesEndpoint != "" {
		return c.TracesEndpoint
	}
	// "/v1/traces" is appended to the URL's path (the OpenTelemetry
	// specification), before any query: Validate has parsed it.
	u, err := url.Parse(c.Endpoint)
	if err != nil {
		return strings.TrimSuffix(c.Endpoint, "/") + "/v1/traces"
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	if u.RawPath != "" {
		u.RawPath = strings.TrimSuffix(u.RawPath, "/") + "/v1/traces"
	}
	return u.String()
}

// Tracing is the edge's tracer: an OpenTelemetry SDK provider exporting
// over OTLP/HTTP through a batch span processor, and the head sampling
// decision the request path makes before it creates anything. Its methods
// are safe for concurrent use; a nil *Tracing is tracing off.
type Tracing struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	head     head
	// clientCap bounds the client-sampled requests; nil: no bound.
	clientCap *clientCap
	url       string // where spans go, its password redacted (for logs)
	drops     *drops
}

// Options are the knobs of New that are not configuration.
type Options struct {
	// ServiceVersion is the service.version resource attribute; empty
	// leaves it out.
	ServiceVersion string
	// BatchTimeout is the batch processor's export delay; zero means the
	// SDK's default (5s, or OTEL_BSP_SCHEDULE_DELAY). Tests shorten it.
	BatchTimeout time.Duration
	// MaxQueueSize, when positive, is the batch queue's size instead of
	// OTEL_BSP_MAX_QUEUE_SIZE (default 2048). Tests shorten it.
	MaxQueueSize int
	// OnError, when set, receives the SDK's errors (a batch that could not
	// be exported) instead of the OpenTelemetry default, which writes them
	// to standard error as plain text, outside the edge's JSON event log
	// and its rate limit. It is installed process-wide (otel.SetErrorHandler).
	OnError func(error)
}

// New builds the tracer of cfg, or returns nil (tracing off) when cfg does
// not enable it. The exporter's settings beyond the endpoint (headers,
// timeout, compression, certificates) are cfg.Export, which WithEnv reads
// from the OTEL_EXPORTER_OTLP_* variables.
func New(cfg Config, opts Options) (*Tracing, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !cfg.Enabled() {
		return nil, nil
	}
	if opts.OnError != nil {
		otel.SetErrorHandler(otel.ErrorHandlerFunc(opts.OnError))
	}
	if cfg.Sampler == "" {
		cfg.Sampler = DefaultSampler
	}
	if cfg.ServiceName == "" {
		cfg.ServiceName = DefaultServiceName
	}
	u := cfg.tracesURL()
	exp, err := newExporter(u, cfg.Export)
	if err != nil {
		return nil, err
	}
	attrs := make([]attribute.KeyValue, 0, len(cfg.ResourceAttributes)+2)
	for _, k := range slices.Sorted(maps.Keys(cfg.ResourceAttributes)) {
		if k != string(semconv.ServiceNameKey) {
			attrs = append(attrs, attribute.String(k, cfg.ResourceAttributes[k]))
		}
	}
	attrs = append(attrs, semconv.ServiceName(cfg.ServiceName))
	if opts.ServiceVersion != "" {
		attrs = append(attrs, semconv.ServiceVersion(opts.ServiceVersion))
	}
	res := resource.NewWithAttributes(semconv.SchemaURL, attrs...)
	// The queue's size is set explicitly, the value the batch processor
	// would read itself, so that the gate in front of it bounds the spans
	// at the same size and counts the ones it drops.
	// The sizes and the delay are passed explicitly, read as the
	// OpenTelemetry configuration specification says (a value outside the
	// item's range is treated as not set): the SDK reads any integer, and
	// a negative size panicked in NewBatchSpanProcessor while a delay of 0
	// or less made its goroutine spin on a timer re-armed at zero.
	qsize := bspInt(EnvBSPMaxQueueSize, sdktrace.DefaultMaxQueueSize, maxBSPQueue)
	if opts.MaxQueueSize > 0 {
		qsize = opts.MaxQueueSize
	}
	bsize := bspInt(EnvBSPMaxExportBatchSize, sdktrace.DefaultMaxExportBatchSize, maxBSPQueue)
	if bsize > qsize { // as the SDK does
		bsize = min(sdktrace.DefaultMaxExportBatchSize, qsize)
	}
	delay := time.Duration(bspInt(EnvBSPScheduleDelay, sdktrace.DefaultScheduleDelay, maxBSPDelayMs)) * time.Millisecond
	if opts.BatchTimeout > 0 {
		delay = opts.BatchTimeout
	}
	exp.drops = &drops{limit: int64(qsize)}
	bopts := []sdktrace.BatchSpanProcessorOption{sdktrace.WithMaxQueueSize(qsize),
		sdktrace.WithMaxExportBatchSize(bsize), sdktrace.WithBatchTimeout(delay),
		// The exporter's timeout (OTEL_EXPORTER_OTLP_TIMEOUT)
		// bounds an export with its retries; the processor's own default
		// (OTEL_BSP_EXPORT_TIMEOUT, 30 s) must not cut it shorter.
		sdktrace.WithExportTimeout(exp.cfg.Timeout + time.Second)}
	h := newHead(cfg.Sampler, cfg.SamplerArg)
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSpanProcessor(&gate{next: sdktrace.NewBatchSpanProcessor(exp, bopts...), d: exp.drops}),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(h.sdkSampler()),
		sdktrace.WithIDGenerator(idGenerator{}),
	)
	return &Tracing{
		provider:  tp,
		tracer:    tp.Tracer("github.com/dealer-edge/dealer-edge"),
		head:      h,
		clientCap: newClientCap(cfg.ClientSampledPerSecond),
		url:       redacted(u),
		drops:     exp.drops,
	}, nil
}

// EnvBSPMaxQueueSize is the batch span processor's queue size variable,
// read by the SDK and by New alike.
const EnvBSPMaxQueueSize = "OTEL_BSP_MAX_QUEUE_SIZE"

// The batch span processor's other variables New reads.
const (
	EnvBSPMaxExportBatchSize = "OTEL_BSP_MAX_EXPORT_BATCH_SIZE"
	EnvBSPScheduleDelay      = "OTEL_BSP_SCHEDULE_DELAY"
)

// Bounds of the batch processor's variables: a larger value is out of
// range, taken as not set like a value below 1 (a queue of more spans
// cannot be made, and a delay in milliseconds beyond an hour has no use;
// one that overflowed a time.Duration wrapped negative and spun the
// processor like a delay of 0: TestScheduleDelayOverflowIdle).
const (
	maxBSPQueue   = 1 << 20 // allocated up front (16 B a span): 1<<24 was 256 MiB, above the default memory limit (TestMaxQueueSizeInRangeIdle)
	maxBSPDelayMs = 3_600_000
)

// bspInt reads an integer variable of the batch processor in [1, max];
// unset, malformed or out of that range, it is def.
func bspInt(name string, def, max int) int {
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv(name))); err == nil && n > 0 && n <= max {
		return n
	}
	return def
}

// Dropped returns the counts of sampled spans dropped since start: over a
// full batch queue, in batches that could not be exported, refused by the
// collector in a partial success, and ended once shutdown had begun. Each
// dropped span is counted once.
func (t *Tracing) Dropped() Dropped {
	return Dropped{
		QueueFull: t.drops.queueFull.Load(), ExportFailed: t.drops.failed.Load(),
		Rejected: t.drops.rejected.Load(), Shutdown: t.drops.shutdown.Load(),
	}
}

// ClientSampledCapped is how many requests since start were not traced
// although the client's traceparent asked for it, over the bound of
// Config.ClientSampledPerSecond.
func (t *Tracing) ClientSampledCapped() uint64 { return t.clientCap.count() }

// URL is where spans are exported, for logs: a password in the URL (basic
// authentication to the collector) is shown as "xxxxx".
func (t *Tracing) URL() string { return t.url }

// Sampler describes the sampler in force, e.g.
// "ParentBased{root:TraceIDRatioBased{0.01},...}".
func (t *Tracing) Sampler() string { return t.head.sdkSampler().Description() }

// TracerProvider is the provider that the packages making child spans
// (upstream, cache, cache/ratelimit) are given.
func (t *Tracing) TracerProvider() trace.TracerProvider { return t.provider }

// Tracer starts the edge's own spans.
func (t *Tracing) Tracer() trace.Tracer { return t.tracer }

// Shutdown flushes the spans still queued and stops the exporter, within
// ctx.
func (t *Tracing) Shutdown(ctx context.Context) error { return t.provider.Shutdown(ctx) }

// redacted is the URL u with the password of its userinfo shown as
// "xxxxx" (empty when u does not parse).
func redacted(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Redacted()
	}
	return ""
}
