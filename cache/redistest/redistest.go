// Package redistest starts real redis-server processes for tests: a single
// node, a master watched by a Sentinel, or a three-master Redis Cluster,
// each on free loopback ports, torn down with the test.
//
// When redis-server is not installed the test is skipped, except under CI
// (CI=true), where it fails: a missing dependency must not pass as green.
package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TB is the part of testing.TB the helpers need.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
	TempDir() string
	Cleanup(func())
	Logf(format string, args ...any)
}

var _ TB = (testing.TB)(nil)

// Require returns the path of redis-server, skipping (or under CI failing)
// the test when it is not installed.
func Require(t TB) string {
	t.Helper()
	p, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("redis-server not installed (CI=true): %v", err)
		}
		t.Skipf("redis-server not installed: %v", err)
	}
	return p
}

// FreePort returns a currently unused TCP port on 127.0.0.1.
func FreePort(t TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Server is one running redis-server process.
type Server struct {
	Addr string // host:port on 127.0.0.1
	Port int

	t    TB
	bin  string
	dir  string
	args []string
	pass string // password the readiness check authenticates with
	mu   sync.Mutex
	cmd  *exec.Cmd
}

// Start starts a standalone redis-server on a free loopback port, with no
// persistence, stopped at the end of the test.
func Start(t TB, extraArgs ...string) *Server {
	t.Helper()
	bin := Require(t)
	port := FreePort(t)
	s := &Server{
		Addr: fmt.Sprintf("127.0.0.1:%d", port),
		Port: port,
		t:    t,
		bin:  bin,
		dir:  t.TempDir(),
	}
	s.args = append([]string{
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir,
		"--protected-mode", "no", "--loglevel", "warning",
	}, extraArgs...)
	s.start()
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) start() {
	s.t.Helper()
	s.mu.Lock()
	cmd := exec.Command(s.bin, s.args...)
	cmd.Dir = s.dir
	if err := cmd.Start(); err != nil {
		s.mu.Unlock()
		s.t.Fatalf("start redis-server: %v", err)
	}
	s.cmd = cmd
	s.mu.Unlock()
	if err := waitPing(s.Addr, s.pass, 10*time.Second); err != nil {
		s.Stop()
		s.t.Fatalf("redis-server on %s did not come up: %v", s.Addr, err)
	}
}

// Stop kills the server (SIGKILL, like a crash) and waits for it to exit.
// It is safe to call more than once.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGCONT) // a paused process dies as well
	_ = s.cmd.Process.Kill()
	_, _ = s.cmd.Process.Wait()
	s.cmd = nil
}

// PID returns the process id of the running server, 0 when it is stopped
// (for reading its CPU time from /proc/<pid>/stat in benchmarks).
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Pause stops the server with SIGSTOP: connections stay open and nothing
// answers, as with a Redis stalled by a long command or a frozen VM. Resume
// undoes it; a paused server is resumed before it is stopped.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a server stopped by Pause.
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		_ = s.cmd.Process.Signal(sig)
	}
}

// Restart starts the server again on the same port after Stop. The data is
// gone (no persistence), as after a crash of a cache node.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.start()
}

// Client returns a go-redis client of the server, closed with the test.
func (s *Server) Client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	s.t.Cleanup(func() { _ = c.Close() })
	return c
}

