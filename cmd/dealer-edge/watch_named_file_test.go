package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestReloadWhenANamedSecretFileAppears: the watch covers every *_file the
// config file names as written, not only those of the config in force
// (README, Live config reload). A ConfigMap and a Secret reach a pod one
// after the other (the kubelet updates each volume on its own), so a new
// config can name a secret file that is not there yet: that reload is
// rejected, and it used to stay rejected, with its reloadable changes not
// applied and EdgeConfigReloadFailed firing, until the config file
// changed again, because the watch only read the files of the last good
// config. Now the file's arrival reloads; the wait for it costs one
// rejection, not one a tick.
func TestReloadWhenANamedSecretFileAppears(t *testing.T) {
	dir := t.TempDir()
	cfgPath, token := filepath.Join(dir, "config.json"), filepath.Join(dir, "admin-token")
	writeConfig(t, cfgPath, fmt.Sprintf(watchConfig, "300s"))
	e := startEdge(t, "--demo", "--config", cfgPath)
	ok := `edge_config_reloads_total{result="ok"}`
	bad := `edge_config_reloads_total{result="error"}`
	m0 := e.scrape()

	writeConfig(t, cfgPath, fmt.Sprintf(`{"watch_interval": "50ms", "admin_token_file": %q, "cache": {"routes": {"inventory_listing": {"ttl": "7s"}}}}`, token))
	waitFor(t, "the rejected reload (the token file is missing)", func() bool { return e.scrape()[bad] == m0[bad]+1 })
	time.Sleep(300 * time.Millisecond) // six ticks
	if m := e.scrape(); m[bad] != m0[bad]+1 || m[ok] != m0[ok] {
		t.Errorf("while the token file is missing: %v rejections, %v reloads; want 1 and 0", m[bad]-m0[bad], m[ok]-m0[ok])
	}

	if err := os.WriteFile(token, []byte("an-admin-token-of-32-characters!\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the reload once the token file is there", func() bool { return e.scrape()[ok] == m0[ok]+1 })
	if a := maxAge(t, e.get("/dealer/NOS/listing?page_size=1", "demo-key-alpha")); a > 7 {
		t.Errorf("max-age %d after the reload, want at most 7 (the new TTL)", a)
	}
}

// TestReloadWhenANamedFileAppearsBeforeTheTick: a reload started by
// /admin/reload (or SIGHUP) is rejected because the config names a secret
// file that is not there yet, and the file arrives before the watch's next
// tick. The watch reloads at that tick all the same, end to end: the
// config file it last read differs from the one on disk (this held before
// the watch counted a named file from the reload's read too; see
// TestWatchCountsANamedFileFromWhenTheReloadReadIt for the cases where the
// config file's change alone did not reload).
func TestReloadWhenANamedFileAppearsBeforeTheTick(t *testing.T) {
	dir := t.TempDir()
	cfgPath, token := filepath.Join(dir, "config.json"), filepath.Join(dir, "admin-token")
	writeConfig(t, cfgPath, `{"watch_interval": "1s"}`)
	e := startEdge(t, "--demo", "--config", cfgPath)
	ok := `edge_config_reloads_total{result="ok"}`
	m0 := e.scrape()

	writeConfig(t, cfgPath, fmt.Sprintf(`{"watch_interval": "1s", "admin_token_file": %q, "cache": {"routes": {"inventory_listing": {"ttl": "7s"}}}}`, token))
	if r := e.do("POST", e.admin+"/admin/reload"); r.status != 422 {
		t.Fatalf("/admin/reload with the token file missing: %d, want 422", r.status)
	}
	if err := os.WriteFile(token, []byte("an-admin-token-of-32-characters!\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tok := "Bearer an-admin-token-of-32-characters!"
	waitFor(t, "the reload once the token file is there", func() bool {
		r := e.do("GET", e.admin+"/metrics", "Authorization", tok)
		return r.status == 200 && strings.Contains(string(r.body), fmt.Sprintf("%s %v\n", ok, m0[ok]+1))
	})
}

// TestWatchCountsANamedFileFromWhenTheReloadReadIt: a file a reload named
// for the first time counts its changes from its state when that reload
// read it, not from the watch's next look at it. The watch used to take
// the file's state after the reload (a reload it started) or at its next
// tick (a reload by SIGHUP or /admin/reload): a secret file missing when
// the reload read it (rejected) and arriving before that look was
// recorded as already there, and the rejected reload was never retried.
// Real files in a temp dir; the reload is simulated as the app's reload
// does it (named files fingerprinted, then read).
func TestWatchCountsANamedFileFromWhenTheReloadReadIt(t *testing.T) {
	cases := []struct {
		name string
		// sighup: the reload is not the watch's: it runs before the
		// watch's next tick, with a config file the watch has already
		// read (the config was written after the edge read it at start
		// and before the watch's first look).
		sighup bool
	}{
		{"reload started by the watch, file arrives during it", false},
		{"reload by SIGHUP, file arrives before the tick", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg, secret := filepath.Join(dir, "config.json"), filepath.Join(dir, "secret")
			write := func(p, s string) {
				t.Helper()
				if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			write(cfg, "names nothing")
			var mu sync.Mutex
			var named []string
			var read map[string][32]byte
			files := func() []string {
				mu.Lock()
				defer mu.Unlock()
				return append([]string{cfg}, named...)
			}
			readFn := func() map[string][32]byte {
				mu.Lock()
				defer mu.Unlock()
				return read
			}
			// reload is the app's: it names secret (the config file now
			// does), fingerprints it before reading it, finds it missing
			// and is rejected; then the file arrives.
			reload := func() {
				mu.Lock()
				named = []string{secret}
				read = fingerprints([]string{secret})
				mu.Unlock()
				if _, err := os.Stat(secret); err != nil {
					write(secret, "the secret")
				}
			}
			reloads := make(chan struct{}, 16)
			onChange := func() {
				reload()
				reloads <- struct{}{}
			}
			if tc.sighup {
				write(cfg, "names secret")
			}
			w := startWatch(20*time.Millisecond, files, readFn, nil, onChange)
			defer w.close()
			if tc.sighup {
				reload()
			} else {
				write(cfg, "names secret")
				select {
				case <-reloads:
				case <-time.After(3 * time.Second):
					t.Fatal("no reload after the config changed")
				}
			}
			select {
			case <-reloads:
			case <-time.After(3 * time.Second):
				t.Fatal("the rejected reload was not retried once the secret file was there")
			}
		})
	}
}
