// Package procs builds and runs the real binaries of the project,
// cmd/dealer-edge and cmd/fake-upstream, as separate processes on loopback
// ports for black-box tests: the reliability suite kills, restarts and
// slows them like an operator's incident would, and reads what a client
// and an operator would see (HTTP answers, /metrics, JSON logs).
//
// The binaries are built once per test process (Binaries) into a temporary
// directory that Cleanup removes (call it from TestMain). Every process a
// test starts is stopped when the test ends.
package procs

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/internal/syncbuf"
)

// TB is the part of testing.TB the helpers need.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
	TempDir() string
	Cleanup(func())
	Failed() bool
}

var _ TB = (testing.TB)(nil)

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// moduleRoot is the directory of go.mod, found from this source file.
func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Binaries builds dealer-edge and fake-upstream (once per test process) and
// returns their paths.
func Binaries(t TB) (edge, fake string) {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "dealer-edge-procs-")
		if buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", buildDir+string(os.PathSeparator), "./cmd/dealer-edge", "./cmd/fake-upstream")
		cmd.Dir = moduleRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build binaries: %v", buildErr)
	}
	return filepath.Join(buildDir, "dealer-edge"), filepath.Join(buildDir, "fake-upstream")
}

// Cleanup removes the built binaries; call it at the end of TestMain.
func Cleanup() {
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
}

// Buffer is a goroutine-safe, growing record of a process's output.
type Buffer = syncbuf.Buffer

// Proc is one running process started by a test.
type Proc struct {
	t      TB
	name   string
	bin    string
	args   []string
	cmd    *exec.Cmd
	exited chan struct{}
	// Stdout and Stderr hold everything the process printed, across
	// restarts.
	Stdout, Stderr *Buffer
}

// start runs bin with args and waits for a stdout line with each of the
// prefixes; it returns the rest of those lines.
func (p *Proc) start(prefixes ...string) []string {
	p.t.Helper()
	got, err := p.startE(prefixes...)
	if err != nil {
		p.t.Fatalf("%v", err)
	}
	return got
}

func (p *Proc) startE(prefixes ...string) ([]string, error) {
	p.cmd = exec.Command(p.bin, p.args...)
	p.cmd.Stderr = p.Stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", p.name, err)
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %v", p.name, err)
	}
	p.exited = make(chan struct{})
	cmd, exited := p.cmd, p.exited
	found := make(chan []string, 1)
	go func() {
		got := make([]string, len(prefixes))
		n := 0
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			_, _ = p.Stdout.Write([]byte(line + "\n"))
			for i, pre := range prefixes {
				if got[i] == "" {
					if rest, ok := strings.CutPrefix(line, pre); ok {
						got[i] = rest
						if n++; n == len(prefixes) {
							found <- got
						}
					}
				}
			}
		}
		_, _ = io.Copy(io.Discard, out)
		_ = cmd.Wait()
		close(exited)
	}()
	select {
	case got := <-found:
		return got, nil
	case <-exited:
		return nil, fmt.Errorf("%s exited before it was ready\nstdout:\n%s\nstderr:\n%s", p.name, p.Stdout, tail(p.Stderr.String(), 4096))
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("%s not ready within 30s\nstdout:\n%s\nstderr:\n%s", p.name, p.Stdout, tail(p.Stderr.String(), 4096))
	}
}

// Signal sends sig to the process.
func (p *Proc) Signal(sig os.Signal) {
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(sig)
	}
}

// Kill ends the process at once (SIGKILL) and waits for it.
func (p *Proc) Kill() {
	p.Signal(syscall.SIGKILL)
	p.Wait(10 * time.Second)
}

// Wait waits up to d for the process to exit and returns its exit code,
// or -1 when it is still running.
func (p *Proc) Wait(d time.Duration) int {
	if p.exited == nil {
		return -1
	}
	select {
	case <-p.exited:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(d):
		return -1
	}
}

// Pid is the process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Name is the program the process runs: "dealer-edge" or "fake-upstream".
func (p *Proc) Name() string { return p.name }

var (
	startedMu sync.Mutex
	started   []*Proc
)

// Started returns every process created through this package by the
// running test binary so far, running or not, in creation order, with
// everything each printed (Stdout, Stderr). A TestMain can scan them all
// once the suite has run, e.g. for secrets in the logs.
func Started() []*Proc {
	startedMu.Lock()
	defer startedMu.Unlock()
	return append([]*Proc(nil), started...)
}

