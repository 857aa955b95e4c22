package dashboard

import "fmt"

// ds is the Prometheus data source, chosen by the datasource variable.
var ds = &Datasource{Type: "prometheus", UID: "${datasource}"}

// Selectors every query carries: the job and, for per-route queries, the
// routes picked in the variables.
const (
	sel      = `job=~"$job", instance=~"$instance"`
	selRoute = sel + `, route=~"$route"`
	rate     = "[$__rate_interval]"
)

// RunbookURL is where the alerts' runbook lives (linked from the
// dashboard too).
const RunbookURL = "https://github.com/dealer-edge/dealer-edge/blob/main/docs/runbook.md"

func f(v float64) *float64 { return &v }

// builder lays panels out on the grid, row by row.
type builder struct {
	panels []Panel
	id     int
	x, y   int
	rowH   int
}

func (b *builder) row(title string) {
	if b.x > 0 {
		b.y += b.rowH
		b.x, b.rowH = 0, 0
	}
	b.id++
	b.panels = append(b.panels, Panel{ID: b.id, Type: "row", Title: title, GridPos: GridPos{H: 1, W: 24, X: 0, Y: b.y}, Collapsed: new(bool)})
	b.y++
}

// add places p at the next free place of width w and height h.
func (b *builder) add(w, h int, p Panel) {
	if b.x+w > 24 {
		b.y += b.rowH
		b.x, b.rowH = 0, 0
	}
	b.id++
	p.ID = b.id
	p.GridPos = GridPos{H: h, W: w, X: b.x, Y: b.y}
	p.Datasource = ds
	for i := range p.Targets {
		p.Targets[i].RefID = string(rune('A' + i))
		p.Targets[i].Datasource = ds
		if !p.Targets[i].Instant {
			p.Targets[i].Range = true
		}
	}
	b.panels = append(b.panels, p)
	b.x += w
	b.rowH = max(b.rowH, h)
}

func q(expr, legend string) Target { return Target{Expr: expr, LegendFormat: legend} }

// timeseries is a graph panel.
func timeseries(title, desc, unit string, targets ...Target) Panel {
	return Panel{
		Type: "timeseries", Title: title, Description: desc, Targets: targets,
		FieldConfig: &FieldConf{Defaults: FieldDefaults{
			Unit:   unit,
			Custom: map[string]any{"drawStyle": "line", "lineWidth": 1, "fillOpacity": 10, "showPoints": "never", "spanNulls": false},
		}, Overrides: []any{}},
		Options: map[string]any{
			"legend":  map[string]any{"displayMode": "table", "placement": "bottom", "showLegend": true, "calcs": []string{"mean", "lastNotNull", "max"}},
			"tooltip": map[string]any{"mode": "multi", "sort": "desc"},
		},
	}
}

// ratio is a timeseries of a 0..1 share.
func ratio(title, desc string, targets ...Target) Panel {
	p := timeseries(title, desc, "percentunit", targets...)
	p.FieldConfig.Defaults.Min, p.FieldConfig.Defaults.Max = f(0), f(1)
	return p
}

// stateTimeline shows a state gauge with named values.
func stateTimeline(title, desc string, mappings map[string][2]string, thresholds []Step, targets ...Target) Panel {
	opts := map[string]any{}
	for v, m := range mappings {
		opts[v] = map[string]any{"text": m[0], "color": m[1]}
	}
	return Panel{
		Type: "state-timeline", Title: title, Description: desc, Targets: targets,
		FieldConfig: &FieldConf{Defaults: FieldDefaults{
			Mappings:   []any{map[string]any{"type": "value", "options": opts}},
			Thresholds: &Thresholds{Mode: "absolute", Steps: thresholds},
			Color:      map[string]any{"mode": "thresholds"},
		}, Overrides: []any{}},
		Options: map[string]any{"showValue": "auto", "mergeValues": true, "rowHeight": 0.9, "legend": map[string]any{"showLegend": false}},
	}
}

