package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var edgeBin struct {
	once sync.Once
	dir  string
	path string
	out  []byte
	err  error
}

// edgeBinary builds the edge once per test binary (go build of this
// package) for the tests that run it as a process, and returns its path;
// TestMain removes it.
func edgeBinary(t testing.TB) string {
	t.Helper()
	edgeBin.once.Do(func() {
		edgeBin.dir, edgeBin.err = os.MkdirTemp("", "dealer-edge-bin-")
		if edgeBin.err != nil {
			return
		}
		edgeBin.path = filepath.Join(edgeBin.dir, "dealer-edge")
		edgeBin.out, edgeBin.err = exec.Command("go", "build", "-o", edgeBin.path, ".").CombinedOutput()
	})
	if edgeBin.err != nil {
		t.Fatalf("go build: %v\n%s", edgeBin.err, edgeBin.out)
	}
	return edgeBin.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if edgeBin.dir != "" {
		_ = os.RemoveAll(edgeBin.dir)
	}
	os.Exit(code)
}

// runEdgeBinary starts the built edge (edgeBinary) with --demo on free
// ports, its standard error written to stderr, and returns the process and
// its public base URL once it printed it; the rest of its standard output
// is drained. The process is killed at the end of the test if still
// running.
func runEdgeBinary(t *testing.T, stderr io.Writer) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(edgeBinary(t), "--demo", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "dealer-edge listening on "); ok {
				addr <- a
			}
		}
	}()
	select {
	case a := <-addr:
		return cmd, a
	case <-time.After(15 * time.Second):
		t.Fatalf("the edge printed no listen address")
		return nil, ""
	}
}
