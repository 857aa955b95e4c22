package aggregator

import (
	"crypto/rand"
	"encoding/hex"
	"sync/atomic"
)

// maxRequestIDLen bounds a client-supplied X-Request-ID.
const maxRequestIDLen = 128

// ValidRequestID reports whether a client-supplied X-Request-ID is echoed:
// 1 to 128 characters of [A-Za-z0-9._:-]. Anything else is replaced by a
// generated id, so a header can never smuggle control characters or
// unbounded data into logs and responses.
func ValidRequestID(b []byte) bool {
	if len(b) == 0 || len(b) > maxRequestIDLen {
		return false
	}
	for _, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '.', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}

// idGen makes request ids: a random per-process prefix and a counter, so
// ids are unique per process, unguessable across processes and cost no
// allocation or system call per request.
type idGen struct {
	prefix [16]byte // hex of 8 random bytes
	n      atomic.Uint64
}

func newIDGen() *idGen {
	var b [8]byte
	_, _ = rand.Read(b[:])
	g := &idGen{}
	hex.Encode(g.prefix[:], b[:])
	return g
}

const hexDigits = "0123456789abcdef"

// appendID appends a new id ("<16 hex>-<16 hex>") to dst.
func (g *idGen) appendID(dst []byte) []byte {
	n := g.n.Add(1)
	dst = append(dst, g.prefix[:]...)
	dst = append(dst, '-')
	for i := 60; i >= 0; i -= 4 {
		dst = append(dst, hexDigits[(n>>uint(i))&0xf])
	}
	return dst
}

// ValidTraceparent reports whether v is a W3C trace-context traceparent
// header of version 00: "00-<32 hex>-<16 hex>-<2 hex>", lowercase, with
// non-zero trace and parent ids. Only a valid one is passed upstream.
func ValidTraceparent(v []byte) bool {
	if len(v) != 55 || v[0] != '0' || v[1] != '0' || v[2] != '-' || v[35] != '-' || v[52] != '-' {
		return false
	}
	allZero := func(b []byte) bool {
		for _, c := range b {
			if c != '0' {
				return false
			}
		}
		return true
	}
	for i, c := range v {
		if i == 2 || i == 35 || i == 52 {
			continue
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return !allZero(v[3:35]) && !allZero(v[36:52])
}
