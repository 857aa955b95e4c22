package upstream

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dealer-edge/dealer-edge/internal/bufpool"
	"github.com/dealer-edge/dealer-edge/internal/workers"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/sony/gobreaker/v2"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Default per-call timeouts.
const (
	DefaultTimeout      = 800 * time.Millisecond // dealers, inventory, content
	DefaultQuickTimeout = 500 * time.Millisecond // catalog, media
)

// DefaultMaxConnsPerHost is the connection cap of each service's pool when
// Options.MaxConnsPerHost is zero.
const DefaultMaxConnsPerHost = 256

// maxResponseBytes bounds a response body; content listings are the
// largest answers and stay far below it.
const maxResponseBytes = 32 << 20

// readBufferBytes is the read buffer of a call's connection, which bounds
// an answer's header block. Bodies larger than it do not go through it:
// readBody streams the body into a pooled buffer sized from
// Content-Length, and once the bytes read with the headers are copied out,
// bufio reads the rest from the socket into that buffer directly (a read
// at least as large as its buffer bypasses it). A buffer with room for the
// whole answer (64 KiB) read a hub section's body (50-84 KB) into itself
// first and then copied it: twice the memory touched, in the part of a
// cold hub where the six answers are read and decoded one after the other.
// 16 KiB still takes a 20-vehicle page (about 14 KB with its headers) in
// one read (8 KiB took two), and is four times the header block fasthttp
// and nginx (proxy_buffer_size, one memory page) allow an upstream by
// default; an answer with a larger one fails as the service being
// unavailable. The buffers are pooled per service and held only while a
// response is read, so they cost per call in flight, not per open
// connection.
const readBufferBytes = 16 << 10

// Options configures a Client. Every field but BaseURL has a documented
// zero value.
type Options struct {
	// BaseURL is the scheme, host and optional path prefix under which all
	// internal services are reached, e.g. "http://127.0.0.1:9090" or
	// "https://gw.internal/edge". Required; http or https only.
	BaseURL string

	// Timeouts holds the per-call timeout of a service, keyed by service
	// name (SvcDealers, SvcInventory, ...). A missing or zero entry selects
	// the default: 500ms for catalog and media, 800ms for the others.
	// Unknown service names and negative durations are rejected. The
	// effective deadline of a call is the earlier of this timeout and the
	// caller's context deadline.
	Timeouts map[string]time.Duration

	// MaxConnsPerHost caps the open connections of each service. Every
	// service has its own connection pool, so a slow service cannot take
	// the connections of the others. Zero selects DefaultMaxConnsPerHost.
	// A call waits for a free connection until its deadline.
	MaxConnsPerHost int

	// Breaker configures the circuit breaker of each service; its zero
	// value selects the defaults documented on BreakerSettings.
	Breaker BreakerSettings

	// OnCall, when non-nil, is called after every call, on the caller's
	// goroutine, with the service, the call's duration and its result
	// (nil, or an error wrapping ErrNotFound or ErrUnavailable). Calls
	// refused by an open breaker are reported too, with a duration near
	// zero. It must be safe for concurrent use. Meant for metrics.
	OnCall func(service string, d time.Duration, err error)

	// OnBreakerChange, when non-nil, is called when a service's breaker
	// changes state; from and to are BreakerClosed, BreakerOpen or
	// BreakerHalfOpen. It runs synchronously while the breaker's lock is
	// held: it must be quick and must not call back into the Client.
	OnBreakerChange func(service string, from, to string)

	// OnContentTypeBreakerChange, when non-nil, is called when the breaker
	// of one content type changes state (the content service has one per
	// type; see ContentBreakerStates). The content service's own state, the
	// worst of its types', is reported through OnBreakerChange. Same rules.
	OnContentTypeBreakerChange func(contentType string, from, to string)

	// OnDealerBreakerOpen, when non-nil, is called when the breaker of
	// one dealer's calls to a service opens (dealerbreaker.go): that
	// dealer's calls failed while the service answered other dealers,
	// and they are refused for Breaker.OpenFor. contentType is the
	// content type for the content service's, "" otherwise. It is called
	// outside every lock, on the failed call's goroutine.
	OnDealerBreakerOpen func(service, contentType string, dealerID int64)

	// TLSConfig is the TLS client configuration of an https BaseURL; nil
	// verifies the services' certificates against the system's roots
	// (which the SSL_CERT_FILE and SSL_CERT_DIR environment variables
	// extend, e.g. with an internal CA).
	TLSConfig *tls.Config

	// TracerProvider, when non-nil, makes a client span of every call
	// whose context carries a recording span (a traced request): the
	// service, the response status and a breaker's refusal, with the
	// call's traceparent naming that span. Calls of untraced requests make
	// no span and cost nothing more. Nil: no spans; the trace context of
	// the caller's span, or the one passed with WithTrace, is still sent.
	TracerProvider trace.TracerProvider
}

// service is one internal service: its own connection pool, timeout and
// breaker. Immutable after New.
type service struct {
	name    string
	timeout time.Duration
	hc      *fasthttp.HostClient
	cb      *gobreaker.CircuitBreaker[struct{}]
	track   *dealerTrack  // cb's per-dealer accounting (dealerbreaker.go)
	types   *typeBreakers // the content service only: a breaker per content type
}

