package ops

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// Outcomes of an upstream call: the values of the outcome label of
// edge_upstream_requests_total. Anything else counts as OutcomeError.
const (
	OutcomeOK          = "ok"           // the service answered
	OutcomeNotFound    = "not_found"    // the service answered 404: not a failure
	OutcomeError       = "error"        // timeout, connection error, 5xx, bad body
	OutcomeBreakerOpen = "breaker_open" // not sent: the service's breaker is open
	OutcomeCanceled    = "canceled"     // the caller gave up first
)

var outcomes = [...]string{OutcomeOK, OutcomeNotFound, OutcomeError, OutcomeBreakerOpen, OutcomeCanceled}

// statusCodes are the statuses counted under their own label value; any
// other status counts under its class ("2xx" ... "5xx"). Every problem
// status has its own (TestEveryProblemStatusHasItsLabel).
var statusCodes = [...]int{200, 204, 206, 301, 302, 304, 400, 401, 403, 404, 405, 408, 412, 413, 414, 422, 429, 431, 500, 502, 503, 504}

var statusClasses = [...]string{"1xx", "2xx", "3xx", "4xx", "5xx", "other"}

const nStatus = len(statusCodes) + len(statusClasses)

func statusIndex(code int) int {
	for i, c := range statusCodes {
		if c == code {
			return i
		}
	}
	if code >= 100 && code < 600 {
		return len(statusCodes) + code/100 - 1
	}
	return nStatus - 1
}

func statusLabel(i int) string {
	if i < len(statusCodes) {
		return fmt.Sprint(statusCodes[i])
	}
	return statusClasses[i-len(statusCodes)]
}

// cacheLabels are the values of the cache label, indexed by cacheIndex.
var cacheLabels = [...]string{"hit", "miss", "stale", "bypass", "none", "other"}

func cacheIndex(xcache string) int {
	switch xcache {
	case "HIT":
		return 0
	case "MISS":
		return 1
	case "STALE":
		return 2
	case "BYPASS":
		return 3
	case "":
		return 4
	}
	return 5
}

// maxServices bounds the service label: services beyond it count as
// "other".
const maxServices = 32

// CacheStats is a snapshot of the response cache's counters (cumulative
// since start) and sizes, read at scrape time.
type CacheStats struct {
	// Hits, Misses, StaleServed and Bypass count lookup results; L1Hits
	// the hits answered from the in-process cache alone.
	Hits, Misses, StaleServed, Bypass, L1Hits uint64
	// StaleOnError counts stale entries served because an upstream failed.
	StaleOnError uint64
	// Fills counts upstream fills (misses and background refreshes),
	// FillErrors the failed ones; Coalesced the lookups that shared
	// another's fill.
	Fills, FillErrors, Coalesced uint64
	// FillsUnchanged counts fills that made the body of the entry they
	// replaced and kept its compressed bytes (no compression);
	// FillsRevalidated those whose upstream answer was the one that entry
	// was built from (nothing decoded, built or compressed).
	FillsUnchanged, FillsRevalidated uint64
	// Dropped counts entries removed because their fill answered 404 (a
	// sold vehicle, a withdrawn offer or item): never served stale again.
	Dropped uint64
	// RedisBudgetSkips counts new entries kept out of Redis because their
	// dealer's byte budget was spent (cache.redis_dealer_budget_bytes).
	RedisBudgetSkips   uint64
	L1Evictions        uint64
	L1Bytes, L1Entries int64
	RedisErrors        uint64
	// BulkHits counts hits answered from L1's off-heap bulk tier;
	// BulkBytes and BulkEntries are its size (zero without one).
	BulkHits               uint64
	BulkBytes, BulkEntries int64
	// Refreshes counts background (stale-while-revalidate) refreshes
	// started; RefreshesSkipped the stale hits that started none because
	// MaxRefreshes were under way; RefreshesInFlight those under way now.
	Refreshes, RefreshesSkipped     uint64
	RefreshesInFlight, MaxRefreshes int64
}

