package tracing

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// The exporter is the edge's own OTLP/HTTP protobuf client rather than
// go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp: that
// package imports the OTLP collector package, whose generated gRPC service
// code pulls google.golang.org/grpc into the binary (69 packages: the
// binary went from 23 to 44 MB and the idle RSS of --demo from 30 to 37
// MiB, measured side by side), for a request type that is one repeated
// field. Only the message packages of go.opentelemetry.io/proto/otlp are
// used here; the wire format is checked against the collector's own
// message type by the tests (an OTLP receiver decoding the protobuf).

// Exporter variables read by WithEnv, as the OpenTelemetry specification
// names them; a TRACES_ variable wins over the generic one.
const (
	EnvHeaders                 = "OTEL_EXPORTER_OTLP_HEADERS"
	EnvTracesHeaders           = "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
	EnvTimeout                 = "OTEL_EXPORTER_OTLP_TIMEOUT"
	EnvTracesTimeout           = "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"
	EnvProtocol                = "OTEL_EXPORTER_OTLP_PROTOCOL"
	EnvTracesProtocol          = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	EnvCompression             = "OTEL_EXPORTER_OTLP_COMPRESSION"
	EnvTracesCompression       = "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION"
	EnvCertificate             = "OTEL_EXPORTER_OTLP_CERTIFICATE"
	EnvTracesCertificate       = "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE"
	EnvClientCertificate       = "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE"
	EnvTracesClientCertificate = "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE"
	EnvClientKey               = "OTEL_EXPORTER_OTLP_CLIENT_KEY"
	EnvTracesClientKey         = "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY"
)

// DefaultExportTimeout bounds one export (all its retries), as the
// specification's default for OTEL_EXPORTER_OTLP_TIMEOUT.
const DefaultExportTimeout = 10 * time.Second

// ExportConfig is how spans are sent: the OTEL_EXPORTER_OTLP_* variables
// beyond the endpoint. It has no config-file fields; WithEnv fills it.
type ExportConfig struct {
	// Headers are sent with every export (an authenticated collector's
	// token, for instance).
	Headers map[string]string
	// Timeout bounds one export with its retries; zero means
	// DefaultExportTimeout.
	Timeout time.Duration
	// Gzip compresses the request bodies.
	Gzip bool
	// CAFile is a PEM file of the CAs trusted for an https endpoint
	// instead of the system's.
	CAFile string
	// ClientCertFile and ClientKeyFile are a PEM pair presented to the
	// collector (mutual TLS). Both or neither.
	ClientCertFile, ClientKeyFile string
	// caVar and certVar name the variables CAFile and the client pair
	// were read from (a TRACES_ one or the generic one), for errors.
	caVar, certVar string
	// badProtocol is the error of an OTLP protocol other than
	// http/protobuf, an error only when tracing is on (WithEnv).
	badProtocol error
}

// readEnv reads the exporter variables into c; malformed values are
// errors naming the variable.
func (c *ExportConfig) readEnv(get func(string) (string, bool)) []error {
	var errs []error
	pick := func(generic, traces string) (string, string, bool) {
		if v, ok := get(traces); ok {
			return v, traces, true
		}
		v, ok := get(generic)
		return v, generic, ok
	}
	if v, name, ok := pick(EnvHeaders, EnvTracesHeaders); ok {
		h, err := parseResourceAttributes(v)
		if err == nil {
			err = validHeaders(h)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("tracing: %s: %w", name, err))
		} else {
			c.Headers = h
		}
	}
	if v, name, ok := pick(EnvTimeout, EnvTracesTimeout); ok {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms <= 0 || ms > math.MaxInt64/int64(time.Millisecond) {
			errs = append(errs, fmt.Errorf("tracing: %s: %q is not a positive number of milliseconds", name, v))
		} else {
			c.Timeout = time.Duration(ms) * time.Millisecond
		}
	}
	if v, name, ok := pick(EnvProtocol, EnvTracesProtocol); ok && v != "http/protobuf" {
		// The exporter speaks OTLP over HTTP with protobuf bodies only: a
		// platform that asks for grpc (and points the endpoint at :4317)
		// would start and then fail every export. refused by
		// WithEnv only when tracing is on.
		c.badProtocol = fmt.Errorf("tracing: %s: %q: only http/protobuf is supported", name, v)
	}
	if v, name, ok := pick(EnvCompression, EnvTracesCompression); ok {
		switch strings.ToLower(v) {
		case "gzip":
			c.Gzip = true
		case "none":
			c.Gzip = false
		default:
			errs = append(errs, fmt.Errorf("tracing: %s: %q is not gzip or none", name, v))
		}
	}
	if v, name, ok := pick(EnvCertificate, EnvTracesCertificate); ok {
		c.CAFile, c.caVar = v, name
	}
	if v, name, ok := pick(EnvClientCertificate, EnvTracesClientCertificate); ok {
		c.ClientCertFile, c.certVar = v, name
	}
	if v, name, ok := pick(EnvClientKey, EnvTracesClientKey); ok {
		c.ClientKeyFile = v
		if c.certVar == "" {
			c.certVar = name
		} else {
			c.certVar += "/" + name
		}
	}
	if (c.ClientCertFile == "") != (c.ClientKeyFile == "") {
		errs = append(errs, fmt.Errorf("tracing: %s and %s: both or neither", EnvClientCertificate, EnvClientKey))
	}
	return errs
}

