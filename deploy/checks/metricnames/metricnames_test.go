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
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
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

// exported maps each metric name of a scrape to its label names and, per
// label, the values its series carry.
type exported map[string]map[string]map[string]bool

var (
	sampleRE = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? `)
	labelRE  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)
)

func parseScrape(text string) exported {
	ex := exported{}
	for _, l := range strings.Split(text, "\n") {
		m := sampleRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if ex[m[1]] == nil {
			ex[m[1]] = map[string]map[string]bool{}
		}
		for _, lm := range labelRE.FindAllStringSubmatch(m[2], -1) {
			if ex[m[1]][lm[1]] == nil {
				ex[m[1]][lm[1]] = map[string]bool{}
			}
			ex[m[1]][lm[1]][lm[2]] = true
		}
	}
	return ex
}

// scrapeEdge runs the real edge, drives the traffic that creates its
// lazily created series (every route, an error, a 429, a stale answer, a
// tripped breaker) and returns what /metrics exports, parsed and as text.
// The edge runs once per test binary.
func scrapeEdge(t *testing.T) (exported, string) {
	scrapeOnce.Do(func() { scrapeText = driveEdge(t) })
	if scrapeText == "" {
		t.Fatal("no scrape of the edge (an earlier test failed to make one)")
	}
	ex := parseScrape(scrapeText)
	if len(ex) < 40 {
		t.Fatalf("only %d metric names in the scrape", len(ex))
	}
	return ex, scrapeText
}

var (
	scrapeOnce sync.Once
	scrapeText string
)

func driveEdge(t *testing.T) string {
	// inventory_listing's TTL is 1 s (demo defaults otherwise), so that a
	// stale answer comes without a long wait.
	cfg := filepath.Join(t.TempDir(), "edge.json")
	if err := os.WriteFile(cfg, []byte(`{"cache": {"routes": {"inventory_listing": {"ttl": "1s", "stale_while_revalidate": "5m", "stale_if_error": "10m"}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e := edgeproc.Start(t, "--config", cfg)
	start := time.Now()
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
	// A 429: the limited plan allows a burst of 10.
	for i := 0; ; i++ {
		if st, _ := e.Get(t, "/dealer/NOS/listing", "demo-key-limited"); st == 429 {
			break
		}
		if i == 100 {
			t.Fatal("the limited key was never refused")
		}
	}
	// Trip the inventory breaker: misses (a new page each) while the
	// inventory service is down.
	e.Faults(t, "service=inventory&down=true")
	deadline := time.Now().Add(15 * time.Second)
	for page := 2; !strings.Contains(e.Scrape(t), `edge_upstream_breaker_transitions_total{service="inventory",to="open"} 1`); page++ {
		if time.Now().After(deadline) {
			t.Fatal("the inventory breaker did not trip")
		}
		e.Get(t, fmt.Sprintf("/dealer/NLT/listing?page=%d", page))
	}
	e.Faults(t, "clear=true")
	// A stale answer: the first listing, past its TTL, within its
	// stale_while_revalidate.
	time.Sleep(time.Until(start.Add(2 * time.Second)))
	if st, xc := e.Get(t, "/dealer/REWIND/listing?page_size=2"); st != 200 || xc != "STALE" {
		t.Fatalf("listing after its TTL: %d X-Cache %q, want a stale 200", st, xc)
	}
	return e.Scrape(t) + driveTLSEdge(t)
}

// driveTLSEdge runs a second edge with TLS on its public listener, renews
// its certificate and then writes one that does not load, and returns its
// scrape: the TLS families (edge_tls_certificate_not_after_seconds, and
// edge_tls_certificate_reloads_total with both results) that the alert
// EdgeTLSCertificateExpiresSoon and the TLS panels read, with their labels
// and values, which a --demo run without TLS does not export.
func driveTLSEdge(t *testing.T) string {
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	edgeproc.WriteTLSPair(t, cert, key, time.Now().Add(30*24*time.Hour))
	cfg := filepath.Join(dir, "edge.json")
	if err := os.WriteFile(cfg, []byte(`{"watch_interval": "100ms", "tls": {"cert_file": "`+cert+`", "key_file": "`+key+`"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e := edgeproc.Start(t, "--config", cfg)
	waitFor := func(series string) string {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			text := e.Scrape(t)
			if strings.Contains(text, series) {
				return text
			}
			if time.Now().After(deadline) {
				t.Fatalf("the TLS edge never exported %s:\n%s", series, text)
			}
			time.Sleep(50 * time.Millisecond) // polls the scrape: the watch has no signal to wait on
		}
	}
	waitFor("edge_tls_certificate_not_after_seconds ")
	// A renewed pair (the watch reloads it), then a certificate that does
	// not parse (rejected; the renewed one stays).
	edgeproc.WriteTLSPair(t, cert, key, time.Now().Add(60*24*time.Hour))
	waitFor(`edge_tls_certificate_reloads_total{result="ok"}`)
	if err := os.WriteFile(cert, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return waitFor(`edge_tls_certificate_reloads_total{result="error"}`)
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

// recorded maps each metric a recording rule writes to the labels its
// series carry.
type recorded map[string]map[string]bool

// checkExpr parses expr and reports each selected metric that the edge
// does not export (and is not recorded by the rules), each label a
// selector matches on that the metric's series lack, each value an
// equality matcher asks for that no series carries and each regular
// expression no value matches (a renamed value, such as a latency bucket
// le="0.25" the SLO reads, would leave an alert with no input and silent).
func checkExpr(expr string, ex exported, rec recorded) []string {
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
		if lbls, ok := rec[name]; ok {
			for _, m := range vs.LabelMatchers {
				if m.Name != labels.MetricName && !lbls[m.Name] {
					probs = append(probs, fmt.Sprintf("recorded metric %s has no label %q", name, m.Name))
				}
			}
			return nil
		}
		lbls, ok := ex[name]
		if !ok && slices.Contains(notInDemoScrape, name) {
			return nil // documented, made only with TLS (or failed accepts)
		}
		if !ok {
			probs = append(probs, fmt.Sprintf("metric %s is not exported by the edge", name))
			return nil
		}
		for _, m := range vs.LabelMatchers {
			if implicit[m.Name] {
				continue
			}
			vals, ok := lbls[m.Name]
			if !ok {
				probs = append(probs, fmt.Sprintf("metric %s has no label %q", name, m.Name))
				continue
			}
			switch m.Type {
			case labels.MatchEqual:
				if m.Value != "" && !vals[m.Value] {
					probs = append(probs, fmt.Sprintf("metric %s has no series with %s=%q", name, m.Name, m.Value))
				}
			case labels.MatchNotEqual:
				if m.Value != "" && !vals[m.Value] {
					probs = append(probs, fmt.Sprintf("metric %s has no series with %s=%q to exclude", name, m.Name, m.Value))
				}
			case labels.MatchRegexp, labels.MatchNotRegexp:
				// A list of values (a|b|c): each one is exported, or a
				// renamed one drops out of the sum unseen (a lookup
				// counted in no ratio). Another expression: some value
				// matches it.
				if literalAltRE.MatchString(m.Value) {
					for _, v := range strings.Split(m.Value, "|") {
						if !vals[v] {
							probs = append(probs, fmt.Sprintf("metric %s has no series with %s=%q (of %s~%q)", name, m.Name, v, m.Name, m.Value))
						}
					}
					break
				}
				matched := false
				for v := range vals {
					matched = matched || regexp.MustCompile("^(?:"+m.Value+")$").MatchString(v)
				}
				if !matched {
					probs = append(probs, fmt.Sprintf("metric %s has no series with %s=~%q", name, m.Name, m.Value))
				}
			}
		}
		return nil
	})
	if names == 0 && len(probs) == 0 {
		probs = append(probs, "selects no metric")
	}
	return probs
}

// outLabels returns the labels of the series expr yields (nil for a
// scalar), and reports in probs each aggregation by a label its input
// lacks. Prometheus' own rules: an aggregation keeps its by labels; a
// one-to-one binary operation keeps the left side's labels, only the on
// labels with on(...); and/unless keep the left side's, or the labels
// both sides have; histogram_quantile drops le; other functions keep
// their vector argument's.
func outLabels(e parser.Expr, ex exported, rec recorded, probs *[]string) map[string]bool {
	switch e := e.(type) {
	case *parser.ParenExpr:
		return outLabels(e.Expr, ex, rec, probs)
	case *parser.StepInvariantExpr:
		return outLabels(e.Expr, ex, rec, probs)
	case *parser.UnaryExpr:
		return outLabels(e.Expr, ex, rec, probs)
	case *parser.MatrixSelector:
		return outLabels(e.VectorSelector, ex, rec, probs)
	case *parser.SubqueryExpr:
		return outLabels(e.Expr, ex, rec, probs)
	case *parser.VectorSelector:
		if l, ok := rec[e.Name]; ok {
			return maps.Clone(l)
		}
		if _, ok := ex[e.Name]; !ok && slices.Contains(notInDemoScrape, e.Name) {
			return map[string]bool{anyLabel: true} // its labels are unknown here
		}
		out := map[string]bool{"job": true, "instance": true}
		for l := range ex[e.Name] {
			out[l] = true
		}
		return out
	case *parser.AggregateExpr:
		in := outLabels(e.Expr, ex, rec, probs)
		switch e.Op {
		case parser.TOPK, parser.BOTTOMK, parser.LIMITK, parser.LIMIT_RATIO:
			return in
		}
		out := map[string]bool{}
		if e.Without {
			out = maps.Clone(in)
			for _, g := range e.Grouping {
				delete(out, g)
			}
			return out
		}
		for _, g := range e.Grouping {
			if !in[g] && !in[anyLabel] {
				*probs = append(*probs, fmt.Sprintf("aggregates by %q, a label its input lacks: %s", g, e))
			}
			out[g] = true
		}
		return out
	case *parser.Call:
		var in map[string]bool
		for _, a := range e.Args {
			if t := a.Type(); t == parser.ValueTypeVector || t == parser.ValueTypeMatrix {
				in = outLabels(a, ex, rec, probs)
			}
		}
		if e.Func.Name == "histogram_quantile" {
			delete(in, "le")
		}
		return in
	case *parser.BinaryExpr:
		l, r := outLabels(e.LHS, ex, rec, probs), outLabels(e.RHS, ex, rec, probs)
		switch {
		case e.LHS.Type() == parser.ValueTypeScalar:
			return r
		case e.RHS.Type() == parser.ValueTypeScalar:
			return l
		case e.Op == parser.LOR:
			out := map[string]bool{}
			for k := range l {
				if r[k] || r[anyLabel] {
					out[k] = true
				}
			}
			if l[anyLabel] {
				return r
			}
			return out
		case e.Op == parser.LAND || e.Op == parser.LUNLESS:
			return l
		case e.VectorMatching != nil && e.VectorMatching.Card == parser.CardOneToOne && e.VectorMatching.On:
			out := map[string]bool{}
			for _, k := range e.VectorMatching.MatchingLabels {
				out[k] = true
			}
			return out
		}
		return l
	}
	return nil
}

// literalAltRE matches a regular expression that is a list of literal
// label values, such as hit|miss|stale.
var literalAltRE = regexp.MustCompile(`^[a-zA-Z0-9_]+(\|[a-zA-Z0-9_]+)*$`)

// anyLabel in a label set stands for any label: the series of a metric a
// --demo run does not export, whose labels cannot be known here.
const anyLabel = "*"

// annotationLabelRE finds the labels an alert's annotations name.
var annotationLabelRE = regexp.MustCompile(`\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)`)

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

// legendLabelRE finds the labels a legend format names.
var legendLabelRE = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)

// legend is a dashboard target's query and its legend format.
type legend struct{ expr, legend string }

// dashboardLegends returns the targets of the dashboard JSON that have a
// legend format, and the annotations' title and text formats.
func dashboardLegends(t *testing.T, raw []byte) []legend {
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var out []legend
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if e, ok := v["expr"].(string); ok {
				for _, k := range []string{"legendFormat", "titleFormat", "textFormat"} {
					if l, ok := v[k].(string); ok && l != "" {
						out = append(out, legend{e, l})
					}
				}
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(doc)
	return out
}

func loadRules(t *testing.T) *rulefmt.RuleGroups {
	rg, errs := rulefmt.ParseFile(filepath.Join(deployDir, "prometheus", "dealer-edge.rules.yml"), false, model.UTF8Validation, promql, slog.New(slog.DiscardHandler))
	if len(errs) > 0 {
		t.Fatalf("rules: %v", errs)
	}
	return rg
}

// recordedLabels returns the metrics the rules record, with the labels
// of their series (in rule order: a record may read an earlier one).
func recordedLabels(t *testing.T, rg *rulefmt.RuleGroups, ex exported) recorded {
	rec := recorded{}
	for _, g := range rg.Groups {
		for _, r := range g.Rules {
			if r.Record == "" {
				continue
			}
			e, err := promql.ParseExpr(r.Expr)
			if err != nil {
				t.Errorf("rule %s: %v", r.Record, err)
				continue
			}
			var probs []string
			rec[r.Record] = outLabels(e, ex, rec, &probs)
			for _, p := range probs {
				t.Errorf("rule %s: %s", r.Record, p)
			}
		}
	}
	return rec
}

func TestDashboardAndRulesUseExportedMetrics(t *testing.T) {
	ex, _ := scrapeEdge(t)
	rg := loadRules(t)
	rec := recordedLabels(t, rg, ex)

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
	for _, lg := range dashboardLegends(t, raw) {
		e, err := promql.ParseExpr(substitute(lg.expr))
		if err != nil {
			continue // reported above
		}
		var probs []string
		have := outLabels(e, ex, rec, &probs)
		for _, p := range probs {
			t.Errorf("dashboard: %s\n  %s", p, lg.expr)
		}
		for _, m := range legendLabelRE.FindAllStringSubmatch(lg.legend, -1) {
			if !have[m[1]] && !have[anyLabel] {
				t.Errorf("dashboard: legend %q names {{%s}}, which the series of its query lack (they have %v)\n  %s", lg.legend, m[1], slices.Sorted(maps.Keys(have)), lg.expr)
			}
		}
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
			if r.Alert != "" {
				// Each label an annotation names is on the alert's series
				// (or set by the rule): else it renders empty in the page.
				e, err := promql.ParseExpr(r.Expr)
				if err != nil {
					continue
				}
				var probs []string
				have := outLabels(e, ex, rec, &probs)
				for _, p := range probs {
					t.Errorf("alert %s: %s", r.Alert, p)
				}
				for _, k := range slices.Sorted(maps.Keys(r.Annotations)) {
					for _, m := range annotationLabelRE.FindAllStringSubmatch(r.Annotations[k], -1) {
						if _, set := r.Labels[m[1]]; !have[m[1]] && !have[anyLabel] && !set {
							t.Errorf("alert %s: annotation %s names $labels.%s, which its series lack (they have %v)", r.Alert, k, m[1], slices.Sorted(maps.Keys(have)))
						}
					}
				}
			}
			collectNames(r.Expr, used)
		}
	}
	if alerts < 10 {
		t.Errorf("%d alerts, want every alert of the assignment", alerts)
	}
	// Every edge metric of the scrape is on a panel or read by a rule,
	// except those left off on purpose (ignoredOnDashboard): a metric
	// added without a panel fails here, not in an operator's blind spot.
	// Some are not in a --demo scrape at all (TLS, lazily created
	// counters) and cannot be checked here.
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
		t.Errorf("edge metric %s is on neither the dashboard nor a rule: add a panel (deploy/grafana/dashboard) or, if it is left off on purpose, list it in ignoredOnDashboard with why", name)
	}
	// The documented families no scrape here makes (notInDemoScrape) are
	// held to the same rule: being absent from the scrape hid that they
	// were on no panel (failed accepts, the embedded Redis' evictions and
	// tracing's lost spans, until 2026-11-29).
	for _, name := range notInDemoScrape {
		if strings.HasPrefix(name, "edge_") && !used[name] && !ignoredOnDashboard[name] {
			t.Errorf("edge metric %s (documented, not in the scrape) is on neither the dashboard nor a rule: add a panel (deploy/grafana/dashboard) or list it in ignoredOnDashboard with why", name)
		}
	}
	// An exception that a panel or rule now reads is stale: it would hide
	// that metric's removal from them.
	for _, name := range slices.Sorted(maps.Keys(ignoredOnDashboard)) {
		if used[name] {
			t.Errorf("ignoredOnDashboard lists %s, which a panel or rule reads: drop it from the list", name)
		}
	}
}

func namesOf(ex exported) map[string]string {
	out := map[string]string{}
	for n := range ex {
		out[n] = n
	}
	return out
}

// ignoredOnDashboard are the edge metrics on no panel and no rule on
// purpose; every other one must be on one.
var ignoredOnDashboard = map[string]bool{
	"edge_gzip_responses_total": true, // the bandwidth panel shows gzip bytes
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
	ex := parseScrape("# TYPE edge_requests_total counter\nedge_requests_total{route=\"a\",status=\"200\",cache=\"hit\"} 3\nedge_requests_total{route=\"a\",status=\"503\",cache=\"none\"} 1\nedge_x_bucket{le=\"0.25\"} 1\n")
	rec := recorded{"job:edge_x:rate5m": {"job": true}}
	for _, tc := range []struct {
		name, expr string
		wantProbs  int
	}{
		{"exported metric and labels", `sum by (route) (rate(edge_requests_total{status=~"5..", job=~"$job"}[$__rate_interval]))`, 0},
		{"renamed metric", `rate(edge_request_total[5m])`, 1},
		{"renamed label", `rate(edge_requests_total{code="500"}[5m])`, 1},
		{"recorded name", `job:edge_x:rate5m > 0.1`, 0},
		{"recorded name and its label", `job:edge_x:rate5m{job="a"} > 0.1`, 0},
		{"label a record lacks", `job:edge_x:rate5m{route="a"} > 0.1`, 1},
		{"histogram bucket", `histogram_quantile(0.99, sum by (le) (rate(edge_x_bucket[5m])))`, 0},
		{"exported value", `edge_x_bucket{le="0.25"}`, 0},
		{"value never exported", `edge_x_bucket{le="0.2"}`, 1},
		{"renamed value", `edge_requests_total{cache="HIT"}`, 1},
		{"regex matching no value", `edge_requests_total{status=~"4.."}`, 1},
		{"list of exported values", `edge_requests_total{cache=~"hit|none"}`, 0},
		{"list with a value never exported", `edge_requests_total{cache=~"hit|stale"}`, 1},
		{"list with a renamed value", `edge_requests_total{cache=~"HIT|none"}`, 1},
		{"negated list with a renamed value", `edge_requests_total{cache!~"hit|NONE"}`, 1},
		{"excluded value never exported", `edge_requests_total{cache!="stale"}`, 1},
		{"excluded exported value", `edge_requests_total{cache!="none"}`, 0},
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

// TestOutLabels checks the labels inferred for a recording rule's or an
// alert's series, which the checks above compare with the selectors on
// recorded metrics and the $labels of annotations.
func TestOutLabels(t *testing.T) {
	ex := parseScrape("edge_requests_total{route=\"a\",status=\"200\",cache=\"hit\"} 3\nedge_x_bucket{route=\"a\",le=\"0.25\"} 1\nedge_up 1\n")
	rec := recorded{"job_route:r": {"job": true, "route": true}}
	for _, tc := range []struct {
		name, expr, want string
		wantProbs        int
	}{
		{"sum by", `sum by (job, route) (rate(edge_requests_total[5m]))`, "job,route", 0},
		{"sum by a missing label", `sum by (job, service) (rate(edge_requests_total[5m]))`, "job,service", 1},
		{"quantile drops le", `histogram_quantile(0.99, sum by (job, route, le) (rate(edge_x_bucket[5m])))`, "job,route", 0},
		{"ratio keeps the left side", `job_route:r / job_route:r`, "job,route", 0},
		{"scalar on the left", `1 - sum by (job) (edge_up)`, "job", 0},
		{"or keeps the shared labels", `(job_route:r > 1) or sum by (job) (edge_up)`, "job", 0},
		{"and keeps the left side", `max by (job, instance) (edge_up) == 1 and job_route:r`, "instance,job", 0},
		{"on keeps the matching labels", `job_route:r * on (job) sum by (job) (edge_up)`, "job", 0},
		{"plain selector", `edge_up == 0`, "instance,job", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := promql.ParseExpr(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			var probs []string
			got := strings.Join(slices.Sorted(maps.Keys(outLabels(e, ex, rec, &probs))), ",")
			if got != tc.want || len(probs) != tc.wantProbs {
				t.Errorf("%q: labels %q problems %v, want %q and %d", tc.expr, got, probs, tc.want, tc.wantProbs)
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

// TestScrapeHasTLSFamilies: the TLS families the alert and the panels read
// are in the scrape the checks above compare them with, with their labels
// and values, so that they are checked like the others rather than
// accepted by name (notInDemoScrape, until 2026-11-29).
func TestScrapeHasTLSFamilies(t *testing.T) {
	ex, _ := scrapeEdge(t)
	if _, ok := ex["edge_tls_certificate_not_after_seconds"]; !ok {
		t.Error("edge_tls_certificate_not_after_seconds is not in the scrape")
	}
	if r := ex["edge_tls_certificate_reloads_total"]["result"]; !r["ok"] || !r["error"] {
		t.Errorf("edge_tls_certificate_reloads_total results %v in the scrape, want ok and error", r)
	}
	for _, n := range []string{"edge_tls_certificate_not_after_seconds", "edge_tls_certificate_reloads_total"} {
		if slices.Contains(notInDemoScrape, n) {
			t.Errorf("%s is in notInDemoScrape: its labels and values would go unchecked", n)
		}
	}
}