// LimiterStats is a snapshot of the rate limiter's counters (cumulative
// since start), read at scrape time.
type LimiterStats struct {
	Admitted, Rejected uint64
	// FallbackActivations counts switches to the in-process limiter
	// because Redis failed; FallbackActive says whether it is in use now.
	FallbackActivations uint64
	FallbackActive      bool
	RedisErrors         uint64
	// FailMode is what the limiter does when Redis fails: "local" (the
	// in-process fallback), "open" or "closed".
	FailMode string
	// Address is the fallback state of the per-client-address limiter
	// (failed authentications, the OpenAPI document; always the local
	// fallback), nil when there is none.
	Address *LimiterFallback
}

// LimiterFallback is one limiter's fallback state: switches to its
// in-process fallback since start, and whether it is in use now; and its
// failed or timed-out Redis commands since start.
type LimiterFallback struct {
	Activations uint64
	Active      bool
	RedisErrors uint64
}

// CachePolicy is one route's response cache policy in force. NotFoundTTL
// is how long the route remembers a "not found" of the services, as in
// force (clamped to TTL; 0: off).
type CachePolicy struct {
	TTL, StaleWhileRevalidate, StaleIfError, NotFoundTTL time.Duration
}

// AuthStats is a snapshot of the authentication counters and the key
// index (cumulative counters since start). Nothing in it names a key.
type AuthStats struct {
	// IndexState is loading, fresh, stale or expired; "" without an index.
	IndexState string
	IndexKeys  int64
	// IndexAge is the time since the last good sync; negative before
	// the first.
	IndexAge                                  time.Duration
	IndexSyncs, IndexSyncErrors, IndexResyncs uint64
	// IndexMisses counts keys refused by the fresh index without a lookup.
	IndexMisses uint64
	// Results by reason ("ok" or a problem code), Lookups by cause,
	// LookupBudgetExceeded the unknown keys refused by the lookup budget,
	// AddrLimited the per-address 429s by limit.
	Results              map[string]uint64
	Lookups              map[string]uint64
	LookupBudgetExceeded uint64
	AddrLimited          map[string]uint64
}

// TracingStats is a snapshot of the tracer's counters (cumulative since
// start), read at scrape time.
type TracingStats struct {
	// SpansDropped counts the sampled spans that never reached the
	// collector, by reason: "queue_full" (the batch queue was full) and
	// "export_failed" (their batch could not be exported).
	SpansDropped map[string]uint64
	// ClientSampledCapped counts the requests not traced although their
	// client's traceparent asked, over tracing.client_sampled_per_second.
	ClientSampledCapped uint64
}

// indexStates are the values of edge_auth_index_state's state label.
var indexStates = []string{"loading", "fresh", "stale", "expired"}

// Sources are read at every scrape. Any nil function leaves its metrics
// out.
type Sources struct {
	// Auth returns the authentication counters.
	Auth    func() AuthStats
	Cache   func() CacheStats
	Limiter func() LimiterStats
	// Breakers returns each upstream service's breaker state: "closed",
	// "half-open" or "open".
	Breakers func() map[string]string
	// Redis reports whether Redis answers (nil error: up). It is called
	// with a short deadline.
	Redis func(context.Context) error
	// CachePolicies returns the cache policy in force per route; a route
	// without one is not cached.
	CachePolicies func() map[string]CachePolicy
	// Tracing returns the tracer's counters; nil while tracing is off.
	Tracing func() TracingStats
}

// MetricsOptions configure Metrics.
type MetricsOptions struct {
	// Routes are the values of the route label (the aggregator's route
	// names); requests of any other route count as "other". Their latency
	// histograms exist from the start.
	Routes []string
	// Services are the upstream services known in advance; others are
	// added as they are seen, up to 32. Their call counters (one per
	// outcome) and breaker transition counters (one per target state)
	// exist at zero from the start: Prometheus' increase() and rate() see
	// the first calls, failures and openings of a series only if it was
	// scraped before them, and the alerts read them.
	Services []string
	// TypeBreakers names the services whose breaker is one per type (the
	// content service: one per content type) and their types. Their
	// transitions are counted per type, labelled content_type, not the
	// service's summary state (the worst of its types'), whose changes
	// would hide one type opening while another is already open.
	TypeBreakers map[string][]string
	// ProcessMetrics adds the go_* and process_* metrics of the process.
	ProcessMetrics bool
	// Build, when its Version is set, is exposed as the constant gauge
	// edge_build_info{version,commit,goversion} 1.
	Build BuildInfo
}

