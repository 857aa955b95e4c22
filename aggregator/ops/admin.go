package ops

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"net/url"
	rpprof "runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
	"github.com/valyala/fasthttp/pprofhandler"
)

// AdminOptions configure the admin handler. Every function may be nil:
// its endpoint then answers 501 (Purge, PurgeAll, Reload) or leaves its part out of
// /readyz (Redis, Breakers).
type AdminOptions struct {
	// Token, when not empty, must be sent as "Authorization: Bearer
	// <token>" to every endpoint but /healthz and /readyz (which orchestrator
	// probes call without credentials). cmd/dealer-edge refuses to bind the
	// admin listener beyond loopback without one.
	Token string
	// Metrics is written by /metrics.
	Metrics *Metrics
	// Ready reports whether the edge is ready to serve: config loaded,
	// listeners up, not shutting down. Nil means always ready.
	Ready func() bool
	// Redis reports whether Redis answers; it is called with a short
	// deadline. A Redis outage degrades the edge (L1 and the in-process
	// rate limiter carry on) but does not fail readiness.
	Redis func(context.Context) error
	// Breakers returns each upstream service's breaker state ("closed",
	// "half-open", "open"). An open breaker, or a half-open one that
	// opened or refused a call within BreakerQuietAfter, degrades the edge
	// (stale answers, fast 503s) but does not fail readiness.
	Breakers func() map[string]string
	// Purge drops every cached response of one dealer.
	Purge func(ctx context.Context, dealerID int64) error
	// PurgeAll drops every cached response of every dealer (after a
	// release that changes response bodies without a new contract
	// version).
	PurgeAll func(ctx context.Context) error
	// Reload re-reads the config file; its error, shown to the caller,
	// says what is wrong with the new file. An error that wraps
	// ErrCertificateNotReloaded says the new config is in force but the
	// TLS certificate could not be read again (the one in force stays).
	Reload func() error
	// Logger receives admin events; nil discards them.
	Logger *slog.Logger
	// Timeout bounds Purge, PurgeAll and the Redis check; default 5 s.
	Timeout time.Duration
}

// Admin is the handler of the private admin listener.
type Admin struct {
	o         AdminOptions
	tokenHash [sha256.Size]byte
	log       *slog.Logger
	window    statusWindow
}