// Client is a typed client of the internal services. It is safe for
// concurrent use. Create it with New.
type Client struct {
	host   string // Host header
	prefix string // path prefix of BaseURL, without a trailing slash

	dealers, inventory, catalog, media, content *service
	all                                         []*service

	onCall func(string, time.Duration, error)
	tracer trace.Tracer // nil: no spans
	closed atomic.Bool

	// exchanges runs the exchanges (and the reads of their bodies) of
	// calls whose context can be cancelled (see roundTrip) on goroutines
	// that keep the stacks they grew in fasthttp, instead of a new
	// goroutine each (package workers).
	exchanges *workers.Pool
}

// ParseBaseURL parses a base URL as New takes it (Options.BaseURL):
// http or https, a host, an optional path prefix and nothing else.
func ParseBaseURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, errors.New("is required")
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("scheme must be http or https, not %q", u.Scheme)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, errors.New("host is required")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return nil, errors.New("must be scheme://host[:port][/prefix] only")
	}
	return u, nil
}

// New validates opts and returns a Client. Errors name the offending field.
func New(opts Options) (*Client, error) {
	u, err := ParseBaseURL(opts.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("upstream: options: BaseURL: %w", err)
	}
	if opts.MaxConnsPerHost < 0 {
		return nil, fmt.Errorf("upstream: options: MaxConnsPerHost: must not be negative, got %d", opts.MaxConnsPerHost)
	}
	if opts.Breaker.OpenFor < 0 {
		return nil, fmt.Errorf("upstream: options: Breaker.OpenFor: must not be negative, got %v", opts.Breaker.OpenFor)
	}
	for name, d := range opts.Timeouts {
		if !isService(name) {
			return nil, fmt.Errorf("upstream: options: Timeouts[%q]: unknown service (want one of %s)", name, strings.Join(Services, ", "))
		}
		if d < 0 {
			return nil, fmt.Errorf("upstream: options: Timeouts[%q]: must not be negative, got %v", name, d)
		}
	}
	maxConns := opts.MaxConnsPerHost
	if maxConns == 0 {
		maxConns = DefaultMaxConnsPerHost
	}
	br := opts.Breaker.withDefaults()

	addr := u.Host
	if u.Port() == "" {
		if u.Scheme == "https" {
			addr += ":443"
		} else {
			addr += ":80"
		}
	}
	c := &Client{
		exchanges: workers.New(10 * time.Second),
		host:      u.Host,
		prefix:    strings.TrimSuffix(u.EscapedPath(), "/"),
		onCall:    opts.OnCall,
	}
	if opts.TracerProvider != nil {
		c.tracer = opts.TracerProvider.Tracer("github.com/dealer-edge/dealer-edge/upstream")
	}
	// The TLS handshake runs in dialFor, under the dial's (the call's
	// remaining) timeout; its server name as fasthttp sets it.
	var tlsConf *tls.Config
	if u.Scheme == "https" {
		if opts.TLSConfig != nil {
			tlsConf = opts.TLSConfig.Clone()
		} else {
			tlsConf = &tls.Config{}
		}
		if tlsConf.ServerName == "" {
			tlsConf.ServerName = u.Hostname()
		}
	}
	mk := func(name string) *service {
		to := opts.Timeouts[name]
		if to == 0 {
			to = DefaultTimeout
			if name == SvcCatalog || name == SvcMedia {
				to = DefaultQuickTimeout
			}
		}
		tlsOn := u.Scheme == "https"
		var writeTimeout time.Duration
		if tlsOn {
			writeTimeout = to
		}
		s := &service{
			name:    name,
			timeout: to,
			hc: &fasthttp.HostClient{
				Addr:      addr,
				Name:      "dealer-edge",
				IsTLS:     tlsOn,
				TLSConfig: opts.TLSConfig,
				// With TLS, a write timeout makes fasthttp complete the
				// handshake when it dials, under this deadline; without
				// one the handshake ran in the first write and its read
				// had none: a service silent after accept held the call,
				// and its connection, for good.
				WriteTimeout:           writeTimeout,
				DialTimeout:            dialFor(tlsOn, tlsConf, to),
				MaxConns:               maxConns,
				MaxConnWaitTimeout:     to,
				MaxIdleConnDuration:    30 * time.Second,
				MaxResponseBodySize:    maxResponseBytes,
				ReadBufferSize:         readBufferBytes,
				DisablePathNormalizing: true, // keep our escaping as is
				// GET is idempotent: one retry on a broken keep-alive
				// connection, always within the call's deadline; not on
				// an answer that was malformed or late (retryStaleConn).
				// Connections the idle guard drops were sent nothing:
				// they do not count against the one retry
				// (retryStaleConn), only against this bound, past the
				// pool's size (each look removes one dead connection).
				MaxIdemponentCallAttempts: maxConns + 2,
				RetryIfErr:                retryStaleConn,
				// Parse errors of an answer's head name the error only:
				// fasthttp would quote the bytes read, which can be a
				// body (key hashes of the dealers service's index).
				SecureErrorLogMessage: true,
			},
		}
		s.track = newDealerTrack(br, name, "", opts.OnDealerBreakerOpen)
		s.cb = newBreaker(name, br, s.track, opts.OnBreakerChange)
		c.all = append(c.all, s)
		return s
	}
	c.dealers = mk(SvcDealers)
	c.inventory = mk(SvcInventory)
	c.catalog = mk(SvcCatalog)
	c.media = mk(SvcMedia)
	c.content = mk(SvcContent)
	c.content.types = newTypeBreakers(SvcContent, ContentTypes, br, opts.OnBreakerChange, opts.OnContentTypeBreakerChange, opts.OnDealerBreakerOpen)
	return c, nil
}