// BuildInfo is the identity of the running binary.
type BuildInfo struct {
	Version, Commit, GoVersion string
}

// Metrics are the edge's Prometheus metrics, held in one *metrics.Set (no
// global registry). All methods are safe for concurrent use; the ones
// called per request or per upstream call do not allocate once a series
// exists.
type Metrics struct {
	set      *metrics.Set
	routes   map[string]*routeMetrics // read-only after NewMetrics
	other    *routeMetrics
	services atomic.Pointer[map[string]*serviceMetrics] // copy on write
	svcMu    sync.Mutex
	sources  atomic.Pointer[Sources]
	process  bool

	logDropped   *metrics.Counter
	eventDropped *metrics.Counter
	// listenerOnce and embeddedOnce register the gauges of
	// listener_metrics.go.
	listenerOnce, embeddedOnce sync.Once
	reloadOK                   *metrics.Counter
	reloadFailed               *metrics.Counter
	lastReloadUnix             atomic.Int64
	lastAttempt                atomic.Pointer[reloadAttempt]
	purges                     *metrics.Counter
	purgesAll                  *metrics.Counter
	bodyBytes                  [2]*metrics.Counter // identity, gzip
	gzipResponses              *metrics.Counter
	// now, when set (tests), replaces time.Now for BreakerTroubled.
	now func() time.Time
}

type routeMetrics struct {
	name     string
	requests [nStatus][len(cacheLabels)]atomic.Pointer[metrics.Counter]
	duration durationHistogram
}

type serviceMetrics struct {
	name     string
	calls    [len(outcomes)]atomic.Pointer[metrics.Counter]
	duration durationHistogram
	// typed says the service's breaker is one per type (TypeBreakers):
	// BreakerChange does not count its summary state.
	typed bool
	// trouble is when (Unix nanoseconds) one of its breakers last opened
	// or refused a call; 0 never.
	trouble atomic.Int64
}

// breakerTargets are the values of the to label of
// edge_upstream_breaker_transitions_total created at zero.
var breakerTargets = [...]string{"closed", "half_open", "open"}

// BreakerQuietAfter is how long after its last opening or refusal a
// breaker that is not closed counts as troubled; past it, a half-open
// breaker is one that no call has tested since (its service's state is
// unknown, not bad). It is the window of the EdgeUpstreamBreakerOpen
// alert, which /readyz and the status page agree with.
const BreakerQuietAfter = 5 * time.Minute

