package reliability

import (
	"net"
	"strings"
	"testing"
	"time"
)

// TestSlowReadersBounded: a valid (unlimited) key opens many connections,
// pipelines requests for 100-item listings (53 KB answers) on each and
// never reads an answer. What the edge holds for them is bounded by
// server.write_timeout and server.idle_timeout (1 s each here):
//
//   - "buffered": 2,000 connections of 4 unread answers each, which the
//     kernel's socket buffers absorb: the edge is done with them at once,
//     holds them as idle keep-alive connections and closes them at
//     idle_timeout;
//   - "blocked": 200 connections of 64 unread answers each (3.4 MB, more
//     than the socket buffers take): the edge's write blocks, and
//     write_timeout ends it and closes the connection.
//
// In both the RSS growth at the peak is logged and held under 256 KB a
// connection (measured: 48.5 KB blocked, 15.7 KB buffered; an edge that
// kept a connection's unwritten answers would hold 3.4 MB each), another client is answered during the flood, every flooding
// connection is closed by the edge (a read after the wait drains what the
// kernel holds and ends in EOF or a reset, never a timeout), and the
// edge's RSS is logged after.
func TestSlowReadersBounded(t *testing.T) {
	const slowWriteTimeout, slowIdleTimeout = time.Second, time.Second
	cfg := hostileConfig()
	srv := cfg["server"].(map[string]any)
	srv["max_conns_per_ip"] = 0 // all from 127.0.0.1
	srv["write_timeout"] = slowWriteTimeout.String()
	srv["idle_timeout"] = slowIdleTimeout.String()
	s := startStack(t, cfg)
	addr := strings.TrimPrefix(s.edge.Base, "http://")
	pid := s.edge.Pid()
	path := "/dealer/REWIND/listing?page_size=100"
	if r := rawExchange(addr, "GET", []byte(get(path)), 5*time.Second); r.resp == nil || r.resp.StatusCode != 200 {
		t.Fatalf("warm-up: %+v", r)
	}
	for _, c := range []struct {
		name        string
		conns, reqs int
	}{
		{"blocked", 200, 64},
		{"buffered", 2000, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := rssBytes(t, pid)
			burst := []byte(strings.Repeat(keepAlive(get(path)), c.reqs))
			conns := make([]net.Conn, 0, c.conns)
			defer func() {
				for _, c := range conns {
					_ = c.Close()
				}
			}()
			for range c.conns {
				nc, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatalf("dial after %d: %v", len(conns), err)
				}
				conns = append(conns, nc)
				if _, err := nc.Write(burst); err != nil {
					t.Fatalf("write: %v", err)
				}
			}
			flooded := time.Now()
			// A measurement after the edge has had time to answer into
			// the buffers, not a synchronisation.
			time.Sleep(time.Second)
			peak := rssBytes(t, pid)
			start := time.Now()
			if r := rawExchange(addr, "GET", []byte(get("/dealer/REWIND/listing?page_size=2")), 5*time.Second); r.resp == nil || r.resp.StatusCode != 200 {
				t.Errorf("another client during the flood: %+v", r)
			}
			t.Logf("another client answered in %v during the flood", time.Since(start).Round(time.Millisecond))
			growth := peak - base
			t.Logf("RSS %.1f MiB -> %.1f MiB with %d connections of %d unread answers (%.1f KB a connection)",
				float64(base)/(1<<20), float64(peak)/(1<<20), c.conns, c.reqs, float64(growth)/float64(c.conns)/1000)
			if growth > int64(c.conns)*256<<10 {
				t.Errorf("RSS grew %d bytes for %d slow readers, over 256 KB each", growth, c.conns)
			}
			// By write_timeout + idle_timeout + slack the edge has ended
			// every one of them: drain each until EOF or a reset.
			time.Sleep(time.Until(flooded.Add(slowWriteTimeout + slowIdleTimeout + slack)))
			closedBy := time.Since(flooded)
			deadline := time.Now().Add(5 * time.Second)
			open := 0
			buf := make([]byte, 256<<10)
			for _, nc := range conns {
				_ = nc.SetReadDeadline(deadline)
				for {
					if _, err := nc.Read(buf); err != nil {
						if !isClosed(err) {
							open++
						}
						break
					}
				}
			}
			if open > 0 {
				t.Errorf("%d of %d slow-reader connections not closed by the edge %v after the flood", open, c.conns, closedBy.Round(time.Millisecond))
			}
			t.Logf("RSS once the edge closed them: %.1f MiB", float64(rssBytes(t, pid))/(1<<20))
		})
	}
}
