package aggregator

import (
	"bytes"

	"github.com/valyala/fasthttp"
)

// blockScan is what scanBlock finds in one pass over a raw header block.
type blockScan struct {
	bareLF bool // a line ended by LF without CR (the scan stops there)
	folded bool // a line starting with SP or HT (obs-fold)
	te     bool // a Transfer-Encoding line
	// close: a Connection line whose list names the "close" option, in any
	// case (RFC 9112 section 9.6: the server MUST close after answering).
	// fasthttp closes only for a line that is exactly "close", and a later
	// Connection line clears that.
	close bool
	// spaceInName: a line whose field name holds a space. A field name is
	// a token (RFC 9110 section 5.1); fasthttp refuses every other
	// non-token byte in one but accepts, and keeps unnormalised, a space
	// inside it: "Content Length: 5" is no Content-Length to the edge, and
	// the 5 bytes after the head were read as the start of the next
	// request, while a proxy in front that repairs the name frames them as
	// a body.
	spaceInName bool
}

// scanBlock scans a raw header block once: each LF is found once
// (bytes.IndexByte), the byte before it and the line's first bytes are
// looked at, and the line's first space is found (IndexByte, bounded by
// the line) to tell a space inside the name from the one after the colon.
// A bare LF ends the scan. It does not allocate.
func scanBlock(raw []byte) (s blockScan) {
	start := 0
	for start < len(raw) {
		i := bytes.IndexByte(raw[start:], '\n')
		end := len(raw) // the line, without its CR LF
		if i >= 0 {
			i += start
			if i == 0 || raw[i-1] != '\r' {
				return blockScan{bareLF: true}
			}
			end = i - 1
		}
		if line := raw[start:end]; len(line) > 0 {
			switch line[0] {
			case ' ', '\t':
				s.folded = true
			case 't', 'T':
				s.te = s.te || isTELine(line)
			case 'c', 'C':
				if len(line) > len("Connection:") && line[len("Connection")] == ':' &&
					bytes.EqualFold(line[:len("Connection")], []byte("Connection")) {
					s.close = s.close || hasCloseOption(line[len("Connection:"):])
				}
			}
			// The first space of the line: after its colon, or inside
			// its name. A line without a space, or whose space follows
			// the colon at once (": "), is the common case.
			if sp := bytes.IndexByte(line, ' '); sp > 0 && line[sp-1] != ':' &&
				line[0] != ' ' && line[0] != '\t' && bytes.IndexByte(line[:sp], ':') < 0 {
				s.spaceInName = true
			}
		}
		if i < 0 {
			break
		}
		start = i + 1
	}
	return s
}

// hasCloseOption reports whether a Connection field value, a
// comma-separated list of options, names "close" in any case (RFC 9110
// section 7.6.1: connection options are case-insensitive).
func hasCloseOption(v []byte) bool {
	for len(v) > 0 {
		var opt []byte
		if i := bytes.IndexByte(v, ','); i >= 0 {
			opt, v = v[:i], v[i+1:]
		} else {
			opt, v = v, nil
		}
		opt = bytes.Trim(opt, " \t")
		if len(opt) == len("close") && bytes.EqualFold(opt, []byte("close")) {
			return true
		}
	}
	return false
}

// hostByte marks the bytes a Host field value (RFC 9110 section 7.2:
// uri-host [":" port]) is made of: RFC 3986's unreserved, sub-delims and
// "%" of a reg-name, ":" and "[" "]" of a port and an IP literal. fasthttp
// checks the structure (the brackets, one port delimiter, digits after it,
// escapes) but, following Go's URL parser, lets '"', '<', '>' and '@' and
// raw non-ASCII bytes through.
var hostByte = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range []byte("-._~%!$&'()*+,;=:[]") {
		t[c] = true
	}
	return t
}()

// validHost reports whether a Host field value is made of the bytes of an
// authority without user information (hostByte). RFC 9112 section 3.2:
// a request whose Host field value is invalid MUST be answered 400.
func validHost(h []byte) bool {
	for _, c := range h {
		if !hostByte[c] {
			return false
		}
	}
	return true
}

// badAbsoluteTarget reports an absolute-form request target (RFC 9112
// section 3.2.2) of the http or https scheme whose authority the edge must
// not serve: an empty host (RFC 9110 section 4.2.1: a recipient MUST
// reject such an http URI as invalid), user information (section 4.2.4:
// treated as an error), or bytes no host has (validHost). fasthttp takes
// the target's authority as the request's host (RFC 9112 section 3.2.2)
// but serves one that is empty or carries userinfo. Targets in origin form
// (starting with '/', every request of a client that is not a proxy) cost
// one byte compare.
func badAbsoluteTarget(uri []byte) bool {
	if len(uri) == 0 || uri[0] == '/' {
		return false
	}
	var rest []byte
	switch {
	case len(uri) >= len("http://") && bytes.EqualFold(uri[:len("http://")], []byte("http://")):
		rest = uri[len("http://"):]
	case len(uri) >= len("https://") && bytes.EqualFold(uri[:len("https://")], []byte("https://")):
		rest = uri[len("https://"):]
	default:
		return false // not absolute-form of http(s): routed as a path (404)
	}
	auth := rest
	if i := bytes.IndexAny(rest, "/?#"); i >= 0 {
		auth = rest[:i]
	}
	host := auth
	if i := bytes.LastIndexByte(auth, ':'); i >= 0 && bytes.IndexByte(auth[i:], ']') < 0 {
		host = auth[:i]
	}
	return len(host) == 0 || !validHost(auth)
}

// FramingProblem reports what the public server refuses in a request's
// head before routing, for a server that does not run the public handler
// (the admin listener's): a bare LF or obs-fold in the header block, a
// space in a field name, Content-Length beside Transfer-Encoding, a
// Transfer-Encoding that does not end with chunked applied once, an
// invalid Host value or absolute-form target. It returns "" when there is
// none, else the problem's detail: the request is to be answered 400 and
// its connection closed. closeAfter reports a Connection close option
// fasthttp does not see (Connection: Close, or "keep-alive, close"): the
// connection is to be closed after the answer.
func FramingProblem(h *fasthttp.RequestHeader) (detail string, closeAfter bool) {
	raw := h.RawHeaders()
	s := scanBlock(raw)
	switch {
	case s.bareLF:
		return "header lines must end in CRLF", true
	case s.folded:
		return "header fields must not be folded over lines", true
	case s.te && hasRawHeader(raw, "content-length"):
		return "send either Content-Length or Transfer-Encoding, not both", true
	case s.te && badTransferEncoding(raw):
		return "Transfer-Encoding must end with chunked, applied once", true
	}
	if d := headProblem(h, s); d != "" {
		return d, true
	}
	return "", s.close
}

// headProblem is the part of FramingProblem serve checks after the bare LF
// and obs-fold answers (the framing headers follow it): a space in a field
// name, an invalid Host value or absolute-form target. For the common
// request it costs the scan already made and one pass over the Host value.
func headProblem(h *fasthttp.RequestHeader, s blockScan) string {
	switch {
	case s.spaceInName:
		return "header field names must not contain spaces"
	case !validHost(h.Host()):
		return "the Host header is not a valid host"
	case badAbsoluteTarget(h.RequestURI()):
		return "the request target's authority is not a valid host"
	}
	return ""
}
