// Package aggregator is the public dealer API: routing, request ids,
// authentication, rate limiting, parameter validation, the response cache
// around upstream fan-outs, public envelopes and problem+json errors.
//
// One request takes one way through Server.Handler:
//
//	request id -> method (GET only) -> route -> auth (key -> dealer, cached
//	in-process) -> rate limit -> parameters (422) -> response cache
//	(dealer + route + normalised query) -> on a miss, one coalesced upstream
//	fan-out under breakers -> publicshape mapping -> encoded once, stored.
//
// Every failure on that path is written by one function (Server.fail) as
// application/problem+json whose request_id equals the X-Request-ID header.
package aggregator
