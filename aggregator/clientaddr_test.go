package aggregator

import (
	"net/netip"
	"strings"
	"testing"
)

func TestClientAddr(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:ffff::/48")}
	lines := func(v ...string) [][]byte {
		var out [][]byte
		for _, s := range v {
			out = append(out, []byte(s))
		}
		return out
	}
	for _, c := range []struct {
		name      string
		peer      string
		forwarded [][]byte
		xff       [][]byte
		want      string
	}{
		{"untrusted peer: headers ignored", "203.0.113.9", lines("for=198.51.100.1"), lines("198.51.100.2"), "203.0.113.9"},
		{"untrusted peer, IPv4-mapped", "::ffff:203.0.113.9", nil, lines("198.51.100.2"), "203.0.113.9"},
		{"trusted peer, no headers", "10.1.2.3", nil, nil, "10.1.2.3"},
		{"xff one hop", "10.1.2.3", nil, lines("198.51.100.7"), "198.51.100.7"},
		{"xff spoofed left part ignored", "10.1.2.3", nil, lines("1.2.3.4, 198.51.100.7"), "198.51.100.7"},
		{"xff skips trusted hops", "10.1.2.3", nil, lines("1.2.3.4, 198.51.100.7, 10.9.9.9, 10.0.0.1"), "198.51.100.7"},
		{"xff several lines in order", "10.1.2.3", nil, lines("1.2.3.4", "198.51.100.7, 10.0.0.2"), "198.51.100.7"},
		{"xff with port", "10.1.2.3", nil, lines("198.51.100.7:5555"), "198.51.100.7"},
		{"xff bracketed v6 with port", "10.1.2.3", nil, lines("[2001:db8:1::5]:443"), "2001:db8:1::5"},
		{"xff bare v6", "10.1.2.3", nil, lines("2001:db8:1::5"), "2001:db8:1::5"},
		{"xff garbage at the right: last trusted hop", "10.1.2.3", nil, lines("198.51.100.7, garbage"), "10.1.2.3"},
		{"xff garbage behind a trusted hop", "10.1.2.3", nil, lines("garbage, 10.0.0.9"), "10.0.0.9"},
		{"xff garbage left of the client", "10.1.2.3", nil, lines("garbage, 198.51.100.7"), "198.51.100.7"},
		{"xff only trusted hops: leftmost", "10.1.2.3", nil, lines("10.0.0.5, 10.0.0.6"), "10.0.0.5"},
		{"xff empty elements", "10.1.2.3", nil, lines(" , 198.51.100.7 ,, "), "198.51.100.7"},
		{"xff zone refused", "10.1.2.3", nil, lines("fe80::1%eth0"), "10.1.2.3"},
		{"forwarded wins over xff", "10.1.2.3", lines("for=198.51.100.1"), lines("198.51.100.2"), "198.51.100.1"},
		{"forwarded quoted v6 with port", "10.1.2.3", lines(`for="[2001:db8:cafe::17]:4711"`), nil, "2001:db8:cafe::17"},
		{"forwarded several params", "10.1.2.3", lines("proto=https;for=198.51.100.1;by=10.0.0.1"), nil, "198.51.100.1"},
		{"forwarded case-insensitive name", "10.1.2.3", lines("For=198.51.100.1"), nil, "198.51.100.1"},
		{"forwarded chain skips trusted", "10.1.2.3", lines("for=1.1.1.1, for=198.51.100.1, for=10.0.0.7"), nil, "198.51.100.1"},
		{"forwarded unknown stops", "10.1.2.3", lines("for=198.51.100.1, for=unknown"), nil, "10.1.2.3"},
		{"forwarded obfuscated stops", "10.1.2.3", lines("for=_hidden"), nil, "10.1.2.3"},
		{"forwarded element without for stops", "10.1.2.3", lines("for=198.51.100.1, proto=http"), nil, "10.1.2.3"},
		{"trusted v6 peer", "2001:db8:ffff::1", nil, lines("2001:db8:1::5"), "2001:db8:1::5"},
		{"invalid peer (not TCP)", "", nil, lines("198.51.100.7"), "invalid IP"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var peer netip.Addr
			if c.peer != "" {
				peer = netip.MustParseAddr(c.peer)
			}
			if got := ClientAddr(peer, c.forwarded, c.xff, trusted).String(); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}

func TestAddrBucket(t *testing.T) {
	for _, c := range []struct {
		name, a, b string
		same       bool
	}{
		{"same v4", "198.51.100.7", "198.51.100.7", true},
		{"neighbour v4", "198.51.100.7", "198.51.100.8", false},
		{"same v6 /64", "2001:db8:1:2::1", "2001:db8:1:2:ffff::9", true},
		{"other v6 /64", "2001:db8:1:2::1", "2001:db8:1:3::1", false},
		{"mapped v4 = v4", "::ffff:198.51.100.7", "198.51.100.7", true},
	} {
		got := string(addrBucket(netip.MustParseAddr(c.a))) == string(addrBucket(netip.MustParseAddr(c.b)))
		if got != c.same {
			t.Errorf("%s: same bucket %v, want %v", c.name, got, c.same)
		}
	}
}

// FuzzClientAddr: any header content from a trusted peer yields the peer,
// a trusted hop or an address that appears in the headers; never a panic.
func FuzzClientAddr(f *testing.F) {
	for _, s := range []string{"198.51.100.7", "for=198.51.100.1;proto=https", `for="[2001:db8::1]:80"`, "1.2.3.4, 10.0.0.1", "garbage,,", "[::1", "for=", `for="`, "1.2.3.4:99999", "::ffff:102:304"} {
		f.Add(s, s)
	}
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	peer := netip.MustParseAddr("10.1.2.3")
	f.Fuzz(func(t *testing.T, fwd, xff string) {
		var fl, xl [][]byte
		if fwd != "" {
			fl = [][]byte{[]byte(fwd)}
		}
		if xff != "" {
			xl = [][]byte{[]byte(xff)}
		}
		got := ClientAddr(peer, fl, xl, trusted)
		if !got.IsValid() || got.Zone() != "" {
			t.Fatalf("invalid result %v", got)
		}
		if got == peer {
			return
		}
		// The result must be written in the headers that were read.
		src := xff
		if fwd != "" {
			src = fwd
		}
		s := got.String()
		if !strings.Contains(src, s) && !strings.Contains(strings.ToLower(src), s) && !got.Is4() {
			// Non-canonical spellings of IPv6 may differ from String.
			if _, err := netip.ParseAddr(s); err != nil {
				t.Fatalf("result %s not from %q", s, src)
			}
		}
		// An IPv4 result is in the text, or it is an IPv4-mapped IPv6 hop
		// (::ffff:a.b.c.d, treated as IPv4: see ClientAddr).
		if got.Is4() && !strings.Contains(src, s) && !strings.Contains(strings.ToLower(src), "::ffff:") {
			t.Fatalf("IPv4 result %s not in %q", s, src)
		}
	})
}
