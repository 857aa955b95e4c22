package configs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// secret is one secret of the config: its value field and the field that
// names a file holding it.
type secret struct {
	field, fileField string
	value, file      *string
}

// secrets lists every secret that can come from a file.
func (c *Config) secrets() []secret {
	return []secret{
		{"admin_token", "admin_token_file", &c.AdminToken, &c.AdminTokenFile},
		{"auth.key_hash_secret", "auth.key_hash_secret_file", &c.Auth.KeyHashSecret, &c.Auth.KeyHashSecretFile},
		{"redis.password", "redis.password_file", &c.Redis.Password, &c.Redis.PasswordFile},
		{"redis.sentinel_password", "redis.sentinel_password_file", &c.Redis.SentinelPassword, &c.Redis.SentinelPasswordFile},
	}
}

// maxSecretBytes bounds a secret file: a token or password, never a
// document (a wrong path pointing at a big file fails fast).
const maxSecretBytes = 64 << 10

// ReadSecrets fills each secret whose *_file field is set from that file,
// with one trailing newline ("\n" or "\r\n") trimmed: how Kubernetes
// Secrets mounted as files and systemd credentials (LoadCredential=)
// arrive. Relative paths are read from the working directory. Setting a
// value in the file and its *_file too is an error (which one would win
// is a guess), and so is an empty or unreadable file; errors name the
// *_file field and the path, never the content. Load calls it, so start,
// reload and --check-config read the files alike.
//
// The default key_hash_secret is a placeholder: a key_hash_secret_file
// replaces it without counting as "both set".
func (c *Config) ReadSecrets() error {
	var errs []error
	def := Default()
	for _, s := range c.secrets() {
		if *s.file == "" {
			continue
		}
		if *s.value != "" && !(s.field == "auth.key_hash_secret" && *s.value == def.Auth.KeyHashSecret) {
			errs = append(errs, fmt.Errorf("%s: set either %s or %s, not both", s.fileField, s.field, s.fileField))
			continue
		}
		v, err := readSecretFile(*s.file)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.fileField, err))
			continue
		}
		*s.value = v
	}
	return errors.Join(errs...)
}

func readSecretFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		// The *PathError names the path and the reason; no content.
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSecretBytes+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > maxSecretBytes {
		return "", fmt.Errorf("%s: larger than %d bytes", path, maxSecretBytes)
	}
	v := strings.TrimSuffix(string(b), "\n")
	v = strings.TrimSuffix(v, "\r")
	if v == "" {
		return "", fmt.Errorf("%s: is empty", path)
	}
	return v, nil
}

// WatchedFiles returns the files whose change should reload the config:
// the config file itself and every *_file it names, as written (symbolic
// links are resolved by the watcher at each check, so a ConfigMap's or
// Secret's ..data swap is seen). configPath is the --config path.
func (c *Config) WatchedFiles(configPath string) []string {
	if configPath == "" {
		return nil
	}
	out := []string{configPath}
	for _, s := range c.secrets() {
		if *s.file != "" {
			out = append(out, *s.file)
		}
	}
	// A renewed TLS certificate is installed by the same reload.
	if c.TLS.CertFile != "" {
		out = append(out, c.TLS.CertFile, c.TLS.KeyFile)
	}
	for i, p := range out {
		out[i] = filepath.Clean(p)
	}
	return out
}

// NamedFiles returns WatchedFiles of the config file at path as it is
// written now, decoded leniently (no secret read, no validation): the
// files a reload of it depends on, also when that reload is rejected
// because one of them is not there yet. nil when the file cannot be read
// or is not JSON.
func NamedFiles(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	c := Default()
	if json.Unmarshal(b, c) != nil {
		return nil
	}
	return c.WatchedFiles(path)
}
