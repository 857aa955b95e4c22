package aggregator

import (
	"bytes"
	"iter"

	"github.com/valyala/fasthttp"
)

// reqHeaders are the request headers the edge reads, found in one pass
// over the request's headers instead of one lookup (and one key
// normalisation) each. Values alias the request's buffers: valid until the
// handler returns; what a fill needs later is copied.
type reqHeaders struct {
	apiKey, authorization   []byte // the first of each
	apiKeys, authorizations int    // how many times each was sent
	requestID               []byte // X-Request-ID, the first line
	requestIDs              int    // how many X-Request-ID lines were sent
	traceparent             []byte
	traceparents            int    // how many traceparent lines were sent
	tracestate              []byte // every tracestate line, joined when more than one
	tsJoined                bool   // tracestate is a joined copy
	ifNoneMatch             []byte // every If-None-Match line, joined when more than one
	inmJoined               bool   // ifNoneMatch is a joined copy, not the request's bytes
	ifMatch                 []byte // every If-Match line, joined when more than one
	imJoined                bool   // ifMatch is a joined copy
	acceptEncoding          []byte // every Accept-Encoding line, joined when more than one
	aeJoined                bool   // acceptEncoding is a joined copy
	contentLength           bool   // a Content-Length header was sent
}

// read fills h from hdr, keeping the first value of each header as
// fasthttp's Peek would, and every line of the list fields (tracestate,
// If-None-Match, If-Match, Accept-Encoding) joined.
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
// after the body would be a header no proxy in front saw). It reads the
// fields rawFields yields: a folded field's value is its first line only.
func (h *reqHeaders) readRaw(raw []byte) {
	*h = reqHeaders{}
	for k, v := range rawFields(raw) {
		h.field(k, v)
	}
}

// rawFields yields the fields of a raw header block, name and value, in
// order: the one line loop of every reader of fasthttp's RawHeaders
// (readRaw, hasRawHeader, forwardingFields), which read the header
// section as received, without the trailer fields fasthttp adds to the
// parsed headers of a chunked request. It does not allocate.
//
// What it accepts, line by line:
//   - Lines end at LF; one CR before the LF is dropped. A bare LF ends a
//     line too, as fasthttp splits there: the edge refuses such a block
//     (scanHeaderLines in serve) before it acts on any field, so no caller sees
//     one on a request it answers. A last line without LF (not in a block
//     fasthttp read, which ends with the empty line) is a line too.
//   - Empty lines yield nothing, and the iteration goes on past them to
//     the end of raw: RawHeaders ends with the block's empty line, so
//     nothing follows it there.
//   - A line that starts with SP or HT is an obs-fold continuation (RFC
//     9112 section 5.2) and yields nothing: a folded field's value is its
//     first line only, where fasthttp's parsed headers join the lines with
//     a space. No continuation can pass for a field of its own.
//   - A line without a colon, or with nothing before its first colon,
//     yields nothing (fasthttp refuses both in a request's header block).
//   - The name is everything before the first colon, untrimmed (fasthttp
//     refuses a request with whitespace before the colon); the value is
//     everything after it with leading and trailing SP and HT trimmed,
//     inner whitespace kept. Neither is checked for token or field-value
//     bytes: fasthttp has done that for a block it read.
//
// The first line is not special: RawHeaders starts after the request line.
// A request line, if raw had one, would yield at most a name with a space
// in it ("GET http" from "GET http://h/ HTTP/1.1"), which no caller looks
// for. Names are compared by the callers (ASCII case folding, length
// first: bytes.EqualFold alone also folds "ſ" to "s" and "K" to "k").
func rawFields(raw []byte) iter.Seq2[[]byte, []byte] {
	return func(yield func(name, value []byte) bool) {
		rest := raw
		for len(rest) > 0 {
			line := rest
			if i := bytes.IndexByte(rest, '\n'); i >= 0 {
				line, rest = rest[:i], rest[i+1:]
			} else {
				rest = nil
			}
			line = bytes.TrimSuffix(line, []byte("\r"))
			if len(line) == 0 || line[0] == ' ' || line[0] == '\t' {
				continue
			}
			i := bytes.IndexByte(line, ':')
			if i <= 0 {
				continue
			}
			v := bytes.Trim(line[i+1:], " \t")
			if v == nil {
				v = line[i+1 : i+1] // an empty value is sent, as in the parsed headers (not nil)
			}
			if !yield(line[:i], v) {
				return
			}
		}
	}
}

// field takes one header field into h, keeping the first value of each.
func (h *reqHeaders) field(k, v []byte) {
	switch len(k) {
	case 8: // If-Match
		if bytes.EqualFold(k, []byte("If-Match")) {
			h.ifMatch, h.imJoined = joinLines(h.ifMatch, h.imJoined, v)
		}
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
		if bytes.EqualFold(k, []byte("traceparent")) {
			// A single-valued field: more than one line is no valid
			// traceparent (the lines combined do not parse; the W3C
			// test suite's test_traceparent_duplicated restarts the trace).
			if h.traceparents == 0 {
				h.traceparent = v
			}
			h.traceparents++
		}
	case 12: // X-Request-ID
		if bytes.EqualFold(k, []byte("X-Request-ID")) {
			// A single-valued field, like traceparent: its lines combined
			// ("a,b", RFC 9110 5.3) are no well-formed id, so more than one
			// line gets a generated id (setRequestID).
			if h.requestIDs == 0 {
				h.requestID = v
			}
			h.requestIDs++
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
		if bytes.EqualFold(k, []byte("Accept-Encoding")) {
			// One list over all its lines: a refusal (gzip;q=0) on a later
			// line holds against a "*" on the first.
			h.acceptEncoding, h.aeJoined = joinLines(h.acceptEncoding, h.aeJoined, v)
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
