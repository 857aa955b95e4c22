package metricnames

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/dealer-edge/dealer-edge/deploy/grafana/dashboard"
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

// Each alert's runbook_url names its own entry of docs/runbook.md: the
// anchor GitHub makes of a "## <alert>" heading there (lower case), and
// every entry of the runbook is an alert of the rules (a renamed alert
// leaves neither a link to nowhere nor a stale entry). The older check
// compared the URL's prefix with the alert's name only, not with the
// runbook's headings.
func TestRunbookURLsNameRunbookEntries(t *testing.T) {
	rb, err := os.ReadFile(filepath.Join(edgeproc.RepoRoot(), "docs", "runbook.md"))
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^## (\S+)\s*$`).FindAllStringSubmatch(string(rb), -1) {
		entries[m[1]] = true
	}
	alerts := map[string]bool{}
	for _, g := range loadRules(t).Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			alerts[r.Alert] = true
			if !entries[r.Alert] {
				t.Errorf("alert %s has no entry (## %s) in docs/runbook.md", r.Alert, r.Alert)
			}
			if want := dashboard.RunbookURL + "#" + githubAnchor(r.Alert); r.Annotations["runbook_url"] != want {
				t.Errorf("alert %s: runbook_url %q, want %q", r.Alert, r.Annotations["runbook_url"], want)
			}
		}
	}
	for e := range entries {
		if !alerts[e] {
			t.Errorf("docs/runbook.md has an entry ## %s for no alert of the rules", e)
		}
	}
}

// githubAnchor is the fragment GitHub gives a heading: lower case, spaces
// to hyphens, other punctuation dropped.
func githubAnchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Every name docs/runbook.md quotes for the on-call engineer to find
// ("Look first": dashboard "Hit ratio by route", the status page's "Rate
// limiter" card, the event line "..."), is one that exists: a panel or row
// title or a legend of the dashboard, or a string of the edge's code (the
// status page's HTML, log messages), or a phrase of the README. A renamed panel
// otherwise sends the engineer looking for a name that is not there.
func TestRunbookQuotesExistingNames(t *testing.T) {
	root := edgeproc.RepoRoot()
	rb, err := os.ReadFile(filepath.Join(root, "docs", "runbook.md"))
	if err != nil {
		t.Fatal(err)
	}
	var known strings.Builder
	for _, p := range dashboard.Build().Panels {
		known.WriteString(p.Title + "\x00")
		for _, tg := range p.Targets {
			known.WriteString(tg.LegendFormat + "\x00")
		}
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	known.Write(readme)
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "deploy" || d.Name() == "docs" || d.Name() == "bench") {
			return filepath.SkipDir
		}
		if ext := filepath.Ext(path); !d.IsDir() && (ext == ".go" || ext == ".html" || ext == ".js") && !strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			known.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	all := known.String()
	n := 0
	for _, m := range regexp.MustCompile(`"([^"\n$/]{3,80})"`).FindAllStringSubmatch(string(rb), -1) {
		n++
		if !strings.Contains(all, m[1]) {
			t.Errorf("docs/runbook.md quotes %q, which is no dashboard panel, row or legend, no string of the edge's code and no phrase of the README", m[1])
		}
	}
	if n < 10 {
		t.Fatalf("only %d quoted names found in docs/runbook.md", n)
	}
}
