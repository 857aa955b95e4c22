package main

// Tests of the benchmark's verdicts. Each feeds the report a runs.jsonl made
// of the figures a run would write and checks the verdict against the
// target as bench/README.md and the README's "Targets at a glance" state it
// (written by an audit of the bench's integrity, 2026-11-27).

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// reportRows writes lines to a runs.jsonl, runs the report and returns the
// markdown table's rows whose first cell starts with prefix.
func reportRows(t *testing.T, prefix string, lines ...any) []string {
	t.Helper()
	dir := t.TempDir()
	in, md := filepath.Join(dir, "runs.jsonl"), filepath.Join(dir, "results.md")
	var b strings.Builder
	for _, l := range lines {
		j, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// report prints the table on stdout: keep the test output readable.
	stdout := os.Stdout
	devnull, _ := os.Open(os.DevNull)
	os.Stdout = devnull
	err := report([]string{"-in", in, "-md", md})
	os.Stdout = stdout
	devnull.Close()
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	out, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "| "+prefix) {
			rows = append(rows, l)
		}
	}
	if len(rows) == 0 {
		t.Fatalf("no row %q in\n%s", prefix, out)
	}
	return rows
}

func wrkLine(scn, target string, conns, run int, reqs int64, cpu float64) map[string]any {
	return map[string]any{"kind": "wrk", "scenario": scn, "target": target, "conns": conns, "run": run,
		"cpu_us_per_req": cpu, "wrk": map[string]any{"requests": reqs, "duration_us": 6_000_000,
			"p50_us": 1000, "p90_us": 2000, "p99_us": 3000, "max_us": 5000}}
}

func resultCell(row string) string {
	c := strings.Split(row, " | ")
	return strings.TrimSpace(c[10]) // scenario, conns, 3 edge, vs, 3 vs, edge/vs, result, target
}

// Row e's verdict is its target, "upstream calls = 1" (bench/README.md): the
// lone miss's count is a diagnostic. It used to decide the verdict: the
// 2026-11-26 10:31 run read "MISS | upstream calls = 1; edge: 1 upstream
// call(s) (lone miss: 2)".
func TestStampedeVerdictFollowsLoneMissNotTarget(t *testing.T) {
	row := reportRows(t, "e stampede",
		map[string]any{"kind": "stampede", "target": "edge", "n": 100, "ok": 100, "calls": 1, "lone_calls": 2, "p50_us": 210000, "p99_us": 211000},
		map[string]any{"kind": "stampede", "target": "nginx", "n": 100, "ok": 100, "calls": 1, "lone_calls": 1, "p50_us": 502000, "p99_us": 504000},
	)[0]
	if got := resultCell(row); got != "PASS" {
		t.Errorf("one upstream call for 100 identical misses (target: upstream calls = 1) reads %s:\n%s", got, row)
	}
	row = reportRows(t, "e stampede",
		map[string]any{"kind": "stampede", "target": "edge", "n": 100, "ok": 100, "calls": 2, "lone_calls": 2, "p50_us": 210000, "p99_us": 211000},
	)[0]
	if got := resultCell(row); got != "MISS" {
		t.Errorf("two upstream calls for 100 identical misses (target: upstream calls = 1) reads %s:\n%s", got, row)
	}
}

// Row s's verdict checks all three of its targets (bench/README.md): CPU per
// request of edge + redis-server <= nginx's, p99 <= nginx's, and the L1
// share of hits >= 95% of the best static share (it used to leave the last
// out).
func TestScaleVerdictIgnoresL1ShareTarget(t *testing.T) {
	scale := func(target string, cpu, redis, share float64) map[string]any {
		return map[string]any{"kind": "scale", "scenario": "s", "target": target, "conns": 64, "run": 1, "requests": 100000,
			"cpu_us_per_req": cpu, "cpu_us_by_proc": map[string]float64{"edge": cpu - redis, "redis": redis},
			"l1_share": share, "best_static_share": 0.8, "ws_over_l1": 12}
	}
	row := reportRows(t, "s scale mix",
		wrkLine("s", "edge", 64, 1, 300000, 0), wrkLine("s", "nginx", 64, 1, 300000, 0),
		scale("edge", 15, 1, 0.32), scale("nginx", 17, 0, 0),
	)[0]
	if got := resultCell(row); got != "MISS" {
		t.Errorf("L1 share 0.32 of a best static 0.80 (40%%, target >= 95%%) reads %s:\n%s", got, row)
	}
}

