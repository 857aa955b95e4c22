package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// kubeletVolume lays out a directory as the kubelet does for a ConfigMap
// or Secret volume: each key is a link through ..data, which points at a
// timestamped directory holding the real files.
type kubeletVolume struct {
	t   *testing.T
	dir string
	gen int
}

func newKubeletVolume(t *testing.T, files map[string]string) *kubeletVolume {
	v := &kubeletVolume{t: t, dir: t.TempDir()}
	v.update(files)
	for name := range files {
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(v.dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

// update writes the files into a new timestamped directory and swaps
// ..data to it atomically (a new link renamed over the old one), then
// removes the old directory: the kubelet's AtomicWriter.
func (v *kubeletVolume) update(files map[string]string) {
	v.t.Helper()
	v.gen++
	ts := fmt.Sprintf("..2026_11_23_21_%02d_00.%09d", v.gen, v.gen)
	if err := os.Mkdir(filepath.Join(v.dir, ts), 0o755); err != nil {
		v.t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(v.dir, ts, name), []byte(body), 0o644); err != nil {
			v.t.Fatal(err)
		}
	}
	old, _ := os.Readlink(filepath.Join(v.dir, "..data"))
	tmp := filepath.Join(v.dir, "..data_tmp")
	if err := os.Symlink(ts, tmp); err != nil {
		v.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(v.dir, "..data")); err != nil {
		v.t.Fatal(err)
	}
	if old != "" {
		if err := os.RemoveAll(filepath.Join(v.dir, old)); err != nil {
			v.t.Fatal(err)
		}
	}
}

// waitFor polls cond until it holds or 5 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitWithin(t, 5*time.Second, what, cond)
}

// waitWithin polls cond every 20 ms until it holds, failing t once d has
// passed.
func waitWithin(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (%v)", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

const watchConfig = `{"watch_interval": "50ms", "cache": {"routes": {"inventory_listing": {"ttl": "%s"}}}}`

// TestReloadOnConfigMapSwap: a ConfigMap update (the kubelet's ..data
// swap) is noticed and reloaded as on SIGHUP: the new TTL serves, the
// reload is counted; a swap to an invalid config is rejected and counted,
// the config in force stays; a swap back to a good one applies again.
func TestReloadOnConfigMapSwap(t *testing.T) {
	vol := newKubeletVolume(t, map[string]string{"config.json": fmt.Sprintf(watchConfig, "300s"), "other": "a"})
	e := startEdge(t, "--demo", "--config", filepath.Join(vol.dir, "config.json"))
	ok := `edge_config_reloads_total{result="ok"}`
	bad := `edge_config_reloads_total{result="error"}`
	if a := maxAge(t, e.get("/dealer/NOS/listing?page_size=1", "demo-key-alpha")); a < 290 {
		t.Fatalf("max-age %d at start, want about 300", a)
	}
	m0 := e.scrape()

	// Another key of the same ConfigMap changes: config.json resolves to
	// a new directory with the same bytes, nothing to reload.
	vol.update(map[string]string{"config.json": fmt.Sprintf(watchConfig, "300s"), "other": "b"})
	time.Sleep(300 * time.Millisecond)
	if m := e.scrape(); m[ok] != m0[ok] || m[bad] != m0[bad] {
		t.Errorf("reloaded although config.json's contents did not change: ok %v -> %v", m0[ok], m[ok])
	}

	vol.update(map[string]string{"config.json": fmt.Sprintf(watchConfig, "7s"), "other": "b"})
	waitFor(t, "the reload after the swap", func() bool { return e.scrape()[ok] == m0[ok]+1 })
	if a := maxAge(t, e.get("/dealer/NOS/listing?page_size=2", "demo-key-alpha")); a > 7 {
		t.Errorf("max-age %d after the swap, want at most 7", a)
	}

	vol.update(map[string]string{"config.json": `{"watch_interval": "50ms", "rate_limit": {"fail_mode": "sometimes"}}`, "other": "b"})
	waitFor(t, "the rejected reload", func() bool { return e.scrape()[bad] == m0[bad]+1 })
	if a := maxAge(t, e.get("/dealer/NOS/listing?page_size=3", "demo-key-alpha")); a > 7 {
		t.Errorf("max-age %d after a rejected swap, want the config in force (7s)", a)
	}
	if !strings.Contains(e.stderr.String(), "rate_limit.fail_mode") {
		t.Error("the rejection does not name the field in the log")
	}

	vol.update(map[string]string{"config.json": fmt.Sprintf(watchConfig, "4s"), "other": "b"})
	waitFor(t, "the reload after the fix", func() bool { return e.scrape()[ok] == m0[ok]+2 })
	if a := maxAge(t, e.get("/dealer/NOS/listing?page_size=4", "demo-key-alpha")); a > 4 {
		t.Errorf("max-age %d after the fix, want at most 4", a)
	}
}

// TestSecretFilesAtStartAndReload: the admin token comes from a mounted
// Secret; it guards the admin endpoints, is never logged, and a rotated
// Secret is read on the reload its change triggers (named, not quoted, as
// a field that takes effect at restart).
func TestSecretFilesAtStartAndReload(t *testing.T) {
	const tok1, tok2 = "first-admin-token-from-a-secret", "second-admin-token-from-a-secret"
	secrets := newKubeletVolume(t, map[string]string{"admin_token": tok1 + "\n"})
	cfg := filepath.Join(t.TempDir(), "edge.json")
	writeConfig(t, cfg, `{"watch_interval": "50ms", "admin_token_file": "`+filepath.Join(secrets.dir, "admin_token")+`"}`)
	e := startEdge(t, "--demo", "--config", cfg)
	if r := e.do("GET", e.admin+"/metrics"); r.status != 401 {
		t.Fatalf("/metrics without the token: %d", r.status)
	}
	if r := e.do("GET", e.admin+"/metrics", "Authorization", "Bearer "+tok1); r.status != 200 {
		t.Fatalf("/metrics with the token from the file: %d", r.status)
	}
	count := func() float64 {
		r := e.do("GET", e.admin+"/metrics", "Authorization", "Bearer "+tok1)
		for _, ln := range strings.Split(string(r.body), "\n") {
			if v, ok := strings.CutPrefix(ln, `edge_config_reloads_total{result="ok"} `); ok {
				var f float64
				fmt.Sscan(v, &f)
				return f
			}
		}
		return -1
	}
	before := count()
	secrets.update(map[string]string{"admin_token": tok2 + "\n"})
	waitFor(t, "the reload after the Secret changed", func() bool { return count() == before+1 })
	log := e.stderr.String()
	if !strings.Contains(log, "take effect only at restart") || !strings.Contains(log, "admin_token") {
		t.Errorf("the changed secret is not named in the reload warning:\n%s", log)
	}
	for _, s := range []string{tok1, tok2} {
		if strings.Contains(log, s) {
			t.Errorf("a secret is in the log:\n%s", log)
		}
	}
}

// TestSdNotify: under systemd (Type=notify) the edge says READY=1 once it
// serves and STOPPING=1 when it begins to shut down, on the datagram
// socket named by NOTIFY_SOCKET; without it nothing is sent.
func TestSdNotify(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	recv := func() string {
		t.Helper()
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		b := make([]byte, 4096)
		n, err := conn.Read(b)
		if err != nil {
			t.Fatalf("no notification: %v", err)
		}
		return string(b[:n])
	}
	sigs, ready, exit := make(chan os.Signal, 2), make(chan *app, 1), make(chan int, 1)
	env := func(k string) string {
		if k == "NOTIFY_SOCKET" {
			return sock
		}
		return ""
	}
	go func() {
		exit <- run([]string{"--demo", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"}, io.Discard, io.Discard,
			&hooks{ready: ready, signals: sigs, getenv: env})
	}()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("edge did not start")
	}
	if m := recv(); !strings.Contains(m, "READY=1") {
		t.Errorf("first notification %q, want READY=1", m)
	}
	sigs <- syscall.SIGTERM
	if m := recv(); !strings.Contains(m, "STOPPING=1") {
		t.Errorf("notification %q, want STOPPING=1", m)
	}
	if code := <-exit; code != 0 {
		t.Errorf("exit %d", code)
	}

	if err := newNotifier(func(string) string { return "" }).notify("READY=1"); err != nil {
		t.Errorf("without NOTIFY_SOCKET: %v", err)
	}
}

// TestChangeBeforeTheWatchStartsReloads: a file changed after the edge
// read its config at start and before the watch took its first look
// reloads at the watch's first tick. The watch used to take its first
// fingerprints when it started, after the read: the change was counted as
// already applied, and the edge served the config it had read until the
// file changed again. Now the watch counts from the fingerprints taken
// before the first read. Real files; the change is made by the hook that
// runs between start and the watch. A file left alone does not reload.
func TestChangeBeforeTheWatchStartsReloads(t *testing.T) {
	const tok1, tok2 = "first-admin-token-from-a-secret", "second-admin-token-from-a-secret"
	cases := []struct {
		name string
		// change rewrites cfg or token (nil: nothing changes).
		change func(t *testing.T, cfg, token string)
		// check, when set, holds once the edge serves what change wrote.
		check      func(e *edge) bool
		wantReload bool
	}{
		{
			name: "config file",
			change: func(t *testing.T, cfg, token string) {
				writeConfig(t, cfg, `{"watch_interval": "50ms", "admin_token_file": "`+token+`", "cache": {"routes": {"inventory_listing": {"ttl": "7s"}}}}`)
			},
			check: func(e *edge) bool {
				return maxAge(e.t, e.get("/dealer/NOS/listing?page_size=1", "demo-key-alpha")) <= 7
			},
			wantReload: true,
		},
		{
			name: "secret file the config names",
			change: func(t *testing.T, cfg, token string) {
				if err := os.WriteFile(token, []byte(tok2+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			},
			// The admin token takes effect at restart: the reload is
			// what shows.
			wantReload: true,
		},
		{name: "nothing changed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg, token := filepath.Join(dir, "edge.json"), filepath.Join(dir, "admin_token")
			if err := os.WriteFile(token, []byte(tok1+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			writeConfig(t, cfg, `{"watch_interval": "50ms", "admin_token_file": "`+token+`", "cache": {"routes": {"inventory_listing": {"ttl": "300s"}}}}`)
			h := &hooks{beforeWatch: func() {
				if tc.change != nil {
					tc.change(t, cfg, token)
				}
			}}
			e := startEdgeHooks(t, h, "--demo", "--config", cfg)
			reloads := func(n int) bool {
				r := e.do("GET", e.admin+"/metrics", "Authorization", "Bearer "+tok1)
				return r.status == 200 && strings.Contains(string(r.body), fmt.Sprintf("edge_config_reloads_total{result=\"ok\"} %d\n", n))
			}
			if !tc.wantReload {
				time.Sleep(300 * time.Millisecond) // six ticks
				if !reloads(0) {
					t.Error("a reload with no file changed")
				}
				return
			}
			waitFor(t, "the reload of the file changed before the watch started", func() bool { return reloads(1) })
			if tc.check != nil && !tc.check(e) {
				t.Error("the reloaded config is not in force")
			}
		})
	}
}