// exporter sends spans to an OTLP/HTTP traces endpoint as protobuf. It is
// called by the SDK's batch span processor, one export at a time.
type exporter struct {
	url     string
	client  *http.Client
	cfg     ExportConfig
	stopped atomic.Bool
	drops   *drops // nil: nothing counted (the exporter alone, in tests)
	// partial reports the collector's partial successes, rate-limited.
	partial partialReporter
}

// partialReportEvery is how often at most a partial success is reported
// (the collector may refuse some spans of every batch, several a second).
const partialReportEvery = time.Minute

// partialReporter reports the collector's partial successes through
// handle (otel.Handle: Options.OnError, the event log), the first at once
// and then at most one every `every`, each with the counts since the
// previous report.
type partialReporter struct {
	handle func(error)
	every  time.Duration
	mu     sync.Mutex
	last   time.Time // of the last report; zero: none yet
	// answers and spans are the partial successes (and the spans they
	// rejected) since the last report, not yet reported.
	answers, spans int64
}

// report records one partial success that rejected n spans of a batch of
// batch, with the collector's message, and reports it when the last report
// is old enough.
func (p *partialReporter) report(n int64, batch int, msg string) {
	now := time.Now()
	p.mu.Lock()
	p.answers++
	p.spans += n
	if !p.last.IsZero() && now.Sub(p.last) < p.every {
		p.mu.Unlock()
		return
	}
	answers, spans := p.answers, p.spans
	p.answers, p.spans, p.last = 0, 0, now
	p.mu.Unlock()
	err := fmt.Errorf("tracing: export: the collector rejected %d of %d spans (OTLP partial success)", n, batch)
	if msg != "" {
		err = fmt.Errorf("%w: %q", err, msg)
	}
	if answers > 1 {
		err = fmt.Errorf("%w; %d spans in %d such answers since the previous report", err, spans, answers)
	}
	p.handle(err)
}

// partialSuccess is what a 2xx answer says it did not take: the
// partial_success field of an ExportTraceServiceResponse.
type partialSuccess struct {
	rejected int64
	message  string
}

// maxPartialMessage bounds the collector's error_message as reported.
const maxPartialMessage = 512

// parsePartialSuccess reads the partial_success field (1) of an
// opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse:
// rejected_spans (1, int64) and error_message (2, string) of its
// ExportTracePartialSuccess. Like the request, it is decoded with
// protowire rather than the collector package (see the top of the file).
// Unknown fields are skipped; a body that does not parse is reported as no
// partial success (the collector said 2xx).
func parsePartialSuccess(b []byte) (partialSuccess, bool) {
	var ps partialSuccess
	found := false
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return partialSuccess{}, false
		}
		b = b[n:]
		if num != 1 || typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return partialSuccess{}, false
			}
			b = b[n:]
			continue
		}
		m, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return partialSuccess{}, false
		}
		b = b[n:]
		found = true
		// A message field that occurs more than once is merged: the
		// last value of each scalar wins.
		for len(m) > 0 {
			fnum, ftyp, k := protowire.ConsumeTag(m)
			if k < 0 {
				return partialSuccess{}, false
			}
			m = m[k:]
			switch {
			case fnum == 1 && ftyp == protowire.VarintType:
				v, k := protowire.ConsumeVarint(m)
				if k < 0 {
					return partialSuccess{}, false
				}
				ps.rejected = int64(v)
				m = m[k:]
			case fnum == 2 && ftyp == protowire.BytesType:
				v, k := protowire.ConsumeBytes(m)
				if k < 0 {
					return partialSuccess{}, false
				}
				ps.message = string(v)
				m = m[k:]
			default:
				k = protowire.ConsumeFieldValue(fnum, ftyp, m)
				if k < 0 {
					return partialSuccess{}, false
				}
				m = m[k:]
			}
		}
	}
	// Made valid before it is cut: a replacement character is 3 bytes,
	// so invalid bytes replaced after the cut could triple the bound.
	ps.message = validUTF8(ps.message)
	if len(ps.message) > maxPartialMessage {
		cut := maxPartialMessage
		for cut > maxPartialMessage-utf8.UTFMax && !utf8.RuneStart(ps.message[cut]) {
			cut-- // not inside a character
		}
		ps.message = ps.message[:cut]
	}
	return ps, found
}