func newProc(t TB, name, bin string, args []string) *Proc {
	p := &Proc{t: t, name: name, bin: bin, args: args, Stdout: &Buffer{}, Stderr: &Buffer{}}
	startedMu.Lock()
	started = append(started, p)
	startedMu.Unlock()
	t.Cleanup(func() {
		p.Signal(syscall.SIGKILL)
		p.Wait(10 * time.Second)
		if t.Failed() {
			t.Logf("%s stderr (last 4 KiB):\n%s", name, tail(p.Stderr.String(), 4096))
		}
	})
	return p
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// Fake is a running cmd/fake-upstream.
type Fake struct {
	*Proc
	// Addr is the host:port it listens on; it keeps it across Restart.
	Addr string
}

// StartFake runs fake-upstream on a free loopback port with the extra flags
// args (e.g. "--latency", "5ms").
func StartFake(t TB, args ...string) *Fake {
	t.Helper()
	_, bin := Binaries(t)
	f := &Fake{Proc: newProc(t, "fake-upstream", bin, append([]string{"--listen", "127.0.0.1:0"}, args...))}
	got := f.start("fake-upstream listening on http://")
	f.Addr, _, _ = strings.Cut(got[0], " ")
	// Later starts keep the address, so the edge finds it again.
	f.args = append([]string{"--listen", f.Addr}, args...)
	return f
}

// URL is the base URL of the fake services.
func (f *Fake) URL() string { return "http://" + f.Addr }

// Restart starts the fake again on the same address after Kill.
func (f *Fake) Restart() {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := f.Proc.startE("fake-upstream listening on http://")
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("fake-upstream did not restart on %s: %v", f.Addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Faults changes the fake's faults through its control endpoint; query is
// e.g. "service=catalog&latency=2s" or "clear=true" (see fake.ControlPath).
func (f *Fake) Faults(query string) {
	f.t.Helper()
	resp, err := http.Post(f.URL()+"/_control/faults?"+query, "text/plain", nil)
	if err != nil {
		f.t.Fatalf("fake faults %s: %v", query, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		f.t.Fatalf("fake faults %s: %d %s", query, resp.StatusCode, body)
	}
}

// Calls returns the fake's call counters per service.
func (f *Fake) Calls() map[string]int64 {
	f.t.Helper()
	resp, err := http.Get(f.URL() + "/_control/calls")
	if err != nil {
		f.t.Fatalf("fake calls: %v", err)
	}
	defer resp.Body.Close()
	out := map[string]int64{}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		f.t.Fatalf("fake calls: %v", err)
	}
	return out
}

// Edge is a running cmd/dealer-edge.
type Edge struct {
	*Proc
	// Base is the public base URL, Admin the admin listener's.
	Base, Admin string
	// ConfigPath is the config file it was started with.
	ConfigPath string
}

// StartEdge writes config (a partial config document: every field it
// leaves out keeps its default) to a file and runs dealer-edge with it on
// free loopback ports, plus the extra flags args (e.g. "--upstream", url,
// "--redis", addr).
func StartEdge(t TB, config map[string]any, args ...string) *Edge {
	t.Helper()
	return StartEdgeWith(t, EdgeOptions{}, config, args...)
}

// EdgeOptions change how StartEdgeWith runs dealer-edge.
type EdgeOptions struct {
	// NoFile, when not 0, is the process's limit of open files (soft and
	// hard RLIMIT_NOFILE), set by a shell's ulimit before it executes the
	// edge.
	NoFile int
}

// StartEdgeWith is StartEdge with options.
func StartEdgeWith(t TB, o EdgeOptions, config map[string]any, args ...string) *Edge {
	t.Helper()
	bin, _ := Binaries(t)
	path := filepath.Join(t.TempDir(), "edge.json")
	e := &Edge{ConfigPath: path}
	e.WriteConfig(config)
	all := append([]string{"--config", path, "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"}, args...)
	if o.NoFile > 0 {
		// The shell lowers the limit and replaces itself with the edge
		// (same pid); Go keeps a hard limit it cannot raise.
		all = append([]string{"-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, o.NoFile), bin}, all...)
		bin = "/bin/sh"
	}
	e.Proc = newProc(t, "dealer-edge", bin, all)
	e.t = t
	got := e.start("dealer-edge listening on ", "dealer-edge admin on ")
	e.Base, e.Admin = got[0], got[1]
	return e
}

// WriteConfig replaces the edge's config file (send SIGHUP or POST
// /admin/reload to apply it).
func (e *Edge) WriteConfig(config map[string]any) {
	if config == nil {
		config = map[string]any{}
	}
	b, err := json.MarshalIndent(config, "", "  ")
	if err != nil {
		panic(err) // a test's literal
	}
	if err := os.WriteFile(e.ConfigPath, b, 0o600); err != nil {
		panic(err)
	}
}

// Metric returns the sum of every sample of the /metrics family name whose
// labels contain all of labels (each `k="v"`), and whether any matched.
func (e *Edge) Metric(name string, labels ...string) (float64, bool) {
	resp, err := http.Get(e.Admin + "/metrics")
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	var sum float64
	found := false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		match := true
		for _, l := range labels {
			if !strings.Contains(rest, l) {
				match = false
			}
		}
		if !match {
			continue
		}
		i := strings.LastIndexByte(rest, ' ')
		v, err := strconv.ParseFloat(rest[i+1:], 64)
		if err == nil {
			sum += v
			found = true
		}
	}
	return sum, found
}

// Response is one answer of the edge.
type Response struct {
	Status  int
	Header  http.Header
	Body    []byte
	Elapsed time.Duration
}

// Client is an HTTP client for the edge with a hard per-request timeout.
func Client(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
}

// DecodeBody undoes the content coding of a response body: "" (or an
// empty body, as in a 304) leaves it as it is, "gzip" is decompressed, any
// other coding is an error.
func DecodeBody(contentEncoding string, body []byte) ([]byte, error) {
	switch {
	case contentEncoding == "" || len(body) == 0:
		return body, nil
	case contentEncoding == "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("gzip body: %w", err)
		}
		out, err := io.ReadAll(zr)
		if err != nil {
			return nil, fmt.Errorf("gzip body: %w", err)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("unexpected Content-Encoding %q", contentEncoding)
	}
}

// Get sends GET base+path with headers ("Name: value") through c.
func Get(ctx context.Context, c *http.Client, base, path string, headers ...string) (*Response, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", base+path, nil)
	if err != nil {
		return nil, err
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	// Gzip is asked for by the caller (the client never adds
	// Accept-Encoding); callers check the JSON, so decode it.
	if body, err = DecodeBody(resp.Header.Get("Content-Encoding"), body); err != nil {
		return nil, err
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: body, Elapsed: time.Since(start)}, nil
}
