package systemdunit

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dealer-edge/dealer-edge/deploy/internal/edgeproc"
)

// installCommands runs the `install ...` lines of a unit file's or
// drop-in's header comment as written, under root, from src (where the
// operator keeps the files to install). Spaces only, not \s: a trailing
// comment must not swallow the next line's command.
func installCommands(t *testing.T, text, root, src string) {
	t.Helper()
	n := 0
	for _, m := range regexp.MustCompile(`(?m)^#[ \t]+(install .*?)(?:[ \t]+#.*)?$`).FindAllStringSubmatch(text, -1) {
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
		t.Fatal("no install commands in the header")
	}
}

// The documented set-ups of the VM install (README, "VM with systemd"): the
// unit as shipped, for a Redis without a password, and the drop-ins of
// deploy/systemd/credentials/ for a Redis password and a Sentinel password.
// For each, the header's install commands are run as written under a
// temporary root (what a fresh host has: /usr/local/bin), with only the
// secrets that set-up has. Then, as systemd would at start:
//   - every LoadCredential= source of the unit and its installed drop-ins
//     must exist (a missing one fails the unit with 243/CREDENTIALS; until
//     2026-11-29 the unit always loaded redis_password, so it never started
//     on a Redis without a password);
//   - the credentials are copied to a stand-in for
//     /run/credentials/dealer-edge.service, and the config, with the lines
//     the drop-ins document, passes --check-config (ExecStartPre=);
//   - systemd-analyze verify, where installed, accepts the unit with its
//     drop-ins without a word.
func TestUnitSetups(t *testing.T) {
	root0 := edgeproc.RepoRoot()
	unit, err := os.ReadFile(filepath.Join(root0, "deploy", "systemd", "dealer-edge.service"))
	if err != nil {
		t.Fatal(err)
	}
	edge := edgeproc.Binary(t)
	for _, c := range []struct {
		name    string
		secrets []string
		dropins []string
		config  map[string]any // besides what the drop-ins document
	}{
		{"password-less Redis", nil, nil, nil},
		{"Redis password", []string{"redis_password"}, []string{"redis-password.conf"}, nil},
		{"Sentinel password", []string{"sentinel_password"}, []string{"sentinel-password.conf"},
			map[string]any{"master_name": "mymaster"}},
		{"both", []string{"redis_password", "sentinel_password"}, []string{"redis-password.conf", "sentinel-password.conf"},
			map[string]any{"master_name": "mymaster"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, src := t.TempDir(), t.TempDir()
			if err := os.MkdirAll(filepath.Join(root, "usr/local/bin"), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, f := range append([]string{"dealer-edge", "config.json", "admin_token", "key_hash_secret"}, c.secrets...) {
				if err := os.WriteFile(filepath.Join(src, f), []byte("systemd-setup-secret-0123456789\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			installCommands(t, string(unit), root, src)
			redis := map[string]any{"addrs": []string{"127.0.0.1:6379"}}
			for k, v := range c.config {
				redis[k] = v
			}
			for _, d := range c.dropins {
				b, err := os.ReadFile(filepath.Join(root0, "deploy", "systemd", "credentials", d))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(src, d), b, 0o644); err != nil {
					t.Fatal(err)
				}
				installCommands(t, string(b), root, src)
				m := regexp.MustCompile(`(?m)^#\s+("redis": \{.*\})\s*$`).FindSubmatch(b)
				if m == nil {
					t.Fatalf("%s documents no config line", d)
				}
				var snip map[string]map[string]any
				if err := json.Unmarshal([]byte("{"+string(m[1])+"}"), &snip); err != nil {
					t.Fatalf("%s: config line %s: %v", d, m[1], err)
				}
				for k, v := range snip["redis"] {
					redis[k] = v
				}
			}
			if t.Failed() {
				t.FailNow()
			}

			// LoadCredential= of the unit and the installed drop-ins.
			text := string(unit)
			dropDir := filepath.Join(root, "etc/systemd/system/dealer-edge.service.d")
			installed, _ := filepath.Glob(filepath.Join(dropDir, "*.conf"))
			slices.Sort(installed)
			var got []string
			for _, p := range installed {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, filepath.Base(p))
				text += "\n" + string(b)
			}
			if want := slices.Sorted(slices.Values(c.dropins)); !slices.Equal(got, want) {
				t.Fatalf("drop-ins installed %v, want %v", got, want)
			}
			creds := t.TempDir()
			var names []string
			for _, lc := range unitDirectives(t, text)["LoadCredential"] {
				name, path, _ := strings.Cut(lc, ":")
				names = append(names, name)
				b, err := os.ReadFile(filepath.Join(root, path))
				if err != nil {
					t.Errorf("LoadCredential=%s: the source is not there, systemd refuses to start the unit (243/CREDENTIALS): %v", lc, err)
					continue
				}
				if err := os.WriteFile(filepath.Join(creds, name), b, 0o400); err != nil {
					t.Fatal(err)
				}
			}
			for _, s := range c.secrets {
				if !slices.Contains(names, s) {
					t.Errorf("the set-up's %s is loaded by no LoadCredential= (have %v)", s, names)
				}
			}
			if t.Failed() {
				t.FailNow()
			}

			// The config, as the unit's header and the drop-ins name the
			// credentials, through --check-config.
			cfg := map[string]any{
				"admin_listen":     "0.0.0.0:9091",
				"admin_token_file": "/run/credentials/dealer-edge.service/admin_token",
				"auth":             map[string]any{"key_hash_secret_file": "/run/credentials/dealer-edge.service/key_hash_secret"},
				"upstream":         map[string]any{"base_url": "http://127.0.0.1:9"},
				"redis":            redis,
			}
			js, _ := json.Marshal(cfg)
			js = []byte(strings.ReplaceAll(string(js), "/run/credentials/dealer-edge.service", creds))
			cf := filepath.Join(t.TempDir(), "config.json")
			if err := os.WriteFile(cf, js, 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(edge, "--check-config", cf).CombinedOutput(); err != nil {
				t.Errorf("--check-config %s: %v\n%s", js, err, out)
			}

			sa, err := exec.LookPath("systemd-analyze")
			if err != nil {
				return
			}
			w := t.TempDir()
			u := strings.ReplaceAll(string(unit), "/usr/local/bin/dealer-edge", edge)
			if err := os.WriteFile(filepath.Join(w, "dealer-edge.service"), []byte(u), 0o644); err != nil {
				t.Fatal(err)
			}
			if len(installed) > 0 {
				if err := os.Mkdir(filepath.Join(w, "dealer-edge.service.d"), 0o755); err != nil {
					t.Fatal(err)
				}
				for _, p := range installed {
					b, _ := os.ReadFile(p)
					if err := os.WriteFile(filepath.Join(w, "dealer-edge.service.d", filepath.Base(p)), b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			out, err := exec.Command(sa, "verify", filepath.Join(w, "dealer-edge.service")).CombinedOutput()
			if err != nil || len(strings.TrimSpace(string(out))) > 0 {
				t.Errorf("systemd-analyze verify with %v: %v\n%s", got, err, out)
			}
		})
	}
}

// Every drop-in in deploy/systemd/credentials/ is one of the set-ups above
// and loads one secret the edge reads from a file.
func TestCredentialDropinsKnown(t *testing.T) {
	ds, _ := filepath.Glob(filepath.Join(edgeproc.RepoRoot(), "deploy", "systemd", "credentials", "*"))
	var names []string
	for _, d := range ds {
		names = append(names, filepath.Base(d))
	}
	if want := []string{"redis-password.conf", "sentinel-password.conf"}; !slices.Equal(names, want) {
		t.Errorf("deploy/systemd/credentials holds %v; TestUnitSetups covers %v", names, want)
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