func isService(name string) bool {
	for _, s := range Services {
		if s == name {
			return true
		}
	}
	return false
}

// BreakerStates returns the current breaker state of every service:
// service name -> BreakerClosed, BreakerOpen or BreakerHalfOpen.
func (c *Client) BreakerStates() map[string]string {
	m := make(map[string]string, len(c.all))
	for _, s := range c.all {
		if s.types != nil {
			m[s.name] = s.types.worst()
			continue
		}
		m[s.name] = s.cb.State().String()
	}
	return m
}

// ContentBreakerStates returns the state of the content service's breaker
// of every content type: type -> BreakerClosed, BreakerOpen or
// BreakerHalfOpen. BreakerStates reports the worst of them as the content
// service's.
func (c *Client) ContentBreakerStates() map[string]string {
	return c.content.types.states()
}

// Close releases idle connections. Calls made after Close fail with
// ErrUnavailable; calls in flight finish normally.
func (c *Client) Close() {
	c.closed.Store(true)
	for _, s := range c.all {
		s.hc.CloseIdleConnections()
	}
}

// LookupKey returns the dealers service's record of the API key whose
// lowercase hex SHA-256 is keySHA256Hex.
func (c *Client) LookupKey(ctx context.Context, keySHA256Hex string) (KeyRecord, error) {
	var out KeyRecord
	if keySHA256Hex == "" {
		return out, notFound(SvcDealers)
	}
	b := c.begin("/dealers/v1/keys/")
	b = appendSegment(b, keySHA256Hex)
	return out, c.get(ctx, c.dealers, b, &out)
}

// Dealer returns the profile of dealer id.
func (c *Client) Dealer(ctx context.Context, id int64) (Dealer, error) {
	var out Dealer
	b := c.begin("/dealers/v1/dealers/")
	b = strconv.AppendInt(b, id, 10)
	return out, c.getFor(ctx, c.dealers, id, b, &out)
}

// ListVehicles returns one page of the dealer's vehicles of q.Service,
// filtered and paginated by the inventory service. Zero Page or PageSize
// leave the service's defaults in force (1 and 20).
func (c *Client) ListVehicles(ctx context.Context, dealerID int64, q VehicleQuery) (VehiclePage, error) {
	var out VehiclePage
	err := c.ListVehiclesInto(ctx, dealerID, q, &out)
	return out, err
}

// ListVehiclesInto is ListVehicles decoding into *out, whose Items' room
// it reuses (a caller that pools pages decodes a listing without making
// the slice of large records; it clears the records it gives back). The
// page's strings are the page's own, as with ListVehicles.
func (c *Client) ListVehiclesInto(ctx context.Context, dealerID int64, q VehicleQuery, out *VehiclePage) error {
	resetPage(&out.Items, &out.Total, q.PageSize)
	b := c.begin("/inventory/v1/dealers/")
	b = strconv.AppendInt(b, dealerID, 10)
	b = append(b, "/vehicles?service="...)
	b = appendQueryValue(b, q.Service)
	b = appendIntParam(b, "page", q.Page)
	b = appendIntParam(b, "page_size", q.PageSize)
	b = appendParam(b, "q", q.Q)
	b = appendParam(b, "catalog_type", q.CatalogType)
	b = appendParam(b, "upfit", q.Upfit)
	// A listing shows none of the detail fields: ask for the summary view,
	// a fifth of the bytes to move and decode on every miss.
	b = append(b, "&view=summary"...)
	err := c.getFor(ctx, c.inventory, dealerID, b, out)
	if err == nil && out.Items == nil {
		out.Items = []Vehicle{}
	}
	return err
}

// resetPage empties a page that a listing decodes into (its items and
// total), with room for pageSize items (the service's default, 20, for
// 0), so that decoding does not grow the slice of large records step by
// step.
func resetPage[T any](items *[]T, total *int, pageSize int) {
	*total = 0
	if n := min(cmp.Or(pageSize, 20), 1000); cap(*items) < n {
		*items = make([]T, 0, n)
	}
	*items = (*items)[:0]
}

// Vehicle returns one vehicle of the dealer; service (REWIND or NOS)
// restricts the lookup to that service when non-empty. A vehicle of another
// dealer or service is ErrNotFound.
func (c *Client) Vehicle(ctx context.Context, dealerID int64, service, idAuto string) (Vehicle, error) {
	var out Vehicle
	if idAuto == "" {
		return out, notFound(SvcInventory)
	}
	b := c.begin("/inventory/v1/dealers/")
	b = strconv.AppendInt(b, dealerID, 10)
	b = append(b, "/vehicles/"...)
	b = appendSegment(b, idAuto)
	if service != "" {
		b = append(b, "?service="...)
		b = appendQueryValue(b, service)
	}
	return out, c.getFor(ctx, c.inventory, dealerID, b, &out)
}

// ListOffers returns one page of the dealer's NLT offers, for a listing:
// without their quotations (Quotations nil), which no listing item
// publishes; the service sends them and they are skipped, not decoded (an
// offer's quotations are Offer's).
func (c *Client) ListOffers(ctx context.Context, dealerID int64, q OfferQuery) (OfferPage, error) {
	var out OfferPage
	err := c.ListOffersInto(ctx, dealerID, q, &out)
	return out, err
}

