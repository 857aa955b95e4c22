package configs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDurationsBounded: a duration field over ten years is refused,
// naming the field. Until 2026-11-29 any value time.ParseDuration took was
// accepted, and auth.stale "2562047h47m16s" wrapped auth.ttl + auth.stale
// negative: no key was ever served stale, and the key index read expired.
func TestDurationsBounded(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{
		`{"auth": {"stale": "2562047h47m16s"}}`:  "auth.stale",
		`{"server": {"read_timeout": "87601h"}}`: "server.read_timeout",
		`{"auth": {"stale": "87600h"}}`:          "",
	} {
		p := filepath.Join(dir, "c.json")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Read(p)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", body, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: err %v, want one naming %s", body, err, want)
		}
	}
}