func newExporter(url string, cfg ExportConfig) (*exporter, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultExportTimeout
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 2
	tc, err := cfg.tlsConfig()
	if err != nil {
		return nil, err
	}
	if tc != nil {
		tr.TLSClientConfig = tc
	}
	return &exporter{url: url, client: &http.Client{Transport: tr, CheckRedirect: keepPOSTSameHost}, cfg: cfg,
		partial: partialReporter{handle: otel.Handle, every: partialReportEvery}}, nil
}

// tlsConfig loads the certificate files of c (nil: none named); errors
// name the variable each file was read from.
func (c ExportConfig) tlsConfig() (*tls.Config, error) {
	if c.CAFile == "" && c.ClientCertFile == "" {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.CAFile != "" {
		name := cmp.Or(c.caVar, EnvCertificate)
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("tracing: %s: %w", name, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tracing: %s: no PEM certificate in %s", name, c.CAFile)
		}
		tc.RootCAs = pool
	}
	if c.ClientCertFile != "" {
		pair, err := tls.LoadX509KeyPair(c.ClientCertFile, c.ClientKeyFile)
		if err != nil {
			return nil, fmt.Errorf("tracing: %s: %w", cmp.Or(c.certVar, EnvClientCertificate+"/"+EnvClientKey), err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	return tc, nil
}

// keepPOSTSameHost is the exporter's redirect policy: follow a redirect
// only when it re-sends the POST with its body (307, 308) to the same host
// name (an http to https upgrade, a moved path), at most 3 times; otherwise
// the redirect is the answer, which fails the export (counted
// export_failed, logged with its status). Go's default followed a 301, 302
// or 303 as a GET without the body, so a page answering 200 to it was taken
// for a delivered batch (TestExporterRedirects), and it sent a 307/308 to
// any host with the exporter's headers (only Authorization and cookies are
// dropped across hosts; OTEL_EXPORTER_OTLP_HEADERS often holds an api-key).
//
// Nor is a redirect from https to plain http followed, even to the same
// host name: the batch and those headers, sent over TLS only, went in
// clear (TestExporterRedirectNotDowngraded).
func keepPOSTSameHost(req *http.Request, via []*http.Request) error {
	if len(via) >= 3 || req.Method != http.MethodPost || !strings.EqualFold(req.URL.Hostname(), via[0].URL.Hostname()) {
		return http.ErrUseLastResponse
	}
	if req.URL.Scheme != "https" && slices.ContainsFunc(via, func(v *http.Request) bool { return v.URL.Scheme == "https" }) {
		return http.ErrUseLastResponse
	}
	return nil
}

// errNotRetryable marks an answer that a retry cannot change.
var errNotRetryable = errors.New("not retryable")

// ExportSpans sends spans in one request, retrying a failed connection and
// the statuses the specification calls retryable (429, 502, 503, 504;
// Retry-After honoured) with backoff, all within the export timeout.
// A failed export's spans are dropped (the batch processor makes a new
// batch whatever the result) and counted; so are the spans the collector
// says it rejected in a partial success, which is reported (rate-limited)
// but is no error: the rest of the batch was taken.
func (e *exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.drops.handedOver(len(spans))
	if len(spans) == 0 {
		return nil
	}
	if e.stopped.Load() {
		// The batch processor calls Shutdown after its last export, so
		// this does not happen through it; counted all the same.
		e.drops.afterShutdown(len(spans))
		return nil
	}
	ps, err := e.export(ctx, spans)
	if err != nil {
		e.drops.exportFailed(len(spans))
		return err
	}
	if ps.rejected > 0 || ps.message != "" {
		// The count is the collector's; it cannot drop more than it got.
		n := min(max(ps.rejected, 0), int64(len(spans)))
		e.drops.rejectedByCollector(int(n))
		e.partial.report(n, len(spans), ps.message)
	}
	return nil
}

// export sends spans in one request, with the retries of ExportSpans, and
// returns the partial success the collector answered, if any.
func (e *exporter) export(ctx context.Context, spans []sdktrace.ReadOnlySpan) (partialSuccess, error) {
	body := marshalExportRequest(nil, spans)
	if e.cfg.Gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(body)
		_ = zw.Close()
		body = buf.Bytes()
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	backoff := 250 * time.Millisecond
	for {
		ps, wait, err := e.post(ctx, body)
		if err == nil {
			return ps, nil
		}
		if errors.Is(err, errNotRetryable) {
			return partialSuccess{}, err
		}
		if wait <= 0 {
			wait = backoff
			backoff = min(2*backoff, 5*time.Second)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return partialSuccess{}, fmt.Errorf("%w (%v)", err, ctx.Err())
		case <-t.C:
		}
	}
}

// post sends one request. A success returns the partial success the
// collector answered, if any; a retryable failure returns the wait the
// server asked for (Retry-After), or zero.
func (e *exporter) post(ctx context.Context, body []byte) (partialSuccess, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return partialSuccess{}, 0, fmt.Errorf("tracing: export: %w: %w", err, errNotRetryable)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", "dealer-edge-otlp-exporter")
	if e.cfg.Gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	for k, v := range e.cfg.Headers {
		req.Header.Set(k, v)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return partialSuccess{}, 0, fmt.Errorf("tracing: export: %w", err)
	}
	// The answer (an ExportTraceServiceResponse, or an error Status) is
	// read whole, up to a bound, so that the connection is reused; a
	// success's partial_success says which spans the collector refused.
	var ps partialSuccess
	if resp.StatusCode >= 200 && resp.StatusCode < 300 && isProtobuf(resp.Header.Get("Content-Type")) {
		if b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse)); err == nil {
			ps, _ = parsePartialSuccess(b)
		}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponse))
	_ = resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return ps, 0, nil
	case resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode == http.StatusBadGateway,
		resp.StatusCode == http.StatusServiceUnavailable, resp.StatusCode == http.StatusGatewayTimeout:
		var wait time.Duration
		ra := resp.Header.Get("Retry-After")
		if s, err := strconv.Atoi(ra); err == nil && s > 0 {
			wait = time.Duration(min(s, 60)) * time.Second
		} else if t, err := http.ParseTime(ra); err == nil { // RFC 9110 10.2.3: an HTTP-date
			wait = min(max(time.Until(t), 0), 60*time.Second)
		}
		return partialSuccess{}, wait, fmt.Errorf("tracing: export: collector answered %d", resp.StatusCode)
	default:
		return partialSuccess{}, 0, fmt.Errorf("tracing: export: collector answered %d: %w", resp.StatusCode, errNotRetryable)
	}
}

