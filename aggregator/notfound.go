package aggregator

import (
	"context"
	"errors"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/publicshape"
	"github.com/dealer-edge/dealer-edge/upstream"
)

// Remembered "not found" answers.
//
// A detail request for an id the dealer does not have calls the services
// every time its response is not cached, and a 404 is not a response the
// cache keeps (its problem body carries the request's request_id). What a
// detail route keeps instead is the fact: an entry under
// notFoundKeyPrefix + the response's key, in the same cache (L1 and
// Redis, per dealer, purged with the dealer and by a purge of everything),
// fresh for the route's not_found_ttl (Settings.NotFoundTTL) with no stale
// windows. A request whose response is not fresh in L1 looks for the
// fact in L1 before it looks the response up, and the response's fill
// (after the response's own L2 lookup missed, so a detail served from
// Redis costs no second GET) looks in L1 and Redis before it calls
// anything: a fresh fact is answered with the route's 404 problem,
// rendered for this request as a fill's 404 is, and X-Cache: HIT. The
// fact is recorded by that fill (shared by every concurrent request for
// the key in this instance and, with cache.lock_wait, across instances)
// when the service answered 404 for the id, and only then: a timeout, a
// 5xx, an open breaker, a partial answer or a record of another dealer is
// never remembered (rememberedNotFound).

// notFoundKeyPrefix starts the cache key of a remembered "not found": no
// route is called so, so it cannot meet a response key (which starts with
// its route's name) nor a content view's (viewKeyPrefix).
const notFoundKeyPrefix = "absent\x00v1\x00"

// notFoundBody is the body of a remembered "not found" entry: never sent,
// only its presence counts.
var notFoundBody = []byte("404")

// rememberedNotFound is what a detail fill returns when the service
// answered 404 for the id: the route's problem, which fail renders as
// any apiError, marked as a fact the route may remember.
type rememberedNotFound struct{ ae *apiError }

func (e *rememberedNotFound) Error() string { return e.ae.Error() }
func (e *rememberedNotFound) Unwrap() error { return e.ae }

// notFound is a detail fill's answer to the service's 404 for the id.
func notFound(code, detail string) error {
	return &rememberedNotFound{ae: problemf(code, detail)}
}

// notFoundCheck is what peekNotFound found out about a detail request
// whose response was not fresh in L1: the fact's key and policy, and the
// route's 404 problem; zero when the route remembers nothing.
type notFoundCheck struct {
	key          []byte
	pol          cache.Policy
	code, detail string
}

// notFoundHit is what a detail fill returns when it found the fact in
// the cache (in L2, or in L1 since the request looked): respond writes the
// route's 404 with X-Cache: HIT, as peekNotFound does.
type notFoundHit struct{ ae *apiError }

func (e *notFoundHit) Error() string { return e.ae.Error() }

// peekNotFound looks for a remembered "not found" of the request's
// response key (rs.keyBuf) in L1. When there is a fresh one it writes the
// 404 problem (code, detail) with X-Cache: HIT and reports true.
// Otherwise it returns what the fill needs to look in L2 (peekInFill) and
// to record the fact. L2 is looked at in the fill, after the response's
// own L2 lookup missed: a detail served from Redis costs no second GET.
func (s *Server) peekNotFound(ctx *fasthttp.RequestCtx, rs *reqState, st *liveSettings, code, detail string) (notFoundCheck, bool) {
	pol := st.NotFoundPolicy(rs.route)
	if pol.TTL <= 0 {
		return notFoundCheck{}, false
	}
	key := make([]byte, 0, len(notFoundKeyPrefix)+len(rs.keyBuf))
	key = append(append(key, notFoundKeyPrefix...), rs.keyBuf...)
	if _, ok := s.cache.Fresh(rs.p.dealerID, key, pol); !ok {
		return notFoundCheck{key: key, pol: pol, code: code, detail: detail}, false
	}
	s.writeNotFoundHit(ctx, rs, problemf(code, detail))
	return notFoundCheck{}, true
}

// writeNotFoundHit writes a remembered "not found": the problem a fill's
// 404 is, with X-Cache: HIT.
func (s *Server) writeNotFoundHit(ctx *fasthttp.RequestCtx, rs *reqState, ae *apiError) {
	s.writeProblem(ctx, rs, ae)
	rs.cache = cache.Hit.String()
	ctx.Response.Header.SetCanonical(hdrXCache, s2b(rs.cache))
}

// peekInFill looks for the fact in L1 and L2 from the response's fill
// (which concurrent requests share); a fresh one is the fill's answer
// (notFoundHit, not nil). The Stamp is for record.
func (s *Server) peekInFill(ctx context.Context, dealerID int64, nc *notFoundCheck) (cache.Stamp, error) {
	if nc.key == nil {
		return cache.Stamp{}, nil
	}
	stamp, ok := s.cache.Peek(ctx, dealerID, nc.key, nc.pol)
	if ok {
		return stamp, &notFoundHit{ae: problemf(nc.code, nc.detail)}
	}
	return stamp, nil
}

// record remembers the fill's "not found" when err is one the route may
// remember (rememberedNotFound), under the Stamp of peekInFill. It runs
// in the fill, so concurrent requests for the id record it once.
func (s *Server) record(ctx context.Context, dealerID int64, nc *notFoundCheck, stamp cache.Stamp, err error) {
	var rn *rememberedNotFound
	if nc.key == nil || !errors.As(err, &rn) {
		return
	}
	s.cache.Put(ctx, dealerID, nc.key, nc.pol, stamp, notFoundBody)
}

// DropOn reports whether a fill's error is a 404 answer for the response's
// key (cache.Options.DropOn): the detail's record is gone (a sold vehicle,
// a withdrawn offer, a removed content item: a 404 problem of the route,
// or its remembered "not found" found by the fill), or the services no
// longer know the dealer (dealer_not_found). The cache then removes the
// key's entry everywhere: a stale 200 kept for stale-while-revalidate
// would otherwise be served again by each stale hit once the remembered
// "not found" ended, every not_found_ttl until the entry's windows ran
// out, and each such hit would call the services again. A failure
// (timeout, 5xx, open breaker, a partial answer) is not such an answer:
// the entry stays for stale-if-error.
func DropOn(err error) bool {
	var pe *partialError
	if errors.As(err, &pe) || errors.Is(err, upstream.ErrUnavailable) {
		return false
	}
	var nh *notFoundHit
	if errors.As(err, &nh) {
		return true
	}
	var ae *apiError
	if errors.As(err, &ae) {
		status, _, ok := publicshape.ProblemFor(ae.code)
		return ok && status == fasthttp.StatusNotFound
	}
	return errors.Is(err, upstream.ErrNotFound)
}
