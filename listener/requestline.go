package listener

import "bytes"

// defaultReadBufferSize is fasthttp.Server's read buffer when its
// ReadBufferSize is 0 (LimitOptions.ReadBufferSize).
const defaultReadBufferSize = 4096

// requestLine follows, over the bytes a connection hands its server, how
// many were handed over since the last LF. A fasthttp server whose read
// buffer (of size n) filled before the request head ended holds exactly the
// last n bytes handed over, from the head's first byte: the request line
// had not ended iff none of them is an LF (RequestLineOpen), which tells a
// request line longer than the buffer (RFC 9112 section 3: 414 URI Too
// Long) from header fields that are (RFC 6585: 431). Counting from the
// last LF, rather than from the last "\r\n\r\n" (before 2026-11-29), is
// blind to what came before the head: a previous request's body with an
// LF in it, or header lines ended by a bare LF, made a pipelined long
// request line 431 (TestRequestTargetTooLongAfterBody). Only the
// goroutine that reads touches it.
type requestLine struct {
	since int // bytes handed over since the last LF (saturating)
}

// note records the bytes b handed to the server after those before.
func (r *requestLine) note(b []byte) {
	// IndexByte (vectorised) first: a read without an LF, a long request
	// line's, is not walked byte by byte by LastIndexByte; a request head
	// ends in one, found at once from the end.
	if bytes.IndexByte(b, '\n') < 0 {
		if r.since < 1<<30 {
			r.since += len(b)
		}
		return
	}
	r.since = len(b) - 1 - bytes.LastIndexByte(b, '\n')
}

// open reports whether a server whose read buffer is bufSize bytes (0:
// fasthttp's default) and filled had not seen its request line end.
func (r *requestLine) open(bufSize int) bool {
	if bufSize <= 0 {
		bufSize = defaultReadBufferSize
	}
	return r.since >= bufSize
}