// ListOffersInto is ListOffers decoding into *out, whose Items' room it
// reuses, as ListVehiclesInto does (with ReuseStrings, the memory of the
// last page's strings too): the NLT listing fill decodes into a pooled
// page.
func (c *Client) ListOffersInto(ctx context.Context, dealerID int64, q OfferQuery, out *OfferPage) error {
	resetPage(&out.Items, &out.Total, q.PageSize)
	b := c.begin("/inventory/v1/dealers/")
	b = strconv.AppendInt(b, dealerID, 10)
	b = append(b, "/offers"...)
	n := len(b)
	b = appendIntParam(b, "page", q.Page)
	b = appendIntParam(b, "page_size", q.PageSize)
	b = appendParam(b, "q", q.Q)
	if len(b) > n {
		b[n] = '?' // the first parameter was written with '&'
	}
	err := c.getFor(ctx, c.inventory, dealerID, b, (*offerListing)(out))
	if err == nil && out.Items == nil {
		out.Items = []Offer{}
	}
	return err
}

// Offer returns one NLT offer of the dealer.
func (c *Client) Offer(ctx context.Context, dealerID, id int64) (Offer, error) {
	var out Offer
	b := c.begin("/inventory/v1/dealers/")
	b = strconv.AppendInt(b, dealerID, 10)
	b = append(b, "/offers/"...)
	b = strconv.AppendInt(b, id, 10)
	return out, c.getFor(ctx, c.inventory, dealerID, b, &out)
}

// Equipment returns the catalog's equipment of one exact catalog version,
// asked for on behalf of dealerID (0: of no dealer): the call passes that
// dealer's catalog breaker, so one dealer's vehicles whose versions the
// catalog fails on do not open the catalog's breaker for every dealer.
func (c *Client) Equipment(ctx context.Context, dealerID int64, versionCode string) (Equipment, error) {
	var out Equipment
	if versionCode == "" {
		return out, notFound(SvcCatalog)
	}
	b := c.begin("/catalog/v1/versions/")
	b = appendSegment(b, versionCode)
	b = append(b, "/equipment"...)
	return out, c.getFor(ctx, c.catalog, dealerID, b, &out)
}

// VehicleMedia returns the generated podcast and video of a vehicle; both
// are nil when it has none.
func (c *Client) VehicleMedia(ctx context.Context, dealerID int64, idAuto string) (Media, error) {
	var out Media
	if idAuto == "" {
		return out, notFound(SvcMedia)
	}
	b := c.begin("/media/v1/dealers/")
	b = strconv.AppendInt(b, dealerID, 10)
	b = append(b, "/vehicles/"...)
	b = appendSegment(b, idAuto)
	return out, c.getFor(ctx, c.media, dealerID, b, &out)
}

// contentList is the body of the content endpoint.
type contentList struct {
	Items []ContentRecord `json:"items"`
}

// Content returns the dealer's raw view of one content type, narrowed by
// f: every matching record, unpaginated, whole or (f.Summary) in the
// summary view (see the package documentation).
func (c *Client) Content(ctx context.Context, dealerID int64, contentType string, f ContentFilter) ([]ContentRecord, error) {
	if contentType == "" {
		return nil, notFound(SvcContent)
	}
	b := c.contentURI(dealerID, contentType, f)
	var out contentList
	if err := c.getWith(ctx, c.content, c.content.types.of(contentType), c.content.types.trackOf(contentType), dealerID, b, &out); err != nil {
		return nil, err
	}
	if out.Items == nil {
		out.Items = []ContentRecord{}
	}
	return out.Items, nil
}

// ContentPage is Content for a caller that shows a few of the records
// only (a cold hub section, a listing page): the same call and answer,
// but of every record only the fields that decide visibility, order and
// the category/topic/brand filters are decoded (ID, Type, DealerID, Slug,
// Topic, Category, Brand, UpdatedAt, SourceProvider, OverrideOf,
// HiddenForDealer; the others are zero) and handed to pick, which returns
// the indices of the records to decode whole (in the order wanted); those
// are returned. keys is valid during pick only, its strings too (they are
// views of the answer's body, which is reused after). A body the content list
// decoder would reject is rejected the same way, and pick is not called.
func (c *Client) ContentPage(ctx context.Context, dealerID int64, contentType string, f ContentFilter, pick func(keys []ContentRecord) []int32) ([]ContentRecord, error) {
	if contentType == "" {
		return nil, notFound(SvcContent)
	}
	sink := contentPageSink{pick: pick}
	if err := c.getWith(ctx, c.content, c.content.types.of(contentType), c.content.types.trackOf(contentType), dealerID, c.contentURI(dealerID, contentType, f), &sink); err != nil {
		return nil, err
	}
	return sink.out, nil
}

// contentURI is the request URI of a content type's view narrowed by f.
func (c *Client) contentURI(dealerID int64, contentType string, f ContentFilter) []byte {
	b := c.begin("/content/v1/dealers/")
	b = strconv.AppendInt(b, dealerID, 10)
	b = append(b, '/')
	b = appendSegment(b, contentType)
	n := len(b)
	b = appendParam(b, "q", f.Q)
	b = appendParam(b, "category", f.Category)
	b = appendParam(b, "topic", f.Topic)
	b = appendParam(b, "brand", f.Brand)
	if f.Summary {
		b = appendParam(b, "view", "summary")
	}
	if len(b) > n {
		b[n] = '?'
	}
	return b
}

// begin starts a request URI: the BaseURL prefix and the fixed path.
func (c *Client) begin(path string) []byte {
	b := make([]byte, 0, 160)
	b = append(b, c.prefix...)
	return append(b, path...)
}