// maxResponse bounds how much of a collector's answer is read.
const maxResponse = 64 << 10

// isProtobuf reports whether a Content-Type is OTLP's binary protobuf: a
// collector answers in the request's encoding, and a JSON or text body
// (a proxy's error page) has no partial success to read.
func isProtobuf(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/x-protobuf")
}

// Shutdown stops exporting; spans handed over later are dropped, counted
// as DropShutdown.
func (e *exporter) Shutdown(context.Context) error {
	e.stopped.Store(true)
	e.client.CloseIdleConnections()
	return nil
}

// marshalExportRequest appends to b the protobuf encoding of an
// opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest
// holding spans: field 1, repeated ResourceSpans, one per resource. A
// ResourceSpans that does not marshal is left out whole rather than sent
// cut short (a cut message makes the collector refuse the whole request);
// validUTF8 makes that not happen.
func marshalExportRequest(b []byte, spans []sdktrace.ReadOnlySpan) []byte {
	for _, rs := range resourceSpans(spans) {
		start := len(b)
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(proto.Size(rs)))
		var err error
		if b, err = (proto.MarshalOptions{}).MarshalAppend(b, rs); err != nil {
			b = b[:start]
		}
	}
	return b
}

// validUTF8 returns s with each run of bytes that are not UTF-8 replaced by
// one U+FFFD. OTLP's strings are protobuf strings, which must be valid
// UTF-8, and some come from clients (url.path is the request's
// percent-decoded path, and /dealer/%FF decodes to a lone 0xFF byte).
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// resourceSpans groups spans by resource, then by instrumentation scope,
// in the order they first appear.
func resourceSpans(spans []sdktrace.ReadOnlySpan) []*tracepb.ResourceSpans {
	type scopeKey struct {
		r attribute.Distinct
		s instrumentation.Scope
	}
	byResource := map[attribute.Distinct]*tracepb.ResourceSpans{}
	byScope := map[scopeKey]*tracepb.ScopeSpans{}
	var out []*tracepb.ResourceSpans
	for _, sd := range spans {
		if sd == nil {
			continue
		}
		res := sd.Resource()
		rk := res.Equivalent()
		rs, ok := byResource[rk]
		if !ok {
			rs = &tracepb.ResourceSpans{
				Resource:  &resourcepb.Resource{Attributes: keyValues(res.Attributes())},
				SchemaUrl: validUTF8(res.SchemaURL()),
			}
			byResource[rk] = rs
			out = append(out, rs)
		}
		scope := sd.InstrumentationScope()
		sk := scopeKey{rk, scope}
		ss, ok := byScope[sk]
		if !ok {
			ss = &tracepb.ScopeSpans{
				Scope: &commonpb.InstrumentationScope{
					Name:       validUTF8(scope.Name),
					Version:    validUTF8(scope.Version),
					Attributes: keyValues(scope.Attributes.ToSlice()),
				},
				SchemaUrl: validUTF8(scope.SchemaURL),
			}
			byScope[sk] = ss
			rs.ScopeSpans = append(rs.ScopeSpans, ss)
		}
		ss.Spans = append(ss.Spans, span(sd))
	}
	return out
}

