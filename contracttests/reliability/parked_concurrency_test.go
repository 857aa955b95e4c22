package reliability

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestParkedConnectionsPassConcurrency: server.concurrency counts every
// open connection, parked ones included, so keep-alive clients that each
// send one request and stay idle meet fast 503s past it, the process
// never runs out of descriptors and /readyz stays 200 (README, "The
// public listener": "a flood then meets fast 503s, not a process out of
// descriptors"). Before 2026-11-27 parked connections were not counted:
// 9 EMFILE accept errors at a 256 descriptor limit.
func TestParkedConnectionsPassConcurrency(t *testing.T) {
	s := startLimited(t, 256, map[string]any{"server": map[string]any{"park_above": 16}})
	conc, _ := s.edge.Metric("edge_listener_concurrency", `listener="public"`)
	addr := strings.TrimPrefix(s.edge.Base, "http://")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	served, refused, failed := 0, 0, 0
	for wave := 0; wave < 6; wave++ {
		for i := 0; i < 60; i++ {
			c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
			if err != nil {
				failed++
				continue
			}
			conns = append(conns, c)
			_ = c.SetDeadline(time.Now().Add(700 * time.Millisecond))
			_, _ = c.Write([]byte("GET " + listing + " HTTP/1.1\r\nHost: edge\r\nX-Api-Key: demo-key-alpha\r\n\r\n"))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			switch {
			case err != nil:
				failed++
			case resp.StatusCode == 200:
				served++
			default:
				refused++
			}
			_ = c.SetDeadline(time.Time{})
		}
		time.Sleep(1500 * time.Millisecond) // idle past park_idle_after: parked
	}
	parked, _ := s.edge.Metric("edge_listener_parked_connections", `listener="public"`)
	emfile, _ := s.edge.Metric("edge_listener_accept_errors_total", `listener="public"`, `error="EMFILE"`)
	ready := probe(s.edge.Admin + "/readyz")
	t.Logf("concurrency %v: %d keep-alive clients served 200, %d refused, %d without answer; %v parked; %v EMFILE accept errors; /readyz %d",
		conc, served, refused, failed, parked, emfile, ready)
	// Served can pass the concurrency over the waves: idle connections are
	// closed after server.idle_timeout_busy once half of it is open. What
	// must hold: the cap refuses (fast 503s), descriptors never run out,
	// the edge stays ready.
	if refused == 0 || emfile > 0 || ready != 200 {
		t.Fatalf("%d served, %d refused with server.concurrency %v (EMFILE accept errors %v, /readyz %d), want refusals, no EMFILE and /readyz 200: parked connections count against the concurrency", served, refused, conc, emfile, ready)
	}
}
