package aggregator

import (
	"bytes"
	"net/netip"
)

// ClientAddr returns the address a request comes from. It is the TCP peer
// (after the PROXY protocol, when the listener speaks it) unless the peer
// is a trusted proxy (in trusted); then the forwarding headers are read:
// Forwarded (RFC 7239, its for= parameters) when present, else
// X-Forwarded-For, every header line in order as one list. The list is
// walked from the right (the hop nearest to the edge) skipping trusted
// proxies; the first address that is not a trusted proxy is the client.
// An element that is not an address (unknown, an obfuscated identifier,
// garbage) ends the walk: the client is then the last trusted hop seen
// (the peer when it is the first element). A list of trusted proxies
// only gives its leftmost element.
//
// Addresses to the left of the client are never read: anyone can write
// them. IPv4-mapped IPv6 addresses are taken as IPv4.
func ClientAddr(peer netip.Addr, forwarded, xForwardedFor [][]byte, trusted []netip.Prefix) netip.Addr {
	peer = peer.Unmap()
	if !isTrusted(peer, trusted) {
		return peer
	}
	client := peer
	walk := func(elem []byte) bool { // false: stop
		a, ok := parseHop(elem)
		if !ok {
			return false
		}
		client = a
		return isTrusted(a, trusted)
	}
	if len(forwarded) > 0 {
		eachRight(forwarded, ',', func(elem []byte) bool {
			v, ok := forwardedFor(elem)
			if !ok {
				return false
			}
			return walk(v)
		})
		return client
	}
	eachRight(xForwardedFor, ',', walk)
	return client
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// eachRight calls f with the sep-separated elements of the header lines,
// last line first and right to left within a line, trimmed, until f
// returns false. Empty elements are skipped.
func eachRight(lines [][]byte, sep byte, f func([]byte) bool) {
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		for len(l) > 0 {
			var elem []byte
			if j := bytes.LastIndexByte(l, sep); j >= 0 {
				elem, l = l[j+1:], l[:j]
			} else {
				elem, l = l, nil
			}
			elem = bytes.TrimSpace(elem)
			if len(elem) == 0 {
				continue
			}
			if !f(elem) {
				return
			}
		}
	}
}

// forwardedFor returns the value of the for parameter of one Forwarded
// element ("for=192.0.2.1;proto=https"), unquoted.
func forwardedFor(elem []byte) ([]byte, bool) {
	for len(elem) > 0 {
		var pair []byte
		if j := bytes.IndexByte(elem, ';'); j >= 0 {
			pair, elem = elem[:j], elem[j+1:]
		} else {
			pair, elem = elem, nil
		}
		pair = bytes.TrimSpace(pair)
		name, value, ok := bytes.Cut(pair, []byte("="))
		if !ok || !bytes.EqualFold(bytes.TrimSpace(name), []byte("for")) {
			continue
		}
		value = bytes.TrimSpace(value)
		if len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
			value = value[1 : len(value)-1]
		}
		return value, true
	}
	return nil, false
}

// parseHop parses one hop: an IPv4 or IPv6 address, optionally with a port
// ("192.0.2.1:80", "[2001:db8::1]:80", "[2001:db8::1]").
func parseHop(b []byte) (netip.Addr, bool) {
	if len(b) == 0 || len(b) > 64 {
		return netip.Addr{}, false
	}
	if b[0] == '[' {
		end := bytes.IndexByte(b, ']')
		if end < 0 {
			return netip.Addr{}, false
		}
		if rest := b[end+1:]; len(rest) > 0 && (rest[0] != ':' || !isPort(rest[1:])) {
			return netip.Addr{}, false
		}
		b = b[1:end]
	} else if i := bytes.IndexByte(b, ':'); i >= 0 && bytes.IndexByte(b[i+1:], ':') < 0 {
		// One colon: IPv4 with a port. (More: a bare IPv6 address.)
		if !isPort(b[i+1:]) {
			return netip.Addr{}, false
		}
		b = b[:i]
	}
	a, err := netip.ParseAddr(string(b))
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

func isPort(b []byte) bool {
	if len(b) == 0 || len(b) > 5 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// addrBucket returns the identity the per-address limits count under: the
// IPv4 address, or the /64 of an IPv6 address (one subscriber's usual
// allocation: per address would let one host rotate through 2^64).
func addrBucket(a netip.Addr) []byte {
	a = a.Unmap()
	if a.Is4() {
		b := a.As4()
		return append([]byte{4}, b[:]...)
	}
	b := a.As16()
	return append([]byte{6}, b[:8]...)
}