// get runs one call of no dealer (a key lookup, the key index, the
// catalog) through the service's breaker and decodes a 200 body into out.
func (c *Client) get(ctx context.Context, s *service, uri []byte, out any) error {
	return c.getWith(ctx, s, s.cb, s.track, 0, uri, out)
}

// getFor is get for a call of dealer's records: it passes the dealer's
// breaker first (dealerbreaker.go).
func (c *Client) getFor(ctx context.Context, s *service, dealer int64, uri []byte, out any) error {
	return c.getWith(ctx, s, s.cb, s.track, dealer, uri, out)
}

// getWith is get through breaker cb and its per-dealer accounting tr (a
// content type's, or nil for the service's own), for dealer (0: none).
func (c *Client) getWith(ctx context.Context, s *service, cb *gobreaker.CircuitBreaker[struct{}], tr *dealerTrack, dealer int64, uri []byte, out any) error {
	if cb == nil || tr == nil {
		cb, tr = s.cb, s.track
	}
	start := time.Now()
	var span trace.Span
	if c.tracer != nil && trace.SpanFromContext(ctx).IsRecording() {
		ctx, span = c.tracer.Start(ctx, "GET "+s.name, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attrService.String(s.name), attrMethod.String("GET")))
	}
	var err error
	switch {
	case c.closed.Load():
		err = unavailable(s.name, "client closed")
	case ctx.Err() != nil:
		// The caller has given up already: no call, no breaker accounting.
		err = callerGone(s.name, ctx)
	default:
		ok, trial := tr.admit(dealer)
		if !ok {
			// This dealer's own breaker is open: its calls have failed
			// while the service answered other dealers.
			err = fmt.Errorf("upstream %s: %w: %w", s.name, ErrUnavailable, ErrCircuitOpen)
			break
		}
		_, err = cb.Execute(func() (struct{}, error) {
			recorded := false
			defer func() {
				if !recorded {
					// roundTrip panicked (gobreaker counts a failure and
					// panics on): a failed call for the dealer's breaker
					// too. Unrecorded, a trial stayed in flight for good
					// and its dealer's calls were refused until a restart
					// (TestDealerBreakerTrialPanicEndsTrial).
					tr.done(dealer, trial, errCallPanicked)
				}
			}()
			err := c.roundTrip(ctx, s, uri, out, start)
			recorded = true
			tr.done(dealer, trial, err)
			return struct{}{}, err
		})
		if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
			tr.release(dealer, trial)
			err = fmt.Errorf("upstream %s: %w: %w", s.name, ErrUnavailable, ErrCircuitOpen)
		}
	}
	if c.onCall != nil {
		c.onCall(s.name, time.Since(start), err)
	}
	if span != nil {
		endCallSpan(span, err)
	}
	return err
}

// Attributes of a call's span. None carries a URL: the key lookup's path
// holds the key's hash.
var (
	attrService     = attribute.Key("upstream.service")
	attrMethod      = attribute.Key("http.request.method")
	attrStatus      = attribute.Key("http.response.status_code")
	attrBreakerOpen = attribute.Key("upstream.breaker_refused")
	attrErrorType   = attribute.Key("error.type")
	attrCallerGone  = "caller_gone"
	attrNotFound    = "not_found"
	attrUnavailable = "unavailable"
	attrCircuitOpen = "circuit_open"
)

// endCallSpan ends a call's span with the call's outcome: a class of error,
// never an error's text (which could carry a URL).
func endCallSpan(span trace.Span, err error) {
	switch {
	case err == nil, errors.Is(err, ErrUnchanged):
	case errors.Is(err, ErrCircuitOpen):
		span.SetAttributes(attrBreakerOpen.Bool(true), attrErrorType.String(attrCircuitOpen))
		span.SetStatus(codes.Error, "breaker open")
	case errors.Is(err, ErrNotFound):
		// A 404 is an answer, not a failure of the call.
		span.SetAttributes(attrErrorType.String(attrNotFound))
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		span.SetAttributes(attrErrorType.String(attrCallerGone))
		span.SetStatus(codes.Error, "caller gone")
	default:
		span.SetAttributes(attrErrorType.String(attrUnavailable))
		span.SetStatus(codes.Error, "unavailable")
	}
	span.End()
}

