package configs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecretsFromFiles: every *_file setting fills its secret from the
// file, one trailing newline trimmed; both set, a missing or an empty file
// are errors naming the *_file field, and no error quotes the content.
func TestSecretsFromFiles(t *testing.T) {
	const token = "admin-token-from-a-file-0123456789"
	cases := []struct {
		name    string
		content string // written to secret.txt
		json    string // %s is the secret file's path
		check   func(c *Config) string
		errWant string // substring of the error; "" for success
	}{
		{"admin token, newline trimmed", token + "\n", `{"admin_token_file": %q}`,
			func(c *Config) string { return c.AdminToken }, ""},
		{"admin token, CRLF trimmed", token + "\r\n", `{"admin_token_file": %q}`,
			func(c *Config) string { return c.AdminToken }, ""},
		{"admin token, no newline", token, `{"admin_token_file": %q}`,
			func(c *Config) string { return c.AdminToken }, ""},
		{"key hash secret replaces the placeholder", token + "\n", `{"auth": {"key_hash_secret_file": %q}}`,
			func(c *Config) string { return c.Auth.KeyHashSecret }, ""},
		{"redis password", token + "\n", `{"redis": {"password_file": %q}}`,
			func(c *Config) string { return c.Redis.Password }, ""},
		{"sentinel password", token + "\n", `{"redis": {"master_name": "m", "addrs": ["127.0.0.1:26379"], "sentinel_password_file": %q}}`,
			func(c *Config) string { return c.Redis.SentinelPassword }, ""},
		{"admin token and its file", token, `{"admin_token": "another-token-0123456789", "admin_token_file": %q}`,
			nil, "admin_token_file: set either admin_token or admin_token_file, not both"},
		{"key hash secret and its file", token, `{"auth": {"key_hash_secret": "another-secret-0123456789", "key_hash_secret_file": %q}}`,
			nil, "auth.key_hash_secret_file: set either"},
		{"redis password and its file", token, `{"redis": {"password": "pw", "password_file": %q}}`,
			nil, "redis.password_file: set either"},
		{"sentinel password and its file", token, `{"redis": {"master_name": "m", "sentinel_password": "pw", "sentinel_password_file": %q}}`,
			nil, "redis.sentinel_password_file: set either"},
		{"empty file", "\n", `{"admin_token_file": %q}`, nil, "admin_token_file: "},
		{"short token from a file is validated", "x7q\n", `{"admin_token_file": %q}`, nil, "admin_token: must be at least 16 characters"},
		{"missing file", "", `{"redis": {"password_file": %q}}`, nil, "redis.password_file: open "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			secret := filepath.Join(dir, "secret.txt")
			if c.name != "missing file" {
				if err := os.WriteFile(secret, []byte(c.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			p := filepath.Join(dir, "edge.json")
			if err := os.WriteFile(p, []byte(strings.Replace(c.json, "%q", `"`+secret+`"`, 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := Load(p)
			if c.errWant != "" {
				if err == nil || !strings.Contains(err.Error(), c.errWant) {
					t.Fatalf("error %v, want it to contain %q", err, c.errWant)
				}
				if strings.Contains(err.Error(), token) || (c.content != "\n" && c.content != "" && strings.Contains(err.Error(), strings.TrimSpace(c.content))) {
					t.Errorf("error quotes the secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.check(cfg); got != token {
				t.Errorf("secret %q, want %q", got, token)
			}
		})
	}
}

// TestSecretFilesReadOnEveryLoad: a second Load (what a reload does)
// sees the file's new content.
func TestSecretFilesReadOnEveryLoad(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "token")
	p := filepath.Join(dir, "edge.json")
	if err := os.WriteFile(p, []byte(`{"admin_token_file": "`+secret+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"first-admin-token-0123", "second-admin-token-0123"} {
		if err := os.WriteFile(secret, []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.AdminToken != v {
			t.Errorf("admin token %q, want %q", cfg.AdminToken, v)
		}
	}
}

// TestWatchedFiles: the config file and every *_file it names.
func TestWatchedFiles(t *testing.T) {
	c := Default()
	c.AdminTokenFile = "/run/secrets/admin_token"
	c.Redis.PasswordFile = "/run/secrets/./redis_password"
	got := strings.Join(c.WatchedFiles("/etc/edge/config.json"), ",")
	if want := "/etc/edge/config.json,/run/secrets/admin_token,/run/secrets/redis_password"; got != want {
		t.Errorf("watched %s, want %s", got, want)
	}
	if c.WatchedFiles("") != nil {
		t.Error("no config file: nothing to watch")
	}
}
