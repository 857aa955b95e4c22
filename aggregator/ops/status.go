package ops

import (
	"context"
	"math"
	"sort"
	"sync"
	"time"
)

// Status is the body of GET /admin/status, what the live status page
// shows. Rates are over the window between this call and an earlier one
// (WindowSeconds; 0 on the first call, when every rate is null).
type Status struct {
	Time          time.Time       `json:"time"`
	WindowSeconds float64         `json:"window_seconds"`
	Routes        []RouteStatus   `json:"routes"`
	Services      []ServiceStatus `json:"services"`
	Redis         *RedisStatus    `json:"redis,omitempty"`
	L1            *L1Status       `json:"l1,omitempty"`
	Limiter       *LimiterStatus  `json:"limiter,omitempty"`
	Reload        ReloadStatus    `json:"reload"`
}

// PolicyStatus is a route's cache policy in force, in seconds.
type PolicyStatus struct {
	TTL                  float64 `json:"ttl_seconds"`
	StaleWhileRevalidate float64 `json:"stale_while_revalidate_seconds"`
	StaleIfError         float64 `json:"stale_if_error_seconds"`
	// NotFoundTTL is how long a detail route remembers that a dealer has
	// no such id; 0 on routes that remember nothing.
	NotFoundTTL float64 `json:"not_found_ttl_seconds"`
}

// RouteStatus is one route's traffic over the window. HitRatio and
// StaleShare are shares of the requests that looked in the cache (hit,
// miss or stale); ErrorRatio the share of 5xx answers; P99 the 99th
// percentile of the handler time, interpolated within its histogram
// bucket as Prometheus' histogram_quantile does. A ratio is null when
// its denominator is zero.
type RouteStatus struct {
	Route      string        `json:"route"`
	Policy     *PolicyStatus `json:"policy"`
	Requests   uint64        `json:"requests_total"`
	RPS        *float64      `json:"rps"`
	HitRatio   *float64      `json:"hit_ratio"`
	StaleShare *float64      `json:"stale_share"`
	ErrorRatio *float64      `json:"error_ratio"`
	P99        *float64      `json:"p99_seconds"`
}

// ServiceStatus is one upstream service's breaker and calls over the
// window; ErrorRate is the share of calls that failed or were refused by
// the breaker. BreakerQuiet marks a breaker that is not closed but has
// neither opened nor refused a call within BreakerQuietAfter (a half-open
// breaker no call has tested since an outage): the service's state is
// unknown, and it does not degrade /readyz.
type ServiceStatus struct {
	Service      string   `json:"service"`
	Breaker      string   `json:"breaker,omitempty"`
	BreakerQuiet bool     `json:"breaker_quiet,omitempty"`
	Calls        uint64   `json:"calls_total"`
	CallsPerSec  *float64 `json:"calls_per_second"`
	ErrorRate    *float64 `json:"error_rate"`
	P99          *float64 `json:"p99_seconds"`
}

// RedisStatus says whether Redis answers a PING now.
type RedisStatus struct {
	Up    bool   `json:"up"`
	Error string `json:"error,omitempty"`
}

// L1Status is the in-process cache's size.
type L1Status struct {
	Bytes     int64  `json:"bytes"`
	Entries   int64  `json:"entries"`
	Evictions uint64 `json:"evictions_total"`
}

// LimiterStatus is the rate limiter's state: the per-key limiter's
// fallback, fail mode and rates, and the per-client-address limiter's
// fallback (Address, nil when there is none).
type LimiterStatus struct {
	FailMode       string                `json:"fail_mode,omitempty"`
	FallbackActive bool                  `json:"fallback_active"`
	AdmittedPerSec *float64              `json:"admitted_per_second"`
	RejectedPerSec *float64              `json:"rejected_per_second"`
	Address        *LimiterAddressStatus `json:"address,omitempty"`
}

// LimiterAddressStatus is the per-client-address limiter's state (failed
// authentications, the OpenAPI document): whether it runs on its
// in-process fallback because Redis failed.
type LimiterAddressStatus struct {
	FallbackActive bool `json:"fallback_active"`
}

// ReloadStatus is the last config reload attempt (SIGHUP or endpoint);
// Result is "ok", "error" or "" when none happened since start.
type ReloadStatus struct {
	LastAttempt *time.Time `json:"last_attempt,omitempty"`
	Result      string     `json:"result"`
	Error       string     `json:"error,omitempty"`
	LastSuccess time.Time  `json:"last_success"`
}

// counters is a point-in-time copy of the cumulative counters the status
// rates are computed from.
type counters struct {
	at       time.Time
	routes   map[string]*routeCounters
	services map[string]*serviceCounters
	admitted uint64
	rejected uint64
}

