package aggregator

import (
	"bytes"

	"github.com/valyala/fasthttp"
)

// reqHeaders are the request headers the edge reads, found in one pass
// over the request's headers instead of one lookup (and one key
// normalisation) each. Values alias the request's buffers: valid until the
// handler returns; what a fill needs later is copied.
type reqHeaders struct {
	apiKey, authorization   []byte // the first of each
	apiKeys, authorizations int    // how many times each was sent
	requestID               []byte // X-Request-ID
	traceparent             []byte
	tracestate              []byte // every tracestate line, joined when more than one
	tsJoined                bool   // tracestate is a joined copy
	ifNoneMatch             []byte // every If-None-Match line, joined when more than one
	inmJoined               bool   // ifNoneMatch is a joined copy, not the request's bytes
	acceptEncoding          []byte
	contentLength           bool // a Content-Length header was sent
}

// read fills h from hdr, keeping the first value of each header as
// fasthttp's Peek would.
func (h *reqHeaders) read(hdr *fasthttp.RequestHeader) {
	*h = reqHeaders{}
	for k, v := range hdr.All() {
		h.field(k, v)
	}
}

// readRaw fills h as read does, from the raw header block alone: for a
// request with a chunked body, whose trailer fields fasthttp adds to the
// parsed headers. RFC 9110 section 6.5.1: a trailer field is never merged
// into the header section (an API key, If-None-Match or X-Request-ID sent
// after the body would be a header no proxy in front saw). Continuation
// lines (obs-fold) are skipped; the request line, if raw has one, matches
// no field.
func (h *reqHeaders) readRaw(raw []byte) {
	*h = reqHeaders{}
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 || line[0] == ' ' || line[0] == '\t' {
			continue
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok {
			h.field(k, bytes.Trim(v, " \t"))
		}
	}
}

// field takes one header field into h, keeping the first value of each.
func (h *reqHeaders) field(k, v []byte) {
	switch len(k) {
	case 9: // X-Api-Key
		if bytes.EqualFold(k, []byte("X-Api-Key")) {
			if h.apiKeys == 0 {
				h.apiKey = v
			}
			h.apiKeys++
		}
	case 10: // tracestate
		if bytes.EqualFold(k, []byte("tracestate")) {
			h.tracestate, h.tsJoined = joinLines(h.tracestate, h.tsJoined, v)
		}
	case 11: // traceparent
		if h.traceparent == nil && bytes.EqualFold(k, []byte("traceparent")) {
			h.traceparent = v
		}
	case 12: // X-Request-ID
		if h.requestID == nil && bytes.EqualFold(k, []byte("X-Request-ID")) {
			h.requestID = v
		}
	case 13: // Authorization, If-None-Match
		switch {
		case bytes.EqualFold(k, []byte("Authorization")):
			if h.authorizations == 0 {
				h.authorization = v
			}
			h.authorizations++
		case bytes.EqualFold(k, []byte("If-None-Match")):
			h.ifNoneMatch, h.inmJoined = joinLines(h.ifNoneMatch, h.inmJoined, v)
		}
	case 14: // Content-Length
		if bytes.EqualFold(k, []byte("Content-Length")) {
			h.contentLength = true
		}
	case 15: // Accept-Encoding
		if h.acceptEncoding == nil && bytes.EqualFold(k, []byte("Accept-Encoding")) {
			h.acceptEncoding = v
		}
	}
}

// joinLines adds the value v of another line of a list field to cur (RFC
// 9110 section 5.3: the lines of one field are one comma-separated list);
// joined reports that cur is a copy made here, not the request's bytes.
// Rare, so the joined copy is allocated.
func joinLines(cur []byte, joined bool, v []byte) ([]byte, bool) {
	switch {
	case cur == nil:
		return v, false
	case !joined:
		return append(append(append(make([]byte, 0, 2*(len(cur)+len(v))), cur...), ','), v...), true
	default:
		return append(append(cur, ','), v...), true
	}
}
