package aggregator

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/cache/ratelimit"
)

// Per-address limits, the index of their counters and the domain of their
// bucket hashes.
const (
	addrFailedAuth = iota
	addrOpenAPI
)

var addrDomains = [...]string{"failed-auth\x00", "openapi\x00"}

// clientAddr resolves the request's client address (see ClientAddr).
func (s *Server) clientAddr(ctx *fasthttp.RequestCtx, st *liveSettings) netip.Addr {
	var peer netip.Addr
	switch a := ctx.RemoteAddr().(type) {
	case *net.TCPAddr:
		peer, _ = netip.AddrFromSlice(a.IP)
	case *net.UDPAddr:
		peer, _ = netip.AddrFromSlice(a.IP)
	}
	if len(st.TrustedProxies) == 0 {
		return peer.Unmap()
	}
	h := &ctx.Request.Header
	fwd, xff := forwardingFields(h.RawHeaders())
	if fwd == nil && xff == nil && len(h.RawHeaders()) == 0 {
		// A request not read from a connection (built in process): its
		// parsed headers are all there is. PeekAll's result is reused
		// by the next PeekAll, hence the copy.
		fwd = slices.Clone(h.PeekAll("Forwarded"))
		xff = h.PeekAll("X-Forwarded-For")
	}
	if st.ForwardedHeader == "forwarded" {
		xff = nil
	} else {
		fwd = nil
	}
	return ClientAddr(peer, fwd, xff, st.TrustedProxies)
}

// forwardingFields returns the values of the Forwarded and X-Forwarded-For
// lines of a raw header block, in order. From the header block alone: a
// chunked request's trailer fields, which fasthttp adds to the parsed
// headers (Forwarded is not among those it refuses), name no address (RFC
// 9110 6.5.1); and not through PeekAll, whose result the next PeekAll
// overwrites.
func forwardingFields(raw []byte) (fwd, xff [][]byte) {
	for k, v := range rawFields(raw) {
		switch {
		case len(k) == len("Forwarded") && bytes.EqualFold(k, []byte("Forwarded")):
			fwd = append(fwd, v)
		case len(k) == len("X-Forwarded-For") && bytes.EqualFold(k, []byte("X-Forwarded-For")):
			xff = append(xff, v)
		}
	}
	return fwd, xff
}

// addrAllow spends one request of the per-address limit kind for the
// client of ctx; it returns the 429 to answer when the address is over
// lim, else nil. Without an address limiter it allows everything.
//
// The address is counted under a keyed hash of its bucket (IPv4 address,
// IPv6 /64), so Redis holds no client address; the hash also picks the
// Redis hash tag, which spreads the buckets over a cluster.
func (s *Server) addrAllow(ctx *fasthttp.RequestCtx, kind int, lim ratelimit.Limit) *apiError {
	if s.addrLimiter == nil {
		return nil
	}
	st := s.settings.Load()
	b := append([]byte(addrDomains[kind]), addrBucket(s.clientAddr(ctx, st))...)
	h := s.hasher.sum(b)
	d := s.addrLimiter.AllowN(context.Background(), int64(binary.BigEndian.Uint16(h[16:18])), hex.EncodeToString(h[:16]), lim, 1)
	if d.Allowed {
		return nil
	}
	s.authStats.addrLimited[kind].Add(1)
	secs := int((d.RetryAfter + time.Second - 1) / time.Second)
	detail := "too many failed authentications from this address; retry after the number of seconds in Retry-After"
	if kind == addrOpenAPI {
		detail = "too many requests from this address; retry after the number of seconds in Retry-After"
	}
	return &apiError{code: codeRateLimited, detail: detail, retryAfter: max(secs, 1)}
}

// openAPIAllow is the anonymous limit of the OpenAPI document: a request
// with a key the edge knows to be valid now passes (its cached principal
// still usable, not expired, its dealer found), any other is counted per
// client address under Settings.OpenAPILimit. An expired key's principal
// stays cached (expiry is checked per request), and a revoked key's until
// it is evicted: neither passes.
func (s *Server) openAPIAllow(ctx *fasthttp.RequestCtx) (bool, int) {
	rs := state(ctx)
	if key, code := ExtractKey(rs.hdr.apiKey, rs.hdr.authorization); code == "" {
		if p := s.auth.get(s.hasher.sum(key)); p != nil {
			st := s.settings.Load()
			now := rs.start
			if p.check(now) == nil && p.usable(s, s.indexState(now, st), now, st) {
				return true, 0
			}
		}
	}
	if ae := s.addrAllow(ctx, addrOpenAPI, s.settings.Load().OpenAPILimit); ae != nil {
		return false, ae.retryAfter
	}
	return true, 0
}