// roundTrip performs the HTTP exchange. Its errors are already classified:
// they wrap ErrNotFound, ErrUnavailable, or ErrUnavailable together with
// the caller's context error (which the breaker excludes). The service's
// timeout runs from start, the call's start (getWith's reading of the
// clock, taken a span's and the breaker's check earlier), rather than
// from a reading of its own.
func (c *Client) roundTrip(ctx context.Context, s *service, uri []byte, out any, start time.Time) error {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	// The body is read from the connection into the client's own pooled
	// buffer (readBody) rather than fasthttp's response body pool, whose
	// calibration keeps only the common size: after a run of small answers
	// every large one (a 100-item listing, a content corpus) allocated and
	// grew a fresh buffer, 150 KB of garbage per call.
	resp.StreamBody = true
	req.SetRequestURIBytes(uri)
	if s.hc.IsTLS {
		// A bare path is http to fasthttp, which then refuses the call
		// on a TLS pool (ErrHostClientRedirectToDifferentScheme): every
		// call of an https BaseURL failed before it was sent.
		// The parsed URI then names the host too: the Host header is
		// written from it.
		u := req.URI()
		u.SetScheme("https")
		u.SetHost(c.host)
	}
	req.Header.SetHost(c.host)
	req.Header.SetCanonical(hdrAccept, valJSON)
	setTraceHeaders(ctx, &req.Header)

	deadline := start.Add(s.timeout)
	callerDeadline := false
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline, callerDeadline = d, true
	}

	var x exchange
	if done, watch := callDone(ctx); !watch {
		// Nothing but the deadline, which DoDeadline and the body's read
		// deadline enforce, ends ctx while the call is in flight
		// (WithTimeout).
		x = fetch(s.hc, req, resp, deadline)
	} else {
		// fasthttp takes no context: run the exchange and the read of
		// the body aside so that a cancelled caller returns at once. They
		// still end by their deadline; whoever finishes last releases
		// req/resp and the body.
		ch := make(chan exchange, 1)
		c.exchanges.Go(func() { ch <- fetch(s.hc, req, resp, deadline) })
		select {
		case x = <-ch:
		case <-done:
			go func() {
				if x := <-ch; x.body != nil {
					_ = x.body.Close()
				}
				fasthttp.ReleaseRequest(req)
				fasthttp.ReleaseResponse(resp)
			}()
			return callerGone(s.name, ctx)
		}
	}
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)

	if err := x.err; err != nil {
		// A dial or handshake cut by the caller's deadline is the
		// caller's too (dialFor runs both under it).
		cut := errors.Is(err, fasthttp.ErrTimeout) || errors.Is(err, fasthttp.ErrDialTimeout) || errors.Is(err, fasthttp.ErrTLSHandshakeTimeout)
		if err := callerEnded(s.name, ctx, callerDeadline && cut); err != nil {
			return err
		}
		if errors.Is(err, fasthttp.ErrTimeout) {
			return unavailable(s.name, "timeout after "+s.timeout.String())
		}
		return unavailable(s.name, err)
	}
	if c.tracer != nil {
		if span := trace.SpanFromContext(ctx); span.IsRecording() {
			span.SetAttributes(attrStatus.Int(resp.StatusCode()))
		}
	}
	sc := resp.StatusCode()
	if sc == fasthttp.StatusOK {
		buf, err := x.body, x.bodyErr
		if err != nil {
			// The caller's deadline is the body's read deadline too: its
			// running out, or the caller's cancel, is no service failure.
			if err := callerEnded(s.name, ctx, callerDeadline && isTimeout(err)); err != nil {
				return err
			}
			if isTimeout(err) {
				return unavailable(s.name, "timeout after "+s.timeout.String()+" reading the body")
			}
			return unavailable(s.name, fmt.Sprintf("read body: %v", err))
		}
		// A Content-Encoding the edge did not ask for is a
		// failure (doc.go), whatever the bytes look like.
		if ce := resp.Header.ContentEncoding(); len(ce) > 0 && !strings.EqualFold(string(ce), "identity") {
			_ = buf.Close()
			return unavailable(s.name, "unasked Content-Encoding")
		}
		if d := digestFrom(ctx); d != nil && d.observe(buf.B) {
			_ = buf.Close()
			return ErrUnchanged
		}
		body := buf.B
		if m := reusedMemory(out); m != nil && cap(body) <= maxReusedBody {
			// The page keeps the body its strings are views of
			// (ReuseStrings): it takes the buffer, rather than a copy,
			// and the pool takes the page's last one.
			buf.B, m.body = m.body[:0], body
		}
		err = decodeBody(body, out)
		_ = buf.Close()
		if err != nil {
			return unavailable(s.name, fmt.Sprintf("decode body: %v", err))
		}
		return nil
	}
	// Any other answer's body was read (bounded) so that the connection
	// goes back to the pool instead of being closed; it is dropped.
	if x.body != nil {
		_ = x.body.Close()
	}
	switch {
	case sc == fasthttp.StatusNotFound:
		return notFound(s.name)
	case sc == fasthttp.StatusGone && isKeyChanges(out):
		// "Cursor expired" on the key index's change feed only
		// (doc.go); elsewhere a 410 is any other status.
		return fmt.Errorf("upstream %s: %w", s.name, ErrCursorExpired)
	case sc == fasthttp.StatusRequestURITooLong || sc == fasthttp.StatusRequestHeaderFieldsTooLarge:
		// The service refused this call's size, something a client's
		// parameters can cause: unavailable for that call, but not the
		// service's failure, so not one of its breaker's (a client
		// repeating such a request kept a breaker shared by every dealer
		// open).
		return fmt.Errorf("upstream %s: %w: %w (status %d)", s.name, ErrUnavailable, errCallTooLarge, sc)
	default:
		return unavailable(s.name, "status "+strconv.Itoa(sc))
	}
}

// isKeyChanges reports whether out is the answer of KeyChanges, the one
// call whose 410 means ErrCursorExpired.
func isKeyChanges(out any) bool {
	_, ok := out.(*KeyChangesPage)
	return ok
}

// Header names of a call in fasthttp's canonical form, set with
// SetCanonical: the bytes Set writes, without normalising the name on every
// call.
var (
	hdrAccept    = []byte(fasthttp.HeaderAccept)
	valJSON      = []byte("application/json")
	hdrRequestID = []byte("X-Request-Id")
)

// exchange is the outcome of a call's exchange (fetch): the exchange's
// error, else the body read to its end (whatever the status) or the error
// that ended its read.
type exchange struct {
	err     error
	body    *bufpool.Buf
	bodyErr error
}

