// Package edgeproc builds the real dealer-edge binary from the repository
// this module lives in and runs it in --demo mode (embedded fake services
// and Redis) on free loopback ports, for the deploy checks: what the
// dashboard, the alert rules and the status page are tested against is
// the edge as shipped, not a copy of its metric names.
package edgeproc

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// RepoRoot is the repository root: the directory above deploy/.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// Binary builds cmd/dealer-edge once per test process into a temporary
// directory and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dealer-edge-deploy-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "dealer-edge")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/dealer-edge")
		cmd.Dir = RepoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/dealer-edge: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// Edge is a running dealer-edge process.
type Edge struct {
	// Public and Admin are the base URLs of the listeners
	// ("http://127.0.0.1:port"); Fake is the embedded fake services'.
	Public, Admin, Fake string
	cmd                 *exec.Cmd
	stderr              *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var (
	publicRE = regexp.MustCompile(`listening on (https?://\S+)`)
	adminRE  = regexp.MustCompile(`admin on (http://\S+)`)
)

// Start runs the edge with --demo on free loopback ports plus args; the
// test's cleanup stops it with SIGTERM.
func Start(t testing.TB, args ...string) *Edge {
	t.Helper()
	bin := Binary(t)
	e := &Edge{stderr: &syncBuffer{}}
	all := append([]string{"--demo", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"}, args...)
	e.cmd = exec.Command(bin, all...)
	e.cmd.Stderr = e.stderr
	stdout, err := e.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = e.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = e.cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("edge stderr:\n%s", tail(e.stderr.String(), 4000))
		}
	})
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	deadline := time.After(20 * time.Second)
	for e.Public == "" || e.Admin == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("edge exited before listening:\n%s", e.stderr.String())
			}
			if m := publicRE.FindStringSubmatch(l); m != nil {
				e.Public = m[1]
			}
			if m := adminRE.FindStringSubmatch(l); m != nil {
				e.Admin = m[1]
			}
		case <-deadline:
			t.Fatalf("edge did not start:\n%s", e.stderr.String())
		}
	}
	go func() {
		for range lines {
		}
	}()
	// The embedded fake's address is in the startup event line. Standard
	// error is copied by its own goroutine (os/exec), which can trail the
	// listening lines read from standard output on a loaded machine: wait
	// for it.
	for end := time.Now().Add(10 * time.Second); e.Fake == "" && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		for _, l := range strings.Split(e.stderr.String(), "\n") {
			var ev struct {
				Msg, Addr string
			}
			if json.Unmarshal([]byte(l), &ev) == nil && ev.Msg == "embedded fake internal services" {
				e.Fake = "http://" + ev.Addr
			}
		}
	}
	if e.Fake == "" {
		t.Fatalf("no fake services address in the edge's log:\n%s", e.stderr.String())
	}
	return e
}

// Stderr returns the edge's log so far.
func (e *Edge) Stderr() string { return e.stderr.String() }

var client = &http.Client{Timeout: 10 * time.Second}

// Do sends one request and returns its status, headers and body.
func Do(t testing.TB, method, url string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// Get requests a public path with a demo key (demo-key-alpha, dealer
// 101, unless key is given) and returns the status and X-Cache.
func (e *Edge) Get(t testing.TB, path string, key ...string) (int, string) {
	t.Helper()
	k := "demo-key-alpha"
	if len(key) > 0 {
		k = key[0]
	}
	st, h, _ := Do(t, http.MethodGet, e.Public+path, "X-Api-Key", k)
	return st, h.Get("X-Cache")
}

// Faults sets faults of the embedded fake services, e.g.
// "service=inventory&down=true" or "clear=true".
func (e *Edge) Faults(t testing.TB, query string) {
	t.Helper()
	if st, _, b := Do(t, http.MethodPost, e.Fake+"/_control/faults?"+query); st != http.StatusOK && st != http.StatusNoContent {
		t.Fatalf("fault control %s: %d %s", query, st, b)
	}
}

// Scrape returns the admin listener's /metrics text.
func (e *Edge) Scrape(t testing.TB) string {
	t.Helper()
	st, _, b := Do(t, http.MethodGet, e.Admin+"/metrics")
	if st != http.StatusOK {
		t.Fatalf("/metrics: %d %s", st, b)
	}
	return string(b)
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// WriteTLSPair writes a self-signed ECDSA certificate for localhost, valid
// from an hour ago until notAfter, and its key as PEM files cert and key.
func WriteTLSPair(t testing.TB, cert, key string, notAfter time.Time) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "dealer-edge deploy check"},
		DNSNames:     []string{"localhost"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
}
