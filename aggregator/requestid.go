package aggregator

import (
	"bytes"
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

// TraceparentLen is the length of a version-00 traceparent, the only form
// the edge passes on.
const TraceparentLen = 55

// ParseTraceparent reads a client's W3C trace-context traceparent header
// and writes into dst the version-00 traceparent the edge passes on and
// continues: the same trace-id and parent-id, and only the trace-flags
// bit version 00 defines (sampled). It reports false, leaving dst
// unspecified, for a header that is not to be used (the trace restarts).
// It allocates nothing.
//
// W3C Trace Context (section 3.2.2.5, "Other Flags"; 3.2.4, "Versioning of
// traceparent"):
//   - version 00 is exactly "00-<32 hex>-<16 hex>-<2 hex>", lowercase;
//   - version ff is invalid;
//   - a higher version is parsed for what version 00 knows: it is at least
//     55 characters, its trace-id, parent-id and flags sit where version
//     00 has them, each followed by "-" (the flags by "-" or the end); the
//     fields it may add after them are not read;
//   - trace-id and parent-id are never all zeros;
//   - flags other than sampled are not defined and are set to zero, and
//     the header is rewritten as the version the edge knows, 00.
func ParseTraceparent(dst *[TraceparentLen]byte, v []byte) bool {
	n := TraceparentLen
	if len(v) < n || !lowerHex(v[0:2]) || v[2] != '-' || v[35] != '-' || v[52] != '-' {
		return false
	}
	switch {
	case v[0] == '0' && v[1] == '0':
		if len(v) != n {
			return false
		}
	case v[0] == 'f' && v[1] == 'f':
		return false
	case len(v) > n && v[n] != '-':
		return false
	}
	if !lowerHex(v[3:35]) || !lowerHex(v[36:52]) || !lowerHex(v[53:55]) || allZero(v[3:35]) || allZero(v[36:52]) {
		return false
	}
	copy(dst[:], v[:n])
	dst[0], dst[1] = '0', '0'
	// Of the flags' low hex digit only bit 0 (sampled) is kept; the high
	// digit holds no defined flag.
	lo := v[54] - '0'
	if v[54] >= 'a' {
		lo = v[54] - 'a' + 10
	}
	dst[53], dst[54] = '0', '0'+(lo&1)
	return true
}

func lowerHex(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != '0' {
			return false
		}
	}
	return true
}

// MaxTracestate is the most of a client's tracestate the edge keeps (in
// its spans) and passes on to the internal services: W3C Trace Context
// asks vendors to propagate at least 512 characters, and every internal
// call carries it (a client's 5.7 KB one once made the calls too large
// for the services).
const MaxTracestate = 512

// maxTracestateMember is the length over which a list member is the first
// to go when a tracestate is cut (W3C Trace Context 3.3.1.5).
const maxTracestateMember = 128

// maxTracestateMembers is the most list members a tracestate may have
// (W3C Trace Context 3.3.1.1): a cut one keeps at most this many, else the
// tracer and the services refuse it whole.
const maxTracestateMembers = 32

// TruncateTracestate returns a client's tracestate as the edge keeps it:
// whole when it is at most MaxTracestate bytes with at most 32 list
// members (fewer than 32 commas), otherwise cut: its list members (split
// at ",", optional whitespace around each trimmed, empty ones dropped)
// longer than 128 characters removed first when it is over MaxTracestate
// bytes (W3C Trace Context 3.3.1.5), then members removed from the end
// until the rest, joined with ",", fits and has at most 32 members (W3C
// 3.3.1.1; TestTracestateTruncatedTo32Members). A short tracestate of more
// than 32 members is cut to its first 32 (TestTracestateMembersBounded):
// it was passed on whole, a list the tracer and the services refuse
// whole. It returns "" when nothing fits. The members are not validated:
// what the services receive is bounded, and the tracer parses the list
// itself. A tracestate that fits costs a count of its commas and one
// string copy.
func TruncateTracestate(ts []byte) string {
	short := len(ts) <= MaxTracestate
	if short && bytes.Count(ts, []byte(",")) < maxTracestateMembers {
		return string(ts)
	}
	out := make([]byte, 0, min(len(ts), MaxTracestate))
	kept := 0
	for m := range bytes.SplitSeq(ts, []byte(",")) {
		m = bytes.Trim(m, " \t")
		if len(m) == 0 || !short && len(m) > maxTracestateMember {
			continue
		}
		n := len(m)
		if len(out) > 0 {
			n++ // the comma
		}
		if len(out)+n > MaxTracestate || kept == maxTracestateMembers {
			break // this member and every one after it are removed
		}
		if len(out) > 0 {
			out = append(out, ',')
		}
		out = append(out, m...)
		kept++
	}
	return string(out)
}
