package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
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