// Build returns the dealer-edge dashboard.
func Build() Dashboard {
	b := &builder{}

	b.row("Traffic")
	b.add(12, 8, timeseries("Requests by route", "Public requests per second, per route (edge_requests_total).", "reqps",
		q(`sum by (route) (rate(edge_requests_total{`+selRoute+`}`+rate+`))`, "{{route}}")))
	b.add(12, 8, timeseries("Requests by status", "Public requests per second, per status code (or class).", "reqps",
		q(`sum by (status) (rate(edge_requests_total{`+selRoute+`}`+rate+`))`, "{{status}}")))
	b.add(12, 8, ratio("5xx share by route", "Share of requests answered with a 5xx; the availability SLO allows 0.1 % over 30 days.",
		q(`sum by (route) (rate(edge_requests_total{`+selRoute+`, status=~"5.."}`+rate+`)) / sum by (route) (rate(edge_requests_total{`+selRoute+`}`+rate+`))`, "{{route}}")))
	lat := timeseries("Latency by route (p50, p90, p99)", "Handler time quantiles from edge_request_duration_seconds; the latency SLO is 99 % within 250 ms.", "s")
	for i, qu := range []string{"0.5", "0.9", "0.99"} {
		lat.Targets = append(lat.Targets, q(fmt.Sprintf(`histogram_quantile(%s, sum by (route, le) (rate(edge_request_duration_seconds_bucket{`+selRoute+`}`+rate+`)))`, qu),
			"{{route}} p"+[]string{"50", "90", "99"}[i]))
	}
	b.add(12, 8, lat)
	b.add(12, 8, timeseries("Response bandwidth by encoding", "Body bytes sent per second, identity and gzip.", "Bps",
		q(`sum by (encoding) (rate(edge_response_body_bytes_total{`+sel+`}`+rate+`))`, "{{encoding}}")))
	b.add(12, 8, timeseries("Authentication failures and rate-limited requests", "401 (missing, unknown, revoked or expired key) and 429 (over the key's rate or a per-address limit); by reason in the row Authentication and key index.", "reqps",
		q(`sum by (status) (rate(edge_requests_total{`+selRoute+`, status="401"}`+rate+`))`, "{{status}}"),
		q(`sum by (status) (rate(edge_requests_total{`+selRoute+`, status="429"}`+rate+`))`, "{{status}} rate limited")))

	b.row("Cache: hit ratio next to the TTL in force")
	b.add(9, 8, ratio("Hit ratio by route", "hit / (hit + miss + stale) of the requests that looked in the cache. Config reloads are marked.",
		q(`sum by (route) (rate(edge_requests_total{`+selRoute+`, cache="hit"}`+rate+`)) / sum by (route) (rate(edge_requests_total{`+selRoute+`, cache=~"hit|miss|stale"}`+rate+`))`, "{{route}}")))
	b.add(9, 8, ratio("Stale share by route", "stale / (hit + miss + stale): answers served stale (while revalidating or because an upstream failed).",
		q(`sum by (route) (rate(edge_requests_total{`+selRoute+`, cache="stale"}`+rate+`)) / sum by (route) (rate(edge_requests_total{`+selRoute+`, cache=~"hit|miss|stale"}`+rate+`))`, "{{route}}")))
	pol := Panel{
		Type: "table", Title: "TTL policy in force", Description: "cache.routes of the config in force (edge_cache_policy_*_seconds; not found TTL: how long a detail route remembers a 404 of the services, 0 off); it changes on reload.",
		Targets: []Target{
			{Expr: `max by (route) (edge_cache_policy_ttl_seconds{` + selRoute + `})`, Instant: true, Format: "table"},
			{Expr: `max by (route) (edge_cache_policy_stale_while_revalidate_seconds{` + selRoute + `})`, Instant: true, Format: "table"},
			{Expr: `max by (route) (edge_cache_policy_stale_if_error_seconds{` + selRoute + `})`, Instant: true, Format: "table"},
			{Expr: `max by (route) (edge_cache_policy_not_found_ttl_seconds{` + selRoute + `})`, Instant: true, Format: "table"},
		},
		FieldConfig: &FieldConf{Defaults: FieldDefaults{Unit: "s"}, Overrides: []any{}},
		Options:     map[string]any{"showHeader": true},
		Transforms: []any{
			map[string]any{"id": "merge", "options": map[string]any{}},
			map[string]any{"id": "organize", "options": map[string]any{
				"excludeByName": map[string]any{"Time": true},
				"renameByName":  map[string]any{"Value #A": "TTL", "Value #B": "stale-while-revalidate", "Value #C": "stale-if-error", "Value #D": "not found TTL"},
			}},
		},
	}
	b.add(6, 8, pol)
	b.add(12, 8, timeseries("TTL in force over time", "The fresh TTL per route: a step is a reload that changed it.", "s",
		q(`max by (route) (edge_cache_policy_ttl_seconds{`+selRoute+`})`, "{{route}}")))
	b.add(12, 8, timeseries("Cache lookups, all routes", "Lookup results of the response cache over every route (hit, miss, stale, bypass).", "ops",
		q(`sum(rate(edge_cache_hits_total{`+sel+`}`+rate+`))`, "hit"),
		q(`sum(rate(edge_cache_misses_total{`+sel+`}`+rate+`))`, "miss"),
		q(`sum(rate(edge_cache_stale_served_total{`+sel+`}`+rate+`))`, "stale"),
		q(`sum(rate(edge_cache_bypass_total{`+sel+`}`+rate+`))`, "bypass")))
	b.add(12, 8, timeseries("Fills, coalesced lookups, stale on error", "Upstream fills (misses and background refreshes), failed fills, fills whose upstream answer was unchanged (revalidated: nothing built) or whose body was (its compressed bytes kept), lookups that shared a fill, stale answers because an upstream failed, entries dropped because their fill answered 404 (a sold vehicle, a removed item), new entries kept out of Redis because their dealer's Redis byte budget was spent (cache.redis_dealer_budget_bytes: one key flooding distinct URLs), purges (of one dealer, of everything).", "ops",
		q(`sum(rate(edge_cache_fills_total{`+sel+`}`+rate+`))`, "fills"),
		q(`sum(rate(edge_cache_fill_errors_total{`+sel+`}`+rate+`))`, "fill errors"),
		q(`sum(rate(edge_cache_fills_revalidated_total{`+sel+`}`+rate+`))`, "revalidated"),
		q(`sum(rate(edge_cache_fills_unchanged_total{`+sel+`}`+rate+`))`, "same body"),
		q(`sum(rate(edge_cache_coalesced_total{`+sel+`}`+rate+`))`, "coalesced"),
		q(`sum(rate(edge_cache_stale_on_error_total{`+sel+`}`+rate+`))`, "stale on error"),
		q(`sum(rate(edge_cache_dropped_total{`+sel+`}`+rate+`))`, "dropped (404)"),
		q(`sum(rate(edge_cache_redis_budget_skips_total{`+sel+`}`+rate+`))`, "over dealer's Redis budget"),
		q(`sum(rate(edge_cache_purges_total{`+sel+`}`+rate+`))`, "purges"),
		q(`sum(rate(edge_cache_purges_all_total{`+sel+`}`+rate+`))`, "purges of everything")))
	b.add(8, 8, timeseries("L1 size", "Bytes held by each instance's in-process cache (bounded by cache.l1_max_bytes): its hot tier and, when cache.l1_hot_bytes splits it, its off-heap bulk tier.", "bytes",
		q(`edge_cache_l1_bytes{`+sel+`}`, "{{instance}}"),
		q(`edge_cache_bulk_bytes{`+sel+`}`, "bulk {{instance}}")))
	b.add(8, 8, timeseries("L1 entries", "Entries in each instance's in-process cache, hot tier and bulk tier.", "short",
		q(`edge_cache_l1_entries{`+sel+`}`, "{{instance}}"),
		q(`edge_cache_bulk_entries{`+sel+`}`, "bulk {{instance}}")))
	b.add(8, 8, timeseries("L1 evictions and L1 hits", "Entries evicted for room, hits answered from L1 alone (its hot tier), and fresh hits from its bulk tier.", "ops",
		q(`sum by (instance) (rate(edge_cache_l1_evictions_total{`+sel+`}`+rate+`))`, "evictions {{instance}}"),
		q(`sum by (instance) (rate(edge_cache_l1_hits_total{`+sel+`}`+rate+`))`, "L1 hits {{instance}}"),
		q(`sum by (instance) (rate(edge_cache_bulk_hits_total{`+sel+`}`+rate+`))`, "bulk hits {{instance}}")))
	b.add(24, 6, timeseries("Background refreshes", "Stale-while-revalidate refreshes under way per instance against cache.max_refreshes, and refreshes started and skipped per second: in flight at the bound with skipped moving in steady traffic means the bound is too low for the stale keys (README, Response cache, \"Background refreshes are bounded\").", "short",
		q(`max by (instance) (edge_cache_refreshes_in_flight{`+sel+`})`, "in flight {{instance}}"),
		q(`max by (instance) (edge_cache_refreshes_max{`+sel+`})`, "bound {{instance}}"),
		q(`sum(rate(edge_cache_refreshes_total{`+sel+`}`+rate+`))`, "started/s"),
		q(`sum(rate(edge_cache_refreshes_skipped_total{`+sel+`}`+rate+`))`, "skipped/s")))

	b.row("Upstream services")
	b.add(12, 8, timeseries("Upstream calls by service and outcome", "Calls to internal services: ok, not_found, error, breaker_open (refused), canceled.", "ops",
		q(`sum by (service, outcome) (rate(edge_upstream_requests_total{`+sel+`}`+rate+`))`, "{{service}} {{outcome}}")))
	b.add(12, 8, ratio("Upstream error share by service", "(error + breaker_open) / all calls.",
		q(`sum by (service) (rate(edge_upstream_requests_total{`+sel+`, outcome=~"error|breaker_open"}`+rate+`)) / sum by (service) (rate(edge_upstream_requests_total{`+sel+`}`+rate+`))`, "{{service}}")))
	b.add(12, 8, timeseries("Upstream latency p99 and p50 by service", "edge_upstream_request_duration_seconds of the calls that were made.", "s",
		q(`histogram_quantile(0.99, sum by (service, le) (rate(edge_upstream_request_duration_seconds_bucket{`+sel+`}`+rate+`)))`, "{{service}} p99"),
		q(`histogram_quantile(0.5, sum by (service, le) (rate(edge_upstream_request_duration_seconds_bucket{`+sel+`}`+rate+`)))`, "{{service}} p50")))
	b.add(12, 8, stateTimeline("Breaker state by service", "Worst state over the instances: closed, half-open, open. An open breaker reads half-open once upstream.breaker_open_for has passed and until the next call: after an outage with no calls since, half-open alone refuses nothing (the alert EdgeUpstreamBreakerOpen needs a refused call or an opening within 5 minutes; /readyz and the status page do not count such a quiet breaker as degraded).",
		map[string][2]string{"0": {"closed", "green"}, "1": {"half-open", "orange"}, "2": {"open", "red"}},
		[]Step{{Color: "green"}, {Color: "orange", Value: f(1)}, {Color: "red", Value: f(2)}},
		q(`max by (service) (edge_upstream_breaker_state{`+sel+`})`, "{{service}}")))
	b.add(12, 6, timeseries("Breaker transitions", "Breaker state changes per service and target state.", "short",
		q(`sum by (service, to) (increase(edge_upstream_breaker_transitions_total{`+sel+`}`+rate+`))`, "{{service}} to {{to}}")))
	b.add(12, 6, timeseries("Dealer breaker openings", "Openings of one dealer's breaker of a service (or content type): that dealer's calls failed while the service answered the others, so only its calls are refused and the service's breaker, its state above and /readyz stay closed. Which dealer: the log line 'dealer breaker open' (dealer_id).", "short",
		q(`sum by (service, content_type) (increase(edge_upstream_dealer_breaker_opens_total{`+sel+`}`+rate+`))`, "{{service}} {{content_type}}")))

	b.row("Rate limiting and Redis")
	b.add(8, 8, timeseries("Rate-limit decisions", "Requests admitted and rejected (429) by the per-key limiter.", "ops",
		q(`sum(rate(edge_ratelimit_admitted_total{`+sel+`}`+rate+`))`, "admitted"),
		q(`sum(rate(edge_ratelimit_rejected_total{`+sel+`}`+rate+`))`, "rejected")))
	b.add(8, 8, stateTimeline("Limiter fallback", "1 while an instance's limiter runs without Redis because Redis failed: the per-key limiter (key) on rate_limit.fail_mode, the per-address limiter (address: failed authentications, the OpenAPI document) on its in-process fallback.",
		map[string][2]string{"0": {"redis", "green"}, "1": {"fallback", "red"}},
		[]Step{{Color: "green"}, {Color: "red", Value: f(1)}},
		q(`edge_ratelimit_fallback_active{`+sel+`}`, "key {{instance}}"),
		q(`edge_ratelimit_address_fallback_active{`+sel+`}`, "address {{instance}}")))
	b.add(8, 8, timeseries("Limiter fallback activations and fail mode", "Switches to the fallback of the per-key and the per-address limiter, and the per-key limiter's fail mode configured (local, open, closed).", "short",
		q(`sum by (instance) (increase(edge_ratelimit_fallback_activations_total{`+sel+`}`+rate+`))`, "activations key {{instance}}"),
		q(`sum by (instance) (increase(edge_ratelimit_address_fallback_activations_total{`+sel+`}`+rate+`))`, "activations address {{instance}}"),
		q(`max by (mode) (edge_ratelimit_fail_mode{`+sel+`})`, "fail mode {{mode}}")))
	b.add(8, 8, stateTimeline("Redis", "Whether Redis answers each instance's PING at scrape time.",
		map[string][2]string{"0": {"down", "red"}, "1": {"up", "green"}},
		[]Step{{Color: "red"}, {Color: "green", Value: f(1)}},
		q(`edge_redis_up{`+sel+`}`, "{{instance}}")))
	b.add(8, 8, timeseries("Redis errors by component", "Failed or timed-out Redis commands of the cache and the rate limiter.", "ops",
		q(`sum by (component) (rate(edge_redis_errors_total{`+sel+`}`+rate+`))`, "{{component}}")))
	b.add(8, 8, timeseries("Log lines and trace spans dropped", "Access lines over log.max_lines_per_sec, event lines over log.max_event_lines_per_sec; spans: sampled trace spans that never reached the collector, by reason; client-sampled not traced: requests whose traceparent asked for a trace over tracing.client_sampled_per_second (both only while tracing is on).", "short",
		// edge_log_lines_dropped_total counts every dropped line, event
		// lines too (ops.Logs.admit): access lines are the difference.
		q(`sum(increase(edge_log_lines_dropped_total{`+sel+`}`+rate+`)) - sum(increase(edge_log_event_lines_dropped_total{`+sel+`}`+rate+`))`, "access"),
		q(`sum(increase(edge_log_event_lines_dropped_total{`+sel+`}`+rate+`))`, "event"),
		q(`sum by (reason) (increase(edge_trace_spans_dropped_total{`+sel+`}`+rate+`))`, "spans {{reason}}"),
		q(`sum(increase(edge_trace_client_sampled_capped_total{`+sel+`}`+rate+`))`, "client-sampled not traced")))

	b.row("Authentication and key index")
	b.add(8, 8, timeseries("Key index not fresh", "1 while an instance's key index is loading (no first snapshot yet), stale or expired (no sync with the dealers service): what EdgeKeyIndexNotFresh fires on.", "short",
		q(`max by (instance, state) (edge_auth_index_state{`+sel+`, state=~"loading|stale|expired"})`, "{{instance}} {{state}}")))
	b.add(8, 8, timeseries("Key index age", "Time since each instance's last good sync of the key index (past auth.index_stale_after it is stale).", "s",
		q(`max by (instance) (edge_auth_index_age_seconds{`+sel+`})`, "{{instance}}")))
	b.add(8, 8, timeseries("Key index keys", "Active keys each instance's key index holds.", "short",
		q(`max by (instance) (edge_auth_index_keys{`+sel+`})`, "{{instance}}")))
	b.add(8, 8, timeseries("Key index syncs", "Syncs with the dealers service, the failed ones, and full reloads after a 410 cursor (a resync loop when they keep coming), per instance.", "short",
		q(`sum by (instance) (increase(edge_auth_index_syncs_total{`+sel+`}`+rate+`))`, "syncs {{instance}}"),
		q(`sum by (instance) (increase(edge_auth_index_sync_errors_total{`+sel+`}`+rate+`))`, "errors {{instance}}"),
		q(`sum by (instance) (increase(edge_auth_index_resyncs_total{`+sel+`}`+rate+`))`, "resyncs {{instance}}")))
	b.add(8, 8, timeseries("Authentication results", "Authentication outcomes: ok or the problem code (missing, invalid or expired key, dealer not found, failed_auth_limited, service_unavailable).", "ops",
		q(`sum by (result) (rate(edge_auth_results_total{`+sel+`}`+rate+`))`, "{{result}}")))
	b.add(8, 8, timeseries("Key lookups and refusals", "Per-key lookups at the dealers service by cause (no index, a stale index's miss), unknown keys answered 503 because auth.lookup_rate was spent, keys the fresh index refused without a lookup, per-address 429s.", "ops",
		q(`sum by (cause) (rate(edge_auth_lookups_total{`+sel+`}`+rate+`))`, "lookups {{cause}}"),
		q(`sum(rate(edge_auth_lookup_budget_exceeded_total{`+sel+`}`+rate+`))`, "lookup budget exceeded (503)"),
		q(`sum(rate(edge_auth_index_misses_total{`+sel+`}`+rate+`))`, "refused by the index (401)"),
		q(`sum by (limit) (rate(edge_auth_addr_limited_total{`+sel+`}`+rate+`))`, "per-address 429 {{limit}}")))

	b.row("Listeners and process")
	b.add(8, 8, timeseries("Open connections and concurrency", "Open public connections per instance against server.concurrency in force; parked: idle keep-alive connections held without a goroutine (server.park_idle_after); refused: connections answered 503 beyond server.concurrency or 429 over server.max_conns_per_ip, per reason, in the window; accept errors: failed accepts (file descriptors, memory, aborted), retried with backoff, per listener and error, in the window.", "short",
		q(`sum by (instance) (edge_listener_open_connections{`+sel+`})`, "open {{instance}}"),
		q(`sum by (instance) (edge_listener_parked_connections{`+sel+`})`, "parked {{instance}}"),
		q(`max by (instance) (edge_listener_concurrency{`+sel+`})`, "concurrency {{instance}}"),
		q(`sum by (reason) (increase(edge_listener_rejected_connections_total{`+sel+`}`+rate+`))`, "refused {{reason}}"),
		q(`sum by (listener, error) (increase(edge_listener_accept_errors_total{`+sel+`}`+rate+`))`, "accept errors {{listener}} {{error}}")))
	b.add(8, 8, stateTimeline("Accepting connections", "0 while a listener's accept fails (file descriptors, memory): /readyz is then not ready.",
		map[string][2]string{"0": {"failing", "red"}, "1": {"accepting", "green"}},
		[]Step{{Color: "red"}, {Color: "green", Value: f(1)}},
		q(`min by (instance, listener) (edge_listener_accepting{`+sel+`})`, "{{instance}} {{listener}}")))
	b.add(8, 8, timeseries("File-descriptor limit", "The open-files limit found at start; server.concurrency derives from it when 0.", "short",
		q(`edge_process_fd_limit{`+sel+`}`, "{{instance}}")))
	b.add(8, 8, timeseries("Memory: RSS, Go heap and the memory limit", "Resident memory, the Go heap in use and the soft memory limit in force (GOMEMLIMIT, or the one the edge sets from cache.l1_max_bytes; the L1's off-heap bulk tier is outside it): the heap stays under the limit, RSS under the container's limit (README, Deploy).", "bytes",
		q(`process_resident_memory_bytes{`+sel+`}`, "RSS {{instance}}"),
		q(`go_memstats_heap_inuse_bytes{`+sel+`}`, "heap in use {{instance}}"),
		q(`go_memlimit_bytes{`+sel+`}`, "memory limit {{instance}}")))
	b.add(8, 8, ratio("Garbage collector's share of CPU", "Share of each instance's CPU the Go collector takes. Rising with an L1 near its size: the hot tier holds too many entries (README, the bulk tier); high with a small live heap: see server.gc_min_growth_bytes.",
		q(`rate(go_gc_cpu_seconds_total{`+sel+`}`+rate+`) / rate(process_cpu_seconds_total{`+sel+`}`+rate+`)`, "{{instance}}")))
	b.add(8, 8, timeseries("GOGC in effect", "edge_gc_percent: 100 (Go's default) unless the live heap is smaller than server.gc_min_growth_bytes, when the edge raises it after each collection so the heap may grow by that much; or the operator's GOGC.", "short",
		q(`edge_gc_percent{`+sel+`}`, "{{instance}}")))
	b.add(12, 8, timeseries("Embedded Redis", "Only without redis.addrs: the in-process Redis' measured bytes against its cap, and keys.", "bytes",
		q(`edge_embedded_redis_bytes{`+sel+`}`, "bytes {{instance}}"),
		q(`edge_embedded_redis_max_bytes{`+sel+`}`, "cap {{instance}}")))
	b.add(12, 8, timeseries("Embedded Redis keys", "Keys held by the in-process Redis, and the keys it evicted in the window to stay under redis.embedded_max_bytes.", "short",
		q(`edge_embedded_redis_keys{`+sel+`}`, "{{instance}}"),
		q(`increase(edge_embedded_redis_evicted_keys_total{`+sel+`}`+rate+`)`, "evicted {{instance}}")))
	b.add(12, 8, timeseries("TLS certificate: time to expiry", "Only with tls.cert_file: time left before the certificate each instance serves expires (EdgeTLSCertificateExpiresSoon under 14 days).", "s",
		q(`min by (instance) (edge_tls_certificate_not_after_seconds{`+sel+`}) - time()`, "{{instance}}")))
	b.add(12, 8, timeseries("TLS certificate reloads", "Only with tls.cert_file: certificate reloads by result; error keeps the pair in force.", "short",
		q(`sum by (instance, result) (increase(edge_tls_certificate_reloads_total{`+sel+`}`+rate+`))`, "{{instance}} {{result}}")))

	b.row("Config and SLOs")
	b.add(8, 8, timeseries("Config reloads", "Reload attempts (SIGHUP, endpoint) by result; the last must be successful.", "short",
		q(`sum by (result) (increase(edge_config_reloads_total{`+sel+`}`+rate+`))`, "{{result}}"),
		q(`min(edge_config_last_reload_successful{`+sel+`})`, "last reload successful")))
	b.add(8, 8, timeseries("Time since the last good config load", "Per instance.", "s",
		q(`time() - edge_config_last_reload_success_timestamp_seconds{`+sel+`}`, "{{instance}}")))
	b.add(8, 8, timeseries("Error budget burn rate", "Burn rate over 1h of the availability SLO (99.9 %) and the latency SLO (99 % within 250 ms), from the recording rules of deploy/prometheus; 1 spends the 30-day budget in 30 days, 14.4 pages.", "short",
		q(`job:edge_slo_availability_errors:ratio_rate1h{job=~"$job"} / 0.001`, "availability {{job}}"),
		q(`job:edge_slo_latency_slow:ratio_rate1h{job=~"$job"} / 0.01`, "latency {{job}}")))

	prom := &Datasource{Type: "prometheus", UID: "${datasource}"}
	return Dashboard{
		UID:           "dealer-edge",
		Title:         "dealer-edge",
		Description:   "Public dealer API edge: traffic, latency, cache and TTL policy, upstreams and breakers, rate limiting, Redis, reloads.",
		Tags:          []string{"dealer-edge"},
		Timezone:      "browser",
		SchemaVersion: 39,
		Version:       1,
		Editable:      true,
		GraphTooltip:  1,
		Refresh:       "30s",
		Time:          TimeRange{From: "now-6h", To: "now"},
		Templating: List[Var]{List: []Var{
			{Name: "datasource", Label: "Data source", Type: "datasource", Query: "prometheus"},
			{Name: "job", Label: "Job", Type: "query", Datasource: prom, Query: map[string]any{"query": "label_values(edge_requests_total, job)", "refId": "job"}, Refresh: 2, Multi: true, IncludeAll: true, AllValue: ".*", Sort: 1},
			{Name: "instance", Label: "Instance", Type: "query", Datasource: prom, Query: map[string]any{"query": `label_values(edge_requests_total{job=~"$job"}, instance)`, "refId": "instance"}, Refresh: 2, Multi: true, IncludeAll: true, AllValue: ".*", Sort: 1},
			{Name: "route", Label: "Route", Type: "query", Datasource: prom, Query: map[string]any{"query": `label_values(edge_requests_total{job=~"$job"}, route)`, "refId": "route"}, Refresh: 2, Multi: true, IncludeAll: true, AllValue: ".*", Sort: 1},
		}},
		Annotations: List[Annot]{List: []Annot{
			{Name: "Annotations & Alerts", BuiltIn: 1, Datasource: &Datasource{Type: "grafana", UID: "-- Grafana --"}, Enable: true, Hide: true, IconColor: "rgba(0, 211, 255, 1)", Type: "dashboard"},
			{Name: "Config reloads", Datasource: prom, Enable: true, IconColor: "purple", Expr: `sum by (instance, result) (changes(edge_config_reloads_total{job=~"$job"}[2m])) > 0`, Step: "1m", TitleFmt: "config reload {{result}}", TextFormat: "{{instance}}", TagKeys: "result"},
		}},
		Links:  []Link{{Title: "Runbook", Type: "link", URL: RunbookURL, TargetBlank: true}},
		Panels: b.panels,
	}
}