// NewAdmin returns the admin handler.
func NewAdmin(o AdminOptions) (*Admin, error) {
	if o.Metrics == nil {
		return nil, errors.New("ops: AdminOptions.Metrics is required")
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	a := &Admin{o: o, log: o.Logger}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if o.Token != "" {
		a.tokenHash = sha256.Sum256([]byte(o.Token))
	}
	return a, nil
}

// Handler returns the fasthttp handler of the admin endpoints:
//
//	GET  /                            live status page (HTML; no data without the token)
//	GET  /admin/status                what the status page shows; JSON
//	GET  /metrics                     Prometheus text exposition
//	GET  /healthz                     200 while the process runs
//	GET  /readyz                      200 ready (maybe degraded), 503 not ready; JSON
//	POST /admin/purge?dealer_id=N     drop one dealer's cached responses
//	POST /admin/purge?all=true        drop every dealer's cached responses
//	POST /admin/reload                re-read the config file
//
// Answers are JSON; errors are application/problem+json.
func (a *Admin) Handler() fasthttp.RequestHandler { return a.serve }

func (a *Admin) serve(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.Set("Cache-Control", "no-store")
	if detail := a.foreign(ctx); detail != "" {
		problem(ctx, fasthttp.StatusForbidden, "forbidden", detail)
		return
	}
	path := string(ctx.Path())
	type route struct {
		method string
		open   bool // no token needed
		h      func(*fasthttp.RequestCtx)
	}
	var r route
	switch path {
	case "/":
		// The page itself is a static shell with no data in it; its
		// script asks for the token and sends it with every call.
		r = route{fasthttp.MethodGet, true, statusPage}
	case "/admin/status":
		r = route{fasthttp.MethodGet, false, a.statusJSON}
	case "/metrics":
		r = route{fasthttp.MethodGet, false, a.metrics}
	case "/healthz":
		r = route{fasthttp.MethodGet, true, a.healthz}
	case "/readyz":
		r = route{fasthttp.MethodGet, true, a.readyz}
	case "/admin/purge":
		r = route{fasthttp.MethodPost, false, a.purge}
	case "/admin/reload":
		r = route{fasthttp.MethodPost, false, a.reload}
	default:
		if path == "/debug/pprof" || path == "/debug/pprof/" {
			// fasthttp's pprof handler answers 404 to its own index path.
			r = route{fasthttp.MethodGet, false, pprofIndex}
			break
		}
		if name, ok := strings.CutPrefix(path, "/debug/pprof/"); ok && knownProfile(name) {
			// Go's profiler (CPU, heap, goroutines, ...): what an operator
			// needs to explain a hot spot in production, behind the admin
			// token like everything that is not a probe.
			r = route{fasthttp.MethodGet, false, pprofhandler.PprofHandler}
			break
		}
		problem(ctx, fasthttp.StatusNotFound, "not found", "no such admin endpoint")
		return
	}
	m := string(ctx.Method())
	if m != r.method && !(r.method == fasthttp.MethodGet && m == fasthttp.MethodHead) {
		allow := r.method
		if allow == fasthttp.MethodGet {
			allow = "GET, HEAD" // served too (TestAdminAllowListsHead)
		}
		ctx.Response.Header.Set("Allow", allow)
		problem(ctx, fasthttp.StatusMethodNotAllowed, "method not allowed", "use "+allow)
		return
	}
	// Authentication before the body's rules: a caller without the token
	// learns nothing of what an endpoint takes (415 and 400 are for
	// callers that have it).
	if !r.open && !a.authorized(ctx) {
		ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="dealer-edge-admin"`)
		problem(ctx, fasthttp.StatusUnauthorized, "unauthorized", "send the admin token as Authorization: Bearer <token>")
		return
	}
	if r.method == fasthttp.MethodPost {
		// State-changing endpoints take no body or a JSON one: a form or
		// text/plain body is what a cross-site page can send without a
		// preflight.
		if body := ctx.PostBody(); len(body) > 0 {
			if mt, _, _ := strings.Cut(string(ctx.Request.Header.ContentType()), ";"); !strings.EqualFold(strings.TrimSpace(mt), "application/json") {
				problem(ctx, fasthttp.StatusUnsupportedMediaType, "unsupported media type", "send no body, or a JSON body with Content-Type: application/json")
				return
			}
			if !json.Valid(body) {
				problem(ctx, fasthttp.StatusBadRequest, "bad request", "the body is not valid JSON")
				return
			}
		}
	}
	r.h(ctx)
}

// foreign returns why a request must be refused as coming from a browser
// page of another origin, or "":
//
//   - without an admin token, a Host that is not a loopback name
//     (localhost, *.localhost) or address with the listener's own port: a
//     DNS-rebinding page (evil.example resolving to 127.0.0.1) sends its
//     own name;
//   - an Origin whose host and port are not the Host's: a page of another
//     origin (an Origin of "null" included); the admin's own status page
//     is same-origin and passes;
//   - Sec-Fetch-Site cross-site or same-site (another port of localhost
//     is same-site but another origin).
//
// Tools (curl, Prometheus, probes) send no Origin and no Sec-Fetch-Site.
func (a *Admin) foreign(ctx *fasthttp.RequestCtx) string {
	host := string(ctx.Host())
	if a.o.Token == "" && !loopbackHost(host, ctx.LocalAddr()) {
		return "the admin listener answers only to a loopback Host (localhost, 127.0.0.1, [::1]) with its own port; set admin_token to reach it under another name"
	}
	if origin := ctx.Request.Header.Peek("Origin"); len(origin) > 0 {
		u, err := url.Parse(string(origin))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !strings.EqualFold(u.Host, host) || u.Path != "" {
			return "cross-origin request refused: the Origin is not the admin listener's own"
		}
	}
	switch string(ctx.Request.Header.Peek("Sec-Fetch-Site")) {
	case "cross-site", "same-site":
		return "cross-origin request refused (Sec-Fetch-Site)"
	}
	return ""
}

// loopbackHost reports whether a Host header names the listener at local
// by a loopback name or address and its port (80 when absent). The port
// is not checked when local is not a TCP address.
func loopbackHost(host string, local net.Addr) bool {
	name, port := host, ""
	if h, p, err := net.SplitHostPort(host); err == nil {
		name, port = h, p
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		name = host[1 : len(host)-1]
	}
	name = strings.ToLower(name)
	ok := name == "localhost" || strings.HasSuffix(name, ".localhost")
	if !ok {
		ip, err := netip.ParseAddr(name)
		ok = err == nil && ip.IsLoopback()
	}
	if !ok {
		return false
	}
	if tcp, isTCP := local.(*net.TCPAddr); isTCP {
		if port == "" {
			port = "80"
		}
		return port == strconv.Itoa(tcp.Port)
	}
	return true
}

// pprofIndex lists the profiles (net/http/pprof's index page).
var pprofIndex = fasthttpadaptor.NewFastHTTPHandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	r.URL.Path = "/debug/pprof/"
	pprof.Index(w, r)
})

// authorized checks the bearer token in constant time (over hashes, so
// not even its length leaks).
func (a *Admin) authorized(ctx *fasthttp.RequestCtx) bool {
	if a.o.Token == "" {
		return true
	}
	h := ctx.Request.Header.Peek("Authorization")
	const prefix = "bearer "
	if len(h) <= len(prefix) || !bytes.EqualFold(h[:len(prefix)], []byte(prefix)) {
		return false
	}
	got := sha256.Sum256(bytes.TrimSpace(h[len(prefix):]))
	return subtle.ConstantTimeCompare(got[:], a.tokenHash[:]) == 1
}

func (a *Admin) metrics(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8")
	var buf bytes.Buffer
	a.o.Metrics.WritePrometheus(&buf)
	ctx.SetBody(buf.Bytes())
}

func (a *Admin) statusJSON(ctx *fasthttp.RequestCtx) {
	writeJSON(ctx, fasthttp.StatusOK, a.status(context.Background()))
}

func (a *Admin) healthz(ctx *fasthttp.RequestCtx) {
	writeJSON(ctx, fasthttp.StatusOK, map[string]string{"status": "ok"})
}

// Readiness is the /readyz body.
type Readiness struct {
	// Status is "ready", "degraded" (serving, a dependency is impaired) or
	// "not_ready" (503).
	Status string `json:"status"`
	Ready  bool   `json:"ready"`
	// Redis is "up" or "down"; absent when not checked.
	Redis string `json:"redis,omitempty"`
	// RedisError says what kind of failure made Redis "down" (see
	// redisErrorKind), never its text: the probe answers without a token,
	// and a Redis error names internal addresses (the logs have it whole).
	RedisError string            `json:"redis_error,omitempty"`
	Breakers   map[string]string `json:"breakers,omitempty"`
	// Degraded names the impaired dependencies: "redis", "upstream:<service>"
	// (see breakerDegrades).
	Degraded []string `json:"degraded,omitempty"`
}

// breakerDegrades reports whether a service whose breaker reads state
// degrades the edge: its breaker is open (it refuses calls now), or
// half-open with an opening or a refusal within BreakerQuietAfter
// (troubled). A breaker reads half-open once upstream.breaker_open_for has
// passed and stays so until the next call: half-open without a recent
// opening or refusal is a service nobody has called since an outage,
// whose state is unknown, not bad; the EdgeUpstreamBreakerOpen alert does
// not fire for it either.
func breakerDegrades(state string, troubled bool) bool {
	switch state {
	case "closed":
		return false
	case "open":
		return true
	}
	return troubled
}

// redisErrorKind names the kind of a failed Redis check for /readyz:
// "timeout", "connection refused", "authentication failed" (Redis refuses
// the edge's credentials), "permission denied" (the edge's ACL user may not
// run the check's command), "loading" (Redis is loading its data), "read
// only" (a replica), or "error".
func redisErrorKind(err error) string {
	var ne net.Error
	msg := err.Error()
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case strings.Contains(msg, "connection refused"):
		return "connection refused"
	case strings.HasPrefix(msg, "NOAUTH") || strings.HasPrefix(msg, "WRONGPASS") || strings.Contains(msg, "invalid password"):
		return "authentication failed"
	case strings.HasPrefix(msg, "NOPERM"):
		return "permission denied"
	case strings.HasPrefix(msg, "LOADING"):
		return "loading"
	case strings.HasPrefix(msg, "READONLY"):
		return "read only"
	}
	return "error"
}

func (a *Admin) readyz(ctx *fasthttp.RequestCtx) {
	rd := Readiness{Ready: a.o.Ready == nil || a.o.Ready()}
	// Not ready (starting, shutting down, the listener not accepting) is
	// the answer whatever Redis says: it comes at once, without the Redis
	// check, which may take up to RedisCheckTimeout with a slow Redis (a
	// shutdown's 503 waited for it, and a draining edge kept sending the
	// check's commands: TestNotReadyChecksNoRedis).
	if a.o.Redis != nil && rd.Ready {
		c, cancel := context.WithTimeout(context.Background(), min(a.o.Timeout, RedisCheckTimeout))
		err := a.o.Redis(c)
		cancel()
		rd.Redis = "up"
		if err != nil {
			rd.Redis, rd.RedisError = "down", redisErrorKind(err)
			rd.Degraded = append(rd.Degraded, "redis")
		}
	}
	if a.o.Breakers != nil {
		rd.Breakers = a.o.Breakers()
		names := make([]string, 0, len(rd.Breakers))
		for n, st := range rd.Breakers {
			if breakerDegrades(st, a.o.Metrics.BreakerTroubled(n)) {
				names = append(names, "upstream:"+n)
			}
		}
		sort.Strings(names)
		rd.Degraded = append(rd.Degraded, names...)
	}
	status := fasthttp.StatusOK
	switch {
	case !rd.Ready:
		rd.Status, status = "not_ready", fasthttp.StatusServiceUnavailable
	case len(rd.Degraded) > 0:
		rd.Status = "degraded"
	default:
		rd.Status = "ready"
	}
	writeJSON(ctx, status, rd)
}

func (a *Admin) purge(ctx *fasthttp.RequestCtx) {
	args := ctx.QueryArgs()
	// A repeated parameter is ambiguous (all=true&all=false purged every
	// dealer; dealer_id=101&dealer_id=102 purged 101 alone): refused, as
	// the public API refuses one (TestPurgeRefusesRepeatedParameters).
	if len(args.PeekMulti("all")) > 1 || len(args.PeekMulti("dealer_id")) > 1 {
		problem(ctx, fasthttp.StatusUnprocessableEntity, "invalid purge", "give all or dealer_id once")
		return
	}
	if args.Has("all") {
		if args.Has("dealer_id") || string(args.Peek("all")) != "true" {
			problem(ctx, fasthttp.StatusUnprocessableEntity, "invalid purge",
				"purge everything with all=true alone, or one dealer with dealer_id")
			return
		}
		a.purgeAll(ctx)
		return
	}
	if a.o.Purge == nil {
		problem(ctx, fasthttp.StatusNotImplemented, "not implemented", "cache purge is not available")
		return
	}
	raw := ctx.QueryArgs().Peek("dealer_id")
	id, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || id <= 0 {
		problem(ctx, fasthttp.StatusUnprocessableEntity, "invalid dealer_id", "dealer_id must be a positive integer")
		return
	}
	c, cancel := context.WithTimeout(context.Background(), a.o.Timeout)
	defer cancel()
	if err := a.o.Purge(c, id); err != nil {
		a.log.Error("cache purge failed", "dealer_id", id, "error", err.Error())
		// The error's text names Redis's addresses: the log has it, the
		// answer says what becomes of the purge (cache.PurgeDealer).
		problem(ctx, fasthttp.StatusServiceUnavailable, "purge not taken by Redis",
			"Redis could not take the purge: it applies to this instance now and is sent to Redis every 2 s until Redis takes it")
		return
	}
	a.o.Metrics.CachePurge()
	a.log.Info("cache purged", "dealer_id", id)
	writeJSON(ctx, fasthttp.StatusOK, map[string]any{"status": "purged", "dealer_id": id})
}

// purgeAll answers POST /admin/purge?all=true (cache.PurgeAll).
func (a *Admin) purgeAll(ctx *fasthttp.RequestCtx) {
	if a.o.PurgeAll == nil {
		problem(ctx, fasthttp.StatusNotImplemented, "not implemented", "cache purge is not available")
		return
	}
	c, cancel := context.WithTimeout(context.Background(), a.o.Timeout)
	defer cancel()
	if err := a.o.PurgeAll(c); err != nil {
		a.log.Error("cache purge of everything failed", "error", err.Error())
		problem(ctx, fasthttp.StatusServiceUnavailable, "purge not taken by Redis",
			"Redis could not take the purge: it applies to this instance now and is sent to Redis every 2 s until Redis takes it")
		return
	}
	a.o.Metrics.CachePurgeAll()
	a.log.Info("cache purged", "all", true)
	writeJSON(ctx, fasthttp.StatusOK, map[string]any{"status": "purged", "all": true})
}

func (a *Admin) reload(ctx *fasthttp.RequestCtx) {
	if a.o.Reload == nil {
		problem(ctx, fasthttp.StatusNotImplemented, "not implemented", "config reload is not available")
		return
	}
	if err := a.o.Reload(); err != nil {
		title := "config rejected; the previous config stays in force"
		if errors.Is(err, ErrCertificateNotReloaded) {
			title = "config reloaded and in force; the TLS certificate was rejected, the previous one stays"
		}
		problem(ctx, fasthttp.StatusUnprocessableEntity, title, err.Error())
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, map[string]string{"status": "reloaded"})
}

// ErrCertificateNotReloaded marks a reload whose config was applied but
// whose TLS certificate could not be read again (AdminOptions.Reload).
var ErrCertificateNotReloaded = errors.New("the TLS certificate was not reloaded")

func writeJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		problem(ctx, fasthttp.StatusInternalServerError, "internal error", "encode response")
		return
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(append(b, '\n'))
}

// knownProfile reports whether pprofhandler serves name: a runtime profile
// or one of its fixed endpoints (anything else would be its plain-text
// 404).
func knownProfile(name string) bool {
	switch name {
	case "cmdline", "profile", "symbol", "trace":
		return true
	}
	return rpprof.Lookup(name) != nil
}

// ErrorHandler answers the admin requests fasthttp could not parse (set it
// as the admin fasthttp.Server's ErrorHandler) as problem+json, like every
// other admin error: a body over the admin's small limit or a connection
// that sent too much without an answer (413), a request
// line longer than the server's read buffer (414: the connection, the
// listener's, tells by its RequestLineOpen method; one that cannot tell is
// taken as headers too large), headers too large (431), a read timeout
// (408), anything else malformed (400).
func ErrorHandler(ctx *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	var ne net.Error
	status, title := fasthttp.StatusBadRequest, "bad request"
	switch {
	case errors.As(err, &small) && requestLineOpen(ctx.Conn()):
		status, title = fasthttp.StatusRequestURITooLong, "request target too long"
	case errors.As(err, &small):
		status, title = fasthttp.StatusRequestHeaderFieldsTooLarge, "request headers too large"
	case errors.Is(err, fasthttp.ErrBodyTooLarge), requestTooLarge(err, ctx.Conn()):
		status, title = fasthttp.StatusRequestEntityTooLarge, "request body too large"
	case errors.As(err, &ne) && ne.Timeout():
		status, title = fasthttp.StatusRequestTimeout, "request timeout"
	}
	problem(ctx, status, title, "")
	ctx.SetConnectionClose()
}

// BadRequest answers a request refused before routing (its framing or
// head: aggregator.FramingProblem) with a 400 problem+json carrying
// detail, and closes the connection after it.
func BadRequest(ctx *fasthttp.RequestCtx, detail string) {
	problem(ctx, fasthttp.StatusBadRequest, "bad request", detail)
	ctx.SetConnectionClose()
}

// maxPathBytes is the longest request path the admin server parses as
// sent: every admin endpoint's is far shorter.
const maxPathBytes = 256

// unroutablePath replaces a longer one: no endpoint has it (404).
const unroutablePath = "/.admin/unroutable"

// HeaderReceived is the admin server's fasthttp.Server.HeaderReceived. It
// runs once a request's headers are read, right before fasthttp parses
// its target and normalises its path, in loops that copy the rest of the
// path once per "//", "/./", "/../" or escape: quadratic in the path's
// length (a 4 KB path of slashes cost the admin server about 0.9 ms, 70
// times a /healthz, before any token check). A path longer than any
// endpoint's (maxPathBytes; the query is not normalised) is replaced by
// one on no endpoint, cheap to parse, and answered 404 as it would have
// been (TestAdminPathNormalizationBounded). The public server's hook
// does the same for its routes (aggregator.Server.HeaderReceived).
func HeaderReceived(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	if !h.IsHTTP11() {
		// RFC 9110 section 10.1.1: a server MUST ignore a 100-continue
		// expectation in an HTTP/1.0 request (its client would read the
		// 1xx as the final answer). fasthttp sends 100 Continue before the
		// handler runs; the public server's hook drops the field the same
		// way (TestAdminHTTP1Framing; before 2026-11-29 the admin server
		// sent it).
		h.Del(fasthttp.HeaderExpect)
	}
	uri := h.RequestURI()
	if len(uri) > maxPathBytes {
		path := uri
		if i := bytes.IndexAny(uri, "?#"); i >= 0 {
			path = uri[:i]
		}
		if len(path) > maxPathBytes {
			h.SetRequestURI(unroutablePath)
		}
	}
	return fasthttp.RequestConfig{}
}

// requestLineOpen asks the connection (the listener's) whether the request
// line being read had not ended when the server's read buffer filled.
func requestLineOpen(c net.Conn) bool {
	lo, ok := c.(interface{ RequestLineOpen() bool })
	return ok && lo.RequestLineOpen()
}

// requestTooLarge reports the listener's refusal of a request that sent
// too many bytes before its answer (a chunk-size line without end), by
// the error's or the connection's RequestTooLarge method (fasthttp wraps
// the read error of a chunked body in one that does not unwrap).
func requestTooLarge(err error, c net.Conn) bool {
	var tl interface{ RequestTooLarge() bool }
	if errors.As(err, &tl) && tl.RequestTooLarge() {
		return true
	}
	tl, ok := c.(interface{ RequestTooLarge() bool })
	return ok && tl.RequestTooLarge()
}

// problem writes an RFC 9457 problem body.
func problem(ctx *fasthttp.RequestCtx, status int, title, detail string) {
	b, _ := json.Marshal(struct {
		Type   string `json:"type"`
		Title  string `json:"title"`
		Status int    `json:"status"`
		Detail string `json:"detail,omitempty"`
	}{"about:blank", title, status, detail})
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/problem+json")
	ctx.SetBody(append(b, '\n'))
}

// IsLoopback reports whether a listen address ("host:port") binds only
// the loopback interface: a loopback IP or "localhost". An empty host or
// an unspecified address (0.0.0.0, ::) binds every interface.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
