package systemdunit

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dealer-edge/dealer-edge/deploy/internal/edgeproc"
)

// The unit's header tells the operator how to install it:
//
//	install -D -m 0600 admin_token key_hash_secret redis_password /etc/dealer-edge/credentials/
//
// With several sources the last argument must be an existing directory:
// coreutils' install -D creates only the leading components of a single
// DEST ("install: target '/etc/dealer-edge/credentials/': No such file or
// directory" on Debian 12's coreutils 9.1), so on a fresh host the
// credentials are never installed, and LoadCredential= then fails the unit
// (243/CREDENTIALS). The commands are run here as written, under a
// temporary root.
func TestUnitInstallCommandsWork(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(edgeproc.RepoRoot(), "deploy", "systemd", "dealer-edge.service"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	src := t.TempDir()
	// What a host has: /usr/local/bin (not /etc/dealer-edge).
	if err := os.MkdirAll(filepath.Join(root, "usr/local/bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"dealer-edge", "config.json", "admin_token", "key_hash_secret", "redis_password"} {
		if err := os.WriteFile(filepath.Join(src, f), []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for _, m := range regexp.MustCompile(`(?m)^#\s+(install .*?)(?:\s+#.*)?$`).FindAllStringSubmatch(string(b), -1) {
		line := strings.ReplaceAll(m[1], " /etc/", " "+root+"/etc/")
		line = strings.ReplaceAll(line, " /usr/", " "+root+"/usr/")
		n++
		cmd := exec.Command("sh", "-c", line)
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", m[1], err, out)
		}
	}
	if n == 0 {
		t.Fatal("no install commands in the unit's header")
	}
	for _, f := range []string{"admin_token", "key_hash_secret", "redis_password"} {
		if _, err := os.Stat(filepath.Join(root, "etc/dealer-edge/credentials", f)); err != nil {
			t.Errorf("credential %s not installed: %v", f, err)
		}
	}
}

// configs/README.md, admin_token_file: "a mounted Kubernetes Secret, or
// `${CREDENTIALS_DIRECTORY}/admin_token` under systemd". The edge does not
// expand variables in paths: a config written so fails --check-config
// (ExecStartPre=) and the unit never starts.
func TestCredentialsDirectoryPathAsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(edgeproc.RepoRoot(), "configs", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "`${CREDENTIALS_DIRECTORY}/admin_token`") {
		t.Skip("configs/README.md no longer shows ${CREDENTIALS_DIRECTORY} in a path")
	}
	dir := t.TempDir()
	for _, f := range []string{"admin_token", "key_hash_secret"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("review-secret-0123456789\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfg, []byte(`{"admin_listen":"0.0.0.0:9091","admin_token_file":"${CREDENTIALS_DIRECTORY}/admin_token",`+
		`"auth":{"key_hash_secret_file":"${CREDENTIALS_DIRECTORY}/key_hash_secret"},"upstream":{"base_url":"http://127.0.0.1:9"},"redis":{"addrs":["127.0.0.1:6379"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(edgeproc.Binary(t), "--check-config", cfg)
	cmd.Env = append(os.Environ(), "CREDENTIALS_DIRECTORY="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("config naming ${CREDENTIALS_DIRECTORY}/admin_token as configs/README.md shows, CREDENTIALS_DIRECTORY=%s: %v\n%s", dir, err, out)
	}
}
