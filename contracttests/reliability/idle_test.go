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
	"sync/atomic"
	"syscall"
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
// the real binary before and after IDLE_CONNS (default 10,000, or 2,000
// under a low descriptor limit) clients each sent one request (a cached
// listing) and went idle, with the default settings and with
// server.reduce_memory, with parking (the default) and without,
// max_conns_per_ip and idle_timeout_busy off (they all come from
// 127.0.0.1 and must stay open). Parked, the target is 40 MB per 10,000
// (issue 15), and every connection then answers a second request; the
// bounds without parking are regression guards around what was measured
// (README, "Memory per idle connection"): 24 KB and 10 KB per connection.
func TestIdleConnectionMemory(t *testing.T) {
	// 10,000 connections, the unit, when the descriptor limit
	// allows it: a smaller count would fold the process's fixed growth
	// (heap arenas, the workers of the connections never parked) into the
	// per-connection figure.
	n := 10000
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Max < uint64(n)+1000 {
		n = 2000
	}
	if v, err := strconv.Atoi(os.Getenv("IDLE_CONNS")); err == nil && v > 0 {
		n = v
	}
	for _, tc := range []struct {
		name         string
		reduce, park bool
		max          float64 // MiB per 10,000
	}{
		{"defaults", true, true, 40},
		{"reduce_memory off", false, true, 40},
		{"no parking, reduce_memory off", false, false, 300},
		{"no parking", true, false, 130},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// idle_timeout_busy off: the connections are held for the
			// measurement (by default they would close after 5 s idle
			// under this many connections).
			server := map[string]any{"max_conns_per_ip": 0, "reduce_memory": tc.reduce, "idle_timeout_busy": "0s"}
			if !tc.park {
				server["park_idle_after"] = "0s"
			}
			s := startStack(t, map[string]any{"server": server})
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
			// Idle: past server.park_idle_after (1 s) the connections
			// beyond server.park_above are parked, the server's workers
			// that served them end after 2 s idle (within 4 s), and 5 s
			// after the last park the parker has the runtime give the
			// memory back.
			wait := 2 * time.Second
			if tc.park {
				wait = waitParkingQuiet(s, n)
			} else {
				time.Sleep(wait)
			}
			after := rssBytes(t, s.edge.Pid())
			parked, _ := s.edge.Metric(`edge_listener_parked_connections{listener="public"}`)
			if tc.park && int(parked) < n-200 {
				t.Errorf("%v of %d idle connections parked", parked, n)
			}
			if open, _ := s.edge.Metric("edge_listener_open_connections"); int(open) < n {
				t.Fatalf("%v connections open, want %d", open, n)
			}
			stack, _ := s.edge.Metric("go_memstats_stack_inuse_bytes")
			heap, _ := s.edge.Metric("go_memstats_heap_inuse_bytes")
			per10k := float64(after-before) * 10000 / float64(n) / (1 << 20)
			t.Logf("%d idle keep-alive connections (%v parked) after %v: RSS %.1f -> %.1f MiB: %.1f MiB per 10,000 (%.0f bytes each: goroutine stacks %.0f, heap %.0f)",
				n, parked, wait, float64(before)/(1<<20), float64(after)/(1<<20), per10k, float64(after-before)/float64(n),
				(stack-stackBefore)/float64(n), (heap-heapBefore)/float64(n))
			if n < 10000 && tc.park {
				t.Logf("only %d connections (descriptor limit): the 40 MB per 10,000 target is not asserted", n)
			} else if per10k > tc.max {
				t.Errorf("%.1f MiB per 10,000 idle connections, measured before: at most %.0f", per10k, tc.max)
			}
			if !tc.park {
				return
			}
			// Parked connections answer their next request as before.
			var wg sync.WaitGroup
			var failed atomic.Int64
			work := make(chan net.Conn)
			for range 32 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for c := range work {
						_ = c.SetDeadline(time.Now().Add(10 * time.Second))
						_, err := io.WriteString(c, "GET "+listing+" HTTP/1.1\r\nHost: edge\r\nX-Api-Key: bench-key-000\r\n\r\n")
						var resp *http.Response
						if err == nil {
							resp, err = http.ReadResponse(bufio.NewReader(c), nil)
						}
						if err != nil || resp.StatusCode != 200 {
							if failed.Add(1) == 1 {
								t.Errorf("second request on an idle connection: %v %v", resp, err)
							}
							continue
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
				}()
			}
			for _, c := range conns {
				work <- c
			}
			close(work)
			wg.Wait()
			if failed.Load() > 0 {
				t.Errorf("%d of %d parked or idle connections failed their second request", failed.Load(), n)
			}
		})
	}
}

// waitParkingQuiet waits until at least n-200 connections are parked and
// the count has not moved for 7 s: the parker gives the memory back 5 s
// after its last park (checked every 250 ms), then collects twice. A
// fixed wait was enough on a quiet machine, but with the other packages'
// tests beside it (CI) the last parks can come late. It gives up after
// 40 s, leaving the assertions to report what it saw, and returns how
// long it waited.
func waitParkingQuiet(s *stack, n int) time.Duration {
	start := time.Now()
	last, lastChange := -1.0, start
	for time.Since(start) < 40*time.Second {
		time.Sleep(250 * time.Millisecond)
		parked, _ := s.edge.Metric(`edge_listener_parked_connections{listener="public"}`)
		if parked != last {
			last, lastChange = parked, time.Now()
		}
		if int(parked) >= n-200 && time.Since(lastChange) >= 7*time.Second {
			break
		}
	}
	return time.Since(start).Round(100 * time.Millisecond)
}
