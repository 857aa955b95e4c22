package aggregator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/cache/ratelimit"
	"github.com/dealer-edge/dealer-edge/internal/bufpool"
	"github.com/dealer-edge/dealer-edge/publicshape"
	"github.com/dealer-edge/dealer-edge/tracing"
	"github.com/dealer-edge/dealer-edge/upstream"
)

// Backend is what the edge needs of the internal services
// (*upstream.Client implements it; tests may pass fakes).
type Backend interface {
	LookupKey(ctx context.Context, keySHA256Hex string) (upstream.KeyRecord, error)
	Dealer(ctx context.Context, id int64) (upstream.Dealer, error)
	ListVehicles(ctx context.Context, dealerID int64, q upstream.VehicleQuery) (upstream.VehiclePage, error)
	Vehicle(ctx context.Context, dealerID int64, service, idAuto string) (upstream.Vehicle, error)
	ListOffers(ctx context.Context, dealerID int64, q upstream.OfferQuery) (upstream.OfferPage, error)
	Offer(ctx context.Context, dealerID, id int64) (upstream.Offer, error)
	Equipment(ctx context.Context, dealerID int64, versionCode string) (upstream.Equipment, error)
	VehicleMedia(ctx context.Context, dealerID int64, idAuto string) (upstream.Media, error)
	Content(ctx context.Context, dealerID int64, contentType string, f upstream.ContentFilter) ([]upstream.ContentRecord, error)
}

// ResponseCache is what the edge needs of the response cache
// (*cache.Cache implements it).
type ResponseCache interface {
	// Fresh is the fast path: a fresh in-process entry, or false.
	Fresh(dealerID int64, key []byte, pol cache.Policy) (*cache.Entry, bool)
	Get(ctx context.Context, dealerID int64, key []byte, pol cache.Policy, fill cache.FillFunc) (*cache.Entry, cache.Result, error)
	// FreshGzip and GetGzip are Fresh and Get for a client that is sent
	// the gzip variant: an entry read from Redis compressed is not
	// decompressed for it.
	FreshGzip(dealerID int64, key []byte, pol cache.Policy) (*cache.Entry, bool)
	// FreshAt is Fresh (FreshGzip when gzip is set) judged at now, the
	// request's start read from the real clock (zero: the cache's own).
	FreshAt(dealerID int64, key []byte, pol cache.Policy, gzip bool, now time.Time) (*cache.Entry, bool)
	GetGzip(ctx context.Context, dealerID int64, key []byte, pol cache.Policy, fill cache.FillFunc) (*cache.Entry, cache.Result, error)
	// Peek and Put keep facts rather than responses (a remembered "not
	// found", see notFoundKeyPrefix): Peek looks for a fresh entry in L1
	// and L2 without filling, Put stores one under Peek's Stamp.
	Peek(ctx context.Context, dealerID int64, key []byte, pol cache.Policy) (cache.Stamp, bool)
	Put(ctx context.Context, dealerID int64, key []byte, pol cache.Policy, st cache.Stamp, body []byte)
	// StampNow is Peek's Stamp without the lookup, and PutL1 is Put into
	// L1 alone: for a fact looked for in L1 alone (Fresh: a listing
	// query's known total, see pastend.go).
	StampNow(ctx context.Context, dealerID int64) cache.Stamp
	PutL1(dealerID int64, key []byte, pol cache.Policy, st cache.Stamp, body []byte)
}

// RateLimiter is what the edge needs of the rate limiter
// (*ratelimit.Limiter implements it): a decision for one request that
// spends cost tokens of the key's bucket.
type RateLimiter interface {
	AllowN(ctx context.Context, dealerID int64, keyID string, lim ratelimit.Limit, cost int) ratelimit.Decision
}

// RequestInfo describes one finished request, for access logs and
// metrics. It, and its RequestID, are only valid during the OnRequest
// call: the edge reuses both for its next request.
type RequestInfo struct {
	Method    []byte
	Route     string
	Status    int
	Code      string // problem code, "" on success
	Cache     string // HIT, MISS, STALE, BYPASS or ""
	DealerID  int64  // 0 before authentication
	RequestID []byte
	Duration  time.Duration
	BodyBytes int  // bytes of the response body as sent
	Gzip      bool // the body went out gzip-coded
}