// fetch performs the exchange of req, by deadline, and reads the body of
// the answer; the connection's read deadline bounds both.
func fetch(hc *fasthttp.HostClient, req *fasthttp.Request, resp *fasthttp.Response, deadline time.Time) (x exchange) {
	if x.err = hc.DoDeadline(req, resp, deadline); x.err == nil {
		x.body, x.bodyErr = readBody(resp)
	}
	return x
}

// callerEnded returns the error of a call that its caller ended: its
// context done (callerGone), or its own deadline, earlier than the
// service's timeout, reached (callerTimeout: the exchange or the read of
// the body timed out while that deadline was the call's). Both wrap the
// context's error, which the breaker excludes. It returns nil when the
// caller did not end the call.
func callerEnded(svc string, ctx context.Context, callerTimeout bool) error {
	switch {
	case ctx.Err() != nil:
		return callerGone(svc, ctx)
	case callerTimeout:
		// The caller's budget, not the service's timeout, ran out (its
		// context may not say so yet).
		return fmt.Errorf("upstream %s: %w: %w", svc, ErrUnavailable, context.DeadlineExceeded)
	}
	return nil
}

// bodyBufs lends the buffers call bodies are read into (readBody): a
// content corpus or a 100-item listing fits the bound, a rare huge answer
// is not held between calls.
var bodyBufs = bufpool.New(1 << 20)

// maxReserveBytes is the most readBody reserves for a body on the word of
// its Content-Length, before the bytes arrive.
const maxReserveBytes = 2 << 20

// errBodyTooLarge is a body longer than maxResponseBytes.
var errBodyTooLarge = errors.New("body larger than the limit")

// readBody reads the streamed body of resp to its end (the connection's
// read deadline is the call's) into a pooled buffer, which the caller
// closes once nothing refers to it. Reading to the end lets fasthttp put
// the connection back in its pool when resp is released.
func readBody(resp *fasthttp.Response) (*bufpool.Buf, error) {
	buf := bodyBufs.Get()
	r := resp.BodyStream()
	if r == nil { // not streamed (nothing to stream): the body is in resp
		buf.B = append(buf.B, resp.Body()...)
		return buf, nil
	}
	cl := resp.Header.ContentLength()
	if cl > maxResponseBytes {
		_ = buf.Close()
		return nil, errBodyTooLarge
	} else if cl >= 0 && cap(buf.B) < cl+1 {
		// One more byte than the body, so the read that meets its end
		// returns at once; at most maxReserveBytes before the bytes
		// arrive (the doubling below takes over): a service that declares
		// 32 MiB and sends a few bytes, or none, held 32 MiB per call for
		// its whole timeout.
		buf.B = make([]byte, 0, min(cl+1, maxReserveBytes))
	}
	b := buf.B
	for {
		if len(b) == cap(b) {
			// Doubling, capped one byte past the limit: a body of unknown
			// length costs at most about twice the limit in allocations
			// (append's 1.25x steps made about six times as much garbage
			// before a huge chunked answer was refused).
			nc := max(2*cap(b), 64<<10)
			if nc >= maxResponseBytes {
				nc = maxResponseBytes + 1
			}
			if cl >= 0 && cl+1 > cap(b) {
				// The reservation filled as declared: grow with what
				// arrived, four times it, never past the declared
				// length. A service that declares 32 MiB and dribbles
				// makes a call hold at most about 4x what it sent
				// (before 2026-11-29 the whole 32 MiB at 2 MiB sent:
				// TestReadBodyGrowsAsBytesArrive); a body sent as
				// declared costs 2+8+32 MiB at most, no more copies
				// than doubling (TestReadBodyLargeDeclaredBody). Bytes
				// past the declared length (a stream that gives more
				// than its Content-Length) double, as any body of
				// unknown length: min(..., cl+1) there was the same
				// size or smaller, a read into an empty slice for ever
				// (TestReadBodyLongerThanDeclared).
				nc = min(4*cap(b), cl+1)
			}
			nb := make([]byte, len(b), nc)
			copy(nb, b)
			b = nb
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if len(b) > maxResponseBytes {
			err = errBodyTooLarge
		}
		buf.B = b
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			_ = buf.Close()
			return nil, err
		}
	}
}

// retryStaleConn is the client's retry rule: only an error that shows the
// connection ended before any byte of an answer (the service closed a
// keep-alive connection it had idled out: fasthttp's ErrConnectionClosed,
// or the request's write failed on it) is worth one more attempt. A
// partial or malformed answer would be the same again, and a timeout has
// spent the call's time.
func retryStaleConn(_ *fasthttp.Request, attempts int, err error) (resetTimeout, retry bool) {
	if err == errUnsolicited || err == errIdleClosed {
		return false, true // dropped before anything was written to it
	}
	if attempts >= 2 {
		return false, false
	}
	// fasthttp passes the retry rule the bare io.EOF of a
	// connection that ended before the first byte (it turns it into
	// ErrConnectionClosed only after its retry loop). Compared with ==: a
	// cut head is a wrapped EOF and must not be retried.
	return false, err == io.EOF || errors.Is(err, fasthttp.ErrConnectionClosed) || errors.Is(err, syscall.EPIPE)
}

