package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestVersionFlag: --version prints the link-time identity (what
// deploy/image/build.sh sets) and the Go version, and exits 0.
func TestVersionFlag(t *testing.T) {
	cases := []struct {
		name                string
		version, commit, at string
		want                []string
	}{
		{"linked", "v1.4.0", "0123abcd", "2026-11-23T21:00:00Z", []string{"dealer-edge v1.4.0", "commit 0123abcd", "built 2026-11-23T21:00:00Z", runtime.Version()}},
		{"plain go build", "", "", "", []string{"dealer-edge devel", "commit unknown", runtime.Version()}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old := [3]string{version, commit, buildTime}
			version, commit, buildTime = c.version, c.commit, c.at
			t.Cleanup(func() { version, commit, buildTime = old[0], old[1], old[2] })
			var out bytes.Buffer
			if code := run([]string{"--version"}, &out, io.Discard, nil); code != 0 {
				t.Fatalf("exit %d", code)
			}
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("%q does not say %q", out.String(), w)
				}
			}
		})
	}
}

// TestBuildIdentityExposed: the startup log line and the edge_build_info
// gauge carry the same identity as --version.
func TestBuildIdentityExposed(t *testing.T) {
	old := [3]string{version, commit, buildTime}
	version, commit, buildTime = "v9.8.7-test", "feedc0de", "2026-11-23T21:00:00Z"
	t.Cleanup(func() { version, commit, buildTime = old[0], old[1], old[2] })
	e := startEdge(t, "--demo")
	series := `edge_build_info{version="v9.8.7-test",commit="feedc0de",goversion="` + runtime.Version() + `"}`
	if v := e.scrape()[series]; v != 1 {
		t.Errorf("%s = %v", series, v)
	}
	log := e.stderr.String()
	for _, w := range []string{`"msg":"starting"`, `"version":"v9.8.7-test"`, `"commit":"feedc0de"`, `"build_time":"2026-11-23T21:00:00Z"`, `"go_version":"` + runtime.Version() + `"`} {
		if !strings.Contains(log, w) {
			t.Errorf("startup log does not say %s:\n%s", w, log)
		}
	}
}

// TestCheckConfig: --check-config runs start-up's validation (file,
// secrets from files, flags, the Sentinel check) and nothing else: 0 and a
// line on stdout, or 2 and the field-named error on stderr.
func TestCheckConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	token := write("admin_token", "admin-token-from-file-0123\n")
	cases := []struct {
		name  string
		args  []string
		code  int
		field string // in stderr when code is 2
	}{
		{"example", []string{"--check-config", "../../configs/example.json", "--upstream", "http://127.0.0.1:9"}, 0, ""},
		{"demo", []string{"--check-config", "../../configs/demo.json", "--demo"}, 0, ""},
		{"demo file without --demo", []string{"--check-config", "../../configs/demo.json"}, 2, "upstream.base_url"},
		{"no upstream", []string{"--check-config", write("none.json", `{}`)}, 2, "upstream.base_url"},
		{"upstream by flag", []string{"--check-config", write("none2.json", `{}`), "--upstream", "http://127.0.0.1:9"}, 0, ""},
		{"bad value", []string{"--check-config", write("bad.json", `{"rate_limit": {"fail_mode": "sometimes"}}`)}, 2, "rate_limit.fail_mode"},
		{"unknown field", []string{"--check-config", write("typo.json", `{"lisen": "0.0.0.0:8080"}`)}, 2, `unknown field "lisen"`},
		{"missing file", []string{"--check-config", filepath.Join(dir, "nope.json")}, 2, "no such file"},
		{"admin off loopback without token", []string{"--check-config", write("adm.json", `{"admin_listen": "0.0.0.0:9091"}`)}, 2, "admin_token"},
		{"admin token from a file", []string{"--check-config", write("admf.json", `{"admin_listen": "0.0.0.0:9091", "admin_token_file": "`+token+`", "upstream": {"base_url": "http://127.0.0.1:9"}}`)}, 0, ""},
		{"token and token file", []string{"--check-config", write("both.json", `{"admin_token": "another-token-0123456", "admin_token_file": "`+token+`"}`)}, 2, "admin_token_file"},
		{"secret file missing", []string{"--check-config", write("nosecret.json", `{"redis": {"password_file": "`+filepath.Join(dir, "nope")+`"}}`)}, 2, "redis.password_file"},
		{"sentinel without addresses", []string{"--check-config", write("sentinel.json", `{"redis": {"master_name": "mymaster"}}`)}, 2, "redis.master_name"},
		{"sentinel, addresses by flag", []string{"--check-config", write("sentinel2.json", `{"redis": {"master_name": "mymaster"}}`), "--redis", "10.0.0.1:26379", "--upstream", "http://127.0.0.1:9"}, 0, ""},
		{"flag makes it invalid", []string{"--check-config", "../../configs/example.json", "--admin-listen", "0.0.0.0:9091"}, 2, "admin_token"},
		// The file is validated with the flags applied: a flag replaces a
		// value the file alone fails on (before 2026-11-29 the file was
		// validated first, and the flag could not rescue it).
		{"flag makes it valid", []string{"--check-config", write("adm2.json", `{"admin_listen": "0.0.0.0:9091", "upstream": {"base_url": "http://127.0.0.1:9"}}`), "--admin-listen", "127.0.0.1:9091"}, 0, ""},
		{"flag replaces a malformed address", []string{"--check-config", write("lis.json", `{"listen": "8080", "upstream": {"base_url": "http://127.0.0.1:9"}}`), "--listen", "127.0.0.1:8080"}, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(c.args, &stdout, &stderr, nil)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, c.code, stderr.String())
			}
			if c.code == 0 && !strings.Contains(stdout.String(), "is valid") {
				t.Errorf("stdout %q", stdout.String())
			}
			if c.code == 2 && !strings.Contains(stderr.String(), c.field) {
				t.Errorf("stderr %q does not name %s", stderr.String(), c.field)
			}
			if strings.Contains(stdout.String()+stderr.String(), "admin-token-from-file") {
				t.Error("the secret was printed")
			}
		})
	}
}
