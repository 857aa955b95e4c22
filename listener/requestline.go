package listener

import "bytes"

// requestLine follows, over the bytes a connection hands its server, whether
// the request line being read has ended: an LF was handed over since the
// last request head ended ("\r\n\r\n"; the edge serves GET and HEAD, whose
// requests end there) or since the connection opened. A server whose read
// buffer filled before the request head ended asks it (RequestLineOpen)
// to tell a request line longer than the buffer (RFC 9112 section 3: 414
// URI Too Long) from header fields that are (RFC 6585: 431). Only the
// goroutine that reads touches it.
type requestLine struct {
	ended bool
	tail  uint32 // the last four bytes handed over (the first in the high byte)
}

var headEnd = []byte("\r\n\r\n")

// note records the bytes b handed to the server after those before.
func (r *requestLine) note(b []byte) {
	n := len(b)
	if n == 0 {
		return
	}
	prev := r.tail
	if n >= 4 {
		r.tail = uint32(b[n-4])<<24 | uint32(b[n-3])<<16 | uint32(b[n-2])<<8 | uint32(b[n-1])
	} else {
		for _, x := range b {
			r.tail = r.tail<<8 | uint32(x)
		}
	}
	if r.tail == 0x0d0a0d0a {
		// The common read: it ends a request head; the next line begins.
		r.ended = false
		return
	}
	if i := bytes.LastIndex(b, headEnd); i >= 0 {
		r.ended = bytes.IndexByte(b[i+len(headEnd):], '\n') >= 0
		return
	}
	// A head end that began in the bytes before b: the latest first.
	for k := min(3, n); k >= 1; k-- {
		v := prev
		for _, x := range b[:k] {
			v = v<<8 | uint32(x)
		}
		if v == 0x0d0a0d0a {
			r.ended = bytes.IndexByte(b[k:], '\n') >= 0
			return
		}
	}
	r.ended = r.ended || bytes.IndexByte(b, '\n') >= 0
}