// Options configure a Server. Backend, Cache and KeySecret are required.
type Options struct {
	Backend Backend
	Cache   ResponseCache
	// Limiter applies per-key rate limits; nil disables rate limiting.
	Limiter RateLimiter
	// KeySecret keys the hash under which API keys are cached and
	// rate-limited (HMAC-SHA-256). All instances sharing a Redis must use
	// the same secret. At least 16 bytes.
	KeySecret []byte
	// Settings are the initial reloadable settings; nil means
	// DefaultSettings().
	Settings *Settings
	// ProblemBaseURL prefixes problem type URIs; default
	// publicshape.DefaultProblemBase.
	ProblemBaseURL string
	// AuthCacheEntries bounds the in-process cache of valid keys; default
	// 100000. Only keys that resolved valid enter it.
	AuthCacheEntries int
	// NegativeCacheEntries bounds the separate cache of keys that resolved
	// invalid (unknown, revoked, expired, orphaned); default 100000.
	NegativeCacheEntries int
	// AddrLimiter, when set, holds the per-client-address limits
	// (Settings.FailedAuthLimit, Settings.OpenAPILimit) under keys that
	// cannot collide with API keys'. A separate ratelimit.Limiter on the
	// same Redis client as Limiter fits. Nil: no per-address limits.
	AddrLimiter RateLimiter
	// KeyFeed, when set, feeds the local key index (RunKeyIndex keeps it in
	// sync). Nil: no index, every unknown key is looked up under the
	// lookup budget.
	KeyFeed KeyFeed
	// Logger receives event logs; nil discards them.
	Logger *slog.Logger
	// OnRequest, when set, is called after every request (access log,
	// metrics). It must not block.
	OnRequest func(*RequestInfo)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// AnonymousLimit, when set, is asked before a request that needs no
	// key (GET or HEAD /dealer/openapi.json) is served: false answers
	// 429 rate_limited with Retry-After retryAfter seconds (at least 1).
	// It is the hook of the per-client-address limit, whose client
	// address (trusted proxies, PROXY protocol) it resolves from ctx; it
	// must not block.
	AnonymousLimit func(ctx *fasthttp.RequestCtx) (ok bool, retryAfter int)
	// Tracing, when non-nil, traces the requests it samples: a server
	// span per request with children for the key lookup, the hub and
	// search sections (and, through the context handed to them, the
	// cache's, the limiter's and the upstream client's own spans). Nil:
	// tracing off; the client's traceparent/tracestate are still passed
	// on to the internal services.
	Tracing *tracing.Tracing
}

// Server is the public dealer API.
type Server struct {
	backend     Backend
	cache       ResponseCache
	limiter     RateLimiter
	hasher      *keyHasher
	auth        *authCache // valid keys only
	negAuth     *authCache // keys that resolved to an error
	index       *keyIndex  // nil without a KeyFeed
	addrLimiter RateLimiter
	sections    *sectionWorkers // runs the hub's sections
	dealers     dealerCache
	budget      lookupBudget
	authStats   authCounters
	settings    atomic.Pointer[liveSettings]
	problemBase string
	log         *slog.Logger
	onRequest   func(*RequestInfo)
	now         func() time.Time
	// realClock is set when now is time.Now: a request's start is then
	// the reading fasthttp took for it (RequestCtx.Time), not one more.
	realClock bool
	tracing   *tracing.Tracing // nil: tracing off
	tracer    trace.Tracer     // nil: tracing off
	ids       *idGen
	router    *router.Router
	openapi   openapiDoc
	anonLimit func(*fasthttp.RequestCtx) (ok bool, retryAfter int)
	states    sync.Pool
	views     viewMemo // decoded content views (views.go)
}

// liveSettings is an installed Settings with the values derived from it.
type liveSettings struct {
	*Settings
	dep            publicshape.Deprecation
	depDeprecation string
	depSunset      string
	depLink        string
	depKey         string // deprecation fingerprint, part of cache keys of deprecated types
}

