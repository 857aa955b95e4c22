package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRedisAddrUserinfoNotLogged: configs.Validate treats a
// redis.addrs entry holding "@" as one that "may hold a password" (it
// does not quote it in its error), but only when the entry is otherwise
// malformed: "password@host:port" passes as host:port (a host
// "password@host" no resolver knows), --check-config calls the file valid,
// and the edge prints the entry, password included, in its start log.
func TestRedisAddrUserinfoNotLogged(t *testing.T) {
	const pass = "s3cret-redis-pass"
	cfg := filepath.Join(t.TempDir(), "edge.json")
	writeConfig(t, cfg, `{"redis": {"addrs": ["`+pass+`@127.0.0.1:1"], "timeout": "20ms"}}`)
	var out, errb bytes.Buffer
	code := run([]string{"--check-config", cfg, "--demo"}, &out, &errb, nil)
	if strings.Contains(out.String()+errb.String(), pass) {
		t.Errorf("--check-config printed the password: %s%s", out.String(), errb.String())
	}
	if code == 2 {
		return // refused without the value: fine
	}
	e := startEdge(t, "--demo", "--config", cfg)
	time.Sleep(300 * time.Millisecond)
	if log := e.stderr.String(); strings.Contains(log, pass) {
		for _, ln := range strings.Split(log, "\n") {
			if strings.Contains(ln, pass) {
				t.Errorf("--check-config exit %d; the edge logged the password: %s", code, ln)
			}
		}
	}
}