// NewMetrics returns the edge's metrics in a new *metrics.Set.
func NewMetrics(o MetricsOptions) *Metrics {
	m := &Metrics{
		set:     metrics.NewSet(),
		routes:  map[string]*routeMetrics{},
		other:   &routeMetrics{name: "other"},
		process: o.ProcessMetrics,
	}
	for _, r := range o.Routes {
		m.routes[r] = &routeMetrics{name: r}
		// The 5xx series an error answer (no X-Cache) counts in exist at 0
		// from the start, like the upstream call counters: the SLO records
		// and the 5xx alerts read them with rate(), which sees a series'
		// increments only from its first scrape.
		for _, code := range []int{500, 502, 503, 504, 599} {
			si, ci := statusIndex(code), cacheIndex("")
			rm := m.routes[r]
			rm.requests[si][ci].Store(m.set.GetOrCreateCounter(fmt.Sprintf(`edge_requests_total{route=%q,status=%q,cache=%q}`, r, statusLabel(si), cacheLabels[ci])))
		}
	}
	svcs := map[string]*serviceMetrics{}
	for _, s := range o.Services {
		if len(svcs) >= maxServices || svcs[s] != nil {
			continue
		}
		sm := &serviceMetrics{name: s}
		svcs[s] = sm
		for oi := range outcomes {
			sm.calls[oi].Store(m.set.GetOrCreateCounter(upstreamCallSeries(s, oi)))
		}
		types, typed := o.TypeBreakers[s]
		sm.typed = typed
		for _, to := range breakerTargets {
			if !typed {
				m.set.GetOrCreateCounter(transitionSeries(s, "", to))
			}
			for _, ct := range types {
				m.set.GetOrCreateCounter(transitionSeries(s, ct, to))
			}
		}
		if !typed {
			m.set.GetOrCreateCounter(dealerBreakerSeries(s, ""))
		}
		for _, ct := range types {
			m.set.GetOrCreateCounter(dealerBreakerSeries(s, ct))
		}
	}
	m.services.Store(&svcs)
	m.logDropped = m.set.NewCounter("edge_log_lines_dropped_total")
	m.eventDropped = m.set.NewCounter("edge_log_event_lines_dropped_total")
	m.reloadOK = m.set.NewCounter(`edge_config_reloads_total{result="ok"}`)
	m.reloadFailed = m.set.NewCounter(`edge_config_reloads_total{result="error"}`)
	m.set.NewGauge("edge_config_last_reload_success_timestamp_seconds", func() float64 {
		return float64(m.lastReloadUnix.Load())
	})
	// 1 unless the last reload attempt was rejected: an alert on it stays
	// until a good file is loaded.
	m.set.NewGauge("edge_config_last_reload_successful", func() float64 {
		if at := m.lastAttempt.Load(); at != nil && at.err != "" {
			return 0
		}
		return 1
	})
	m.purges = m.set.NewCounter("edge_cache_purges_total")
	m.purgesAll = m.set.NewCounter("edge_cache_purges_all_total")
	m.bodyBytes[0] = m.set.NewCounter(`edge_response_body_bytes_total{encoding="identity"}`)
	m.bodyBytes[1] = m.set.NewCounter(`edge_response_body_bytes_total{encoding="gzip"}`)
	m.gzipResponses = m.set.NewCounter("edge_gzip_responses_total")
	if b := o.Build; b.Version != "" {
		m.set.NewGauge(fmt.Sprintf(`edge_build_info{version="%s",commit="%s",goversion="%s"}`,
			labelValue(b.Version), labelValue(b.Commit), labelValue(b.GoVersion)), func() float64 { return 1 })
	}
	m.lastReloadUnix.Store(time.Now().Unix())
	m.set.RegisterMetricsWriter(m.writeDynamic)
	return m
}

// Set returns the underlying set, for metrics registered elsewhere.
func (m *Metrics) Set() *metrics.Set { return m.set }

// SetSources installs the functions read at scrape time (they are
// usually known only after the cache and limiter are built).
func (m *Metrics) SetSources(s Sources) { m.sources.Store(&s) }

// WritePrometheus writes all metrics in the Prometheus text format.
func (m *Metrics) WritePrometheus(w io.Writer) { m.set.WritePrometheus(w) }

// Request counts one finished public request: route is the aggregator's
// route name, status the HTTP status, xcache the X-Cache value (HIT, MISS,
// STALE, BYPASS or "").
func (m *Metrics) Request(route string, status int, xcache string, d time.Duration) {
	rm := m.routes[route]
	if rm == nil {
		rm = m.other
	}
	si, ci := statusIndex(status), cacheIndex(xcache)
	c := rm.requests[si][ci].Load()
	if c == nil {
		c = m.set.GetOrCreateCounter(fmt.Sprintf(`edge_requests_total{route=%q,status=%q,cache=%q}`, rm.name, statusLabel(si), cacheLabels[ci]))
		rm.requests[si][ci].Store(c)
	}
	c.Inc()
	rm.duration.observe(d)
}

// Body counts the body bytes of one public response as sent, by content
// coding, and the gzip-coded responses.
func (m *Metrics) Body(n int, gzip bool) {
	if gzip {
		m.bodyBytes[1].Add(n)
		m.gzipResponses.Inc()
		return
	}
	m.bodyBytes[0].Add(n)
}

