package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestReloadAppliesLiveKeys: keys configs/README.md marks R (and the
// README's "Live config reload" lists) take effect at the next request
// after a reload, with no restart-only warning: server.gzip_min_bytes
// (compression on, then off), rate_limit.costs (the route's edge-cost in
// RateLimit-Policy) and log.access_log (access lines, then none). The
// other live keys have tests of their own (TestReloadChangesTTLAndLimit,
// TestReloadChangesMaxRefreshes, TestReloadChangesRedisDealerBudget,
// TestReloadNotFoundTTL, TestDeprecationFromConfig) and
// configs.TestReloadInstallsExactlyTheReloadableFields checks that each
// reaches what a reload installs.
func TestReloadAppliesLiveKeys(t *testing.T) {
	const file = `{"watch_interval": "0s", "server": {"gzip_min_bytes": %d}, "rate_limit": {"costs": {"inventory_listing": %d}}, "log": {"access_log": %v}}`
	cfg := filepath.Join(t.TempDir(), "edge.json")
	writeConfig(t, cfg, fmt.Sprintf(file, 1, 1, true))
	e := startEdge(t, "--demo", "--config", cfg)
	accessLines := func() int { return strings.Count(e.stderr.String(), `"msg":"access"`) }

	r := e.get("/dealer/REWIND/listing?page_size=1", "demo-key-alpha", "Accept-Encoding", "gzip")
	if r.status != 200 || r.header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("before: %d, Content-Encoding %q; want a gzip 200", r.status, r.header.Get("Content-Encoding"))
	}
	if p := r.header.Get("RateLimit-Policy"); strings.Contains(p, "edge-cost") {
		t.Fatalf("before: RateLimit-Policy %q has an edge-cost at cost 1", p)
	}
	if accessLines() == 0 {
		t.Fatal("before: no access line with log.access_log on")
	}

	writeConfig(t, cfg, fmt.Sprintf(file, 0, 7, false))
	if rr := e.do("POST", e.admin+"/admin/reload"); rr.status != 200 {
		t.Fatalf("reload: %d %s", rr.status, rr.body)
	}
	lines := accessLines()
	r = e.get("/dealer/REWIND/listing?page_size=1", "demo-key-alpha", "Accept-Encoding", "gzip")
	if r.status != 200 || r.header.Get("Content-Encoding") != "" {
		t.Errorf("after: %d, Content-Encoding %q; want a plain 200 with gzip_min_bytes 0", r.status, r.header.Get("Content-Encoding"))
	}
	if p := r.header.Get("RateLimit-Policy"); !strings.Contains(p, "edge-cost=7") {
		t.Errorf("after: RateLimit-Policy %q, want edge-cost=7", p)
	}
	_ = e.get("/dealer/REWIND/listing?page_size=2", "demo-key-alpha")
	if n := accessLines(); n != lines {
		t.Errorf("after: %d access lines written with log.access_log off", n-lines)
	}
	if strings.Contains(e.stderr.String(), "take effect only at restart") {
		t.Errorf("a reload of live keys warned of restart-only fields:\n%s", e.stderr.String())
	}
}
