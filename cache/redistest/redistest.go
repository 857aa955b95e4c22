// Package redistest starts real redis-server processes for tests: a single
// node, a master watched by a Sentinel, or a three-master Redis Cluster,
// each on free loopback ports, torn down with the test.
//
// When redis-server is not installed the test is skipped, except under CI
// (CI=true), where it fails: a missing dependency must not pass as green.
package redistest

import (
	"bytes"
	"context"
	"errors"
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

// FreePort returns a currently unused TCP port on 127.0.0.1. It is free
// when chosen only: another process may bind it before the caller does, so
// a caller that hands it to a child process checks that the child bound
// it (as Start, StartSentinel and StartCluster do, retrying on another).
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
	done chan struct{} // closed when cmd has exited
}

// startAttempts is how many free ports a start tries. A port is free when
// FreePort chooses it, but another process (a parallel test's server, an
// outgoing connection) can bind it before redis-server does.
const startAttempts = 5

// beforeLaunch, when set (by this package's tests), runs after a start has
// chosen a port and before redis-server is started on it: a test takes the
// port there to check that the start moves to another.
var beforeLaunch func(port int)

// errPortTaken reports that redis-server could not bind its port (or a
// port it needs besides, such as a cluster bus port).
var errPortTaken = errors.New("port taken")

// Start starts a standalone redis-server on a free loopback port, with no
// persistence, stopped at the end of the test. With "--requirepass",
// <password> among extraArgs the readiness check authenticates with that
// password.
func Start(t TB, extraArgs ...string) *Server {
	t.Helper()
	s := &Server{t: t, bin: Require(t), dir: t.TempDir()}
	for i := 0; i+1 < len(extraArgs); i++ {
		if extraArgs[i] == "--requirepass" {
			s.pass = extraArgs[i+1]
		}
	}
	s.startOnFreePort(func(port int) []string {
		return append([]string{
			"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", s.dir,
			"--protected-mode", "no", "--loglevel", "warning",
		}, extraArgs...)
	})
	t.Cleanup(s.Stop)
	return s
}

// startOnFreePort starts the server with argsFor(port) on a free port and,
// when the port was taken before redis-server bound it, on another, up to
// startAttempts ports. Addr, Port and args are those of the port it runs
// on.
func (s *Server) startOnFreePort(argsFor func(port int) []string) {
	s.t.Helper()
	var err error
	for range startAttempts {
		port := FreePort(s.t)
		if beforeLaunch != nil {
			beforeLaunch(port)
		}
		s.Port, s.Addr = port, fmt.Sprintf("127.0.0.1:%d", port)
		s.args = argsFor(port)
		if err = s.launch(); err == nil {
			return
		}
		if !errors.Is(err, errPortTaken) {
			break
		}
		s.t.Logf("redistest: trying another port: %v", err)
	}
	s.t.Fatalf("start redis-server: %v", err)
}

// launch starts redis-server with s.args and waits until it answers on
// s.Addr as itself: the server that answers must report this process's id,
// since a server another test started on the port answers too. It returns
// an error wrapping errPortTaken when redis-server could not bind its port.
func (s *Server) launch() error {
	logPath := filepath.Join(s.dir, "redis-server.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	cmd := exec.Command(s.bin, s.args...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	err = cmd.Start()
	logf.Close() // the child has its own descriptor
	if err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	err = waitOwn(s.Addr, s.pass, cmd.Process.Pid, done, 10*time.Second)
	if err == nil {
		return nil
	}
	s.Stop()
	out, _ := os.ReadFile(logPath)
	if errors.Is(err, errPortTaken) {
		return fmt.Errorf("%w\n%s", err, out)
	}
	if bytes.Contains(out, []byte("Address already in use")) {
		return fmt.Errorf("%w: redis-server could not bind %s (%v)\n%s", errPortTaken, s.Addr, err, out)
	}
	return fmt.Errorf("redis-server on %s did not come up: %v\n%s", s.Addr, err, out)
}

// errExited reports that redis-server exited before it answered.
var errExited = errors.New("redis-server exited")

// waitOwn waits until the server on addr answers PING and reports pid as
// its process id, or the process exits (done), or within passes. A server
// with another process id means the port was someone else's: errPortTaken.
func waitOwn(addr, password string, pid int, done <-chan struct{}, within time.Duration) error {
	// Short timeouts that the context bounds too: a port taken by a
	// listener that accepts and never answers must not hold a check longer
	// than one round, so that an exit of redis-server is seen at once.
	c := redis.NewClient(&redis.Options{
		Addr: addr, Password: password, MaxRetries: -1,
		DialTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond,
		ContextTimeoutEnabled: true,
	})
	defer c.Close()
	want := "process_id:" + strconv.Itoa(pid)
	deadline := time.Now().Add(within)
	var err error
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return errExited
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		var info string
		info, err = c.Info(ctx, "server").Result()
		cancel()
		if err == nil {
			for _, l := range strings.Split(info, "\n") {
				if strings.HasPrefix(l, "process_id:") {
					if strings.TrimSpace(l) == want {
						return nil
					}
					return fmt.Errorf("%w: the server on %s is another process (%s)", errPortTaken, addr, strings.TrimSpace(l))
				}
			}
			err = fmt.Errorf("INFO server has no process_id")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
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
	<-s.done
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
// gone (no persistence), as after a crash of a cache node. The port stays
// (clients hold the address): if another process took it meanwhile, the
// test fails.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	if err := s.launch(); err != nil {
		s.t.Fatalf("restart redis-server: %v", err)
	}
}

// Client returns a go-redis client of the server, closed with the test.
func (s *Server) Client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	s.t.Cleanup(func() { _ = c.Close() })
	return c
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
	return startSentinelFor(t, Start(t), extraConf...), SentinelMaster
}

