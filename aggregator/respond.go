package aggregator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/cache/ratelimit"
	"github.com/dealer-edge/dealer-edge/internal/bufpool"
	"github.com/dealer-edge/dealer-edge/upstream"
)

// Canonical names of the headers set on every response, set with
// SetCanonical so fasthttp does not normalise them per request.
var (
	hdrXRequestID      = []byte("X-Request-Id")
	hdrXCache          = []byte("X-Cache")
	hdrETag            = []byte("Etag")
	hdrCacheControl    = []byte("Cache-Control")
	hdrVary            = []byte("Vary")
	hdrRateLimitPolicy = []byte("Ratelimit-Policy")
	hdrRateLimit       = []byte("Ratelimit")
	hdrContentEncoding = []byte("Content-Encoding")
	hdrNosniff         = []byte("X-Content-Type-Options")
	valNosniff         = []byte("nosniff")
	valGzip            = []byte("gzip")
	valVary            = []byte("X-Api-Key, Authorization, Accept-Encoding")
	valVaryEncoding    = []byte("Accept-Encoding")
)

// partialError carries a degraded but usable response body (a hub with a
// section missing, a vehicle without its media). The cache does not store
// it; a stale complete response is preferred when one is in the
// stale-if-error window, else the partial body is served uncached.
type partialError struct {
	body  []byte
	cause error
}

func (e *partialError) Error() string { return "aggregator: partial response: " + e.cause.Error() }
func (e *partialError) Unwrap() error { return e.cause }

// fillCtx derives the upstream context of a fill: the request budget,
// with the request id and trace context to forward. It never refers to the
// fasthttp request, which a background refresh may outlive. Every fill
// waits for its calls before it returns (and cancels), so the context is
// upstream.WithTimeout's: with a parent that is never cancelled (a fill
// that bypasses the cache), the calls run without a watcher goroutine.
func fillCtx(parent context.Context, st *liveSettings, reqID, traceparent string) (context.Context, context.CancelFunc) {
	return upstream.WithTimeoutTrace(parent, st.RequestTimeout, reqID, traceparent)
}

// serveFresh writes a fresh in-process cache entry for key, if there is
// one. Handlers call it before they build their fill closure, so a hit
// allocates nothing for it.
func (s *Server) serveFresh(ctx *fasthttp.RequestCtx, rs *reqState, st *liveSettings, contentType string, key []byte) bool {
	pol := st.policy(rs.route, contentType)
	gz := wantsGzip(st, rs)
	at := s.hitTime(rs)
	e, ok := s.cache.FreshAt(rs.p.dealerID, key, pol, gz, at)
	if !ok {
		return false
	}
	s.writeEntry(ctx, rs, st, e, pol, cache.Hit, gz, at)
	return true
}

// maxHitLag is how long after its start a request may reach its L1 lookup
// and still be judged at its start (hitTime).
const maxHitLag = time.Millisecond

// hitTime is the time an L1 hit is judged at and its max-age counted from:
// the request's start (its one clock read) when the request reached the
// lookup within maxHitLag of it, else now. A request that waited on its
// way there (a key lookup at the dealers service, a rate-limit round trip
// to Redis, a pause of the process) is not served an entry that expired
// during the wait as fresh, nor one stored during it with more than its
// TTL. The check is one monotonic clock read, where time.Now takes two.
// Zero when the server's clock is not the real one: the cache reads its
// own.
func (s *Server) hitTime(rs *reqState) time.Time {
	if !s.realClock {
		return time.Time{}
	}
	if d := time.Since(rs.start); d > maxHitLag {
		return rs.start.Add(d)
	}
	return rs.start
}

// wantsGzip reports whether the request gets gzip-coded bodies: compression
// is on and the client accepts gzip. Handlers ask once per request.
func wantsGzip(st *liveSettings, rs *reqState) bool {
	return st.GzipMinBytes > 0 && acceptsGzip(rs.hdr.acceptEncoding)
}

