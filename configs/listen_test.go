package configs

import (
	"net"
	"strings"
	"testing"
)

// TestListenAddressesAsStartBindsThem: listen and admin_listen are
// checked as start-up binds them (net.Listen "tcp"), so --check-config and
// a reload refuse what the next start would fail on. Before 2026-11-29 only
// their host:port shape was checked: a port out of range (99999, -1) and
// the admin listener on the public listener's address passed
// --check-config and the start then exited 1 ("invalid port", "address
// already in use").
// testAdminToken lets an admin listener beyond loopback validate.
const testAdminToken = "listen-test-admin-token"

func TestListenAddressesAsStartBindsThem(t *testing.T) {
	bad := []struct {
		name, listen, admin, field string
	}{
		{"public port too large", "127.0.0.1:99999", "127.0.0.1:9091", "listen"},
		{"public port negative", "127.0.0.1:-1", "127.0.0.1:9091", "listen"},
		{"public port not a number or service", "127.0.0.1:eighty", "127.0.0.1:9091", "listen"},
		{"admin port too large", "127.0.0.1:8080", "127.0.0.1:70000", "admin_listen"},
		{"same address", "127.0.0.1:8080", "127.0.0.1:8080", "admin_listen"},
		{"same port, public on every address", ":8080", "127.0.0.1:8080", "admin_listen"},
		{"same port, admin on every IPv4 address", "127.0.0.1:8080", "0.0.0.0:8080", "admin_listen"},
		{"same port, admin on every address", "127.0.0.1:8080", "[::]:8080", "admin_listen"},
		// Before 2026-11-29 only the same spelling, "", "::" and
		// "0.0.0.0" (against IPv4 addresses) were seen to overlap.
		{"localhost and its IPv4 address", "localhost:8080", "127.0.0.1:8080", "admin_listen"},
		{"its IPv4 address and localhost", "127.0.0.1:8080", "localhost:8080", "admin_listen"},
		{"localhost in capitals", "LOCALHOST:8080", "127.0.0.1:8080", "admin_listen"},
		// Go binds localhost's first IPv4 address in the hosts file,
		// ::1 on a host with none: refused on every host (the check may
		// run on another machine than the edge), not bound below.
		{"localhost and ::1", "localhost:8080", "[::1]:8080", "admin_listen"},
		{"a service name and its port", "127.0.0.1:http", "localhost:80", "admin_listen"},
		{"IPv4-mapped address", "[::ffff:127.0.0.1]:8080", "127.0.0.1:8080", "admin_listen"},
		{"every address spelled ::0", "[::0]:8080", "127.0.0.1:8080", "admin_listen"},
		{"every address spelled 0:0::0", "127.0.0.1:8080", "[0:0::0]:8080", "admin_listen"},
		{"every address, IPv4-mapped", "[::ffff:0.0.0.0]:8080", "127.0.0.1:8080", "admin_listen"},
		// Go listens on 0.0.0.0 with a dual-stack socket on [::].
		{"IPv4 wildcard and an IPv6 address", "0.0.0.0:8080", "[::1]:8080", "admin_listen"},
		{"an IPv6 address and the IPv4 wildcard", "[::1]:8080", "0.0.0.0:8080", "admin_listen"},
	}
	for _, c := range bad {
		err := validateField(t, func(cfg *Config) { cfg.Listen, cfg.AdminListen, cfg.AdminToken = c.listen, c.admin, testAdminToken })
		if err == nil || !strings.Contains(err.Error(), c.field+":") {
			t.Errorf("%s: listen %q, admin_listen %q: err = %v; want an error naming %s", c.name, c.listen, c.admin, err, c.field)
		}
	}
	// Each of these binds at start (the public listener first, then the
	// admin one), and stays valid.
	good := []struct{ listen, admin string }{
		{"127.0.0.1:0", "127.0.0.1:0"}, // two ports the kernel picks
		{"127.0.0.1:8080", "127.0.0.1:9091"},
		{"127.0.0.1:8080", "127.0.0.2:8080"},
		{"127.0.0.1:8080", "[::1]:8080"},          // one address of each family
		{"localhost:8080", "127.0.0.2:8080"},      // localhost is 127.0.0.1 (and ::1) only
		{"edge.internal:8080", "127.0.0.1:8080"},  // a name is not resolved: the start reports it
		{"[::ffff:127.0.0.1]:8080", "[::1]:8080"}, // the mapped address is IPv4
		{"127.0.0.1:8080", "off"},
		{"127.0.0.1:http", "127.0.0.1:9091"}, // a service name, as net.Listen takes it
		{"127.0.0.1:", "127.0.0.1:"},         // an empty port is 0
	}
	for _, c := range good {
		if err := validateField(t, func(cfg *Config) { cfg.Listen, cfg.AdminListen, cfg.AdminToken = c.listen, c.admin, testAdminToken }); err != nil {
			t.Errorf("listen %q, admin_listen %q refused: %v", c.listen, c.admin, err)
		}
	}
	// The refused pairs of literal addresses (and localhost) do fail at
	// start: bound in start-up's order on one free port, the second bind
	// fails (a pair whose first address the host cannot bind, ::1
	// without IPv6, is skipped).
	for _, c := range bad {
		if c.field != "admin_listen" || strings.Contains(c.listen, "http") || c.name == "localhost and ::1" {
			continue
		}
		port := freePort(t)
		onPort := func(a string) string { h, _, _ := net.SplitHostPort(a); return net.JoinHostPort(h, port) }
		a, err := net.Listen("tcp", onPort(c.listen))
		if err != nil {
			t.Logf("%s: %v (skipped)", c.name, err)
			continue
		}
		if b, err := net.Listen("tcp", onPort(c.admin)); err == nil {
			t.Errorf("%s: %s then %s both bind; the check refuses the pair", c.name, onPort(c.listen), onPort(c.admin))
			b.Close()
		}
		a.Close()
	}
	// The pairs the check lets through do bind, in start-up's order.
	for _, c := range [][2]string{{"127.0.0.1:0", "127.0.0.1:0"}, {"127.0.0.1:", "127.0.0.1:"}} {
		a, err := net.Listen("tcp", c[0])
		if err != nil {
			t.Fatal(err)
		}
		b, err := net.Listen("tcp", c[1])
		if err != nil {
			t.Errorf("%q then %q: %v", c[0], c[1], err)
		} else {
			b.Close()
		}
		a.Close()
	}
}

// freePort returns a TCP port free on every address now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}
