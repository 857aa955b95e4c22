package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// TestPlaceholderKeyHashSecretWarned: an edge started outside --demo with
// the built-in auth.key_hash_secret (a placeholder published in the
// README and example.json: configs/README.md says "Change it in
// production") logs a warning naming the field, so a hand-written config
// that forgot it does not run on it unnoticed: the HMAC that keys the
// auth cache and the rate limits in Redis would be keyed by a public
// value. Before 2026-11-29 nothing said so. --demo and a secret of one's
// own start without it.
func TestPlaceholderKeyHashSecretWarned(t *testing.T) {
	fk := fake.NewServer(fake.Options{})
	addr, err := fk.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fk.Close)
	up := "http://" + addr

	dir := t.TempDir()
	secret := filepath.Join(dir, "key_hash_secret")
	if err := os.WriteFile(secret, []byte("a-real-secret-of-our-own\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(dir, "own.json")
	writeConfig(t, own, `{"watch_interval": "0s", "auth": {"key_hash_secret_file": "`+secret+`"}}`)

	for _, c := range []struct {
		name string
		args []string
		warn bool
	}{
		{"placeholder", []string{"--upstream", up}, true},
		{"own secret", []string{"--upstream", up, "--config", own}, false},
		{"demo", []string{"--demo"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := startEdge(t, c.args...)
			got := strings.Contains(e.stderr.String(), `"auth.key_hash_secret is the built-in placeholder`)
			if got != c.warn {
				t.Errorf("placeholder warning logged: %v, want %v:\n%s", got, c.warn, e.stderr.String())
			}
		})
	}
}
