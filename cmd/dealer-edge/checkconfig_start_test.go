package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckConfigAgreesWithStart: --check-config validates a file
// exactly as start-up does (README, Build identity and config check): a
// malformed upstream.base_url and TLS files that do not exist are exit 2
// with the field named, and start-up refuses them naming the same field.
// Before 2026-11-27 they passed the check and failed only the start; a
// file without upstream.base_url (and no --upstream or --demo) did until
// 2026-11-29.
func TestCheckConfigAgreesWithStart(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		writeConfig(t, p, body)
		return p
	}
	cases := []struct {
		name, file, field string
		extra             []string
		// listeners replaces the start's --listen 127.0.0.1:0
		// --admin-listen off when set.
		listeners []string
	}{
		{"no base_url", write("none.json", `{}`), "upstream.base_url", nil, nil},
		{"base_url without scheme", write("u.json", `{"upstream": {"base_url": "internal-gw:9090"}}`), "upstream.base_url", nil, nil},
		{"base_url ftp", write("u2.json", `{"upstream": {"base_url": "ftp://internal-gw"}}`), "upstream.base_url", nil, nil},
		{"tls files missing", write("tls.json", `{"tls": {"cert_file": "`+filepath.Join(dir, "no.pem")+`", "key_file": "`+filepath.Join(dir, "no.key")+`"}}`), "tls.cert_file", []string{"--demo"}, nil},
		// Before 2026-11-29 only the host:port shape was checked.
		{"public port out of range", write("l.json", `{"listen": "127.0.0.1:99999"}`), "listen", []string{"--demo"}, []string{"--admin-listen", "off"}},
		{"admin port out of range", write("a.json", `{"admin_listen": "127.0.0.1:70000"}`), "admin_listen", []string{"--demo"}, []string{"--listen", "127.0.0.1:0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			check := run(append([]string{"--check-config", c.file}, c.extra...), &out, &errb, nil)
			checkMsg := strings.TrimSpace(out.String() + errb.String())
			out.Reset()
			errb.Reset()
			h := &hooks{signals: make(chan os.Signal, 1), getenv: func(string) string { return "" }}
			h.signals <- os.Interrupt // stop at once if it does start
			listeners := c.listeners
			if listeners == nil {
				listeners = []string{"--listen", "127.0.0.1:0", "--admin-listen", "off"}
			}
			start := run(append(append([]string{"--config", c.file}, listeners...), c.extra...), &out, &errb, h)
			startMsg := lastLine(errb.String())
			if check != 2 || start == 0 || !strings.Contains(checkMsg, c.field) || !strings.Contains(startMsg, c.field) {
				t.Errorf("--check-config exit %d (%q); start exit %d (%q); want 2 and a failed start, both naming %s", check, checkMsg, start, startMsg, c.field)
			}
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