// UpstreamCall counts one call to an internal service; outcome is one of
// the Outcome* constants.
func (m *Metrics) UpstreamCall(service, outcome string, d time.Duration) {
	sm := m.service(service)
	oi := slices.Index(outcomes[:], outcome)
	if oi < 0 {
		oi = slices.Index(outcomes[:], OutcomeError)
	}
	c := sm.calls[oi].Load()
	if c == nil {
		c = m.set.GetOrCreateCounter(upstreamCallSeries(sm.name, oi))
		sm.calls[oi].Store(c)
	}
	c.Inc()
	if outcomes[oi] != OutcomeBreakerOpen {
		sm.duration.observe(d)
	} else {
		sm.trouble.Store(m.clock().UnixNano())
	}
}

func upstreamCallSeries(service string, oi int) string {
	return fmt.Sprintf(`edge_upstream_requests_total{service=%q,outcome=%q}`, service, outcomes[oi])
}

func transitionSeries(service, contentType, to string) string {
	if contentType != "" {
		return fmt.Sprintf(`edge_upstream_breaker_transitions_total{service=%q,content_type=%q,to=%q}`, service, labelValue(contentType), to)
	}
	return fmt.Sprintf(`edge_upstream_breaker_transitions_total{service=%q,to=%q}`, service, to)
}

func dealerBreakerSeries(service, contentType string) string {
	if contentType != "" {
		return fmt.Sprintf(`edge_upstream_dealer_breaker_opens_total{service=%q,content_type=%q}`, service, labelValue(contentType))
	}
	return fmt.Sprintf(`edge_upstream_dealer_breaker_opens_total{service=%q}`, service)
}

// DealerBreakerOpen counts the opening of one dealer's breaker of a
// service (or of one content type of the content service): that dealer's
// calls failed while the service answered the others, so the service's own
// breaker, its state metric and /readyz stay as they were. The dealer is
// in the log line, not in a label (one series per dealer would grow
// without bound).
func (m *Metrics) DealerBreakerOpen(service, contentType string) {
	m.set.GetOrCreateCounter(dealerBreakerSeries(m.service(service).name, contentType)).Inc()
}

// BreakerChange counts a service breaker's state transition. For a
// service of MetricsOptions.TypeBreakers, the change of its summary state
// is not counted: TypeBreakerChange counts its types'.
func (m *Metrics) BreakerChange(service, from, to string) {
	_ = from
	sm := m.service(service)
	if sm.typed {
		return
	}
	m.breakerChanged(sm, "", to)
}

// TypeBreakerChange counts the state transition of the breaker of one
// type of a service (the content service's, per content type).
func (m *Metrics) TypeBreakerChange(service, typ, from, to string) {
	_ = from
	m.breakerChanged(m.service(service), typ, to)
}

func (m *Metrics) breakerChanged(sm *serviceMetrics, typ, to string) {
	to = breakerLabel(to)
	if to == "open" {
		sm.trouble.Store(m.clock().UnixNano())
	}
	m.set.GetOrCreateCounter(transitionSeries(sm.name, typ, to)).Inc()
}

// BreakerTroubled reports whether a breaker of service opened or refused
// a call within the last BreakerQuietAfter.
func (m *Metrics) BreakerTroubled(service string) bool {
	sm := (*m.services.Load())[service]
	if sm == nil {
		return false
	}
	t := sm.trouble.Load()
	return t != 0 && m.clock().Sub(time.Unix(0, t)) < BreakerQuietAfter
}

// clock returns the time now (a test's when set).
func (m *Metrics) clock() time.Time {
	if m.now != nil {
		return m.now()
	}
	return time.Now()
}

// LogLineDropped counts a log line dropped by the log rate limit.
func (m *Metrics) LogLineDropped() { m.logDropped.Inc() }

// LogEventLineDropped counts an event line dropped by its own rate limit
// (the line is counted by LogLineDropped too).
func (m *Metrics) LogEventLineDropped() { m.eventDropped.Inc() }

// ConfigReload counts a config reload attempt and its result.
func (m *Metrics) ConfigReload(err error) {
	at := &reloadAttempt{at: time.Now()}
	if err != nil {
		at.err = err.Error()
	}
	m.lastAttempt.Store(at)
	if err != nil {
		m.reloadFailed.Inc()
		return
	}
	m.reloadOK.Inc()
	m.lastReloadUnix.Store(time.Now().Unix())
}

