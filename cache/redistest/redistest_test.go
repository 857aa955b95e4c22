package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
)

func TestStartRestart(t *testing.T) {
	s := Start(t)
	c := s.Client()
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s.Restart()
	if v, err := c.Get(ctx, "k").Result(); err == nil {
		t.Fatalf("data survived a restart without persistence: %q", v)
	}
}

func TestCluster(t *testing.T) {
	cl := StartCluster(t)
	c := cl.Client(t)
	ctx := context.Background()
	// Keys spread over all masters must all be writable through one client.
	for i := 0; i < 50; i++ {
		if err := c.Set(ctx, fmt.Sprintf("key-%d", i), i, 0).Err(); err != nil {
			t.Fatalf("set key-%d: %v", i, err)
		}
	}
	// Hash-tagged keys share a slot, so multi-key commands work.
	if err := c.MSet(ctx, "{d1}:a", 1, "{d1}:b", 2).Err(); err != nil {
		t.Fatalf("mset hash-tagged: %v", err)
	}
}

// takePorts makes beforeLaunch take the port of each of the first n
// launches before redis-server starts on it, as another process would
// between FreePort and the server's bind: with a listener that accepts and
// never answers (silent), or with a redis-server of its own (another
// test's server, which answers PING as well). It returns how many it took.
func takePorts(t *testing.T, n int, redisToo bool) *int {
	t.Helper()
	taken := new(int)
	beforeLaunch = func(port int) {
		if *taken >= n {
			return
		}
		*taken++
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		if !redisToo {
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				t.Fatalf("take %s: %v", addr, err)
			}
			t.Cleanup(func() { ln.Close() })
			return
		}
		other := &Server{t: t, bin: Require(t), dir: t.TempDir(), Addr: addr, Port: port}
		other.args = []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", other.dir, "--loglevel", "warning"}
		if err := other.launch(); err != nil {
			t.Fatalf("take %s with a redis-server: %v", addr, err)
		}
		t.Cleanup(other.Stop)
	}
	t.Cleanup(func() { beforeLaunch = nil })
	return taken
}

// A start whose free port another process takes before redis-server binds
// it moves to another port, and the server it returns is its own process:
// the port is free only when FreePort chooses it, and tests in other
// packages start servers at the same time. Before 2026-11-27 Start waited
// for a PING on the port, so it failed after 10 s next to a silent
// listener and returned a server that was not its own next to another
// redis-server (stopping it stopped nothing, Restart restarted nothing).
func TestStartPortTakenMeanwhile(t *testing.T) {
	cases := []struct {
		name     string
		redisToo bool
		take     int // launches whose port is taken
		start    func(t *testing.T) []*Server
	}{
		{"standalone, silent listener", false, 1, func(t *testing.T) []*Server { return []*Server{Start(t)} }},
		{"standalone, another redis-server", true, 1, func(t *testing.T) []*Server { return []*Server{Start(t)} }},
		{"standalone, three ports in a row", false, 3, func(t *testing.T) []*Server { return []*Server{Start(t)} }},
		{"sentinel and its master", true, 1, func(t *testing.T) []*Server {
			addr, _ := StartSentinel(t)
			return []*Server{{Addr: addr}}
		}},
		{"cluster", true, 1, func(t *testing.T) []*Server { return StartCluster(t).Nodes }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			taken := takePorts(t, c.take, c.redisToo)
			servers := c.start(t)
			if *taken != c.take {
				t.Fatalf("took %d ports, want %d", *taken, c.take)
			}
			for _, s := range servers {
				if s.cmd == nil { // StartSentinel returns an address only
					continue
				}
				pid := s.PID()
				info, err := s.Client().Info(context.Background(), "server").Result()
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(info, "process_id:"+strconv.Itoa(pid)+"\r\n") {
					t.Errorf("the server on %s is not the one started (pid %d):\n%s", s.Addr, pid, info)
				}
			}
		})
	}
}

// Restart keeps the port and fails the test, rather than talking to a
// stranger, when another process took the port meanwhile.
func TestRestartPortTakenMeanwhile(t *testing.T) {
	s := Start(t)
	s.Stop()
	other := &Server{t: t, bin: Require(t), dir: t.TempDir(), Addr: s.Addr, Port: s.Port}
	other.args = []string{"--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", other.dir, "--loglevel", "warning"}
	if err := other.launch(); err != nil {
		t.Fatal(err)
	}
	defer other.Stop()
	if err := s.launch(); !errors.Is(err, errPortTaken) {
		t.Fatalf("launch on a taken port: %v, want errPortTaken", err)
	}
	if s.PID() != 0 {
		t.Error("the failed launch left its process running")
	}
}
