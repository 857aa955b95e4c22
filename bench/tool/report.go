package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// wrkStats is what wrk/report.lua prints.
type wrkStats struct {
	Requests   int64   `json:"requests"`
	DurationUs int64   `json:"duration_us"`
	Bytes      int64   `json:"bytes"`
	P50us      int64   `json:"p50_us"`
	P90us      int64   `json:"p90_us"`
	P99us      int64   `json:"p99_us"`
	MaxUs      int64   `json:"max_us"`
	MeanUs     float64 `json:"mean_us"`
	Non2xx     int64   `json:"non2xx"`
	ErrConnect int64   `json:"err_connect"`
	ErrRead    int64   `json:"err_read"`
	ErrWrite   int64   `json:"err_write"`
	ErrTimeout int64   `json:"err_timeout"`
}

// record is one line of runs.jsonl (run.sh writes wrk, rss and meta lines;
// the tool writes stampede lines).
type record struct {
	Kind     string   `json:"kind"`
	Scenario string   `json:"scenario"`
	Target   string   `json:"target"`
	Conns    int      `json:"conns"`
	Run      int      `json:"run"`
	Wrk      wrkStats `json:"wrk"`
	// CPUusPerReq is the edge process's CPU time (user + system, from
	// /proc/PID/stat) per request of the run; 0 when not measured.
	CPUusPerReq float64 `json:"cpu_us_per_req"`
	// rss
	VmRSSKiB int64 `json:"vmrss_kib"`
	VmHWMKiB int64 `json:"vmhwm_kib"`
	// meta
	Mode     string `json:"mode"`
	Duration string `json:"duration"`
	Runs     int    `json:"runs"`
	Note     string `json:"note"`
	// stampede
	StampedeResult
	// refresh: the fills a run of scenario r made (from the edge's
	// /metrics) for its requests
	Requests    int64 `json:"requests"`
	Fills       int64 `json:"fills"`
	Revalidated int64 `json:"revalidated"`
	Unchanged   int64 `json:"unchanged"`
}

type agg struct{ rps, p50, p99, cpu float64 }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

type row struct {
	scenario, conns             string
	eRPS, eP50, eP99            string
	vs, vRPS, vP50, vP99, ratio string
	target, result              string
}

// cpuTarget appends the edge CPU per request and its target to r's target
// text and reports whether it is met (false when it was not measured).
func cpuTarget(r *row, cpu, limit float64) bool {
	if r.target != "" {
		r.target += "; "
	}
	if cpu <= 0 {
		r.target += fmt.Sprintf("edge CPU/request <= %.0f us (not measured)", limit)
		return false // an unmeasured target is not met
	}
	r.target += fmt.Sprintf("edge CPU/request <= %.0f us (%.0f us)", limit, cpu)
	return cpu <= limit
}