// bucketCounts are a histogram's per-bucket counts (not cumulative), the
// +Inf bucket at index len(durationBuckets).
type bucketCounts [16]uint64

type routeCounters struct {
	byCache [len(cacheLabels)]uint64
	total   uint64
	errors  uint64 // 5xx
	buckets bucketCounts
}

type serviceCounters struct {
	byOutcome [len(outcomes)]uint64
	buckets   bucketCounts
}

func (h *durationHistogram) snapshot(dst *bucketCounts) {
	for i := 0; i <= len(durationBuckets); i++ {
		dst[i] = h.counts[i].Load()
	}
}

func (rm *routeMetrics) snapshot() *routeCounters {
	rc := &routeCounters{}
	for si := range rm.requests {
		for ci := range rm.requests[si] {
			c := rm.requests[si][ci].Load()
			if c == nil {
				continue
			}
			n := c.Get()
			rc.byCache[ci] += n
			rc.total += n
			if l := statusLabel(si); l[0] == '5' {
				rc.errors += n
			}
		}
	}
	rm.duration.snapshot(&rc.buckets)
	return rc
}

func (m *Metrics) counters(lim *LimiterStats) *counters {
	c := &counters{at: time.Now(), routes: map[string]*routeCounters{}, services: map[string]*serviceCounters{}}
	for name, rm := range m.routes {
		c.routes[name] = rm.snapshot()
	}
	if m.other.duration.count() > 0 {
		c.routes[m.other.name] = m.other.snapshot()
	}
	for name, sm := range *m.services.Load() {
		sc := &serviceCounters{}
		for oi := range sm.calls {
			if cn := sm.calls[oi].Load(); cn != nil {
				sc.byOutcome[oi] = cn.Get()
			}
		}
		sm.duration.snapshot(&sc.buckets)
		c.services[name] = sc
	}
	if lim != nil {
		c.admitted, c.rejected = lim.Admitted, lim.Rejected
	}
	return c
}

// statusWindow keeps recent counter snapshots, so that each status call
// computes rates over roughly the last statusWindowTarget whatever the
// polling interval and however many pages poll.
type statusWindow struct {
	mu   sync.Mutex
	hist []*counters // oldest first, at least statusMinGap apart
}

const (
	statusWindowTarget = 5 * time.Second
	statusMinGap       = time.Second
	statusKeep         = time.Minute
)

// base records now and returns the snapshot to compute rates against:
// the newest one at least statusWindowTarget old, else the oldest one
// (nil on the first call).
func (w *statusWindow) base(now *counters) *counters {
	w.mu.Lock()
	defer w.mu.Unlock()
	var base *counters
	for _, c := range w.hist {
		if now.at.Sub(c.at) >= statusWindowTarget {
			base = c
		}
	}
	if base == nil && len(w.hist) > 0 {
		base = w.hist[0]
	}
	if n := len(w.hist); n == 0 || now.at.Sub(w.hist[n-1].at) >= statusMinGap {
		w.hist = append(w.hist, now)
	}
	for len(w.hist) > 1 && now.at.Sub(w.hist[1].at) >= statusKeep {
		w.hist = w.hist[1:]
	}
	return base
}