// StartSentinelWithReplica is StartSentinel with a replica of the master,
// started (and its replication link up) before the Sentinel, so that the
// Sentinel's first INFO of the master lists it: a replica started after the
// Sentinel is found at its next poll, up to 10 s later. The master syncs
// its replicas without the default 5 s diskless delay. It returns once the
// Sentinel reports the replica's link ok.
func StartSentinelWithReplica(t TB) (addr, masterName, masterAddr string, replica *Server) {
	t.Helper()
	master := Start(t, "--repl-diskless-sync-delay", "0")
	replica = Start(t, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port))
	rc := redis.NewClient(&redis.Options{Addr: replica.Addr, MaxRetries: -1})
	defer rc.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		info, _ := rc.Info(context.Background(), "replication").Result()
		if strings.Contains(info, "master_link_status:up") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s never linked to master %s: %s", replica.Addr, master.Addr, info)
		}
		time.Sleep(20 * time.Millisecond)
	}
	addr = startSentinelFor(t, master)
	sc := redis.NewSentinelClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer sc.Close()
	for deadline := time.Now().Add(15 * time.Second); ; {
		rs, _ := sc.Replicas(context.Background(), SentinelMaster).Result()
		for _, r := range rs {
			if r["ip"]+":"+r["port"] == replica.Addr && r["master-link-status"] == "ok" {
				return addr, SentinelMaster, master.Addr, replica
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("sentinel %s does not list replica %s: %v", addr, replica.Addr, rs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startSentinelFor starts a Sentinel monitoring master and returns its
// address once it reports the master.
func startSentinelFor(t TB, master *Server, extraConf ...string) string {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "sentinel.conf")
	var pass string
	for _, l := range extraConf {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), " "); ok && strings.EqualFold(k, "requirepass") {
			pass = strings.TrimSpace(v)
		}
	}
	s := &Server{t: t, bin: Require(t), dir: dir, pass: pass}
	s.startOnFreePort(func(port int) []string {
		lines := append([]string{
			"port " + strconv.Itoa(port),
			"bind 127.0.0.1",
			"protected-mode no",
			"daemonize no",
			"dir " + dir,
			"loglevel warning",
			fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d 1", SentinelMaster, master.Port),
			"sentinel down-after-milliseconds " + SentinelMaster + " 5000",
			"sentinel failover-timeout " + SentinelMaster + " 60000",
		}, extraConf...)
		// The Sentinel rewrites its config file (its id, what it learns),
		// so the file lives in a directory of its own, written anew for
		// each port tried.
		if err := os.WriteFile(conf, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatalf("write sentinel config: %v", err)
		}
		return []string{conf, "--sentinel"}
	})
	t.Cleanup(s.Stop)

	sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addr, Password: pass, DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	defer sc.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		got, err := sc.GetMasterAddrByName(ctx, SentinelMaster).Result()
		cancel()
		if err == nil && len(got) == 2 && got[0]+":"+got[1] == master.Addr {
			return s.Addr
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
//
// Each node's cluster bus port is a free port of its own (--cluster-port):
// by default it is the client port + 10000, which nobody checked was free,
// and which Redis refuses outright for a client port above 55535 (inside
// Linux's ephemeral range, 32768-60999, which FreePort draws from).
//
// extraArgs are appended to every node's command line (for example
// "--enable-debug-command", "yes").
func StartCluster(t TB, extraArgs ...string) *Cluster {
	t.Helper()
	c := &Cluster{}
	var bus0 int // the first node's cluster bus port, which the others meet
	for i := 0; i < 3; i++ {
		n := &Server{t: t, bin: Require(t), dir: t.TempDir()}
		var bus int
		n.startOnFreePort(func(port int) []string {
			bus = FreePort(t)
			return append([]string{
				"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
				"--save", "", "--appendonly", "no", "--dir", n.dir,
				"--protected-mode", "no", "--loglevel", "warning",
				"--cluster-enabled", "yes",
				"--cluster-port", strconv.Itoa(bus),
				// A file per port tried: a node that failed to bind may
				// have written its own.
				"--cluster-config-file", filepath.Join(n.dir, fmt.Sprintf("nodes-%d.conf", port)),
				"--cluster-node-timeout", "2000",
			}, extraArgs...)
		})
		t.Cleanup(n.Stop)
		if i == 0 {
			bus0 = bus
		}
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
			// CLUSTER MEET's third argument (Redis 7) is the bus port,
			// else taken as the client port + 10000.
			if err := cl.Do(ctx, "cluster", "meet", "127.0.0.1", c.Nodes[0].Port, bus0).Err(); err != nil {
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
