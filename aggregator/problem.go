package aggregator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/publicshape"
	"github.com/dealer-edge/dealer-edge/upstream"
)

// Problem codes of the contract (section 7), plus the HTTP-level ones the
// contract does not list (unknown route, wrong method, a false If-Match).
const (
	codeInvalidService     = "invalid_service"
	codeInvalidContentType = "invalid_content_type"
	codeInvalidIdentifier  = "invalid_identifier"
	codeMissingKey         = "missing_api_key"
	codeInvalidKey         = "invalid_api_key"
	codeExpiredKey         = "expired_api_key"
	codeDealerNotFound     = "dealer_not_found"
	codeVehicleNotFound    = "vehicle_not_found"
	codeOfferNotFound      = "offer_not_found"
	codeContentNotFound    = "content_not_found"
	codeNotFound           = "not_found"
	codeMethodNotAllowed   = "method_not_allowed"
	codePreconditionFailed = "precondition_failed"
	codeValidation         = "validation_error"
	codeRateLimited        = "rate_limited"
	codeInternal           = "internal_error"
	codeUnavailable        = "service_unavailable"
)

// apiError is a failure with a public meaning: it becomes one problem body.
type apiError struct {
	code       string
	detail     string
	fields     []publicshape.FieldError
	retryAfter int // seconds, for rate_limited
}

func (e *apiError) Error() string { return "aggregator: " + e.code + ": " + e.detail }

func problemf(code, detail string) *apiError { return &apiError{code: code, detail: detail} }

func validation(fields []publicshape.FieldError) *apiError {
	return &apiError{code: codeValidation, detail: "one or more request parameters are invalid", fields: fields}
}

// fail writes err as an application/problem+json response. It is the one
// place where errors become HTTP statuses: public errors keep their code,
// upstream unavailability is 503, a 404 of an internal service is
// dealer_not_found, anything else is a 500 whose cause is logged and never
// shown.
//
// The detail routes turn their own not-found answers into their codes
// (vehicle_not_found, ...) before they get here, so a 404 that reaches fail
// comes from a dealer-scoped call (a listing, the content corpus, search):
// the services know no such dealer (upstream/doc.go). That happens when a
// dealer is deleted while the edge still holds its key and profile (up to
// auth.ttl, or until the key index drops the key): contract 5.6 makes it a
// 404 dealer_not_found, not an unexpected error.
func (s *Server) fail(ctx *fasthttp.RequestCtx, rs *reqState, err error) {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
	case errors.Is(err, upstream.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		// The request's own deadline (server.request_timeout) passed while
		// it waited: on an upstream call (wrapped as ErrUnavailable) or
		// on something else (a coalesced fill, a content view's flight):
		// the backends did not answer in time, not an internal error.
		ae = problemf(codeUnavailable, "a backend service is temporarily unavailable; retry later")
	case errors.Is(err, upstream.ErrNotFound):
		ae = problemf(codeDealerNotFound, "the dealer of this API key no longer exists")
	default:
		var pe *cache.PanicError
		if errors.As(err, &pe) {
			s.log.Error("panic", "request_id", string(rs.reqID), "route", rs.route, "panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
		} else {
			s.log.Error("internal error", "request_id", string(rs.reqID), "route", rs.route, "error", err.Error())
		}
		ae = problemf(codeInternal, "an unexpected error occurred")
	}
	s.writeProblem(ctx, rs, ae)
}

func (s *Server) writeProblem(ctx *fasthttp.RequestCtx, rs *reqState, ae *apiError) {
	status, title, ok := publicshape.ProblemFor(ae.code)
	if !ok {
		status, title, _ = publicshape.ProblemFor(codeInternal)
	}
	p := publicshape.Problem{
		Type:      publicshape.ProblemTypeURI(s.problemBase, ae.code),
		Title:     title,
		Status:    status,
		Code:      ae.code,
		Detail:    ae.detail,
		RequestID: string(rs.reqID),
		Errors:    ae.fields,
	}
	body, err := json.Marshal(p)
	if err != nil { // cannot happen with these field types
		s.log.Error("encode problem", slog.String("error", err.Error()))
		body = []byte(`{"type":"about:blank","title":"Internal error","status":500,"code":"internal_error"}`)
		status = fasthttp.StatusInternalServerError
	}
	resp := &ctx.Response
	resp.ResetBody()
	resp.Header.Del("ETag")
	resp.Header.Del("X-Cache")
	// A problem is never coded nor partial, whatever an earlier step of
	// the request wrote.
	resp.Header.Del("Content-Encoding")
	resp.Header.Del("X-Edge-Partial")
	rs.cache = "" // nor counted, logged or traced under a cache result
	resp.SetStatusCode(status)
	resp.Header.SetContentType("application/problem+json")
	resp.Header.Set("Cache-Control", "no-store")
	resp.Header.SetCanonical(hdrNosniff, valNosniff)
	if ae.retryAfter > 0 {
		resp.Header.Set("Retry-After", strconv.Itoa(ae.retryAfter))
	}
	switch status {
	case fasthttp.StatusMethodNotAllowed:
		resp.Header.Set("Allow", "GET, HEAD")
	case fasthttp.StatusUnauthorized:
		// RFC 9110 11.6.1: a 401 carries a challenge. A key that was sent
		// and refused is RFC 6750's invalid_token; a missing one gets none.
		if ae.code == codeMissingKey {
			resp.Header.Set("WWW-Authenticate", `Bearer realm="dealer-edge"`)
		} else {
			resp.Header.Set("WWW-Authenticate", `Bearer realm="dealer-edge", error="invalid_token"`)
		}
	}
	resp.SetBody(body)
	rs.status = status
	rs.code = ae.code
}

// logPartialPanics logs, as fail logs a panic, each panic among the causes
// of a partial answer (a hub section, a vehicle's media): a partial answer
// is served and no failure path runs, so a panic there went unlogged.
func (s *Server) logPartialPanics(reqID, route string, err error) {
	var pa *partialError
	if !errors.As(err, &pa) {
		return
	}
	causes := []error{pa.cause}
	if j, ok := pa.cause.(interface{ Unwrap() []error }); ok {
		causes = j.Unwrap()
	}
	for _, c := range causes {
		var pe *cache.PanicError
		if errors.As(c, &pe) {
			s.log.Error("panic", "request_id", reqID, "route", route, "panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
		}
	}
}