// respond looks the response up in the cache, filling it on a miss, and
// writes it.
func (s *Server) respond(ctx *fasthttp.RequestCtx, rs *reqState, st *liveSettings, contentType string, key []byte, fill cache.FillFunc) {
	pol := st.policy(rs.route, contentType)
	gz := wantsGzip(st, rs)
	var e *cache.Entry
	var res cache.Result
	var err error
	if gz {
		// An entry read from Redis compressed is served as it is.
		e, res, err = s.cache.GetGzip(rs.fillParent(), rs.p.dealerID, key, pol, fill)
	} else {
		e, res, err = s.cache.Get(rs.fillParent(), rs.p.dealerID, key, pol, fill)
	}
	if err != nil {
		rs.fillBody = nil // the body was not made, or is the error's: the buffer goes to the collector
		var pe *partialError
		if errors.As(err, &pe) {
			rs.cache = cache.Bypass.String()
			body, etag := pe.body, `"`+strconv.FormatUint(fnv64(pe.body), 16)+`"`
			// Coded as any body of its size (README, Compression): a
			// partial answer is what a degraded period sends most.
			if gz && len(body) >= st.GzipMinBytes {
				if z := cache.GzipBody(body, 0); z != nil {
					body, etag, rs.gzip = z, "W/"+etag, true
				}
			}
			// Before the body: a 412 (If-Match) problem drops it
			// (TestPartialAnswerIfMatchProblemHeaders).
			ctx.Response.Header.Set("X-Edge-Partial", "true")
			s.writeBody(ctx, rs, body, etag, "private, no-store")
			return
		}
		var nh *notFoundHit
		if errors.As(err, &nh) {
			s.writeNotFoundHit(ctx, rs, nh.ae) // a remembered "not found" (notfound.go)
			return
		}
		s.fail(ctx, rs, err)
		return
	}
	s.writeEntry(ctx, rs, st, e, pol, res, gz, time.Time{})
	if rs.fillBody != nil {
		if res == cache.Bypass {
			// The response refers to the buffer until fasthttp has written
			// it: fasthttp closes user values that are io.Closers when it
			// resets the request after the write (or drops the connection),
			// and Close gives the buffer back.
			ctx.SetUserValue(fillBodyKey, rs.fillBody)
		} // else a cache kept the body: the buffer is its own now
		rs.fillBody = nil
	}
}

// fillBodyKey is the user value under which a request's pooled fill body
// waits for the response to be written.
const fillBodyKey = "edge.fillbody"

// fillBodies lends the buffers that cache-bypassing fills write their
// bodies into; a buffer is handed to fasthttp (as a user value, closed once
// the response is written) and then comes back.
var fillBodies = bufpool.New(maxPooledListing)

// poolFillBody returns a pooled buffer for the body of the request's fill
// when the route's cache is off (the cache then neither stores the body nor
// hands it to another caller: Bypass), and records it for respond; nil
// when the body may be stored.
func (rs *reqState) poolFillBody(st *liveSettings) *[]byte {
	if st.policy(rs.route, "").TTL > 0 {
		return nil
	}
	rs.fillBody = fillBodies.Get()
	return &rs.fillBody.B
}

// writeEntry writes a cached entry; max-age is its freshness left under the
// policy in force, which a reload may have shortened since it was stored,
// at at: the time serveFresh judged an L1 hit at (hitTime), or, when at is
// zero, now: for an entry the request waited for (a fill, its own or one
// it joined; an L2 hit), which would otherwise get the wait on top of the
// TTL. gz is wantsGzip's answer for the request: the gzip variant is sent
// when the body reaches server.gzip_min_bytes and compresses.
func (s *Server) writeEntry(ctx *fasthttp.RequestCtx, rs *reqState, st *liveSettings, e *cache.Entry, pol cache.Policy, res cache.Result, gz bool, at time.Time) {
	rs.cache = res.String()
	rs.hdrBuf = append(rs.hdrBuf[:0], "private, max-age="...)
	if at.IsZero() {
		at = s.now()
	}
	rs.hdrBuf = strconv.AppendInt(rs.hdrBuf, int64(pol.MaxAge(e, at)), 10)
	ctx.Response.Header.SetCanonical(hdrXCache, s2b(rs.cache))
	var body []byte
	etag := e.ETag
	if gz && e.Len() >= st.GzipMinBytes {
		if b, gzTag, ok := e.Gzip(); ok {
			body, etag, rs.gzip = b, gzTag, true
		}
	}
	if !rs.gzip {
		if body = e.Body(); body == nil && e.Len() > 0 {
			// A compressed entry from Redis that does not inflate (another
			// caller's flight handed it over; Get itself never returns one).
			// The cache counted it and will not serve it plain again.
			s.fail(ctx, rs, upstream.ErrUnavailable)
			return
		}
	}
	if lent := e.Lent(); lent != nil {
		// The body is in storage the cache lent for this one answer (an
		// L2 or bulk-tier hit L1 does not keep): fasthttp closes user
		// values that are io.Closers when it resets the request, after
		// the response is written, which gives the storage back.
		ctx.SetUserValue(lentKey, lent)
	}
	s.writeBodyHdr(ctx, rs, body, etag, rs.hdrBuf, valVary)
}

// lentKey is the user value under which a response holds the cache's lent
// body storage until it is written (see writeEntry).
const lentKey = "edge.lent"

