package main

import (
	"fmt"
	"os"
	"path/filepath"
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