// An unmeasured CPU target (cpu_us_per_req 0, e.g. /proc unreadable) is not
// met: d-views, whose only target it is, used to read PASS.
func TestUnmeasuredCPUReadsPass(t *testing.T) {
	row := reportRows(t, "d-views", wrkLine("dv", "edge", 64, 1, 80000, 0))[0]
	if got := resultCell(row); got == "PASS" {
		t.Errorf("d-views with no CPU measurement reads %s (should be PENDING / n/a):\n%s", got, row)
	}
}

// Row d's baseline ("upstream/1 = one hub section called directly") asks
// what a cold hub asks of each section: the summary view (run.sh's
// UP_SECTION; it asked for the full view, three times the bytes, before
// 2026-11-27).
func TestHubBaselineIsNotAHubSection(t *testing.T) {
	fk := fake.NewServer(fake.Options{})
	addr, err := fk.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer fk.Close()
	size := func(path string) int {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
		return len(b)
	}
	script, err := os.ReadFile("../run.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`UP_SECTION="http://127\.0\.0\.1:\$UP5(/[^"]*)"`).FindSubmatch(script)
	if m == nil {
		t.Fatal("no UP_SECTION in bench/run.sh")
	}
	baseline := size(strings.ReplaceAll(string(m[1]), "$DEALER", "101")) // run.sh UP_SECTION
	section := size("/content/v1/dealers/101/faq?view=summary")          // what the cold hub asks per section
	if baseline != section {
		t.Errorf("row d's baseline (upstream/1, run.sh UP_SECTION) answers %d bytes; the hub's faq section call answers %d: %s",
			baseline, section, fmt.Sprintf("%.1fx", float64(baseline)/float64(section)))
	}
}

// Row g's verdict is issue 11's large-L1 target, all three parts: the large
// L1's peak RSS <= 1.25 GiB (1,280 MiB), its GC <= 5% of its CPU, its p99 <=
// the small L1's; an unmeasured RSS is not met.
func TestFleetVerdict(t *testing.T) {
	wrk := func(target string, p99us int) map[string]any {
		l := wrkLine("g", target, 64, 1, 200000, 0)
		l["wrk"].(map[string]any)["p99_us"] = p99us
		return l
	}
	rec := func(target string, rss, gc float64) map[string]any {
		return map[string]any{"kind": "scale", "scenario": "g", "target": target, "conns": 64, "run": 1, "requests": 200000,
			"cpu_us_per_req": 25.0, "cpu_us_by_proc": map[string]float64{"edge": 23, "redis": 2}, "l1_share": 0.55,
			"bulk_share": 0.44, "gc_share": gc, "l1_mib": 16, "bulk_mib": 1008, "peak_rss_mib": rss, "ws_over_l1": 12.2}
	}
	for _, c := range []struct {
		name           string
		rss, gc        float64
		bigP99, smallP int
		want           string
	}{
		{"all met", 1239, 0.019, 6450, 7530, "PASS"},
		{"p99 equal", 1239, 0.019, 7530, 7530, "PASS"},
		{"RSS over 1.25 GiB", 1281, 0.019, 6450, 7530, "MISS"},
		{"GC over 5%", 1239, 0.051, 6450, 7530, "MISS"},
		{"p99 worse than the small L1's", 1239, 0.019, 7600, 7530, "MISS"},
		{"RSS not measured", 0, 0.019, 6450, 7530, "MISS"},
	} {
		t.Run(c.name, func(t *testing.T) {
			row := reportRows(t, "g fleet mix",
				wrk("l1-big", c.bigP99), wrk("l1-small", c.smallP),
				rec("l1-big", c.rss, c.gc), rec("l1-small", 230, 0.04))[0]
			if got := resultCell(row); got != c.want {
				t.Errorf("reads %s, want %s:\n%s", got, c.want, row)
			}
		})
	}
}

// Row c' (the bare proxy's exchange, target "floor") is a reference row per
// connection count: its CPU per request and the edge's own work over it
// (row c's CPU minus the floor's), no verdict of its own; c's verdict does
// not move with it.
func TestMissFloorRow(t *testing.T) {
	rows := reportRows(t, "c' bare fasthttp proxy",
		wrkLine("c", "edge", 1, 1, 1100, 240), wrkLine("c", "floor", 1, 1, 1150, 120),
		wrkLine("c", "edge", 64, 1, 60000, 75), wrkLine("c", "floor", 64, 1, 62000, 36),
		wrkLine("c", "upstream", 64, 1, 62000, 0),
	)
	if len(rows) != 2 {
		t.Fatalf("want a c' row at 1 and at 64 connections, got %d:\n%s", len(rows), strings.Join(rows, "\n"))
	}
	for i, want := range []string{"its CPU/request 120 us, c's 240 us (the edge's own work 120 us)", "its CPU/request 36 us, c's 75 us (the edge's own work 39 us)"} {
		if !strings.Contains(rows[i], want) {
			t.Errorf("c' row %d lacks %q:\n%s", i, want, rows[i])
		}
		if got := resultCell(rows[i]); got != "-" {
			t.Errorf("c' is a reference row, its result reads %q:\n%s", got, rows[i])
		}
	}
	c := reportRows(t, "c miss", wrkLine("c", "edge", 64, 1, 60000, 75), wrkLine("c", "floor", 64, 1, 62000, 36),
		wrkLine("c", "upstream", 64, 1, 62000, 0))[0]
	if got := resultCell(c); got != "PASS" {
		t.Errorf("row c at 75 us (target 80) reads %s beside its floor:\n%s", got, c)
	}
}

// Row s' reports the bare server's CPU per request against nginx's and the
// edge's best on the mix: nginx's CPU over the floor's cost plus the L2
// hits' share of row u's extra over row ul (here 10 + (1-0.75)*20 = 15 µs
// against nginx's 18: 1.20x). It is a reference: no verdict.
func TestScaleFloorRow(t *testing.T) {
	scale := func(scn, target string, cpu, share float64) map[string]any {
		return map[string]any{"kind": "scale", "scenario": scn, "target": target, "conns": 64, "run": 1, "requests": 100000,
			"cpu_us_per_req": cpu, "cpu_us_by_proc": map[string]float64{"edge": cpu}, "l1_share": share,
			"best_static_share": 0.8, "ws_over_l1": 12}
	}
	rows := reportRows(t, "s' bare",
		wrkLine("s", "edge", 64, 1, 300000, 0), wrkLine("s", "nginx", 64, 1, 300000, 0), wrkLine("s", "bare", 64, 1, 400000, 0),
		wrkLine("u", "edge", 64, 1, 100000, 0), wrkLine("ul", "edge", 64, 1, 200000, 0),
		scale("s", "edge", 25, 0.75), scale("s", "nginx", 18, 0), scale("s", "bare", 10, 0),
		scale("u", "edge", 40, 0.02), scale("ul", "edge", 20, 1),
	)
	if len(rows) != 1 {
		t.Fatalf("want one s' row, got %d", len(rows))
	}
	for _, want := range []string{"CPU/req 10.0 µs", "nginx's 18.0 µs (1.80x)", "extra 20.0 µs", "15.0 µs = 1.20x nginx"} {
		if !strings.Contains(rows[0], want) {
			t.Errorf("row s' lacks %q:\n%s", want, rows[0])
		}
	}
	if got := resultCell(rows[0]); got != "-" {
		t.Errorf("row s' is a reference, its result reads %q", got)
	}
}
