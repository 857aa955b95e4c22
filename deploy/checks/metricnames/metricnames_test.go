// Package metricnames checks the Grafana dashboard and the Prometheus
// rules against the metrics the real edge exports: every PromQL
// expression parses, and every metric and label it selects on exists in
// a scrape of a running dealer-edge, so renaming a metric or a label
// breaks this test rather than a dashboard or an alert in production.
package metricnames

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/dealer-edge/dealer-edge/deploy/grafana/dashboard"
	"github.com/dealer-edge/dealer-edge/deploy/internal/edgeproc"
)

var deployDir = filepath.Join(edgeproc.RepoRoot(), "deploy")

// exported maps each metric name of a scrape to the label names its
// series carry.
type exported map[string]map[string]bool

var (
	sampleRE = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? `)
	labelRE  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="(?:[^"\\]|\\.)*"`)
)

func parseScrape(text string) exported {
	ex := exported{}
	for _, l := range strings.Split(text, "\n") {
		m := sampleRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if ex[m[1]] == nil {
			ex[m[1]] = map[string]bool{}
		}
		for _, lm := range labelRE.FindAllStringSubmatch(m[2], -1) {
			ex[m[1]][lm[1]] = true
		}
	}
	return ex
}

// scrapeEdge runs the real edge, drives the traffic that creates its
// lazily created series (every route, an error, a tripped breaker) and
// returns what /metrics exports.
func scrapeEdge(t *testing.T) exported {
	e := edgeproc.Start(t)
	paths := []string{
		"/dealer/REWIND/listing?page_size=2",
		"/dealer/REWIND/listing?page_size=2",
		"/dealer/NOS/listing",
		"/dealer/content/hub",
		"/dealer/content/search?q=auto",
		"/dealer/content/news/listing",
		"/dealer/openapi.json",
		"/nope",
	}
	for _, p := range paths {
		e.Get(t, p)
	}
	e.Get(t, "/dealer/REWIND/listing", "not-a-key")
	// Trip the inventory breaker: misses (a new page each) while the
	// inventory service is down.
	e.Faults(t, "service=inventory&down=true")
	deadline := time.Now().Add(15 * time.Second)
	for page := 2; !strings.Contains(e.Scrape(t), "edge_upstream_breaker_transitions_total{"); page++ {
		if time.Now().After(deadline) {
			t.Fatal("the inventory breaker did not trip")
		}
		e.Get(t, fmt.Sprintf("/dealer/NLT/listing?page=%d", page))
	}
	e.Faults(t, "clear=true")
	ex := parseScrape(e.Scrape(t))
	if len(ex) < 40 {
		t.Fatalf("only %d metric names in the scrape", len(ex))
	}
	return ex
}

// vars are the dashboard's template variables, replaced by values that
// keep the expression valid PromQL.
var varRE = regexp.MustCompile(`\$(__rate_interval|__interval|__range)|\$\{?[a-zA-Z_]+\}?`)

func substitute(expr string) string {
	return varRE.ReplaceAllStringFunc(expr, func(v string) string {
		if strings.HasPrefix(v, "$__") {
			return "5m"
		}
		return ".*"
	})
}

// promql is the parser of Prometheus' default options (the ones its rule
// manager and promtool use).
var promql = parser.NewParser(parser.Options{})

// implicit labels are added by Prometheus to every scraped series.
var implicit = map[string]bool{"job": true, "instance": true, "__name__": true}

// checkExpr parses expr and reports each selected metric that the edge
// does not export (and is not recorded by the rules), and each label a
// selector matches on that the metric's series lack.
func checkExpr(expr string, ex exported, recorded map[string]bool) []string {
	e, err := promql.ParseExpr(substitute(expr))
	if err != nil {
		return []string{fmt.Sprintf("does not parse: %v", err)}
	}
	var probs []string
	names := 0
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		for _, m := range vs.LabelMatchers {
			if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
				name = m.Value
			}
		}
		if name == "" {
			probs = append(probs, "selector without a metric name: "+vs.String())
			return nil
		}
		names++
		if recorded[name] {
			return nil
		}
		lbls, ok := ex[name]
		if !ok {
			probs = append(probs, fmt.Sprintf("metric %s is not exported by the edge", name))
			return nil
		}
		for _, m := range vs.LabelMatchers {
			if !implicit[m.Name] && !lbls[m.Name] {
				probs = append(probs, fmt.Sprintf("metric %s has no label %q", name, m.Name))
			}
		}
		return nil
	})
	if names == 0 && len(probs) == 0 {
		probs = append(probs, "selects no metric")
	}
	return probs
}

// dashboardExprs returns every PromQL expression of the dashboard JSON:
// panel targets, annotation queries and the selectors inside the
// variables' label_values(...) queries.
func dashboardExprs(t *testing.T, raw []byte) map[string]string {
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	lv := regexp.MustCompile(`^label_values\((.*),\s*[a-zA-Z_]+\)$`)
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, c := range v {
				p := path + "." + k
				if s, ok := c.(string); ok && k == "expr" {
					out[p] = s
				}
				if s, ok := c.(string); ok && k == "query" && strings.HasPrefix(s, "label_values(") {
					m := lv.FindStringSubmatch(s)
					if m == nil {
						t.Errorf("%s: unexpected variable query %q", p, s)
						continue
					}
					out[p] = m[1]
				}
				walk(p, c)
			}
		case []any:
			for i, c := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), c)
			}
		}
	}
	walk("", doc)
	return out
}

