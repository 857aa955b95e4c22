package listener

import (
	"fmt"
	"net"
	"net/netip"
	"time"

	proxyproto "github.com/pires/go-proxyproto"
)

// ProxyOptions configure Proxy.
type ProxyOptions struct {
	// From lists the CIDRs of the load balancers allowed to send a PROXY
	// header. Empty: every connection must start with one. Not empty: a
	// connection from these sources must start with one; a connection
	// from any other source is served as it is, with its TCP peer as the
	// client, and refused if it sends a PROXY header (nobody but the
	// listed balancers may claim another client's address).
	From []string
	// HeaderTimeout bounds the wait for the header; default 5 s.
	HeaderTimeout time.Duration
}

// Proxy wraps ln so that each connection's RemoteAddr is the client
// address from its PROXY protocol header (v1 text or v2 binary). A
// connection that must carry a header and does not (or carries a broken
// one) fails its first Read, and the server closes it: it is never served
// with the balancer's address in place of the client's. The header is
// read on the first Read or RemoteAddr call, in the goroutine serving the
// connection, never in the accept loop.
func Proxy(ln net.Listener, o ProxyOptions) (net.Listener, error) {
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = 5 * time.Second
	}
	pl := &proxyproto.Listener{Listener: ln, ReadHeaderTimeout: o.HeaderTimeout}
	if len(o.From) == 0 {
		pl.ConnPolicy = func(proxyproto.ConnPolicyOptions) (proxyproto.Policy, error) { return proxyproto.REQUIRE, nil }
		return pl, nil
	}
	for _, c := range o.From {
		if _, err := netip.ParsePrefix(c); err != nil {
			if _, err := netip.ParseAddr(c); err != nil {
				return nil, fmt.Errorf("listener: PROXY protocol source %q: not a CIDR or an address", c)
			}
		}
	}
	policy, err := proxyproto.PolicyFromRanges(o.From, proxyproto.REQUIRE, proxyproto.REJECT)
	if err != nil {
		return nil, fmt.Errorf("listener: PROXY protocol sources: %w", err)
	}
	pl.ConnPolicy = func(co proxyproto.ConnPolicyOptions) (proxyproto.Policy, error) {
		// A link-local peer's address carries its zone ("fe80::1%eth0"),
		// which the library's policy cannot parse: it dropped the
		// connection instead of serving it. A zone says nothing about
		// the ranges.
		if ta, ok := co.Upstream.(*net.TCPAddr); ok && ta.Zone != "" {
			co.Upstream = &net.TCPAddr{IP: ta.IP, Port: ta.Port}
		}
		return policy(co)
	}
	return pl, nil
}
