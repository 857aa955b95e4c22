package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSentinelNeedsAddresses: a master name without Sentinel addresses
// (from the file or --redis) is refused at start instead of running the
// embedded Redis as if it were a Sentinel; --redis can bring them.
func TestSentinelNeedsAddresses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sentinel.json")
	if err := os.WriteFile(path, []byte(`{"redis":{"master_name":"mymaster"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	code := run([]string{"--config", path, "--listen", "127.0.0.1:0", "--admin-listen", "off"}, io.Discard, &stderr, nil)
	if code != 2 || !strings.Contains(stderr.String(), "redis.master_name") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}