func report(args []string) error {
	fs := flag.NewFlagSet("report", flag.ExitOnError)
	in := fs.String("in", "", "runs.jsonl")
	md := fs.String("md", "", "markdown output file")
	smoke := fs.Bool("smoke", false, "smoke mode: targets are shown, never enforced")
	_ = fs.Parse(args)
	f, err := os.Open(*in)
	if err != nil {
		return err
	}
	defer f.Close()

	var recs []record
	var scales []scaleRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var r record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return fmt.Errorf("%s: bad line %q: %v", *in, line, err)
		}
		recs = append(recs, r)
		if r.Kind == "scale" {
			var x scaleRecord
			if err := json.Unmarshal([]byte(line), &x); err != nil {
				return fmt.Errorf("%s: bad scale line %q: %v", *in, line, err)
			}
			scales = append(scales, x)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}

	var problems, warnings []string
	type k struct {
		scenario, target string
		conns            int
	}
	series := map[k][]wrkStats{}
	cpuSeries := map[k][]float64{}
	connSet := map[int]bool{}
	var meta record
	var notes []string
	stampedes := map[string]StampedeResult{}
	var rss, refreshes []record
	for _, r := range recs {
		switch r.Kind {
		case "refresh":
			refreshes = append(refreshes, r)
		case "meta":
			meta = r
		case "note":
			notes = append(notes, r.Note)
		case "wrk":
			w := r.Wrk
			series[k{r.Scenario, r.Target, r.Conns}] = append(series[k{r.Scenario, r.Target, r.Conns}], w)
			if r.CPUusPerReq > 0 {
				cpuSeries[k{r.Scenario, r.Target, r.Conns}] = append(cpuSeries[k{r.Scenario, r.Target, r.Conns}], r.CPUusPerReq)
			}
			connSet[r.Conns] = true
			id := fmt.Sprintf("%s/%s c=%d run %d", r.Scenario, r.Target, r.Conns, r.Run)
			if w.Requests == 0 {
				problems = append(problems, id+": zero requests")
			}
			if w.Non2xx > 0 {
				problems = append(problems, fmt.Sprintf("%s: %d non-2xx responses", id, w.Non2xx))
			}
			if se := w.ErrConnect + w.ErrRead + w.ErrWrite + w.ErrTimeout; se > 0 {
				warnings = append(warnings, fmt.Sprintf("%s: socket errors connect %d read %d write %d timeout %d",
					id, w.ErrConnect, w.ErrRead, w.ErrWrite, w.ErrTimeout))
			}
		case "stampede":
			stampedes[r.Target] = r.StampedeResult
			if r.Error != "" {
				problems = append(problems, "stampede/"+r.Target+": "+r.Error)
			}
		case "rss":
			rss = append(rss, r)
		}
	}
	get := func(scn, target string, c int) (agg, bool) {
		ws := series[k{scn, target, c}]
		if len(ws) == 0 {
			return agg{}, false
		}
		var rps, p50, p99 []float64
		for _, w := range ws {
			if w.DurationUs > 0 {
				rps = append(rps, float64(w.Requests)/(float64(w.DurationUs)/1e6))
			}
			p50 = append(p50, float64(w.P50us)/1000)
			p99 = append(p99, float64(w.P99us)/1000)
		}
		return agg{median(rps), median(p50), median(p99), median(cpuSeries[k{scn, target, c}])}, true
	}
	var conns []int
	for c := range connSet {
		conns = append(conns, c)
	}
	sort.Ints(conns)
	ms := func(v float64) string { return fmt.Sprintf("%.2f ms", v) }
	rpsS := func(v float64) string { return fmt.Sprintf("%.0f", v) }
	verdict := func(ok bool) string {
		if ok {
			return "PASS"
		}
		return "MISS"
	}

	scen := []struct {
		id, name, vs string
	}{
		{"a", "a hit, 1 hot URL", "nginx"},
		{"agz", "a-gz hit, 1 hot URL, Accept-Encoding: gzip", "nginx"},
		{"b", "b hit mix 50 keys x 200 URLs", "nginx"},
		{"c", "c miss, cache off, 5 ms upstream", "upstream"},
		{"c100", "c100 miss, 100-item listing, cache off", "upstream"},
		{"d", "d hub fan-out 6 x 5 ms, cache off", "upstream/1"},
		{"dv", "d-views hub from fresh content views, hub cache off", "-"},
	}
	// floorRow is a reference row (no baseline, no verdict) of a floor
	// measured beside an edge row: c' and d'.
	floorRow := func(name string, c int, f agg, target string) row {
		return row{scenario: name, conns: fmt.Sprint(c), eRPS: rpsS(f.rps), eP50: ms(f.p50), eP99: ms(f.p99),
			vs: "-", vRPS: "-", vP50: "-", vP99: "-", ratio: "-", result: "-", target: target}
	}
	var rows []row
	for _, s := range scen {
		for _, c := range conns {
			e, ok := get(s.id, "edge", c)
			if !ok {
				continue
			}
			vsTarget := "nginx"
			switch s.id {
			case "c", "c100", "d":
				vsTarget = "upstream"
			case "dv":
				vsTarget = ""
			}
			v, vok := get(s.id, vsTarget, c)
			r := row{scenario: s.name, conns: fmt.Sprint(c), eRPS: rpsS(e.rps), eP50: ms(e.p50), eP99: ms(e.p99), vs: s.vs,
				vRPS: "-", vP50: "-", vP99: "-", ratio: "-"}
			if vok {
				r.vRPS, r.vP50, r.vP99 = rpsS(v.rps), ms(v.p50), ms(v.p99)
				if v.rps > 0 {
					r.ratio = fmt.Sprintf("%.2fx", e.rps/v.rps)
				}
			}
			switch s.id {
			case "a", "agz", "b":
				r.target = "rps >= 1.5x nginx, p99 < nginx"
				if vok {
					r.result = verdict(e.rps >= 1.5*v.rps && e.p99 < v.p99)
				}
			case "c", "c100":
				// p50 overhead: 1 ms without queueing (1 connection), 2 ms at 64.
				lim := 1.0
				if c > 1 {
					lim = 2.0
				}
				r.target = fmt.Sprintf("p50 overhead <= %.0f ms", lim)
				ok := true
				if vok {
					r.target = fmt.Sprintf("p50 overhead <= %.0f ms (%+.2f ms)", lim, e.p50-v.p50)
					ok = e.p50-v.p50 <= lim || c > 64 // 256 connections: reported, no target
				}
				cpuLim := 80.0
				if s.id == "c100" {
					cpuLim = 300
				}
				ok = cpuTarget(&r, e.cpu, cpuLim) && ok
				r.result = verdict(ok)
			case "d":
				r.target = "p50 <= 6 ms (1 connection)"
				ok := e.p50 <= 6.0 || c > 1
				r.result = verdict(cpuTarget(&r, e.cpu, 1000) && ok)
			case "dv":
				r.target = ""
				r.result = verdict(cpuTarget(&r, e.cpu, 250))
			}
			rows = append(rows, r)
		}
		if s.id == "c" {
			// The floor of c at every connection count: a bare fasthttp
			// proxy on the edge's core passing the fake's answer through,
			// nothing decoded or encoded (bench/bare -proxy), its CPU per
			// request beside the edge's.
			for _, c := range conns {
				f, ok := get("c", "floor", c)
				if !ok {
					continue
				}
				r := floorRow("c' bare fasthttp proxy, the upstream's answer passed through", c, f,
					fmt.Sprintf("reference: c's floor (the exchange with the client and the upstream alone); its CPU/request %.0f us", f.cpu))
				if e, eok := get("c", "edge", c); eok {
					r.vs, r.vRPS, r.vP50, r.vP99 = "c", rpsS(e.rps), ms(e.p50), ms(e.p99)
					r.target += fmt.Sprintf(", c's %.0f us (the edge's own work %.0f us)", e.cpu, e.cpu-f.cpu)
				}
				rows = append(rows, r)
			}
		}
		if s.id == "d" {
			// The floor of d at one connection: the six section calls at
			// once from a bare fasthttp client on the edge's core, nothing
			// decoded (benchtool fanout).
			if f, ok := get("d", "fanout", 1); ok {
				r := floorRow("d' the six section calls only, bare fasthttp client", 1, f,
					"reference: d's floor (the fake and loopback moving the six answers, no edge)")
				if e, eok := get("d", "edge", 1); eok {
					r.vs, r.vRPS, r.vP50, r.vP99 = "d, 1 connection", rpsS(e.rps), ms(e.p50), ms(e.p99)
					r.target = fmt.Sprintf("reference: d's floor (the fake and loopback moving the six answers, no edge); d's p50 is %+.2f ms above it", e.p50-f.p50)
				}
				rows = append(rows, r)
			}
		}
		if s.id != "a" {
			continue
		}
		// The ceiling: a bare fasthttp server sending the same body on the
		// same core (bench/bare), against the same nginx runs.
		for _, c := range conns {
			bare, ok := get("a", "bare", c)
			if !ok {
				continue
			}
			r := row{scenario: "a' bare fasthttp, same body", conns: fmt.Sprint(c), eRPS: rpsS(bare.rps), eP50: ms(bare.p50), eP99: ms(bare.p99),
				vs: "nginx", vRPS: "-", vP50: "-", vP99: "-", ratio: "-", result: "-", target: "reference: no auth, limit, cache, routing"}
			if v, vok := get("a", "nginx", c); vok {
				r.vRPS, r.vP50, r.vP99 = rpsS(v.rps), ms(v.p50), ms(v.p99)
				if v.rps > 0 {
					r.ratio = fmt.Sprintf("%.2fx", bare.rps/v.rps)
				}
			}
			rows = append(rows, r)
		}
		// Tracing: the same hot URL on two edges loaded at the same time
		// (each by its own wrk, both edges on CPU 0), one without tracing
		// and one sampling 1% of the requests (exported to a loopback
		// OTLP/HTTP sink).
		for _, c := range conns {
			off, ok := get("t", "off", c)
			if !ok {
				continue
			}
			rows = append(rows, row{scenario: "t0 tracing off, 1 hot URL", conns: fmt.Sprint(c), eRPS: rpsS(off.rps), eP50: ms(off.p50), eP99: ms(off.p99),
				vs: "-", vRPS: "-", vP50: "-", vP99: "-", ratio: "-", result: "-", target: "reference for t1 (same build, tracing not configured; loaded at the same time as t1, each edge on half of CPU 0)"})
			on, ok := get("t", "edge", c)
			if !ok {
				continue
			}
			r := row{scenario: "t1 tracing 1%, 1 hot URL", conns: fmt.Sprint(c), eRPS: rpsS(on.rps), eP50: ms(on.p50), eP99: ms(on.p99),
				vs: "tracing off", vRPS: rpsS(off.rps), vP50: ms(off.p50), vP99: ms(off.p99), ratio: "-", target: "rps >= 0.95x tracing off"}
			if off.rps > 0 {
				r.ratio = fmt.Sprintf("%.2fx", on.rps/off.rps)
				r.result = verdict(on.rps >= 0.95*off.rps)
			}
			// The CPU each edge spent per request: the cost of tracing
			// itself (the rate's ratio is its inverse while CPU 0 is shared
			// evenly).
			if on.cpu > 0 && off.cpu > 0 {
				r.target += fmt.Sprintf("; edge CPU/request %.1f us traced vs %.1f us off (%.3fx)", on.cpu, off.cpu, on.cpu/off.cpu)
			}
			rows = append(rows, r)
		}
	}
	if len(stampedes) > 0 {
		e, eok := stampedes["edge"]
		n, nok := stampedes["nginx"]
		r := row{scenario: "e stampede, 100 identical misses", conns: "100", eRPS: "-", eP50: "-", eP99: "-",
			vs: "nginx", vRPS: "-", vP50: "-", vP99: "-", ratio: "-", target: "upstream calls = 1"}
		calls := func(s StampedeResult) string {
			if s.Pending {
				return "pending (no upstream counter in /metrics)"
			}
			return fmt.Sprintf("%.0f upstream call(s) (lone miss: %.0f)", s.Calls, s.LoneCalls)
		}
		if eok {
			r.eP50, r.eP99 = ms(float64(e.P50us)/1000), ms(float64(e.P99us)/1000)
			r.eRPS = fmt.Sprintf("%d/%d ok", e.OK, e.N)
			r.target = "upstream calls = 1; edge: " + calls(e)
			if e.Pending {
				r.result = "PENDING"
			} else {
				// The target: one upstream call for 100 identical misses
				// of a listing (the lone miss's count is a diagnostic).
				r.result = verdict(e.Calls == 1)
			}
		}
		if nok {
			r.vP50, r.vP99 = ms(float64(n.P50us)/1000), ms(float64(n.P99us)/1000)
			r.vRPS = fmt.Sprintf("%d/%d ok", n.OK, n.N)
			r.target += "; nginx: " + calls(n)
		}
		rows = append(rows, r)
	}
	for _, x := range rss {
		r := row{scenario: "f edge RSS under hit mix", conns: fmt.Sprint(x.Conns),
			eRPS: "-", eP50: "-", eP99: "-", vs: "-", vRPS: "-", vP50: "-", vP99: "-", ratio: "-",
			target: fmt.Sprintf("<= 64 MiB: max VmRSS %.1f MiB, VmHWM %.1f MiB", float64(x.VmRSSKiB)/1024, float64(x.VmHWMKiB)/1024)}
		if x.Conns >= 256 {
			r.result = verdict(x.VmRSSKiB <= 64*1024)
		} else {
			r.result = "n/a (<256 conns)"
		}
		rows = append(rows, r)
	}

	rows = append(rows, refreshRows(refreshes, get)...)
	rows = append(rows, scaleRows(scales, get, verdict)...)
	rows = append(rows, fleetRows(scales, get, verdict)...)

	header := row{"scenario", "conns", "edge rps", "edge p50", "edge p99", "vs", "vs rps", "vs p50", "vs p99", "edge/vs", "target", "result"}
	cells := func(r row) []string {
		return []string{r.scenario, r.conns, r.eRPS, r.eP50, r.eP99, r.vs, r.vRPS, r.vP50, r.vP99, r.ratio, r.result, r.target}
	}
	title := "dealer-edge vs nginx"
	if meta.Mode != "" {
		title += fmt.Sprintf(" (%s: %s per run, median of %d run(s))", meta.Mode, meta.Duration, meta.Runs)
	}
	footer := []string{
		"rps = requests/s, p50/p99 = latency percentiles from wrk; each cell is the median over runs of edge and baseline measured back to back in the same invocation.",
		"vs = the baseline: nginx (caching reverse proxy with limit_req in front of the same edge) for a, b, e;",
		"  upstream = the fake upstream's own listing called directly (c, c100); upstream/1 = one hub section called directly (d); d' = the six sections of a cold hub called at once by a bare fasthttp client, one hub at a time (benchtool fanout); c' = a bare fasthttp proxy on the edge's core passing the fake's 20-item answer through (bench/bare -proxy), the CPU any fasthttp proxy spends on one such exchange.",
		"c, c100, d, d-views: edge CPU/request = the edge process's user+system CPU time (/proc/PID/stat) over the run divided by its requests (median over runs).",
		"e: 100 requests released at once over pre-opened connections, upstream latency 200 ms; upstream calls counted from the edge's /metrics.",
		"r0, r: 3,000 listing URLs in a cycle, TTL 1 h (r0) and 1 s (r); CPU per refresh = (edge CPU/request of r - of r0) / refreshes per request of r (medians over runs).",
		"g: the fleet mix (Zipf(1.0) over every listing page of fake-upstream's fleet dealers, all of it in one redis-server) replayed against an edge with L1 = l1_big and one with L1 = l1_small on that Redis; peak RSS = VmHWM of the edge process, GC = go_gc_cpu_seconds_total over its CPU during the run.",
		"s, u: CPU per request = utime+stime from /proc/<pid>/stat over the run divided by wrk's requests (edge + its redis-server; nginx master + worker); median over runs.",
	}
	if *smoke {
		footer = append(footer, "SMOKE MODE: one short run per scenario at 64 connections; targets are shown, not enforced (CI machines vary).")
	}
	if meta.Note != "" {
		footer = append(footer, meta.Note)
	}
	footer = append(footer, notes...)
	if l := inHits(get, conns); l != "" {
		footer = append(footer, l)
	}

	// Plain table on stdout.
	width := make([]int, 12)
	all := append([]row{header}, rows...)
	for _, r := range all {
		for i, c := range cells(r) {
			width[i] = max(width[i], len(c))
		}
	}
	w := os.Stdout
	fmt.Fprintln(w, title)
	for j, r := range all {
		var b strings.Builder
		for i, c := range cells(r) {
			if i > 0 {
				b.WriteString("  ")
			}
			if numeric(i) {
				fmt.Fprintf(&b, "%*s", width[i], c)
			} else {
				fmt.Fprintf(&b, "%-*s", width[i], c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
		if j == 0 {
			tot := 0
			for _, x := range width {
				tot += x + 2
			}
			fmt.Fprintln(w, strings.Repeat("-", min(tot-2, 160)))
		}
	}
	for _, l := range footer {
		fmt.Fprintln(w, l)
	}
	for _, p := range warnings {
		fmt.Fprintln(w, "warning:", p)
	}
	for _, p := range problems {
		fmt.Fprintln(w, "FAILED:", p)
	}

	if *md != "" {
		mf, err := os.Create(*md)
		if err != nil {
			return err
		}
		writeMD(mf, title, all, cells, footer, warnings, problems)
		if err := mf.Close(); err != nil {
			return err
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d problem(s): a server failed or answered non-2xx / nothing", len(problems))
	}
	return nil
}

func writeMD(w io.Writer, title string, all []row, cells func(row) []string, footer, warnings, problems []string) {
	fmt.Fprintf(w, "# %s\n\n", title)
	for j, r := range all {
		c := cells(r)
		for i := range c {
			c[i] = strings.ReplaceAll(c[i], "|", `\|`)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(c, " | "))
		if j == 0 {
			seps := make([]string, len(c))
			for i := range seps {
				seps[i] = "---"
				if numeric(i) {
					seps[i] = "---:"
				}
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(seps, " | "))
		}
	}
	fmt.Fprintln(w)
	for _, l := range footer {
		fmt.Fprintf(w, "- %s\n", l)
	}
	for _, p := range warnings {
		fmt.Fprintf(w, "- warning: %s\n", p)
	}
	for _, p := range problems {
		fmt.Fprintf(w, "- **FAILED**: %s\n", p)
	}
}

// inHits states the miss rows' edge CPU per request in units of an L1
// hit's of the same run (row r0), which divides out most of a shared
// machine's phase (the targets stay in microseconds); "" without r0.
func inHits(get func(scn, target string, c int) (agg, bool), conns []int) string {
	r0, ok := get("r0", "edge", 8)
	if !ok || r0.cpu <= 0 {
		return ""
	}
	var parts []string
	for _, scn := range []struct{ id, name string }{{"c", "c"}, {"c100", "c100"}, {"d", "d"}, {"dv", "d-views"}} {
		var cells []string
		for _, c := range conns {
			if a, ok := get(scn.id, "edge", c); ok && a.cpu > 0 {
				cells = append(cells, fmt.Sprintf("%.1fx at %d", a.cpu/r0.cpu, c))
			}
		}
		if len(cells) > 0 {
			parts = append(parts, scn.name+" "+strings.Join(cells, ", "))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("miss rows' edge CPU/request in L1 hits of this run (row r0: %.1f us; a machine's slow phase moves both): %s.", r0.cpu, strings.Join(parts, "; "))
}

// numeric tells the right-aligned columns.
func numeric(i int) bool { return i >= 1 && i <= 9 && i != 5 }

// refreshRows are the rows of scenarios r0 (hits only) and r (the same
// requests, each URL refreshed about once a second), with the L1 of the
// bench and again with a 64 KiB L1 (suffix -l2: hits and stale entries
// from Redis): the edge's CPU per request of both, and of r per refresh.
// Informational: issue 16 set no target for refreshes.
func refreshRows(recs []record, get func(scn, target string, c int) (agg, bool)) []row {
	var rows []row
	for _, p := range []struct{ sfx, what string }{{"", "3,000 listing URLs"}, {"-l2", "3,000 listing URLs, L1 64 KiB"}} {
		r0, ok0 := get("r0"+p.sfx, "edge", 8)
		r1, ok1 := get("r"+p.sfx, "edge", 8)
		if !ok0 || !ok1 {
			continue
		}
		var perReq, revalidated []float64
		for _, x := range recs {
			if x.Scenario != "r"+p.sfx && (x.Scenario != "" || p.sfx != "") {
				continue // records without a scenario are r's (runs before the -l2 rows)
			}
			if x.Requests > 0 {
				perReq = append(perReq, float64(x.Fills)/float64(x.Requests))
			}
			if x.Fills > 0 {
				revalidated = append(revalidated, float64(x.Revalidated)/float64(x.Fills))
			}
		}
		fpr := median(perReq)
		ms := func(v float64) string { return fmt.Sprintf("%.2f ms", v) }
		rpsS := func(v float64) string { return fmt.Sprintf("%.0f", v) }
		base := row{conns: "8", vs: "-", vRPS: "-", vP50: "-", vP99: "-", ratio: "-", result: "-"}
		a := base
		a.scenario, a.eRPS, a.eP50, a.eP99 = "r0"+p.sfx+" "+p.what+", TTL 1 h (hits)", rpsS(r0.rps), ms(r0.p50), ms(r0.p99)
		a.target = fmt.Sprintf("reference for r%s: edge CPU/request %.1f us", p.sfx, r0.cpu)
		b := base
		b.scenario, b.eRPS, b.eP50, b.eP99 = "r"+p.sfx+" refresh: the same URLs, TTL 1 s, upstream unchanged", rpsS(r1.rps), ms(r1.p50), ms(r1.p99)
		b.vs, b.vRPS, b.vP50, b.vP99 = "r0"+p.sfx, rpsS(r0.rps), ms(r0.p50), ms(r0.p99)
		if r0.rps > 0 {
			b.ratio = fmt.Sprintf("%.2fx", r1.rps/r0.rps)
		}
		b.target = fmt.Sprintf("edge CPU/request %.1f us; %.3f refreshes/request (%.0f%% revalidated)", r1.cpu, fpr, 100*median(revalidated))
		if fpr > 0 && r1.cpu > 0 && r0.cpu > 0 {
			b.target += fmt.Sprintf("; edge CPU per refresh %.0f us", (r1.cpu-r0.cpu)/fpr)
		}
		rows = append(rows, a, b)
	}
	return rows
}