// span is the OTLP form of one finished span.
func span(sd sdktrace.ReadOnlySpan) *tracepb.Span {
	sc := sd.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	st := sd.Status()
	s := &tracepb.Span{
		TraceId:                tid[:],
		SpanId:                 sid[:],
		TraceState:             sc.TraceState().String(),
		Name:                   validUTF8(sd.Name()),
		Kind:                   spanKind(sd.SpanKind()),
		StartTimeUnixNano:      unixNano(sd.StartTime()),
		EndTimeUnixNano:        unixNano(sd.EndTime()),
		Attributes:             keyValues(sd.Attributes()),
		DroppedAttributesCount: clampUint32(sd.DroppedAttributes()),
		DroppedEventsCount:     clampUint32(sd.DroppedEvents()),
		DroppedLinksCount:      clampUint32(sd.DroppedLinks()),
		Status:                 &tracepb.Status{Code: statusCode(st.Code), Message: validUTF8(st.Description)},
		Flags:                  spanFlags(sc.TraceFlags(), sd.Parent()),
	}
	if p := sd.Parent().SpanID(); p.IsValid() {
		s.ParentSpanId = p[:]
	}
	for _, ev := range sd.Events() {
		s.Events = append(s.Events, &tracepb.Span_Event{
			Name:                   validUTF8(ev.Name),
			TimeUnixNano:           unixNano(ev.Time),
			Attributes:             keyValues(ev.Attributes),
			DroppedAttributesCount: clampUint32(ev.DroppedAttributeCount),
		})
	}
	for _, l := range sd.Links() {
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		s.Links = append(s.Links, &tracepb.Span_Link{
			TraceId:                ltid[:],
			SpanId:                 lsid[:],
			TraceState:             l.SpanContext.TraceState().String(),
			Attributes:             keyValues(l.Attributes),
			DroppedAttributesCount: clampUint32(l.DroppedAttributeCount),
			Flags:                  spanFlags(l.SpanContext.TraceFlags(), l.SpanContext),
		})
	}
	return s
}

// spanFlags are the W3C trace flags in the low byte, with the bits that say
// whether the parent (or linked) context is remote.
func spanFlags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	f := uint32(tf) | uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK)
	if parent.IsRemote() {
		f |= uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK)
	}
	return f
}

