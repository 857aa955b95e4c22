package metricnames

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dealer-edge/dealer-edge/deploy/internal/edgeproc"
)

// docMetric is one metric of the README's metrics table: its type (the
// first word of the type column) and its labels, each with the values
// the row lists (none when it lists none).
type docMetric struct {
	typ    string
	labels map[string][]string
}

var (
	docNameRE  = regexp.MustCompile("`([a-z0-9_*]+)`")
	docLabelRE = regexp.MustCompile(`^([a-z_]+)(?:\s*\((.*)\))?$`)
	typeRE     = regexp.MustCompile(`^# TYPE (\S+) (\S+)`)
)

// readmeMetrics parses the table of the README's "### Metrics" section.
func readmeMetrics(t *testing.T) map[string]docMetric {
	raw, err := os.ReadFile(filepath.Join(edgeproc.RepoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(raw), "\n### Metrics\n")
	if !ok {
		t.Fatal("README has no ### Metrics section")
	}
	sec, _, _ = strings.Cut(sec, "\n### ")
	out := map[string]docMetric{}
	for _, line := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), "|")
		if len(cells) < 4 {
			t.Errorf("README metrics row with %d cells: %s", len(cells), line)
			continue
		}
		d := docMetric{typ: strings.Fields(cells[1] + " -")[0], labels: map[string][]string{}}
		for _, l := range splitTop(strings.TrimSpace(cells[2])) {
			m := docLabelRE.FindStringSubmatch(l)
			if m == nil {
				t.Errorf("README metrics row: label %q not understood: %s", l, line)
				continue
			}
			var vals []string
			for _, v := range docNameRE.FindAllStringSubmatch(m[2], -1) {
				vals = append(vals, v[1])
			}
			d.labels[m[1]] = vals
		}
		for _, n := range docNameRE.FindAllStringSubmatch(cells[0], -1) {
			out[n[1]] = d
		}
	}
	if len(out) < 40 {
		t.Fatalf("only %d metrics in the README's table", len(out))
	}
	return out
}

// splitTop splits s at the commas outside parentheses.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if rest := strings.TrimSpace(s[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// notInDemoScrape are documented families the scrapes do not export:
// failed accepts, an embedded Redis that never evicted, and tracing's
// dropped spans (exported only while tracing is on; cmd/dealer-edge's
// TestTracingDroppedSpansMetric reads its series from a traced edge). The
// TLS families come from the second, TLS, edge (driveTLSEdge) since
// 2026-11-29: before, their labels and values in the rules, the panels and
// the README went unchecked.
var notInDemoScrape = []string{
	"edge_listener_accept_errors_total", "edge_embedded_redis_evicted_keys_total",
	"edge_trace_spans_dropped_total", "edge_trace_client_sampled_capped_total",
	"go_*", "process_*",
}

// TestReadmeMetricsTableMatchesExport compares the README's metrics table,
// the operator's reference, with what the real edge exports after traffic
// of every kind: every exported edge_ family is documented with its type and
// exactly its labels, every value a documented label lists covers what is
// exported, and every documented family is exported (except the few a
// --demo run cannot make). docs/runbook.md names only documented metrics.
func TestReadmeMetricsTableMatchesExport(t *testing.T) {
	doc := readmeMetrics(t)
	ex, text := scrapeEdge(t)
	types := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		if m := typeRE.FindStringSubmatch(l); m != nil {
			types[m[1]] = m[2]
		}
	}
	family := func(series string) string {
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(series, suf); ok && types[b] == "histogram" {
				return b
			}
		}
		return series
	}
	seen := map[string]bool{}
	for _, series := range slices.Sorted(func(yield func(string) bool) {
		for k := range ex {
			if !yield(k) {
				return
			}
		}
	}) {
		name := family(series)
		if !strings.HasPrefix(name, "edge_") {
			continue
		}
		seen[name] = true
		d, ok := doc[name]
		if !ok {
			t.Errorf("%s is exported but not in the README's metrics table", name)
			continue
		}
		if typ := types[name]; typ != d.typ {
			t.Errorf("%s: the README says %s, the edge exports a %s", name, d.typ, typ)
		}
		for l, vals := range ex[series] {
			if l == "le" {
				continue
			}
			dv, ok := d.labels[l]
			if !ok {
				t.Errorf("%s: exported label %q is not in the README's row", name, l)
				continue
			}
			for v := range vals {
				if len(dv) > 0 && !slices.Contains(dv, v) {
					t.Errorf("%s: exported %s=%q is not among the README's values %v", name, l, v, dv)
				}
			}
		}
		for l := range d.labels {
			if _, ok := ex[series][l]; !ok {
				t.Errorf("%s: the README lists label %q, the edge's series have none", name, l)
			}
		}
	}
	for name := range doc {
		if !seen[name] && !slices.Contains(notInDemoScrape, name) {
			t.Errorf("%s is in the README's metrics table but the edge does not export it", name)
		}
	}
	rb, err := os.ReadFile(filepath.Join(edgeproc.RepoRoot(), "docs", "runbook.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\bedge_[a-z0-9_]+`).FindAllString(string(rb), -1) {
		if _, ok := doc[m]; !ok {
			t.Errorf("docs/runbook.md names %s, which is not in the README's metrics table", m)
		}
	}
}

// TestCodeMetricNamesAreDocumented: every edge_ metric name the edge's code
// spells (a string literal of a series or family, outside tests, the
// benchmarks and deploy/) is in the README's metrics table, and every row
// of the table is spelt somewhere in that code. The scrape comparison
// above cannot see a family created lazily on an event its traffic does
// not cause (a failed accept, an eviction): this one does, by name.
func TestCodeMetricNamesAreDocumented(t *testing.T) {
	doc := readmeMetrics(t)
	root := edgeproc.RepoRoot()
	nameRE := regexp.MustCompile("[\"`](edge_[a-z0-9_]+)")
	inCode := map[string]string{}
	for _, dir := range []string{"aggregator", "cache", "cmd", "internal", "listener", "publicshape", "tracing", "upstream"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range nameRE.FindAllStringSubmatch(string(b), -1) {
				inCode[m[1]] = path
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(inCode) < 40 {
		t.Fatalf("only %d metric names found in the code", len(inCode))
	}
	for _, name := range slices.Sorted(maps.Keys(inCode)) {
		family := name
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(name, suf); ok {
				if _, documented := doc[b]; documented {
					family = b
				}
			}
		}
		if _, ok := doc[family]; !ok {
			t.Errorf("%s (%s) is not in the README's metrics table", name, inCode[name])
		}
	}
	for name := range doc {
		if _, ok := inCode[name]; !ok && !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") {
			t.Errorf("the README's metrics table lists %s, which the edge's code does not spell", name)
		}
	}
}