// reloadAttempt is the last config reload attempt, for the status page.
type reloadAttempt struct {
	at  time.Time
	err string // "" when it succeeded
}

// CachePurge counts a per-dealer cache purge.
func (m *Metrics) CachePurge() { m.purges.Inc() }

// CachePurgeAll counts a purge of every dealer's cache (all=true).
func (m *Metrics) CachePurgeAll() { m.purgesAll.Inc() }

func (m *Metrics) service(name string) *serviceMetrics {
	if sm := (*m.services.Load())[name]; sm != nil {
		return sm
	}
	m.svcMu.Lock()
	defer m.svcMu.Unlock()
	cur := *m.services.Load()
	if sm := cur[name]; sm != nil {
		return sm
	}
	if len(cur) >= maxServices {
		name = "other"
		if sm := cur[name]; sm != nil {
			return sm
		}
	}
	next := make(map[string]*serviceMetrics, len(cur)+1)
	for k, v := range cur {
		next[k] = v
	}
	sm := &serviceMetrics{name: name}
	next[name] = sm
	m.services.Store(&next)
	return sm
}

// breakerStates are the values of edge_upstream_breaker_state.
var breakerStates = map[string]int{"closed": 0, "half_open": 1, "open": 2}

func breakerLabel(s string) string {
	switch s {
	case "closed", "open":
		return s
	case "half-open", "half_open", "halfopen":
		return "half_open"
	}
	return "other"
}