// dialFor is the services' dialer: fasthttp's own (its DNS cache, the
// call's dial timeout), dual stack (fasthttp.DialTimeout is tcp4 only and
// dropped AAAA records: an IPv6 base URL failed every call,
// TestIPv6BaseURL), with plain TCP connections checked before reuse
// (idleguard.go) and TLS connections handshaken under the same timeout, the
// call's remaining time (fasthttp's handshake deadline was the service's
// whole timeout from the dial, past a shorter caller deadline:
// TestHTTPSHandshakeKeepsCallerDeadline).
func dialFor(tlsOn bool, cfg *tls.Config, fallback time.Duration) fasthttp.DialFuncWithTimeout {
	return func(addr string, timeout time.Duration) (net.Conn, error) {
		if timeout <= 0 {
			timeout = fallback
		}
		deadline := time.Now().Add(timeout)
		addr = fasthttp.AddMissingPort(addr, tlsOn)
		// IPv4 first, as fasthttp dials by default: its dual-stack dialer
		// gives up at the first address that times out and rotates its
		// start, so a name with an unreachable IPv6 address failed every
		// other dial. Both stacks for an IPv6 literal, or a name with no
		// IPv4 address (TestIPv6BaseURL).
		var c net.Conn
		var err error
		if host, _, _ := net.SplitHostPort(addr); strings.Contains(host, ":") {
			c, err = fasthttp.DialDualStackTimeout(addr, timeout)
		} else if c, err = fasthttp.DialTimeout(addr, timeout); err != nil && strings.HasPrefix(err.Error(), "couldn't find dns entries") {
			c, err = fasthttp.DialDualStackTimeout(addr, time.Until(deadline))
		}
		if err != nil {
			return nil, err
		}
		if !tlsOn {
			return guardIdle(c), nil
		}
		tc := tls.Client(c, cfg)
		if err := tc.SetDeadline(deadline); err != nil {
			_ = c.Close()
			return nil, err
		}
		if err := tc.Handshake(); err != nil {
			_ = c.Close()
			if isTimeout(err) {
				return nil, fasthttp.ErrTLSHandshakeTimeout
			}
			return nil, err
		}
		if err := tc.SetDeadline(time.Time{}); err != nil {
			_ = c.Close()
			return nil, err
		}
		return tc, nil
	}
}

// isTimeout reports a network timeout (the connection's read deadline).
func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// decodeBody decodes a 200 body into out, the way every call does: field by
// field for the answers of the miss path (decode.go), by reflection for the
// others.
func decodeBody(body []byte, out any) error {
	if d, ok := out.(bodyDecoder); ok {
		return d.decodeBody(body)
	}
	if ok, err := decodeFields(body, out); ok {
		return err
	}
	return json.Unmarshal(body, out, decodeOptions)
}

// decodeOptions configure the decoding of every 200 body: internal-only
// payloads (Opaque, RawOptionals, Markup) are skipped without being built, and the
// decoder is as lenient as encoding/json's on duplicate names and invalid
// UTF-8 (the records are still checked by the mapping). The decoder is
// go-json-experiment/json (the encoding/json/v2 prototype): a single pass
// over the input, where encoding/json scans it twice; together with the
// skipped payloads it decodes a content listing several times faster.
var decodeOptions = json.JoinOptions(
	json.WithUnmarshalers(json.JoinUnmarshalers(
		json.UnmarshalFromFunc(func(dec *jsontext.Decoder, _ *Opaque) error { return dec.SkipValue() }),
		json.UnmarshalFromFunc(func(dec *jsontext.Decoder, _ *RawOptionals) error { return dec.SkipValue() }),
		json.UnmarshalFromFunc(func(dec *jsontext.Decoder, _ *Markup) error { return dec.SkipValue() }),
	)),
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
)

func notFound(svc string) error {
	return fmt.Errorf("upstream %s: %w", svc, ErrNotFound)
}

// errCallTooLarge is a service's 414 or 431: the call was too large for
// it, which the breaker excludes.
var errCallTooLarge = errors.New("call too large for the service")

// errCallPanicked is what a dealer's breaker records for a call whose
// round trip panicked.
var errCallPanicked = errors.New("call panicked")

func unavailable(svc string, cause any) error {
	return fmt.Errorf("upstream %s: %w: %v", svc, ErrUnavailable, cause)
}

// callerGone reports that the caller's context ended. It wraps both
// ErrUnavailable (the answer is missing) and the context's error (so the
// breaker and the caller can tell it from a service failure).
func callerGone(svc string, ctx context.Context) error {
	cause := ctx.Err()
	if cause == nil {
		cause = context.Canceled
	}
	return fmt.Errorf("upstream %s: %w: %w", svc, ErrUnavailable, cause)
}

// appendSegment appends s as one escaped path segment: every byte but the
// RFC 3986 unreserved characters is percent-encoded, so "/", "?", "%" and
// ".." cannot change the path.
func appendSegment(b []byte, s string) []byte {
	if s == "." || s == ".." {
		for i := 0; i < len(s); i++ {
			b = append(b, "%2E"...)
		}
		return b
	}
	return appendEscaped(b, s)
}

// appendQueryValue appends s escaped for a query value.
func appendQueryValue(b []byte, s string) []byte { return appendEscaped(b, s) }

func appendParam(b []byte, name, value string) []byte {
	if value == "" {
		return b
	}
	b = append(b, '&')
	b = append(b, name...)
	b = append(b, '=')
	return appendQueryValue(b, value)
}

func appendIntParam(b []byte, name string, v int) []byte {
	if v == 0 {
		return b
	}
	b = append(b, '&')
	b = append(b, name...)
	b = append(b, '=')
	return strconv.AppendInt(b, int64(v), 10)
}

const upperHex = "0123456789ABCDEF"

func appendEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			b = append(b, c)
			continue
		}
		b = append(b, '%', upperHex[c>>4], upperHex[c&15])
	}
	return b
}