func waitPing(addr, password string, within time.Duration) error {
	c := redis.NewClient(&redis.Options{Addr: addr, Password: password, DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(within)
	var err error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		err = c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}

// SentinelMaster is the master name StartSentinel monitors.
const SentinelMaster = "mymaster"

// StartSentinel starts a standalone redis-server (the master, as Start)
// and one Sentinel (`redis-server <config> --sentinel`) that monitors it
// as SentinelMaster with a quorum of 1, both on free loopback ports and
// stopped at the end of the test. It returns once the Sentinel answers
// with the master's address, and returns the Sentinel's address and the
// master name: what a client takes as redis.UniversalOptions Addrs and
// MasterName (or redis.FailoverOptions SentinelAddrs and MasterName).
//
// extraConf are lines appended to the Sentinel's config file, for example
// "requirepass <password>" to make the Sentinel itself require a
// password (the master stays open); the readiness check authenticates
// with that password.
func StartSentinel(t TB, extraConf ...string) (addr, masterName string) {
	t.Helper()
	master := Start(t)
	bin := Require(t)
	port := FreePort(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "sentinel.conf")
	lines := []string{
		"port " + strconv.Itoa(port),
		"bind 127.0.0.1",
		"protected-mode no",
		"daemonize no",
		"dir " + dir,
		"loglevel warning",
		fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d 1", SentinelMaster, master.Port),
		"sentinel down-after-milliseconds " + SentinelMaster + " 5000",
		"sentinel failover-timeout " + SentinelMaster + " 60000",
	}
	var pass string
	for _, l := range extraConf {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), " "); ok && strings.EqualFold(k, "requirepass") {
			pass = strings.TrimSpace(v)
		}
		lines = append(lines, l)
	}
	// The Sentinel rewrites its config file (its id, what it learns), so
	// the file lives in a directory of its own.
	if err := os.WriteFile(conf, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatalf("write sentinel config: %v", err)
	}
	s := &Server{
		Addr: fmt.Sprintf("127.0.0.1:%d", port),
		Port: port,
		t:    t,
		bin:  bin,
		dir:  dir,
		args: []string{conf, "--sentinel"},
		pass: pass,
	}
	s.start()
	t.Cleanup(s.Stop)

	sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addr, Password: pass, DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	defer sc.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		got, err := sc.GetMasterAddrByName(ctx, SentinelMaster).Result()
		cancel()
		if err == nil && len(got) == 2 && got[0]+":"+got[1] == master.Addr {
			return s.Addr, SentinelMaster
		}
		if time.Now().After(deadline) {
			t.Fatalf("sentinel on %s does not report master %s: %v %v", s.Addr, master.Addr, got, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Cluster is a running Redis Cluster of three masters (no replicas).
type Cluster struct {
	Nodes []*Server
}

// Addrs returns the seed addresses of the cluster.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Addr
	}
	return out
}

// Client returns a cluster client, closed with the test.
func (c *Cluster) Client(t TB) *redis.ClusterClient {
	cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// StartCluster starts three cluster-enabled redis-server processes on free
// loopback ports, assigns the 16384 slots among them and waits until the
// cluster reports state ok on every node.
func StartCluster(t TB) *Cluster {
	t.Helper()
	c := &Cluster{}
	for i := 0; i < 3; i++ {
		dir := t.TempDir()
		n := Start(t, "--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(dir, "nodes.conf"),
			"--cluster-node-timeout", "2000")
		c.Nodes = append(c.Nodes, n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Assign slot ranges and introduce the nodes to each other.
	per := 16384 / 3
	for i, n := range c.Nodes {
		cl := redis.NewClient(&redis.Options{Addr: n.Addr})
		lo, hi := i*per, (i+1)*per-1
		if i == 2 {
			hi = 16383
		}
		slots := make([]int, 0, hi-lo+1)
		for s := lo; s <= hi; s++ {
			slots = append(slots, s)
		}
		if err := cl.ClusterAddSlots(ctx, slots...).Err(); err != nil {
			cl.Close()
			t.Fatalf("cluster addslots on %s: %v", n.Addr, err)
		}
		if i > 0 {
			if err := cl.ClusterMeet(ctx, "127.0.0.1", strconv.Itoa(c.Nodes[0].Port)).Err(); err != nil {
				cl.Close()
				t.Fatalf("cluster meet: %v", err)
			}
		}
		cl.Close()
	}
	for _, n := range c.Nodes {
		if err := waitClusterOK(ctx, n.Addr); err != nil {
			t.Fatalf("cluster node %s not ok: %v", n.Addr, err)
		}
	}
	// A cluster client must see all three masters before tests use it.
	cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	defer cl.Close()
	for {
		var masters atomic.Int32 // ForEachMaster calls back concurrently
		err := cl.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			masters.Add(1)
			return nil
		})
		if err == nil && masters.Load() == 3 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("cluster client sees %d masters: %v", masters.Load(), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return c
}

func waitClusterOK(ctx context.Context, addr string) error {
	cl := redis.NewClient(&redis.Options{Addr: addr})
	defer cl.Close()
	for {
		info, err := cl.ClusterInfo(ctx).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_known_nodes:3") {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%v (last: %v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