// writeDynamic writes the families that are not plain counters of the
// set: latency histograms (with `le` buckets) and the gauges and counters
// read from Sources at scrape time.
func (m *Metrics) writeDynamic(w io.Writer) {
	const reqDur = "edge_request_duration_seconds"
	metrics.WriteMetadataIfNeeded(w, reqDur, "histogram")
	names := make([]string, 0, len(m.routes))
	for n := range m.routes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		m.routes[n].duration.write(w, reqDur, fmt.Sprintf("route=%q", n))
	}
	if m.other.duration.count() > 0 {
		m.other.duration.write(w, reqDur, `route="other"`)
	}

	const upDur = "edge_upstream_request_duration_seconds"
	svcs := *m.services.Load()
	names = names[:0]
	for n := range svcs {
		names = append(names, n)
	}
	sort.Strings(names)
	metrics.WriteMetadataIfNeeded(w, upDur, "histogram")
	for _, n := range names {
		svcs[n].duration.write(w, upDur, fmt.Sprintf("service=%q", n))
	}

	src := m.sources.Load()
	if src == nil {
		src = &Sources{}
	}
	if src.Breakers != nil {
		states := src.Breakers()
		names = names[:0]
		for n := range states {
			names = append(names, n)
		}
		sort.Strings(names)
		for i, n := range names {
			v, ok := breakerStates[breakerLabel(states[n])]
			if !ok {
				v = -1
			}
			name := fmt.Sprintf("edge_upstream_breaker_state{service=%q}", n)
			if i == 0 {
				metrics.WriteMetadataIfNeeded(w, name, "gauge")
			}
			fmt.Fprintf(w, "%s %d\n", name, v)
		}
	}
	if src.CachePolicies != nil {
		writePolicies(w, src.CachePolicies())
	}
	var cacheRedisErr, limRedisErr, addrRedisErr uint64
	var addrLimiter bool
	if src.Cache != nil {
		s := src.Cache()
		metrics.WriteCounterUint64(w, "edge_cache_hits_total", s.Hits)
		metrics.WriteCounterUint64(w, "edge_cache_misses_total", s.Misses)
		metrics.WriteCounterUint64(w, "edge_cache_stale_served_total", s.StaleServed)
		metrics.WriteCounterUint64(w, "edge_cache_stale_on_error_total", s.StaleOnError)
		metrics.WriteCounterUint64(w, "edge_cache_bypass_total", s.Bypass)
		metrics.WriteCounterUint64(w, "edge_cache_l1_hits_total", s.L1Hits)
		metrics.WriteCounterUint64(w, "edge_cache_fills_total", s.Fills)
		metrics.WriteCounterUint64(w, "edge_cache_fill_errors_total", s.FillErrors)
		metrics.WriteCounterUint64(w, "edge_cache_fills_unchanged_total", s.FillsUnchanged)
		metrics.WriteCounterUint64(w, "edge_cache_fills_revalidated_total", s.FillsRevalidated)
		metrics.WriteCounterUint64(w, "edge_cache_dropped_total", s.Dropped)
		metrics.WriteCounterUint64(w, "edge_cache_redis_budget_skips_total", s.RedisBudgetSkips)
		metrics.WriteCounterUint64(w, "edge_cache_coalesced_total", s.Coalesced)
		metrics.WriteCounterUint64(w, "edge_cache_l1_evictions_total", s.L1Evictions)
		metrics.WriteGaugeUint64(w, "edge_cache_l1_bytes", uint64(max(s.L1Bytes, 0)))
		metrics.WriteGaugeUint64(w, "edge_cache_l1_entries", uint64(max(s.L1Entries, 0)))
		metrics.WriteCounterUint64(w, "edge_cache_bulk_hits_total", s.BulkHits)
		metrics.WriteGaugeUint64(w, "edge_cache_bulk_bytes", uint64(max(s.BulkBytes, 0)))
		metrics.WriteGaugeUint64(w, "edge_cache_bulk_entries", uint64(max(s.BulkEntries, 0)))
		metrics.WriteCounterUint64(w, "edge_cache_refreshes_total", s.Refreshes)
		metrics.WriteCounterUint64(w, "edge_cache_refreshes_skipped_total", s.RefreshesSkipped)
		metrics.WriteGaugeUint64(w, "edge_cache_refreshes_in_flight", uint64(max(s.RefreshesInFlight, 0)))
		if s.MaxRefreshes > 0 { // absent without a bound
			metrics.WriteGaugeUint64(w, "edge_cache_refreshes_max", uint64(s.MaxRefreshes))
		}
		cacheRedisErr = s.RedisErrors
	}
	if src.Limiter != nil {
		s := src.Limiter()
		metrics.WriteCounterUint64(w, "edge_ratelimit_admitted_total", s.Admitted)
		metrics.WriteCounterUint64(w, "edge_ratelimit_rejected_total", s.Rejected)
		metrics.WriteCounterUint64(w, "edge_ratelimit_fallback_activations_total", s.FallbackActivations)
		active := uint64(0)
		if s.FallbackActive {
			active = 1
		}
		metrics.WriteGaugeUint64(w, "edge_ratelimit_fallback_active", active)
		if s.FailMode != "" {
			metrics.WriteGaugeUint64(w, fmt.Sprintf("edge_ratelimit_fail_mode{mode=%q}", s.FailMode), 1)
		}
		if a := s.Address; a != nil {
			metrics.WriteCounterUint64(w, "edge_ratelimit_address_fallback_activations_total", a.Activations)
			active := uint64(0)
			if a.Active {
				active = 1
			}
			metrics.WriteGaugeUint64(w, "edge_ratelimit_address_fallback_active", active)
			addrLimiter, addrRedisErr = true, a.RedisErrors
		}
		limRedisErr = s.RedisErrors
	}
	if src.Cache != nil || src.Limiter != nil {
		metrics.WriteMetadataIfNeeded(w, "edge_redis_errors_total", "counter")
		if src.Cache != nil {
			fmt.Fprintf(w, "edge_redis_errors_total{component=\"cache\"} %d\n", cacheRedisErr)
		}
		if src.Limiter != nil {
			fmt.Fprintf(w, "edge_redis_errors_total{component=\"ratelimit\"} %d\n", limRedisErr)
		}
		// The per-client-address limiter has its own component: its
		// errors come from other requests (failed authentications, the
		// OpenAPI document) than the per-key limiter's.
		if addrLimiter {
			fmt.Fprintf(w, "edge_redis_errors_total{component=\"ratelimit_address\"} %d\n", addrRedisErr)
		}
	}
	if src.Auth != nil {
		writeAuth(w, src.Auth())
	}
	if src.Tracing != nil {
		ts := src.Tracing()
		writeLabelled(w, "edge_trace_spans_dropped_total", "reason", ts.SpansDropped)
		metrics.WriteCounterUint64(w, "edge_trace_client_sampled_capped_total", ts.ClientSampledCapped)
	}
	if src.Redis != nil {
		ctx, cancel := context.WithTimeout(context.Background(), RedisCheckTimeout)
		up := uint64(0)
		if src.Redis(ctx) == nil {
			up = 1
		}
		cancel()
		metrics.WriteGaugeUint64(w, "edge_redis_up", up)
	}
	if m.process {
		metrics.WriteProcessMetrics(w)
	}
}

