package metricnames

// promtool unit tests of deploy/prometheus/dealer-edge.rules.yml for the
// rules an audit (2026-11-27) found wanting; dealer-edge.rules.test.yml
// holds the same cases next to the others. Each failed on the rules before
// their fix.

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// promtoolTest runs promtool test rules on tests, a test file whose rule
// file is RULES (replaced by dealer-edge.rules.yml's path).
func promtoolTest(t *testing.T, tests string) {
	t.Helper()
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err != nil {
		t.Fatal(err)
	}
	promtool := filepath.Join(strings.TrimSpace(string(out)), "bin", "promtool")
	if _, err := os.Stat(promtool); err != nil {
		t.Skip("promtool not installed")
	}
	rules := filepath.Join(deployDir, "prometheus", "dealer-edge.rules.yml")
	f := filepath.Join(t.TempDir(), "rules.test.yml")
	if err := os.WriteFile(f, []byte(strings.ReplaceAll(tests, "RULES", rules)), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command(promtool, "test", "rules", f).CombinedOutput(); err != nil {
		t.Errorf("promtool test rules: %v\n%s", err, b)
	}
}

// The availability SLO counts a connection refused beyond
// server.concurrency (the edge's fast 503, README "The public listener",
// counted only in edge_listener_rejected_connections_total{reason=
// "concurrency"}, never in edge_requests_total) as a failed request, in
// the errors and in the total, so overload burns the budget and pages.
// Until 2026-11-27 the records read edge_requests_total only: the SLO and
// its burn alerts stayed silent while half the clients got 503s.
func TestOverloadRefusalsBurnAvailabilityBudget(t *testing.T) {
	promtoolTest(t, `rule_files:
  - RULES
evaluation_interval: 30s
tests:
  - name: overload 503s burn the availability budget
    interval: 1m
    input_series:
      - series: 'edge_requests_total{job="dealer-edge",instance="a:9091",route="inventory_listing",status="200",cache="hit"}'
        values: '0+6000x70'
      - series: 'edge_listener_rejected_connections_total{job="dealer-edge",instance="a:9091",reason="concurrency"}'
        values: '0+6000x70'
      - series: 'edge_listener_rejected_connections_total{job="dealer-edge",instance="a:9091",reason="per_ip"}'
        values: '0+6000x70'
    promql_expr_test:
      - expr: job:edge_slo_availability_errors:ratio_rate1h
        eval_time: 65m
        exp_samples:
          - labels: 'job:edge_slo_availability_errors:ratio_rate1h{job="dealer-edge"}'
            value: 0.5
    alert_rule_test:
      - eval_time: 65m
        alertname: EdgeAvailabilityBudgetBurnFast
        exp_alerts:
          - exp_labels: {severity: page, slo: availability, job: dealer-edge}
            exp_annotations:
              summary: "dealer-edge burns its availability error budget fast"
              description: "50% of requests failed (5xx or refused for overload) over the alert's long window (1h, or 6h when only the 6h/30m pair burns); at this rate the 30-day budget of 0.1 % lasts days, not a month."
              runbook_url: https://github.com/dealer-edge/dealer-edge/blob/main/docs/runbook.md#edgeavailabilitybudgetburnfast
`)
}

// EdgeDown pages when no instance of a job that exported edge_build_info
// within the last day has answered a scrape for 5 minutes (crash loop, OOM
// kills, failing scrapes, no target left): the SLO records then have no
// input, so no burn alert can fire. One instance of two down is not
// EdgeDown. Until 2026-11-27 no rule looked at failed scrapes or absent
// series, and with every instance down nothing fired.
func TestEdgeDownAlert(t *testing.T) {
	promtoolTest(t, `rule_files:
  - RULES
evaluation_interval: 30s
tests:
  - name: edge down
    interval: 1m
    input_series:
      - series: 'up{job="dealer-edge",instance="a:9091"}'
        values: '1x9 0x20'
      - series: 'up{job="dealer-edge",instance="b:9091"}'
        values: '1x9 0x20'
      - series: 'edge_build_info{job="dealer-edge",instance="a:9091",version="v1.2.0",commit="0123abc",goversion="go1.26.8"}'
        values: '1x9 stale'
      - series: 'edge_build_info{job="dealer-edge",instance="b:9091",version="v1.2.0",commit="0123abc",goversion="go1.26.8"}'
        values: '1x9 stale'
      - series: 'edge_build_info{job="dealer-edge-canary",instance="c:9091",version="v1.2.0",commit="0123abc",goversion="go1.26.8"}'
        values: '1x9 stale'
      - series: 'edge_build_info{job="dealer-edge-canary",instance="d:9091",version="v1.2.0",commit="0123abc",goversion="go1.26.8"}'
        values: '1x30'
    alert_rule_test:
      - eval_time: 14m
        alertname: EdgeDown
        exp_alerts: []
      - eval_time: 20m
        alertname: EdgeDown
        exp_alerts:
          - exp_labels: {severity: page, job: dealer-edge}
            exp_annotations:
              summary: "no instance of dealer-edge answers its scrape"
              description: "No instance of dealer-edge has been scraped for 5 minutes (one was within the last day): all down, failing their scrapes or gone from service discovery. The SLO alerts have no input meanwhile."
              runbook_url: https://github.com/dealer-edge/dealer-edge/blob/main/docs/runbook.md#edgedown
`)
}

// A burn alert's description gives $value as the share over the alert's
// long window without claiming which one: $value comes from the branch
// that fired, 1h (with 5m) or, when only that pair burns, 6h (with 30m).
// Here the 6h/30m pair fires, the 1h share being 0.8 % and the 6h share
// 1.702 %. Until 2026-11-27 the description said "5xx share over 1h is
// 1.702%".
func TestBurnDescriptionsNameNoWrongWindow(t *testing.T) {
	promtoolTest(t, `rule_files:
  - RULES
evaluation_interval: 30s
tests:
  - name: burn fast over 6h only
    interval: 1m
    input_series:
      - series: 'edge_requests_total{job="dealer-edge",instance="a:9091",route="inventory_listing",status="200",cache="hit"}'
        values: '0+980x300 294000+992x90'
      - series: 'edge_requests_total{job="dealer-edge",instance="a:9091",route="inventory_listing",status="503",cache="none"}'
        values: '0+20x300 6000+8x90'
    promql_expr_test:
      - expr: job:edge_slo_availability_errors:ratio_rate1h
        eval_time: 390m
        exp_samples:
          - labels: 'job:edge_slo_availability_errors:ratio_rate1h{job="dealer-edge"}'
            value: 0.008
    alert_rule_test:
      - eval_time: 390m
        alertname: EdgeAvailabilityBudgetBurnFast
        exp_alerts:
          - exp_labels: {severity: page, slo: availability, job: dealer-edge}
            exp_annotations:
              summary: "dealer-edge burns its availability error budget fast"
              description: "1.702% of requests failed (5xx or refused for overload) over the alert's long window (1h, or 6h when only the 6h/30m pair burns); at this rate the 30-day budget of 0.1 % lasts days, not a month."
              runbook_url: https://github.com/dealer-edge/dealer-edge/blob/main/docs/runbook.md#edgeavailabilitybudgetburnfast
`)
	rules, err := os.ReadFile(filepath.Join(deployDir, "prometheus", "dealer-edge.rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	// Every burn alert ORs two window pairs: its description must not
	// pin $value to one window ("over 1h is", "over 1d;").
	for _, bad := range []string{"over 1h is", "over 1d is", "over 1h;", "over 1d;", "over 1h,", "over 1d,"} {
		if strings.Contains(string(rules), bad) {
			t.Errorf("a description pins $value to one window: %q", bad)
		}
	}
}

// EdgeUpstreamBreakerOpen fires on a breaker that is not closed while
// calls to its service are refused or one of its breakers opens (a
// failed call alone is not the evidence since 2026-11-27: the content
// service's gauge is the worst of its per-type breakers, and another
// type's errors are no open breaker), not on a breaker left
// half-open by an outage after which no call came: the gauge reads the
// breaker's State(), which turns open into half-open once
// upstream.breaker_open_for has passed, and only a call leaves half-open.
// An outage under traffic still fires 5 minutes after the breaker opens.
// Until 2026-11-27 the alert read the gauge alone and fired for good after
// any outage of a service that then got no calls.
func TestBreakerAlertQuietHalfOpen(t *testing.T) {
	promtoolTest(t, `rule_files:
  - RULES
evaluation_interval: 30s
tests:
  - name: quiet half-open breaker does not fire
    interval: 1m
    input_series:
      - series: 'edge_upstream_breaker_state{job="dealer-edge",instance="a:9091",service="dealers"}'
        values: '0 2 1x60'
      - series: 'edge_upstream_requests_total{job="dealer-edge",instance="a:9091",service="dealers",outcome="ok"}'
        values: '40 40x61'
      - series: 'edge_upstream_requests_total{job="dealer-edge",instance="a:9091",service="dealers",outcome="error"}'
        values: '0 5x61'
      - series: 'edge_upstream_breaker_transitions_total{job="dealer-edge",instance="a:9091",service="dealers",to="open"}'
        values: '0 1x61'
    alert_rule_test:
      - eval_time: 7m
        alertname: EdgeUpstreamBreakerOpen
        exp_alerts: []
      - eval_time: 60m
        alertname: EdgeUpstreamBreakerOpen
        exp_alerts: []
  - name: breaker open under traffic fires after 5 minutes
    interval: 1m
    input_series:
      - series: 'edge_upstream_breaker_state{job="dealer-edge",instance="a:9091",service="inventory"}'
        values: '0 0 2 2 1 2 2 1 2 2 1 2 2 1 2'
      - series: 'edge_upstream_requests_total{job="dealer-edge",instance="a:9091",service="inventory",outcome="ok"}'
        values: '0 600 1200x12'
      - series: 'edge_upstream_requests_total{job="dealer-edge",instance="a:9091",service="inventory",outcome="error"}'
        values: '3 3 8+1x12'
      - series: 'edge_upstream_breaker_transitions_total{job="dealer-edge",instance="a:9091",service="inventory",to="open"}'
        values: '0 0 1+1x12'
    alert_rule_test:
      - eval_time: 6m30s
        alertname: EdgeUpstreamBreakerOpen
        exp_alerts: []
      - eval_time: 7m
        alertname: EdgeUpstreamBreakerOpen
        exp_alerts:
          - exp_labels: {severity: warning, job: dealer-edge, instance: "a:9091", service: inventory}
            exp_annotations:
              summary: "breaker of inventory not closed and refusing or failing calls for 5 minutes on a:9091"
              description: "Calls to inventory are refused or fail; requests that need it get stale answers or fast 503s."
              runbook_url: https://github.com/dealer-edge/dealer-edge/blob/main/docs/runbook.md#edgeupstreambreakeropen
`)
}

// The README's alert table ("Dashboard, alerts and SLOs": alert, fires
// when, severity) is the operator's list of what pages: each alert of the
// rules is in it with the severity the rule sets, and each row names an
// alert of the rules. ("`X...Fast` / `...Slow`" rows name two alerts, with
// "page / ticket" severities in that order.)
func TestReadmeAlertTableMatchesRules(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(deployDir, "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(raw), "\n| alert | fires when | severity |\n")
	if !ok {
		t.Fatal("README has no alert table (| alert | fires when | severity |)")
	}
	doc := map[string]string{}
	nameRE := regexp.MustCompile("`([A-Za-z0-9.]+)`")
	for _, line := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 3 || strings.HasPrefix(strings.TrimSpace(cells[0]), "---") {
			continue
		}
		sev := strings.Split(cells[2], "/")
		names := nameRE.FindAllStringSubmatch(cells[0], -1)
		var first string
		for i, m := range names {
			n := m[1]
			if rest, ok := strings.CutPrefix(n, "..."); ok && first != "" {
				n = strings.TrimSuffix(first, "Fast") + rest
			}
			if i == 0 {
				first = n
			}
			s := strings.TrimSpace(sev[min(i, len(sev)-1)])
			doc[n] = s
		}
	}
	if len(doc) < 10 {
		t.Fatalf("only %d alerts in the README's table", len(doc))
	}
	seen := map[string]bool{}
	for _, g := range loadRules(t).Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			seen[r.Alert] = true
			s, ok := doc[r.Alert]
			if !ok {
				t.Errorf("alert %s is not in the README's alert table", r.Alert)
				continue
			}
			if s != r.Labels["severity"] {
				t.Errorf("alert %s: the README says severity %q, the rule sets %q", r.Alert, s, r.Labels["severity"])
			}
		}
	}
	for n := range doc {
		if !seen[n] {
			t.Errorf("the README's alert table lists %s, which no rule defines", n)
		}
	}
}