// status builds the status body.
func (a *Admin) status(ctx context.Context) Status {
	m := a.o.Metrics
	src := m.sources.Load()
	if src == nil {
		src = &Sources{}
	}
	var lim *LimiterStats
	if src.Limiter != nil {
		s := src.Limiter()
		lim = &s
	}
	now := m.counters(lim)
	base := a.window.base(now)
	st := Status{Time: now.at.UTC()}
	var dt float64
	if base != nil {
		dt = now.at.Sub(base.at).Seconds()
	}
	if dt > 0 {
		st.WindowSeconds = math.Round(dt*1000) / 1000
	}
	rate := func(cur, old uint64) *float64 {
		if dt <= 0 {
			return nil
		}
		return ptr(float64(cur-old) / dt)
	}
	ratio := func(num, den uint64) *float64 {
		if den == 0 {
			return nil
		}
		return ptr(float64(num) / float64(den))
	}

	var pols map[string]CachePolicy
	if src.CachePolicies != nil {
		pols = src.CachePolicies()
	}
	names := sortedKeys(now.routes)
	for _, name := range names {
		cur := now.routes[name]
		old := &routeCounters{}
		if base != nil && base.routes[name] != nil {
			old = base.routes[name]
		}
		rs := RouteStatus{Route: name, Requests: cur.total}
		if p, ok := pols[name]; ok {
			rs.Policy = &PolicyStatus{p.TTL.Seconds(), p.StaleWhileRevalidate.Seconds(), p.StaleIfError.Seconds(), p.NotFoundTTL.Seconds()}
		}
		if dt > 0 {
			d := func(ci int) uint64 { return cur.byCache[ci] - old.byCache[ci] }
			hit, miss, stale := d(0), d(1), d(2)
			looked := hit + miss + stale
			rs.RPS = rate(cur.total, old.total)
			rs.HitRatio = ratio(hit, looked)
			rs.StaleShare = ratio(stale, looked)
			rs.ErrorRatio = ratio(cur.errors-old.errors, cur.total-old.total)
			rs.P99 = quantile(0.99, &cur.buckets, &old.buckets)
		}
		st.Routes = append(st.Routes, rs)
	}

	var breakers map[string]string
	if src.Breakers != nil {
		breakers = src.Breakers()
	}
	svcNames := sortedKeys(now.services)
	for n := range breakers {
		if now.services[n] == nil {
			svcNames = append(svcNames, n)
		}
	}
	sort.Strings(svcNames)
	for _, name := range svcNames {
		cur := now.services[name]
		if cur == nil {
			cur = &serviceCounters{}
		}
		old := &serviceCounters{}
		if base != nil && base.services[name] != nil {
			old = base.services[name]
		}
		ss := ServiceStatus{Service: name, Breaker: breakers[name]}
		if b := ss.Breaker; b != "" && b != "closed" {
			ss.BreakerQuiet = !breakerDegrades(b, m.BreakerTroubled(name))
		}
		var total, failed, totalOld, failedOld uint64
		for oi, o := range outcomes {
			total += cur.byOutcome[oi]
			totalOld += old.byOutcome[oi]
			if o == OutcomeError || o == OutcomeBreakerOpen {
				failed += cur.byOutcome[oi]
				failedOld += old.byOutcome[oi]
			}
		}
		ss.Calls = total
		if dt > 0 {
			ss.CallsPerSec = rate(total, totalOld)
			ss.ErrorRate = ratio(failed-failedOld, total-totalOld)
			ss.P99 = quantile(0.99, &cur.buckets, &old.buckets)
		}
		st.Services = append(st.Services, ss)
	}

	if src.Redis != nil {
		c, cancel := context.WithTimeout(ctx, min(a.o.Timeout, RedisCheckTimeout))
		err := src.Redis(c)
		cancel()
		st.Redis = &RedisStatus{Up: err == nil}
		if err != nil {
			st.Redis.Error = err.Error()
		}
	}
	if src.Cache != nil {
		cs := src.Cache()
		st.L1 = &L1Status{Bytes: cs.L1Bytes, Entries: cs.L1Entries, Evictions: cs.L1Evictions}
	}
	if lim != nil {
		ls := &LimiterStatus{FailMode: lim.FailMode, FallbackActive: lim.FallbackActive}
		if lim.Address != nil {
			ls.Address = &LimiterAddressStatus{FallbackActive: lim.Address.Active}
		}
		if base != nil {
			ls.AdmittedPerSec = rate(now.admitted, base.admitted)
			ls.RejectedPerSec = rate(now.rejected, base.rejected)
		}
		st.Limiter = ls
	}
	st.Reload.LastSuccess = time.Unix(m.lastReloadUnix.Load(), 0).UTC()
	if at := m.lastAttempt.Load(); at != nil {
		t := at.at.UTC()
		st.Reload.LastAttempt = &t
		st.Reload.Result = "ok"
		if at.err != "" {
			st.Reload.Result, st.Reload.Error = "error", at.err
		}
	}
	return st
}

// quantile estimates the q-quantile of the observations between two
// snapshots of a histogram (per-bucket counts, last bucket +Inf), by
// linear interpolation within the bucket, as Prometheus'
// histogram_quantile does; nil when there were none. A quantile in the
// +Inf bucket is reported as the largest finite bound.
func quantile(q float64, cur, old *bucketCounts) *float64 {
	var d bucketCounts
	var total uint64
	for i := 0; i <= len(durationBuckets); i++ {
		d[i] = cur[i] - old[i]
		total += d[i]
	}
	if total == 0 {
		return nil
	}
	rank := q * float64(total)
	var cum uint64
	for i, n := range d[:len(durationBuckets)+1] {
		if float64(cum+n) >= rank && n > 0 {
			if i == len(durationBuckets) {
				return ptr(durationBuckets[i-1].Seconds())
			}
			lo := 0.0
			if i > 0 {
				lo = durationBuckets[i-1].Seconds()
			}
			hi := durationBuckets[i].Seconds()
			return ptr(lo + (hi-lo)*(rank-float64(cum))/float64(n))
		}
		cum += n
	}
	return ptr(durationBuckets[len(durationBuckets)-1].Seconds())
}

func ptr(f float64) *float64 { return &f }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
