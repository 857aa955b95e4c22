package dashboard

import (
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
)

// TestLogDropsAccessLegendCountsAccessLines: the panel "Log lines and trace spans dropped"
// draws a series legended "access" ("Access lines over
// log.max_lines_per_sec") beside one legended "event". The edge counts
// every dropped line in edge_log_lines_dropped_total, event lines included
// (ops.Logs.admit calls LogLineDropped for every drop, then
// LogEventLineDropped for an event line), so an "access" series read from
// that counter alone draws every dropped event line a second time, as an
// access line: a flood of event lines (a breaker flapping, Redis down)
// shows as access lines dropped too. The access series must take the
// event drops out (lines - event lines).
func TestLogDropsAccessLegendCountsAccessLines(t *testing.T) {
	var expr string
	for _, p := range Build().Panels {
		if p.Title != "Log lines and trace spans dropped" {
			continue
		}
		for _, tg := range p.Targets {
			if tg.LegendFormat == "access" {
				expr = tg.Expr
			}
		}
	}
	if expr == "" {
		t.Fatal("no access series on the panel Log lines and trace spans dropped")
	}
	e, err := parser.NewParser(parser.Options{}).ParseExpr(strings.ReplaceAll(expr, "$__rate_interval", "5m"))
	if err != nil {
		t.Fatal(err)
	}
	subtractsEvents := false
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if b, ok := n.(*parser.BinaryExpr); ok && b.Op == parser.SUB {
			parser.Inspect(b.RHS, func(m parser.Node, _ []parser.Node) error {
				if vs, ok := m.(*parser.VectorSelector); ok && vs.Name == "edge_log_event_lines_dropped_total" {
					subtractsEvents = true
				}
				return nil
			})
		}
		return nil
	})
	if !subtractsEvents {
		t.Errorf("the access series counts dropped event lines too (edge_log_lines_dropped_total holds both): %s", expr)
	}
}
