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
	tracestate              []byte
	ifNoneMatch             []byte
	acceptEncoding          []byte
	contentLength           bool // a Content-Length header was sent
}

// read fills h from hdr, keeping the first value of each header as
// fasthttp's Peek would.
func (h *reqHeaders) read(hdr *fasthttp.RequestHeader) {
	*h = reqHeaders{}
	for k, v := range hdr.All() {
		switch len(k) {
		case 9: // X-Api-Key
			if bytes.EqualFold(k, []byte("X-Api-Key")) {
				if h.apiKeys == 0 {
					h.apiKey = v
				}
				h.apiKeys++
			}
		case 10: // tracestate
			if h.tracestate == nil && bytes.EqualFold(k, []byte("tracestate")) {
				h.tracestate = v
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
			case h.ifNoneMatch == nil && bytes.EqualFold(k, []byte("If-None-Match")):
				h.ifNoneMatch = v
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
}
