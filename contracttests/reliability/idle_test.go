package reliability

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// rssBytes reads VmRSS of pid.
func rssBytes(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// idleConns opens n keep-alive connections to addr, sends one request on
// each and reads its answer, and leaves them open and idle.
func idleConns(t *testing.T, addr, path string, n int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	work := make(chan int)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				c, err := net.DialTimeout("tcp", addr, 5*time.Second)
				if err == nil {
					_ = c.SetDeadline(time.Now().Add(10 * time.Second))
					_, err = io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: edge\r\nX-Api-Key: bench-key-000\r\n\r\n")
				}
				if err == nil {
					var resp *http.Response
					if resp, err = http.ReadResponse(bufio.NewReader(c), nil); err == nil {
						_, err = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if err == nil && resp.StatusCode != 200 {
							err = fmt.Errorf("status %d", resp.StatusCode)
						}
					}
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					if c != nil {
						c.Close()
					}
					continue
				}
				_ = c.SetDeadline(time.Time{})
				conns[i] = c
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
		t.Fatalf("opening idle connections: %v", firstErr)
	}
	return conns
}

// TestIdleConnectionMemory measures what an idle keep-alive connection
// costs the edge (issue 15: 5,000 idle connections added 75 MB): RSS of
// the real binary before and after IDLE_CONNS (default 2,000; the README's
// figures are from 10,000) clients each sent one request (a cached
// listing) and went idle, with the default settings and with
// server.reduce_memory, max_conns_per_ip off (they all come from
// 127.0.0.1). The bounds are regression guards around what was measured
// (README, "Memory per idle connection"): 24 KB and 10 KB per connection.
func TestIdleConnectionMemory(t *testing.T) {
	n := 2000
	if v, err := strconv.Atoi(os.Getenv("IDLE_CONNS")); err == nil && v > 0 {
		n = v
	}
	for _, tc := range []struct {
		name   string
		reduce bool
		max    float64 // MiB per 10,000
	}{
		{"default", false, 300},
		{"reduce_memory", true, 130},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startStack(t, map[string]any{"server": map[string]any{"max_conns_per_ip": 0, "reduce_memory": tc.reduce}})
			addr := strings.TrimPrefix(s.edge.Base, "http://")
			// Warm: the entry cached, the pools and the runtime settled.
			for range 100 {
				if st := probe(s.edge.Base+listing, "X-Api-Key: bench-key-000"); st != 200 {
					t.Fatalf("warm-up: %d", st)
				}
			}
			time.Sleep(time.Second)
			before := rssBytes(t, s.edge.Pid())
			stackBefore, _ := s.edge.Metric("go_memstats_stack_inuse_bytes")
			heapBefore, _ := s.edge.Metric("go_memstats_heap_inuse_bytes")
			conns := idleConns(t, addr, listing, n)
			defer func() {
				for _, c := range conns {
					c.Close()
				}
			}()
			time.Sleep(2 * time.Second) // idle
			after := rssBytes(t, s.edge.Pid())
			if open, _ := s.edge.Metric("edge_listener_open_connections"); int(open) < n {
				t.Fatalf("%v connections open, want %d", open, n)
			}
			stack, _ := s.edge.Metric("go_memstats_stack_inuse_bytes")
			heap, _ := s.edge.Metric("go_memstats_heap_inuse_bytes")
			per10k := float64(after-before) * 10000 / float64(n) / (1 << 20)
			t.Logf("%d idle keep-alive connections: RSS %.1f -> %.1f MiB: %.1f MiB per 10,000 (%.0f bytes each: goroutine stacks %.0f, heap %.0f)",
				n, float64(before)/(1<<20), float64(after)/(1<<20), per10k, float64(after-before)/float64(n),
				(stack-stackBefore)/float64(n), (heap-heapBefore)/float64(n))
			if per10k > tc.max {
				t.Errorf("%.1f MiB per 10,000 idle connections, measured before: at most %.0f", per10k, tc.max)
			}
		})
	}
}