func loadRules(t *testing.T) *rulefmt.RuleGroups {
	rg, errs := rulefmt.ParseFile(filepath.Join(deployDir, "prometheus", "dealer-edge.rules.yml"), false, model.UTF8Validation, promql, slog.New(slog.DiscardHandler))
	if len(errs) > 0 {
		t.Fatalf("rules: %v", errs)
	}
	return rg
}

func recordedNames(rg *rulefmt.RuleGroups) map[string]bool {
	rec := map[string]bool{}
	for _, g := range rg.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				rec[r.Record] = true
			}
		}
	}
	return rec
}

func TestDashboardAndRulesUseExportedMetrics(t *testing.T) {
	ex := scrapeEdge(t)
	rg := loadRules(t)
	rec := recordedNames(rg)

	raw, err := os.ReadFile(filepath.Join(deployDir, "grafana", "dealer-edge.json"))
	if err != nil {
		t.Fatal(err)
	}
	exprs := dashboardExprs(t, raw)
	if len(exprs) < 30 {
		t.Fatalf("only %d expressions found in the dashboard", len(exprs))
	}
	used := map[string]bool{}
	for _, p := range sortedKeys(exprs) {
		for _, prob := range checkExpr(exprs[p], ex, rec) {
			t.Errorf("dashboard %s: %s\n  %s", p, prob, exprs[p])
		}
		collectNames(exprs[p], used)
	}
	alerts := 0
	for _, g := range rg.Groups {
		for _, r := range g.Rules {
			what := r.Record
			if r.Alert != "" {
				what = r.Alert
				alerts++
				if !strings.HasPrefix(r.Annotations["runbook_url"], dashboard.RunbookURL+"#"+strings.ToLower(r.Alert)) {
					t.Errorf("alert %s: runbook_url %q does not point at its runbook entry", r.Alert, r.Annotations["runbook_url"])
				}
			}
			for _, prob := range checkExpr(r.Expr, ex, rec) {
				t.Errorf("rule %s: %s\n  %s", what, prob, r.Expr)
			}
			collectNames(r.Expr, used)
		}
	}
	if alerts < 10 {
		t.Errorf("%d alerts, want every alert of the assignment", alerts)
	}
	// Edge metrics on neither the dashboard nor a rule are reported, not
	// failed: a metric added elsewhere must not break this build, but the
	// log says what the dashboard lacks. Some are not in a --demo scrape at
	// all (TLS, lazily created counters) and could not be checked here.
	for _, name := range sortedKeys(namesOf(ex)) {
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
		if !strings.HasPrefix(name, "edge_") || used[name] || used[base+"_bucket"] || used[base+"_count"] {
			continue
		}
		switch name {
		case "edge_request_duration_seconds_sum", "edge_upstream_request_duration_seconds_sum", "edge_upstream_request_duration_seconds_count":
			continue // the quantiles come from the buckets
		}
		if ignoredOnDashboard[name] {
			continue
		}
		t.Logf("note: edge metric %s is on neither the dashboard nor a rule", name)
	}
}

func namesOf(ex exported) map[string]string {
	out := map[string]string{}
	for n := range ex {
		out[n] = n
	}
	return out
}

// ignoredOnDashboard are edge metrics left off on purpose.
var ignoredOnDashboard = map[string]bool{
	"edge_gzip_responses_total": true, // the bandwidth panel shows gzip bytes
	"edge_build_info":           true, // a label carrier, shown by Grafana's instance picker if at all
}

func collectNames(expr string, into map[string]bool) {
	e, err := promql.ParseExpr(substitute(expr))
	if err != nil {
		return
	}
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			into[vs.Name] = true
		}
		return nil
	})
}

// TestCheckCatchesRenames makes sure the checker fails on what it is
// meant to catch.
func TestCheckCatchesRenames(t *testing.T) {
	ex := parseScrape("# TYPE edge_requests_total counter\nedge_requests_total{route=\"a\",status=\"200\",cache=\"hit\"} 3\nedge_x_bucket{le=\"0.5\"} 1\n")
	rec := map[string]bool{"job:edge_x:rate5m": true}
	for _, tc := range []struct {
		name, expr string
		wantProbs  int
	}{
		{"exported metric and labels", `sum by (route) (rate(edge_requests_total{status=~"5..", job=~"$job"}[$__rate_interval]))`, 0},
		{"renamed metric", `rate(edge_request_total[5m])`, 1},
		{"renamed label", `rate(edge_requests_total{code="500"}[5m])`, 1},
		{"recorded name", `job:edge_x:rate5m > 0.1`, 0},
		{"histogram bucket", `histogram_quantile(0.99, sum by (le) (rate(edge_x_bucket[5m])))`, 0},
		{"parse error", `sum by (route (rate(edge_requests_total[5m]))`, 1},
		{"no metric", `vector(1)`, 1},
		{"name matcher", `{__name__="edge_requests_total", route="a"}`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if probs := checkExpr(tc.expr, ex, rec); len(probs) != tc.wantProbs {
				t.Errorf("%q: %d problems %v, want %d", tc.expr, len(probs), probs, tc.wantProbs)
			}
		})
	}
}

// TestDashboardUpToDate checks that the committed JSON is what the
// generator writes (go generate ./grafana/... in deploy/).
func TestDashboardUpToDate(t *testing.T) {
	want, err := dashboard.JSON()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(deployDir, "grafana", "dealer-edge.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("deploy/grafana/dealer-edge.json is stale: run go generate ./grafana/... in deploy/")
	}
	var d dashboard.Dashboard
	if err := json.Unmarshal(got, &d); err != nil {
		t.Fatal(err)
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d used twice", p.ID)
		}
		ids[p.ID] = true
		if p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("panel %q overflows the grid", p.Title)
		}
	}
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
