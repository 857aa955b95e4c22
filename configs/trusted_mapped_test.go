package configs

import (
	"net/netip"
	"testing"

	"github.com/dealer-edge/dealer-edge/aggregator"
)

// TestTrustedProxyMappedCIDR: server.trusted_proxies accepts an
// IPv4-mapped CIDR ("::ffff:10.0.0.0/104", the form a dual-stack listener
// logs its IPv4 peers in) without complaint, and unmaps a single mapped
// address, but keeps the CIDR as an IPv6 prefix; the edge unmaps every peer
// before the check, and netip never matches an IPv4 address against an
// IPv6 prefix. The proxies are silently not trusted: every client behind
// them shares the proxy's failed-auth and OpenAPI buckets.
func TestTrustedProxyMappedCIDR(t *testing.T) {
	for _, cidr := range []string{"::ffff:10.0.0.0/104", "::ffff:10.0.0.7/128", "::ffff:10.0.0.7"} {
		trusted, err := ParsePrefixes([]string{cidr})
		if err != nil {
			t.Logf("%s rejected: %v (acceptable)", cidr, err)
			continue
		}
		for _, peer := range []string{"10.0.0.7", "::ffff:10.0.0.7"} {
			got := aggregator.ClientAddr(netip.MustParseAddr(peer), nil, [][]byte{[]byte("203.0.113.9")}, trusted)
			if got != netip.MustParseAddr("203.0.113.9") {
				t.Errorf("trusted_proxies [%q] accepted, peer %s: client %s, want 203.0.113.9 (the proxy is not trusted)", cidr, peer, got)
			}
		}
	}
}