func (s *Server) writeBody(ctx *fasthttp.RequestCtx, rs *reqState, body []byte, etag, cacheControl string) {
	rs.hdrBuf = append(rs.hdrBuf[:0], cacheControl...)
	ctx.Response.Header.Set("X-Cache", rs.cache)
	s.writeBodyHdr(ctx, rs, body, etag, rs.hdrBuf, valVary)
}

// writeBodyHdr writes a 200 with body, or a 304 when If-None-Match matches
// etag: the validators, caching and Vary fields, Content-Encoding when the
// body is the gzip variant. If-Match is evaluated first (RFC 9110 13.2.2):
// when it is sent and etag strongly matches none of its tags, the answer
// is 412 precondition_failed instead.
func (s *Server) writeBodyHdr(ctx *fasthttp.RequestCtx, rs *reqState, body []byte, etag string, cacheControl, vary []byte) {
	if len(rs.hdr.ifMatch) > 0 && !strongMatch(rs.hdr.ifMatch, etag) {
		rs.gzip = false
		s.writeProblem(ctx, rs, problemf(codePreconditionFailed, "If-Match names no current entity tag of this resource; read it again without If-Match"))
		return
	}
	h := &ctx.Response.Header
	h.SetCanonical(hdrETag, s2b(etag))
	h.SetCanonical(hdrCacheControl, cacheControl)
	h.SetCanonical(hdrVary, vary)
	rs.status = fasthttp.StatusOK
	if etagMatch(rs.hdr.ifNoneMatch, etag) {
		// No body, so no Content-Encoding either (RFC 9110 15.4.5: a 304
		// carries the validators and caching fields, not representation
		// metadata); the weak ETag already says which coding it validates.
		ctx.SetStatusCode(fasthttp.StatusNotModified)
		rs.status = fasthttp.StatusNotModified
		rs.gzip = false
		return
	}
	if rs.gzip {
		h.SetCanonical(hdrContentEncoding, valGzip)
	}
	h.SetContentType("application/json")
	ctx.Response.SetBodyRaw(body)
}

// etagMatch implements If-None-Match (RFC 9110 13.1.2): "*" or any listed
// tag equal to etag under weak comparison.
func etagMatch(inm []byte, etag string) bool {
	if len(inm) == 0 {
		return false
	}
	inm = bytes.TrimSpace(inm)
	if len(inm) == 1 && inm[0] == '*' {
		return true
	}
	want := trimWeak([]byte(etag))
	for len(inm) > 0 {
		var tag []byte
		tag, inm = nextItem(inm, ',')
		if bytes.Equal(trimWeak(bytes.TrimSpace(tag)), want) {
			return true
		}
	}
	return false
}

// strongMatch implements If-Match (RFC 9110 13.1.1): "*" matches any
// current representation, a listed tag only under strong comparison (both
// tags strong and equal: a weak tag, such as a gzip answer's, never
// matches). An empty list (a header of white space and commas) matches
// nothing.
func strongMatch(im []byte, etag string) bool {
	im = bytes.TrimSpace(im)
	if len(im) == 1 && im[0] == '*' {
		return true
	}
	if len(etag) >= 2 && etag[0] == 'W' && etag[1] == '/' {
		return false
	}
	for len(im) > 0 {
		var tag []byte
		tag, im = nextItem(im, ',')
		if string(bytes.TrimSpace(tag)) == etag {
			return true
		}
	}
	return false
}

func trimWeak(t []byte) []byte {
	if len(t) >= 2 && t[0] == 'W' && t[1] == '/' {
		return t[2:]
	}
	return t
}

// writeRateLimitHeaders emits the IETF RateLimit header fields
// (draft-ietf-httpapi-ratelimit-headers, structured-field form):
//
//	RateLimit-Policy: "<plan>";q=<burst>;w=<window seconds>
//	RateLimit: "<plan>";r=<remaining>;t=<seconds until full>
func (s *Server) writeRateLimitHeaders(ctx *fasthttp.RequestCtx, rs *reqState, plan string, d ratelimit.Decision) {
	if plan == "" {
		plan = "default"
	}
	policy, current := d.AppendHeaders(rs.hdrBuf[:0], plan)
	ctx.Response.Header.SetCanonical(hdrRateLimitPolicy, policy)
	ctx.Response.Header.SetCanonical(hdrRateLimit, current)
}

// encode marshals a public response body.
func encode(v any) ([]byte, error) { return json.Marshal(v) }

// listingBufs are the buffers a listing fill whose body is stored writes
// into; the body is a copy (at the allocator's size class for its length,
// as an exact make would be) of what it wrote.
var listingBufs = bufpool.New(maxPooledListing)

// maxPooledListing bounds the buffers kept in listingBufs and fillBodies.
const maxPooledListing = 1 << 20

// s2b views an immutable string as bytes for fasthttp's copying setters.
func s2b(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
