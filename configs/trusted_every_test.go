package configs

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/dealer-edge/dealer-edge/aggregator"
)

// TestTrustedProxiesEveryAddressRefused: a server.trusted_proxies entry of
// prefix length 0 (0.0.0.0/0, ::/0, however spelled) trusts every peer as
// a proxy, so every client names its own address in the forwarding header
// (a new one per request, past rate_limit.failed_auth and
// rate_limit.openapi). Before 2026-11-29 it was accepted without a word.
// It is refused, naming the field, and so is an entry wider than the
// widest private range of its family (/8 for IPv4, /7 for IPv6), which a
// pair of halves (0.0.0.0/1, 128.0.0.0/1) used to trust every peer past
// the /0 check; narrower entries stay valid.
func TestTrustedProxiesEveryAddressRefused(t *testing.T) {
	for _, c := range []struct {
		list    []string
		refused bool
	}{
		{[]string{"0.0.0.0/0"}, true},
		{[]string{"::/0"}, true},
		{[]string{"10.0.0.0/8", "0.0.0.0/0"}, true},
		{[]string{"203.0.113.7/0"}, true},     // masked: every IPv4 address
		{[]string{"::ffff:0.0.0.0/96"}, true}, // the IPv4-mapped form of 0.0.0.0/0
		{[]string{"2001:db8::/0"}, true},
		{[]string{"0.0.0.0/1", "128.0.0.0/1"}, true}, // every IPv4 address in two halves
		{[]string{"64.0.0.0/2"}, true},
		{[]string{"10.0.0.0/7"}, true},
		{[]string{"::/1", "8000::/1"}, true},
		{[]string{"fc00::/6"}, true},
		{[]string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"}, false},
		{[]string{"203.0.113.7"}, false},
		{[]string{}, false},
	} {
		err := validateField(t, func(cfg *Config) { cfg.Server.TrustedProxies = c.list })
		switch {
		case c.refused && (err == nil || !strings.Contains(err.Error(), "server.trusted_proxies:")):
			t.Errorf("trusted_proxies %q: err = %v, want it refused naming server.trusted_proxies", c.list, err)
		case !c.refused && err != nil:
			t.Errorf("trusted_proxies %q refused: %v", c.list, err)
		}
	}
	// What the refusal prevents: with every peer trusted, the address a
	// client writes is the one its limits count.
	trusted, err := ParsePrefixes([]string{"0.0.0.0/0"})
	if err != nil {
		t.Fatal(err)
	}
	forged := netip.MustParseAddr("198.51.100.1")
	if got := aggregator.ClientAddr(netip.MustParseAddr("203.0.113.9"), nil, [][]byte{[]byte(forged.String())}, trusted); got != forged {
		t.Fatalf("every peer trusted: client %s, want the forged %s (the premise of the refusal)", got, forged)
	}
}