func spanKind(k trace.SpanKind) tracepb.Span_SpanKind {
	switch k {
	case trace.SpanKindInternal:
		return tracepb.Span_SPAN_KIND_INTERNAL
	case trace.SpanKindServer:
		return tracepb.Span_SPAN_KIND_SERVER
	case trace.SpanKindClient:
		return tracepb.Span_SPAN_KIND_CLIENT
	case trace.SpanKindProducer:
		return tracepb.Span_SPAN_KIND_PRODUCER
	case trace.SpanKindConsumer:
		return tracepb.Span_SPAN_KIND_CONSUMER
	}
	return tracepb.Span_SPAN_KIND_UNSPECIFIED
}

// statusCode maps the API's codes (Unset 0, Error 1, Ok 2) to OTLP's
// (UNSET 0, OK 1, ERROR 2): the numbers differ.
func statusCode(c codes.Code) tracepb.Status_StatusCode {
	switch c {
	case codes.Ok:
		return tracepb.Status_STATUS_CODE_OK
	case codes.Error:
		return tracepb.Status_STATUS_CODE_ERROR
	}
	return tracepb.Status_STATUS_CODE_UNSET
}

func unixNano(t time.Time) uint64 { return uint64(max(0, t.UnixNano())) }

func clampUint32(v int) uint32 { return uint32(min(max(v, 0), math.MaxUint32)) }

// keyValues converts attributes to OTLP key-values.
func keyValues(attrs []attribute.KeyValue) []*commonpb.KeyValue {
	if len(attrs) == 0 {
		return nil
	}
	out := make([]*commonpb.KeyValue, 0, len(attrs))
	for _, kv := range attrs {
		out = append(out, &commonpb.KeyValue{Key: validUTF8(string(kv.Key)), Value: anyValue(kv.Value)})
	}
	return out
}

func anyValue(v attribute.Value) *commonpb.AnyValue {
	av := &commonpb.AnyValue{}
	switch v.Type() {
	case attribute.BOOL:
		av.Value = &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}
	case attribute.INT64:
		av.Value = &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}
	case attribute.FLOAT64:
		av.Value = &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}
	case attribute.STRING:
		av.Value = &commonpb.AnyValue_StringValue{StringValue: validUTF8(v.AsString())}
	case attribute.BOOLSLICE:
		av.Value = arrayOf(v.AsBoolSlice(), func(b bool) *commonpb.AnyValue {
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: b}}
		})
	case attribute.INT64SLICE:
		av.Value = arrayOf(v.AsInt64Slice(), func(i int64) *commonpb.AnyValue {
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: i}}
		})
	case attribute.FLOAT64SLICE:
		av.Value = arrayOf(v.AsFloat64Slice(), func(f float64) *commonpb.AnyValue {
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: f}}
		})
	case attribute.STRINGSLICE:
		av.Value = arrayOf(v.AsStringSlice(), func(s string) *commonpb.AnyValue {
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: validUTF8(s)}}
		})
	default:
		av.Value = &commonpb.AnyValue_StringValue{StringValue: validUTF8(v.Emit())}
	}
	return av
}

func arrayOf[T any](vs []T, one func(T) *commonpb.AnyValue) *commonpb.AnyValue_ArrayValue {
	arr := &commonpb.ArrayValue{Values: make([]*commonpb.AnyValue, 0, len(vs))}
	for _, v := range vs {
		arr.Values = append(arr.Values, one(v))
	}
	return &commonpb.AnyValue_ArrayValue{ArrayValue: arr}
}

// validHeaders checks the exporter's headers as net/http would send them:
// names are RFC 9110 tokens, values have no control character but HTAB.
// An error names the header but never shows a value (they are
// credentials).
func validHeaders(h map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(h)) {
		if k == "" || strings.IndexFunc(k, func(r rune) bool { return !isTokenChar(r) }) >= 0 {
			return errors.New("a header name is not an HTTP token (letters, digits and !#$%&'*+-.^_`|~ only)")
		}
		if strings.IndexFunc(h[k], func(r rune) bool { return (r < 0x20 && r != '\t') || r == 0x7f }) >= 0 {
			return fmt.Errorf("the value of header %s has a control character", k)
		}
	}
	return nil
}

func isTokenChar(r rune) bool {
	return r < 0x7f && r > 0x20 && !strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r)
}