// writeLabelled writes the counter name with one series per key of m,
// label=key, in key order.
func writeLabelled(w io.Writer, name, label string, m map[string]uint64) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		series := fmt.Sprintf("%s{%s=\"%s\"}", name, label, labelValue(k))
		if i == 0 {
			metrics.WriteMetadataIfNeeded(w, series, "counter")
		}
		fmt.Fprintf(w, "%s %d\n", series, m[k])
	}
}

func writeAuth(w io.Writer, s AuthStats) {
	writeLabelled(w, "edge_auth_results_total", "result", s.Results)
	writeLabelled(w, "edge_auth_lookups_total", "cause", s.Lookups)
	metrics.WriteCounterUint64(w, "edge_auth_lookup_budget_exceeded_total", s.LookupBudgetExceeded)
	writeLabelled(w, "edge_auth_addr_limited_total", "limit", s.AddrLimited)
	if s.IndexState == "" {
		return
	}
	for i, st := range indexStates {
		v := 0
		if st == s.IndexState {
			v = 1
		}
		series := fmt.Sprintf("edge_auth_index_state{state=%q}", st)
		if i == 0 {
			metrics.WriteMetadataIfNeeded(w, series, "gauge")
		}
		fmt.Fprintf(w, "%s %d\n", series, v)
	}
	metrics.WriteGaugeUint64(w, "edge_auth_index_keys", uint64(max(s.IndexKeys, 0)))
	if s.IndexAge >= 0 {
		metrics.WriteGaugeFloat64(w, "edge_auth_index_age_seconds", s.IndexAge.Seconds())
	}
	metrics.WriteCounterUint64(w, "edge_auth_index_syncs_total", s.IndexSyncs)
	metrics.WriteCounterUint64(w, "edge_auth_index_sync_errors_total", s.IndexSyncErrors)
	metrics.WriteCounterUint64(w, "edge_auth_index_resyncs_total", s.IndexResyncs)
	metrics.WriteCounterUint64(w, "edge_auth_index_misses_total", s.IndexMisses)
}

// labelValue escapes a label value for the exposition format (backslash,
// double quote, line feed).
func labelValue(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// writePolicies writes the cache policy in force per route as gauges, so
// that a dashboard can show a route's hit ratio next to the TTL that
// produced it (and a reload that changed it).
func writePolicies(w io.Writer, pols map[string]CachePolicy) {
	routes := make([]string, 0, len(pols))
	for r := range pols {
		routes = append(routes, r)
	}
	sort.Strings(routes)
	for _, f := range [...]struct {
		name string
		get  func(CachePolicy) time.Duration
	}{
		{"edge_cache_policy_ttl_seconds", func(p CachePolicy) time.Duration { return p.TTL }},
		{"edge_cache_policy_stale_while_revalidate_seconds", func(p CachePolicy) time.Duration { return p.StaleWhileRevalidate }},
		{"edge_cache_policy_stale_if_error_seconds", func(p CachePolicy) time.Duration { return p.StaleIfError }},
		{"edge_cache_policy_not_found_ttl_seconds", func(p CachePolicy) time.Duration { return p.NotFoundTTL }},
	} {
		for i, r := range routes {
			name := fmt.Sprintf("%s{route=%q}", f.name, r)
			if i == 0 {
				metrics.WriteMetadataIfNeeded(w, name, "gauge")
			}
			fmt.Fprintf(w, "%s %s\n", name, strconv.FormatFloat(f.get(pols[r]).Seconds(), 'g', -1, 64))
		}
	}
}
