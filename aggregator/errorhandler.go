package aggregator

import (
	"errors"
	"net"

	"github.com/valyala/fasthttp"
)

// Codes for requests that fail before they reach an endpoint (malformed
// HTTP). The contract does not enumerate them; they keep the same problem
// shape.
const (
	codeBadRequest      = "bad_request"
	codeRequestTooLarge = "request_too_large"
	codeHeaderTooLarge  = "request_header_too_large"
	codeURITooLong      = "uri_too_long"
	codeRequestTimeout  = "request_timeout"
)

// ErrorHandler answers requests fasthttp could not parse (set it as
// fasthttp.Server.ErrorHandler): an oversized request line (414) or
// headers (431), oversized
// bodies (413), read timeouts (408) and malformed requests (400), each as
// a problem+json body, never a 5xx, logged and counted like any answer.
func (s *Server) ErrorHandler(ctx *fasthttp.RequestCtx, err error) {
	rs := s.states.Get().(*reqState)
	rs.reset()
	defer s.states.Put(rs)
	rs.start = s.now()
	rs.route = RouteNotFound
	// The headers may not have been parsed (a header block too large):
	// then there is no client id to echo and one is generated.
	// Read from the header block alone, as serve reads a chunked
	// request's: a trailer field is never a header (fasthttp adds the
	// trailer fields it parsed to the headers). A block with a bare LF
	// or a folded line is not trusted at all, as in serve.
	// (No raw block: headers not from the wire, or none parsed.)
	raw := ctx.Request.Header.RawHeaders()
	if len(raw) == 0 {
		rs.hdr.read(&ctx.Request.Header)
	} else if bareLF, folded := scanHeaderLines(raw); !bareLF && !folded {
		rs.hdr.readRaw(raw)
	}
	s.setRequestID(ctx, rs)
	var small *fasthttp.ErrSmallBuffer
	var ne net.Error
	code, detail := codeBadRequest, "the request is not valid HTTP"
	switch {
	case errors.As(err, &small) && requestLineOpen(ctx.Conn()):
		// The read buffer filled before the request line ended: the
		// target is what is too long (RFC 9112 section 3: 414).
		code, detail = codeURITooLong, "the request target is too long"
	case errors.As(err, &small):
		code, detail = codeHeaderTooLarge, "request headers are too large"
	case errors.Is(err, fasthttp.ErrBodyTooLarge), isRequestTooLarge(err), connTooLarge(ctx.Conn()):
		code, detail = codeRequestTooLarge, "request body is too large; GET requests carry no body"
	case errors.As(err, &ne) && ne.Timeout():
		code, detail = codeRequestTimeout, "the request was not received in time"
	}
	s.writeProblem(ctx, rs, problemf(code, detail))
	ctx.SetConnectionClose()
	// Logged and counted like every answer (4xx access lines are never
	// sampled out), under the route not_found.
	s.report(ctx, rs)
}

// HeaderReceived is the public server's fasthttp.Server.HeaderReceived:
// it runs once a request's headers are read, before fasthttp would answer
// "Expect: 100-continue". RFC 9110 sections 10.1.1 and 15.2: an HTTP/1.0
// request's expectation is ignored and such a client is never sent a 1xx
// (it would read "100 Continue" as the final answer).
func (s *Server) HeaderReceived(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	if !h.IsHTTP11() {
		h.Del(fasthttp.HeaderExpect)
	}
	// Path normalisation cost (TestPathNormalizationCostBounded): fasthttp parses the target
	// right after this hook and normalises its path (URI.parse ->
	// normalizePath; no server option turns it off), in loops that copy
	// the rest of the path once per "//", "/./", "/../" (and per escape,
	// which may decode to one): quadratic in the path's length. The edge
	// routes on the raw path and never reads the normalised one; a path
	// with that many of them is on no route (404 not_found, as before), so
	// its target is replaced by one that is on none either, cheap to parse.
	if uri := h.RequestURI(); len(uri) > 64 && normalizeCost(uri) > maxNormalizeCost {
		h.SetRequestURI(unroutableTarget)
	}
	return fasthttp.RequestConfig{}
}

// maxNormalizeCost bounds normalizeCost: about 256 KB of copying, some
// microseconds.
const maxNormalizeCost = 1 << 18

// unroutableTarget replaces a target too costly to normalise: no route
// has it, so it is answered as the original was, 404 not_found (405 for
// another method).
const unroutableTarget = "/.edge/unroutable"

// normalizeCost bounds what normalising the path of a request target
// copies: its length (up to the query or fragment) times the places where
// a normalisation loop acts ('/' followed by '/' or '.', and '%').
func normalizeCost(uri []byte) int {
	n, k := len(uri), 0
	for i, c := range uri {
		switch {
		case c == '?' || c == '#':
			n = i
			return n * k
		case c == '%':
			k++
		case c == '/' && i+1 < len(uri) && (uri[i+1] == '/' || uri[i+1] == '.'):
			k++
		}
	}
	return n * k
}

// isRequestTooLarge reports a connection layer's refusal of a request
// that sent too many bytes before its answer (the listener's
// ErrRequestTooLarge: a chunk-size line without end), by its
// RequestTooLarge method.
func isRequestTooLarge(err error) bool {
	var tl interface{ RequestTooLarge() bool }
	return errors.As(err, &tl) && tl.RequestTooLarge()
}

// requestLineOpen asks the connection (the listener's) whether the request
// line being read had not ended when the server's read buffer filled: no
// LF since the last request head (its RequestLineOpen method). A
// connection that cannot tell is taken as one whose headers are too large
// (431).
func requestLineOpen(c net.Conn) bool {
	lo, ok := c.(interface{ RequestLineOpen() bool })
	return ok && lo.RequestLineOpen()
}

// connTooLarge asks the connection (the listener's) whether its last read
// was refused as too many bytes without an answer: fasthttp wraps the read
// error of a chunked body in ErrBrokenChunk, which does not unwrap.
func connTooLarge(c net.Conn) bool {
	tl, ok := c.(interface{ RequestTooLarge() bool })
	return ok && tl.RequestTooLarge()
}
