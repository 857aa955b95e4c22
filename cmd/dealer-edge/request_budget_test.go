package main

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// TestSharedFillsGetTheWholeRequestBudget: server.request_timeout is the
// budget of one request's upstream work (configs/README.md; reloadable),
// and it may be longer than the cache's 5 s refresh timeout when the
// upstream timeouts are (it must exceed their longest chain). A cached
// route's fill is a shared fill, whose context deadline was the later of
// its caller's (requests carry none) and now + the cache's refresh
// timeout: with request_timeout 7s and an inventory call taking 5.3 s
// (inventory timeout 6s), the listing was answered 503 after 5.0 s
// (tried with the fake's latency before this change), and background
// refreshes were cut the same way. The cache's refresh timeout now
// follows request_timeout, at start and on reload.
func TestSharedFillsGetTheWholeRequestBudget(t *testing.T) {
	const file = `{"watch_interval": "0s", "server": {"request_timeout": %q}, "upstream": {"timeouts": {"inventory": "8s"}}}`
	cfg := filepath.Join(t.TempDir(), "edge.json")
	writeConfig(t, cfg, fmt.Sprintf(file, "9s"))
	e := startEdge(t, "--demo", "--config", cfg)
	if got := e.app.cache.RefreshTimeout(); got < 9*time.Second {
		t.Errorf("request_timeout 9s: the cache bounds shared fills and refreshes at %v", got)
	}
	writeConfig(t, cfg, fmt.Sprintf(file, "12s"))
	if r := e.do("POST", e.admin+"/admin/reload"); r.status != 200 {
		t.Fatalf("reload: %d %s", r.status, r.body)
	}
	if got := e.app.cache.RefreshTimeout(); got < 12*time.Second {
		t.Errorf("request_timeout reloaded to 12s: the cache bounds shared fills and refreshes at %v", got)
	}
}
