package metricnames

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/dealer-edge/dealer-edge/deploy/internal/edgeproc"
)

// Every metric docs/runbook.md tells the on-call engineer to look at is on
// the dashboard or read by a rule, so that it is one click away when the
// page comes. Until 2026-11-27 EdgeKeyIndexNotFresh's "Look first" named
// edge_auth_index_age_seconds, edge_auth_index_sync_errors_total,
// edge_auth_index_resyncs_total and edge_auth_lookup_budget_exceeded_total,
// and no panel showed any of them (nor the authentication results).
func TestRunbookMetricsAreOnTheDashboard(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(deployDir, "grafana", "dealer-edge.json"))
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, e := range dashboardExprs(t, raw) {
		collectNames(e, used)
	}
	for _, g := range loadRules(t).Groups {
		for _, r := range g.Rules {
			collectNames(r.Expr, used)
		}
	}
	rb, err := os.ReadFile(filepath.Join(edgeproc.RepoRoot(), "docs", "runbook.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\bedge_[a-z0-9_]+`).FindAllString(string(rb), -1) {
		if !used[m] && !used[m+"_bucket"] {
			t.Errorf("docs/runbook.md points at %s, which no dashboard panel or rule shows", m)
		}
	}
}