// New builds a Server; errors name the bad option.
func New(opts Options) (*Server, error) {
	var errs []error
	if opts.Backend == nil {
		errs = append(errs, errors.New("aggregator: Backend is required"))
	}
	if opts.Cache == nil {
		errs = append(errs, errors.New("aggregator: Cache is required"))
	}
	if len(opts.KeySecret) < 16 {
		errs = append(errs, errors.New("aggregator: KeySecret must be at least 16 bytes"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	buildSeed() // read the executable now rather than on the first refill
	s := &Server{
		backend:     opts.Backend,
		cache:       opts.Cache,
		limiter:     opts.Limiter,
		hasher:      newKeyHasher(opts.KeySecret),
		auth:        newAuthCache(cmpOr(opts.AuthCacheEntries, 100000)),
		negAuth:     newAuthCache(cmpOr(opts.NegativeCacheEntries, 100000)),
		problemBase: cmpOr(opts.ProblemBaseURL, publicshape.DefaultProblemBase),
		log:         opts.Logger,
		onRequest:   opts.OnRequest,
		now:         opts.Now,
		ids:         newIDGen(),
		tracing:     opts.Tracing,
		sections:    newSectionWorkers(workerIdle),
	}
	if opts.Tracing != nil {
		s.tracer = opts.Tracing.Tracer()
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now, s.realClock = time.Now, true
	}
	if opts.KeyFeed != nil {
		s.index = newKeyIndex(opts.KeyFeed, s.log, s.now)
	}
	s.addrLimiter = opts.AddrLimiter
	st := opts.Settings
	if st == nil {
		st = DefaultSettings()
	}
	if err := s.UpdateSettings(st); err != nil {
		return nil, err
	}
	s.openapi = newOpenAPIDoc(publicshape.OpenAPI())
	s.anonLimit = opts.AnonymousLimit
	if s.anonLimit == nil && s.addrLimiter != nil {
		s.anonLimit = s.openAPIAllow
	}
	s.states.New = func() any { return &reqState{keyBuf: make([]byte, 0, 256), hdrBuf: make([]byte, 0, 256)} }
	s.router = s.routes()
	return s, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// UpdateSettings validates st and installs it for all later requests. An
// invalid st is rejected and the settings in force stay.
func (s *Server) UpdateSettings(st *Settings) error {
	if err := st.Validate(); err != nil {
		return err
	}
	dep, sun, link := st.Deprecation.Headers()
	ls := &liveSettings{
		Settings:       st,
		dep:            st.Deprecation.Fields(),
		depDeprecation: dep,
		depSunset:      sun,
		depLink:        link,
	}
	ls.depKey = dep + "|" + sun + "|" + link
	s.settings.Store(ls)
	if s.index != nil {
		s.index.settingsChanged()
	}
	return nil
}

// Settings returns the settings in force.
func (s *Server) Settings() *Settings { return s.settings.Load().Settings }

// reqState is the per-request scratch state, pooled.
type reqState struct {
	idBuf       [maxRequestIDLen + 8]byte
	reqID       []byte
	traceparent string
	tracestate  string          // passed on with traceparent only
	tctx        context.Context // the traced request's context (its server span); nil when not traced
	span        trace.Span      // the server span; nil when not traced
	start       time.Time       // when the request arrived: the one clock read of the hit path
	route       string
	pathValue   string // {service} or {content_type} of a static route
	status      int
	code        string
	cache       string
	gzip        bool // the body is the gzip variant
	p           *principal
	addrCounted bool // the request has counted against its address's failed-auth limit
	raw         rawParams
	hdr         reqHeaders
	keyBuf      []byte
	hdrBuf      []byte
	// fillBody is the pooled buffer a cache-bypassing fill writes its body
	// into (poolFillBody); respond hands it to fasthttp, which closes it
	// once the response is written.
	fillBody *bufpool.Buf
	info     RequestInfo // what report hands to OnRequest
}

func (rs *reqState) reset() {
	keyBuf, hdrBuf := rs.keyBuf[:0], rs.hdrBuf[:0]
	*rs = reqState{}
	rs.keyBuf, rs.hdrBuf = keyBuf, hdrBuf
}

const stateKey = "edge.rs"

// Handler returns the fasthttp handler of the public API.
func (s *Server) Handler() fasthttp.RequestHandler { return s.serve }

// requestStart returns the time the request began: on the real clock the
// time fasthttp read for it just before the handler (RequestCtx.Time), so
// a request reads the clock once less; else, or when ctx was not served by
// a fasthttp Server (its Time is zero), s.now().
func (s *Server) requestStart(ctx *fasthttp.RequestCtx) time.Time {
	if s.realClock {
		if t := ctx.Time(); !t.IsZero() {
			return t
		}
	}
	return s.now()
}

func (s *Server) serve(ctx *fasthttp.RequestCtx) {
	rs := s.states.Get().(*reqState)
	rs.reset()
	rs.start = s.requestStart(ctx)
	defer s.finish(ctx, rs)

	scan := scanBlock(ctx.Request.Header.RawHeaders())
	if ctx.Request.Header.ContentLength() == -1 || scan.te {
		// A chunked body: its trailer fields are in the parsed headers.
		// Once fasthttp has read an empty chunked body it sets the
		// Content-Length to 0, so the Transfer-Encoding line tells, not
		// the length: before 2026-11-29 a trailer after an empty body
		// ("0\r\nX-Api-Key: k") authenticated the request
		// (TestHTTP1Framing, "API key in the trailer of an empty body").
		rs.hdr.readRaw(ctx.Request.Header.RawHeaders())
	} else if raw := ctx.Request.Header.RawHeaders(); len(raw) > 1024 && bytes.Count(raw, []byte{'\n'}) > maxParsedHeaderLines {
		// Cookie collection cost (TestCookieLinesCostLinear): RequestHeader.All first
		// collects the cookies, moving each Cookie line out of the header
		// list with a copy of the rest of it (quadratic in the number of
		// Cookie lines); a long block is read in one linear pass instead.
		rs.hdr.readRaw(raw)
	} else {
		rs.hdr.read(&ctx.Request.Header)
	}
	bareLF, folded, te := scan.bareLF, scan.folded, scan.te
	if bareLF || folded {
		// Nothing read from such a header block is trusted, not even the
		// request id to echo.
		rs.hdr = reqHeaders{}
	}
	s.setRequestID(ctx, rs)
	ctx.Response.Header.SetCanonical(hdrNosniff, valNosniff)
	if bareLF {
		// A header line ended by a bare LF: fasthttp, like nginx, splits
		// the line there, but a proxy in front that does not (it keeps the
		// LF inside one field value and forwards it) would let
		// "X-Note: a\nX-Api-Key: other" reach the edge as a header the
		// proxy never saw. RFC 9112 section 2.2 lets a recipient accept a
		// bare LF; the edge rejects it (no client of an API needs it) and
		// closes the connection, so no header can be smuggled that way.
		rs.route = RouteNotFound
		s.writeProblem(ctx, rs, problemf(codeBadRequest, "header lines must end in CRLF"))
		ctx.SetConnectionClose()
		return
	}
	if folded {
		// A header line that starts with a space or tab continues the line
		// before it (obs-fold) or, first in the block, follows the request
		// line with whitespace. fasthttp joins a folded value into its
		// field, but the reader of a chunked request's header block
		// (readRaw) and the forwarding fields' reader keep the first line
		// only, so the same bytes would mean two things; a proxy in front
		// may read them a third way. RFC 9112 sections 5.2 and 2.2 let a
		// server reject both with 400; the edge does, and closes the
		// connection, as for a bare LF.
		rs.route = RouteNotFound
		s.writeProblem(ctx, rs, problemf(codeBadRequest, "header fields must not be folded over lines"))
		ctx.SetConnectionClose()
		return
	}
	if scan.close {
		// A Connection close option fasthttp does not see ("Close",
		// "keep-alive, close", or "close" on a line before another
		// Connection line): RFC 9112 section 9.6, the server MUST close
		// the connection after its answer.
		ctx.SetConnectionClose()
	}
	if detail := headProblem(&ctx.Request.Header, scan); detail != "" {
		rs.route = RouteNotFound
		s.writeProblem(ctx, rs, problemf(codeBadRequest, detail))
		ctx.SetConnectionClose()
		return
	}
	var tp [TraceparentLen]byte
	if len(rs.hdr.traceparent) > 0 && rs.hdr.traceparents == 1 && ParseTraceparent(&tp, rs.hdr.traceparent) {
		// The version-00 form, whatever version the client sent: what the
		// internal services get and the server span continues.
		rs.traceparent = string(tp[:])
		if ts := rs.hdr.tracestate; len(ts) > 0 {
			// At most 512 characters, cut by list members as W3C Trace
			// Context asks (TestTracestateTruncated).
			rs.tracestate = TruncateTracestate(ts)
		}
	}
	if s.tracing != nil {
		s.startTrace(ctx, rs)
	}
	if hdr := &ctx.Request.Header; (hdr.ContentLength() == -1 || rs.hdr.contentLength) &&
		hasRawHeader(hdr.RawHeaders(), "transfer-encoding") && hasRawHeader(hdr.RawHeaders(), "content-length") {
		// Content-Length beside Transfer-Encoding is how requests are
		// smuggled past a proxy that honours the other one. fasthttp
		// follows the chunked framing (and, once it has read the body,
		// rewrites both headers) and keeps the connection; RFC 9112
		// section 6.1 lets a server reject such a request and requires the
		// connection closed after it. Only requests with a body framing
		// header pay for the scan of the raw headers.
		rs.route = RouteNotFound
		s.writeProblem(ctx, rs, problemf(codeBadRequest, "send either Content-Length or Transfer-Encoding, not both"))
		ctx.SetConnectionClose()
		return
	}
	if te && badTransferEncoding(ctx.Request.Header.RawHeaders()) {
		rs.route = RouteNotFound
		s.writeProblem(ctx, rs, problemf(codeBadRequest, "Transfer-Encoding must end with chunked, applied once"))
		ctx.SetConnectionClose()
		return
	}
	if !ctx.IsGet() && !ctx.IsHead() {
		// Counted, logged and traced under the route a GET of the path
		// takes (not_found only where GET finds none): operators see a
		// known endpoint's 405 traffic as that endpoint's.
		rs.route = routeOfPath(ctx.Request.URI().PathOriginal()) // the raw path, as routing reads it
		// A guides or glossary route's 405 is an answer of the type too
		// (contract 9; README, Deprecation: every answer carries them).
		if ct, ok := deprecatedContentRoute(ctx.Request.URI().PathOriginal()); ok { // the raw path, as routing reads it
			setDeprecation(ctx, s.settings.Load(), ct)
		}
		s.writeProblem(ctx, rs, problemf(codeMethodNotAllowed, "only GET and HEAD are supported"))
		return
	}
	ctx.SetUserValue(stateKey, rs)
	s.router.Handler(ctx)
}

// maxParsedHeaderLines is the most header lines serve reads through
// fasthttp's parsed headers (reqHeaders.read); a block with more is read
// from its raw bytes (readRaw).
const maxParsedHeaderLines = 32

// scanHeaderLines finds, in one pass over a raw header block, what serve
// refuses in it: bareLF, a line ended by LF without CR; folded, a line
// that starts with a space or a tab, a folded field's continuation
// (obs-fold, RFC 9112 section 5.2) or whitespace before the first field
// (section 2.2), reported only when the block has no bare LF (which
// serve answers first). Each LF is found once (bytes.IndexByte) and the
// byte before and after it looked at; a bare LF ends the scan. It does not
// allocate.
func scanHeaderLines(raw []byte) (bareLF, folded bool) {
	bareLF, folded, _ = scanHeaderBlock(raw)
	return bareLF, folded
}

// scanHeaderBlock is scanHeaderLines that also reports te, a line that is
// a Transfer-Encoding field (its name, any case, right before the colon, as
// fasthttp requires): the one header serve must see in the raw block,
// since fasthttp drops a Transfer-Encoding: identity line from the parsed
// headers (badTransferEncoding). The check costs one byte compare a line.
func scanHeaderBlock(raw []byte) (bareLF, folded, te bool) {
	s := scanBlock(raw)
	return s.bareLF, s.folded, s.te
}

// isTELine reports whether line starts with "Transfer-Encoding:" in any
// case.
func isTELine(line []byte) bool {
	const name = "transfer-encoding:"
	return len(line) >= len(name) && (line[0]|0x20) == 't' && bytes.EqualFold(line[:len(name)], []byte(name))
}

// badTransferEncoding reports a request's Transfer-Encoding that RFC 9112
// section 6.3 makes unreadable: chunked not the final coding, or applied
// more than once (section 6.1). fasthttp refuses each line's value unless
// it is chunked or identity, but takes an identity line as no body at all,
// and two lines, whatever their order, as chunked once: the bytes after
// the header block of "Transfer-Encoding: identity" would be read as the
// next request, which a proxy in front framed another way (a smuggled
// request). Such a request is answered 400 and its connection closed, as
// the RFC requires.
func badTransferEncoding(raw []byte) bool {
	chunked, last := 0, ""
	for k, v := range rawFields(raw) {
		if len(k) != len("Transfer-Encoding") || !bytes.EqualFold(k, []byte("Transfer-Encoding")) {
			continue
		}
		for c := range bytes.SplitSeq(v, []byte(",")) {
			c = bytes.Trim(c, " \t")
			switch {
			case len(c) == 0:
				continue // an empty list element (RFC 9110 5.6.1)
			case bytes.EqualFold(c, []byte("chunked")):
				chunked++
				last = "chunked"
			default:
				last = "other"
			}
		}
	}
	return last != "chunked" || chunked > 1
}

// hasRawHeader reports whether the raw header block has a field called
// name (ASCII), in any case, among the fields rawFields yields.
func hasRawHeader(raw []byte, name string) bool {
	for k := range rawFields(raw) {
		if len(k) == len(name) && bytes.EqualFold(k, []byte(name)) {
			return true
		}
	}
	return false
}

// setRequestID takes the client's X-Request-ID when it is well formed and
// sent on one line, or generates one, and sends it back.
func (s *Server) setRequestID(ctx *fasthttp.RequestCtx, rs *reqState) {
	if id := rs.hdr.requestID; rs.hdr.requestIDs == 1 && ValidRequestID(id) {
		rs.reqID = append(rs.idBuf[:0], id...)
	} else {
		rs.reqID = s.ids.appendID(rs.idBuf[:0])
	}
	ctx.Response.Header.SetCanonical(hdrXRequestID, rs.reqID)
}

func (s *Server) finish(ctx *fasthttp.RequestCtx, rs *reqState) {
	if r := recover(); r != nil {
		s.log.Error("panic", "request_id", string(rs.reqID), "route", rs.route, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		s.writeProblem(ctx, rs, problemf(codeInternal, "an unexpected error occurred"))
	}
	s.report(ctx, rs)
	if rs.span != nil {
		s.endTrace(ctx, rs)
	}
	ctx.SetUserValue(stateKey, nil)
	rs.p = nil
	s.states.Put(rs)
}

// report hands the finished request to the access log and metrics.
func (s *Server) report(ctx *fasthttp.RequestCtx, rs *reqState) {
	if s.onRequest != nil {
		// Made in the pooled request state: a RequestInfo handed to a
		// function value would escape to the heap, an allocation per
		// request.
		info := &rs.info
		*info = RequestInfo{
			Method:    ctx.Method(),
			Route:     rs.route,
			Status:    ctx.Response.StatusCode(),
			Code:      rs.code,
			Cache:     rs.cache,
			RequestID: rs.reqID,
			Duration:  s.since(rs.start),
			BodyBytes: bodyBytesSent(ctx),
			Gzip:      rs.gzip,
		}
		if rs.p != nil {
			info.DealerID = rs.p.dealerID
		}
		s.onRequest(info)
	}
}

// since is the time from t, a reading of s.now: with the real clock, one
// monotonic clock read (time.Since), where s.now().Sub(t) takes two.
func (s *Server) since(t time.Time) time.Duration {
	if s.realClock {
		return time.Since(t)
	}
	return s.now().Sub(t)
}

// bodyBytesSent is the length of the response body as it goes out: none
// for HEAD (fasthttp sends the headers of the body the handler set,
// Content-Length included, and skips the body).
func bodyBytesSent(ctx *fasthttp.RequestCtx) int {
	if ctx.IsHead() {
		return 0
	}
	return len(ctx.Response.Body())
}

// getHead registers GET and HEAD handlers of a router: HEAD runs the GET
// handler unchanged (same status, headers, ETag, rate-limit cost, cache
// use), and fasthttp sends its headers, Content-Length of the body it
// would have sent included, without the body (RFC 9110 section 9.3.2).
type getHead struct{ *router.Router }

func (r getHead) GET(path string, h fasthttp.RequestHandler) {
	r.Router.GET(path, h)
	r.Router.HEAD(path, h)
}

func (s *Server) routes() *router.Router {
	rr := router.New()
	rr.RedirectTrailingSlash = false
	rr.RedirectFixedPath = false
	rr.HandleMethodNotAllowed = false
	rr.HandleOPTIONS = false
	r := getHead{rr}
	r.GET("/dealer/openapi.json", s.openAPI)
	r.GET("/dealer/content/hub", s.endpoint(RouteContentHub, s.contentHub))
	r.GET("/dealer/content/search", s.endpoint(RouteContentSearch, s.contentSearch))
	r.GET("/dealer/content/{content_type}/listing", s.endpoint(RouteContentListing, s.contentListing))
	r.GET("/dealer/content/{content_type}/details", s.endpoint(RouteContentDetails, s.contentDetails))
	r.GET("/dealer/{service}/listing", s.endpoint(RouteInventoryListing, s.inventoryListing))
	r.GET("/dealer/{service}/details", s.endpoint(RouteInventoryDetails, s.inventoryDetails))
	// Static routes for every valid path value: the router matches them
	// before the parameter routes above (which remain for the 400 answers)
	// and does not allocate for them.
	for _, svc := range []string{publicshape.ServiceRewind, publicshape.ServiceNOS, publicshape.ServiceNLT} {
		r.GET("/dealer/"+svc+"/listing", s.endpoint(RouteInventoryListing, s.withPath("service", svc, s.inventoryListing)))
		r.GET("/dealer/"+svc+"/details", s.endpoint(RouteInventoryDetails, s.withPath("service", svc, s.inventoryDetails)))
	}
	for _, ct := range upstream.ContentTypes {
		r.GET("/dealer/content/"+ct+"/listing", s.contentEndpoint(RouteContentListing, ct, s.contentListing))
		r.GET("/dealer/content/"+ct+"/details", s.contentEndpoint(RouteContentDetails, ct, s.contentDetails))
	}
	rr.NotFound = func(ctx *fasthttp.RequestCtx) {
		rs := state(ctx)
		rs.route = RouteNotFound
		s.writeProblem(ctx, rs, problemf(codeNotFound, "no such endpoint"))
	}
	rr.PanicHandler = nil // panics reach serve's recover
	return rr
}

// withPath serves h for a static route whose path value is known.
func (s *Server) withPath(name, value string, h func(*fasthttp.RequestCtx, *reqState)) func(*fasthttp.RequestCtx, *reqState) {
	return func(ctx *fasthttp.RequestCtx, rs *reqState) {
		rs.pathValue = value
		h(ctx, rs)
	}
}

func state(ctx *fasthttp.RequestCtx) *reqState {
	return ctx.UserValue(stateKey).(*reqState)
}

// contentEndpoint is endpoint for the static route of content type ct. A
// deprecated type's deprecation headers are set first, so that every
// answer of the type carries them (contract 9): the 401, 404
// dealer_not_found, 429 and 503 of authentication and rate limiting too.
func (s *Server) contentEndpoint(route, ct string, h func(*fasthttp.RequestCtx, *reqState)) fasthttp.RequestHandler {
	inner := s.endpoint(route, s.withPath("content_type", ct, h))
	if !publicshape.IsDeprecatedType(ct) {
		return inner
	}
	return func(ctx *fasthttp.RequestCtx) {
		setDeprecation(ctx, s.settings.Load(), ct)
		inner(ctx)
	}
}

// endpoint wraps a public endpoint with authentication and rate limiting.
func (s *Server) endpoint(route string, h func(*fasthttp.RequestCtx, *reqState)) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		rs := state(ctx)
		rs.route = route
		rawKey, code := ExtractKey(rs.hdr.apiKey, rs.hdr.authorization)
		if code != codeInvalidKey && (rs.hdr.apiKeys > 1 || rs.hdr.authorizations > 1) {
			// A key header given twice is as ambiguous as both headers:
			// Peek would silently pick the first (a proxy may pick another),
			// also when the first is empty and the key is in the second.
			rawKey, code = nil, codeInvalidKey
		}
		if code != "" {
			detail := "send the API key in the X-Api-Key header or as Authorization: Bearer"
			if code == codeInvalidKey {
				detail = "the API key is not valid; send exactly one of X-Api-Key or Authorization: Bearer"
			}
			s.authFailed(ctx, rs, problemf(code, detail))
			return
		}
		p, err := s.authenticate(ctx, rawKey, rs)
		if err != nil {
			if ae, ok := err.(*apiError); ok && ae.code == codeRateLimited {
				s.authStats.result("failed_auth_limited")
			} else {
				s.authStats.result(codeUnavailable)
			}
			s.fail(ctx, rs, err)
			return
		}
		if ae := p.check(rs.start); ae != nil {
			s.authFailed(ctx, rs, ae)
			return
		}
		s.authStats.results[0].Add(1)
		rs.p = p
		if s.limiter != nil {
			st := s.settings.Load()
			lim := st.limit(p.plan)
			d := s.limiter.AllowN(rs.context(), p.dealerID, p.keyID, lim, st.cost(route))
			s.writeRateLimitHeaders(ctx, rs, p.plan, d)
			if !d.Allowed {
				secs := int((d.RetryAfter + time.Second - 1) / time.Second)
				detail := "rate limit exceeded; retry after the number of seconds in Retry-After"
				if d.Source == ratelimit.SourceFailClosed {
					// rate_limit.fail_mode closed with the shared limiter
					// unreachable: the key may be far under its quota, and
					// Retry-After is when the edge tries again, not when a
					// retry is sure to pass (TestFailClosedOutageAnswer).
					detail = "the rate limit cannot be checked right now, so no request is admitted; retry after the number of seconds in Retry-After"
				}
				s.writeProblem(ctx, rs, &apiError{code: codeRateLimited, detail: detail, retryAfter: max(secs, 1)})
				return
			}
		}
		rs.raw.collect(ctx.QueryArgs())
		h(ctx, rs)
	}
}

func fnv64(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// routeOfPath is the name of the route the router gives a GET of the raw
// path (routes), or RouteNotFound: static routes first, then the
// parameter routes, whose path values are one segment, empty included
// (TestMethodNotAllowedCarriesItsRoute compares it with the router).
func routeOfPath(path []byte) string {
	rest, ok := bytes.CutPrefix(path, []byte("/dealer/"))
	if !ok {
		return RouteNotFound
	}
	switch string(rest) {
	case "openapi.json":
		return RouteOpenAPI
	case "content/hub":
		return RouteContentHub
	case "content/search":
		return RouteContentSearch
	}
	first, rest, _ := bytes.Cut(rest, []byte("/"))
	if string(first) == "content" {
		if _, op, ok := bytes.Cut(rest, []byte("/")); ok {
			switch string(op) {
			case "listing":
				return RouteContentListing
			case "details":
				return RouteContentDetails
			}
			return RouteNotFound
		}
	}
	switch string(rest) {
	case "listing":
		return RouteInventoryListing
	case "details":
		return RouteInventoryDetails
	}
	return RouteNotFound
}

// deprecatedContentRoute reports whether path is the listing or details
// route of a deprecated content type, and which.
func deprecatedContentRoute(path []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(path, []byte("/dealer/content/"))
	if !ok {
		return "", false
	}
	ct, op, ok := bytes.Cut(rest, []byte("/"))
	if !ok || (string(op) != "listing" && string(op) != "details") || !publicshape.IsDeprecatedType(string(ct)) {
		return "", false
	}
	return string(ct), true
}
