package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dealer-edge/dealer-edge/contracttests/procs"
	"github.com/dealer-edge/dealer-edge/upstream"
)

// The fault tests run the edge with short timeouts, a quick breaker and
// short cache lifetimes, so that every fault is felt, and healed, within a
// few seconds. The budgets each request is held to derive from them.
const (
	// faultUpstreamTimeout is every service's per-call timeout.
	faultUpstreamTimeout = 300 * time.Millisecond
	// faultRequestTimeout is the edge's whole-request upstream budget; it is
	// longer than faultUpstreamTimeout, so the per-call timeout is what a
	// slow service costs.
	faultRequestTimeout = time.Second
	// faultBreakerFailures consecutive failures open a service's breaker for
	// faultBreakerOpenFor.
	faultBreakerFailures = 3
	faultBreakerOpenFor  = time.Second
	// faultCacheTTL is how long a response is fresh; then it is refilled (no
	// stale-while-revalidate), and served STALE for a minute only when the
	// refill fails.
	faultCacheTTL = 300 * time.Millisecond
	// faultInjectedLatency is the latency of a slow service: well above
	// faultUpstreamTimeout and faultRequestTimeout.
	faultInjectedLatency = 2 * time.Second
	// faultRedisTimeout is the edge's budget of one Redis command.
	faultRedisTimeout = 50 * time.Millisecond
	// faultRedisPause is how long the slow-Redis test stalls redis-server.
	faultRedisPause = 2 * time.Second

	// faultMargin covers scheduling and loopback on a busy two-core machine.
	faultMargin = 400 * time.Millisecond
	// faultSlowBudget bounds a request that waits out one upstream timeout.
	faultSlowBudget = faultUpstreamTimeout + faultMargin
	// faultFastBudget bounds a request whose upstream fails at once (an error
	// answer, a reset, a refused connection) or is not called at all (an
	// open breaker): below faultUpstreamTimeout, so it proves nothing waited.
	faultFastBudget = 250 * time.Millisecond
	// faultRedisBudget bounds every request while Redis is dead or stalled:
	// ten Redis budgets, a quarter of the stall.
	faultRedisBudget = 10 * faultRedisTimeout
)

// faultConfig is the edge config of the upstream fault tests (see the
// constants above); failures is upstream.breaker_failures.
func faultConfig(failures int) map[string]any {
	policy := map[string]any{"ttl": faultCacheTTL.String(), "stale_while_revalidate": "0s", "stale_if_error": "1m"}
	timeouts := map[string]any{}
	for _, svc := range []string{"dealers", "inventory", "catalog", "media", "content"} {
		timeouts[svc] = faultUpstreamTimeout.String()
	}
	return map[string]any{
		"server": map[string]any{"request_timeout": faultRequestTimeout.String()},
		"upstream": map[string]any{
			"timeouts":         timeouts,
			"breaker_failures": failures,
			"breaker_open_for": faultBreakerOpenFor.String(),
		},
		"cache": map[string]any{"routes": map[string]any{
			"inventory_listing": policy,
			"inventory_details": policy,
			"content_listing":   policy,
		}},
	}
}

// faultRedisConfig is the edge config of the Redis fault tests: default cache
// lifetimes (hits come from L1), the Redis budget made explicit, and the
// local fallback limiter.
func faultRedisConfig() map[string]any {
	return map[string]any{
		"redis":      map[string]any{"timeout": faultRedisTimeout.String()},
		"rate_limit": map[string]any{"fail_mode": "local"},
	}
}

const (
	faultKeyLimited = "X-Api-Key: demo-key-limited" // dealer 101, plan limited: 10/s, burst 10
	faultKeyBench   = "X-Api-Key: bench-key-000"    // dealer 101, plan bench: effectively unlimited
)

// faultStack is a stack under fault injection; its methods are the fault
// tests' probes.
type faultStack struct{ *stack }

// startFaultStack starts a stack with config and checks, when the test
// ends, that the edge logged no internal error nor panic: a fault must be
// answered by design (503, STALE), never by accident.
func startFaultStack(t *testing.T, config map[string]any) *faultStack {
	t.Helper()
	s := &faultStack{startStack(t, config)}
	t.Cleanup(func() {
		for _, line := range strings.Split(s.edge.Stderr.String(), "\n") {
			if strings.Contains(line, `"msg":"internal error"`) || strings.Contains(line, `"msg":"panic"`) {
				t.Errorf("edge logged: %s", line)
			}
		}
	})
	return s
}

// call sends GET path and checks what every fault test requires of every
// answer: it comes within budget, and a 5xx is only ever 503
// service_unavailable as problem+json. A request still unanswered a
// second after its budget fails the test at once.
func (s *faultStack) call(t *testing.T, path string, budget time.Duration, headers ...string) *procs.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), budget+time.Second)
	defer cancel()
	r, err := procs.Get(ctx, client, s.edge.Base, path, headers...)
	if err != nil {
		t.Fatalf("GET %s: no answer within %v (budget %v): %v", path, budget+time.Second, budget, err)
	}
	if r.Elapsed > budget {
		t.Errorf("GET %s: answered %d after %v, budget %v", path, r.Status, r.Elapsed.Round(time.Millisecond), budget)
	}
	if msg := faultBad5xx(r); msg != "" {
		t.Errorf("GET %s: %s", path, msg)
	}
	checkGET(t, path, r) // a degraded answer is still a contract answer
	return r
}

// faultBad5xx describes r when it is a 5xx other than 503 service_unavailable
// problem+json, else "".
func faultBad5xx(r *procs.Response) string {
	if r.Status < 500 {
		return ""
	}
	if r.Status != http.StatusServiceUnavailable || !faultIsProblem(r) || faultProblemCode(r) != "service_unavailable" {
		return fmt.Sprintf("%d %s %s: only 503 service_unavailable problem+json may be a 5xx", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	return ""
}

func faultIsProblem(r *procs.Response) bool {
	return strings.HasPrefix(r.Header.Get("Content-Type"), "application/problem+json")
}

func faultProblemCode(r *procs.Response) string {
	var p struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(r.Body, &p)
	return p.Code
}

// faultExpect reports (as an error) whether r is a 200 with one of the X-Cache
// values xcache.
func faultExpect(t *testing.T, what string, r *procs.Response, xcache ...string) bool {
	t.Helper()
	if r.Status != http.StatusOK || !slices.Contains(xcache, r.Header.Get("X-Cache")) {
		t.Errorf("%s: %d X-Cache %q, want 200 %v: %.200s", what, r.Status, r.Header.Get("X-Cache"), xcache, r.Body)
		return false
	}
	return true
}

// faultExpectUnavailable reports (as an error) whether r is a 503
// service_unavailable problem.
func faultExpectUnavailable(t *testing.T, what string, r *procs.Response) bool {
	t.Helper()
	if r.Status != http.StatusServiceUnavailable || !faultIsProblem(r) || faultProblemCode(r) != "service_unavailable" {
		t.Errorf("%s: %d %q, want 503 service_unavailable: %.200s", what, r.Status, r.Header.Get("X-Cache"), r.Body)
		return false
	}
	return true
}

// faultEventually calls check every 50ms until it reports done, and fails the
// test with check's last word when within passes first.
func faultEventually(t *testing.T, within time.Duration, what string, check func() (bool, string)) {
	t.Helper()
	start := time.Now()
	deadline := start.Add(within)
	for {
		done, last := check()
		if done {
			t.Logf("%s: after %v", what, time.Since(start).Round(time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v; last: %s", what, within, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// faultReadiness is the part of the admin /readyz body the tests read.
type faultReadiness struct {
	Status   string            `json:"status"`
	Redis    string            `json:"redis"`
	Breakers map[string]string `json:"breakers"`
	Degraded []string          `json:"degraded"`
}

func (s *faultStack) readyz(t *testing.T) faultReadiness {
	t.Helper()
	resp, err := http.Get(s.edge.Admin + "/readyz")
	if err != nil {
		t.Fatalf("readyz: %v", err)
	}
	defer resp.Body.Close()
	var rd faultReadiness
	if err := json.NewDecoder(resp.Body).Decode(&rd); err != nil {
		t.Fatalf("readyz: %v", err)
	}
	return rd
}

// breakerState is edge_upstream_breaker_state of service: 0 closed,
// 1 half-open, 2 open (-1 when the metric is missing).
func (s *faultStack) breakerState(service string) float64 {
	v, ok := s.edge.Metric("edge_upstream_breaker_state", `service="`+service+`"`)
	if !ok {
		return -1
	}
	return v
}

// awaitStale requests path, cached before a fault of its upstream, until
// its freshness has run out and it is served STALE (stale-if-error: there
// is no stale-while-revalidate window), counted as such in /metrics; until
// then it must be a HIT. Every answer is held to budget.
func (s *faultStack) awaitStale(t *testing.T, path string, budget time.Duration) {
	t.Helper()
	faultEventually(t, faultCacheTTL+3*time.Second, "stale-if-error for "+path, func() (bool, string) {
		r := s.call(t, path, budget, keyAlpha)
		if !faultExpect(t, "cached "+path+" during the fault", r, "HIT", "STALE") {
			t.FailNow()
		}
		return r.Header.Get("X-Cache") == "STALE", r.Header.Get("X-Cache")
	})
	if v, _ := s.edge.Metric("edge_cache_stale_on_error_total"); v < 1 {
		t.Errorf("edge_cache_stale_on_error_total %v after a STALE answer on an upstream failure", v)
	}
}

// awaitRecovery waits, without any help, until the edge answers path (never
// cached) with a fresh 200 MISS from the upstream again, answering 503
// until then, and checks that service's breaker is closed again in
// /metrics and /readyz and that the next answer of path is a HIT.
func (s *faultStack) awaitRecovery(t *testing.T, service, path string, within time.Duration) {
	t.Helper()
	faultEventually(t, within, "recovery of "+path, func() (bool, string) {
		r := s.call(t, path, faultSlowBudget, keyAlpha)
		if r.Status == http.StatusServiceUnavailable {
			return false, "503"
		}
		if !faultExpect(t, "first answer after the fault of "+path, r, "MISS") {
			t.FailNow()
		}
		return true, ""
	})
	if st := s.breakerState(service); st != 0 {
		t.Errorf("edge_upstream_breaker_state{service=%q} %v after recovery, want 0 (closed)", service, st)
	}
	if rd := s.readyz(t); rd.Breakers[service] != "closed" || slices.ContainsFunc(rd.Degraded, func(d string) bool { return strings.HasPrefix(d, "upstream:") }) {
		t.Errorf("readyz after recovery: %+v, want %s closed and no upstream degraded", rd, service)
	}
	// Ready as a whole, Redis too: Redis is not the fault here, and on a
	// busy box (packages' tests side by side) readyz's PING outlived the
	// edge's default 50 ms redis.timeout now and then, which says "redis
	// down" until a PING answers in time again: waited for, not failed on.
	faultEventually(t, 5*time.Second, "readyz ready after recovery", func() (bool, string) {
		rd := s.readyz(t)
		return rd.Status == "ready" && rd.Breakers[service] == "closed", fmt.Sprintf("%+v", rd)
	})
	faultExpect(t, "second answer after the fault of "+path, s.call(t, path, faultFastBudget, keyAlpha), "HIT")
}

// TestFaultUpstreamSlow proves that a service slower than its timeout
// costs a client at most that timeout: for each of inventory (listing),
// catalog (vehicle detail, called after inventory) and content (content
// listing) with 2s of latency and a 300ms timeout, an uncached request is
// a 503 service_unavailable within the timeout plus a margin, a cached one
// past its TTL is served STALE (stale-if-error) within the same bound, and
// once the latency is gone the edge serves fresh data from the service
// again. The breaker is kept out of the way (100 failures) so that every
// request really meets the timeout.
func TestFaultUpstreamSlow(t *testing.T) {
	s := startFaultStack(t, faultConfig(100))
	r := s.call(t, "/dealer/NOS/listing?page_size=2", faultSlowBudget, keyAlpha)
	var page struct {
		Items []struct {
			IDAuto string `json:"id_auto"`
		} `json:"items"`
	}
	if err := json.Unmarshal(r.Body, &page); err != nil || len(page.Items) != 2 {
		t.Fatalf("NOS listing: %v %.200s", err, r.Body)
	}
	s.warmFakeContent(t, 101) // demo-key-alpha's dealer
	cases := []struct {
		service    string
		warm, cold string // warm is cached before the fault, cold never is
	}{
		{"inventory", "/dealer/REWIND/listing?page_size=2", "/dealer/REWIND/listing?page=2&page_size=2"},
		{"catalog", "/dealer/NOS/details?id_auto=" + page.Items[0].IDAuto, "/dealer/NOS/details?id_auto=" + page.Items[1].IDAuto},
		// Another type: every page of faq is cut from the faq view the warm
		// request cached, without calling the service.
		{"content", "/dealer/content/faq/listing?page_size=2", "/dealer/content/news/listing?page=2&page_size=2"},
	}
	for _, c := range cases {
		t.Run(c.service, func(t *testing.T) {
			faultExpect(t, "before the fault", s.call(t, c.warm, faultSlowBudget, keyAlpha), "MISS")
			s.fake.Faults("service=" + c.service + "&latency=" + faultInjectedLatency.String())
			t.Cleanup(func() { s.fake.Faults("service=" + c.service + "&clear=true") })
			for i := 0; i < 2; i++ {
				faultExpectUnavailable(t, "uncached, "+c.service+" slow", s.call(t, c.cold, faultSlowBudget, keyAlpha))
			}
			s.awaitStale(t, c.warm, faultSlowBudget)
			s.fake.Faults("service=" + c.service + "&clear=true")
			s.awaitRecovery(t, c.service, c.cold, 3*time.Second)
			faultExpect(t, "cached, after the fault", s.call(t, c.warm, faultSlowBudget, keyAlpha), "MISS")
		})
	}
}

// warmFakeContent asks the fake, directly, for every content answer of
// dealer the edge may ask for (each type, summary and full), with no
// budget: the fake encodes a content answer on its first request and
// memoises it, and that first encoding (about 40 ms on a quiet machine)
// took longer than faultUpstreamTimeout on a loaded CI host, which failed
// a "before the fault" request with the service healthy.
func (s *faultStack) warmFakeContent(t *testing.T, dealer int) {
	t.Helper()
	for _, ct := range upstream.ContentTypes {
		for _, view := range []string{"summary", "full"} {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			r, err := procs.Get(ctx, client, s.fake.URL(), fmt.Sprintf("/content/v1/dealers/%d/%s?view=%s", dealer, ct, view))
			cancel()
			if err != nil || r.Status != http.StatusOK {
				t.Fatalf("warming the fake's %s (%s) of dealer %d: %v %v", ct, view, dealer, err, r)
			}
		}
	}
}

// faultOutage takes the inventory service away from the edge in one way and
// brings it back.
type faultOutage struct {
	start, end func(s *faultStack)
	// counted: the fake keeps running and counts the calls it gets.
	counted bool
}

// runFaultOutage is the scenario of every upstream outage: the inventory
// service fails at once (error answers, resets, a dead process). Uncached
// requests get fast 503s; after faultBreakerFailures of them the breaker is
// open (metric, /readyz) and later ones are 503 without calling the
// service (its call counter stands still); a cached response past its TTL
// is served STALE; when the outage ends the edge, by itself, serves fresh
// data again after faultBreakerOpenFor and its breaker is closed.
func runFaultOutage(t *testing.T, o faultOutage) {
	s := startFaultStack(t, faultConfig(faultBreakerFailures))
	const (
		warm = "/dealer/REWIND/listing?page_size=3"
		cold = "/dealer/REWIND/listing?page=2&page_size=3"
	)
	faultExpect(t, "before the outage", s.call(t, warm, faultSlowBudget, keyAlpha), "MISS")
	o.start(s)
	for i := 0; i < faultBreakerFailures; i++ {
		faultExpectUnavailable(t, "uncached, breaker closed", s.call(t, cold, faultFastBudget, keyAlpha))
	}
	if st := s.breakerState("inventory"); st != 2 {
		t.Fatalf("edge_upstream_breaker_state{service=\"inventory\"} %v after %d failures, want 2 (open)", st, faultBreakerFailures)
	}
	if rd := s.readyz(t); rd.Status != "degraded" || rd.Breakers["inventory"] != "open" || !slices.Contains(rd.Degraded, "upstream:inventory") {
		t.Errorf("readyz with the inventory breaker open: %+v", rd)
	}
	var before int64
	if o.counted {
		before = s.fake.Calls()["inventory"]
	}
	for i := 0; i < 5; i++ {
		faultExpectUnavailable(t, "uncached, breaker open", s.call(t, cold, faultFastBudget, keyAlpha))
	}
	if o.counted {
		if after := s.fake.Calls()["inventory"]; after != before {
			t.Errorf("inventory called %d times through an open breaker", after-before)
		}
	}
	s.awaitStale(t, warm, faultFastBudget)
	o.end(s)
	s.awaitRecovery(t, "inventory", cold, faultBreakerOpenFor+3*time.Second)
	faultExpect(t, "cached, after the outage", s.call(t, warm, faultSlowBudget, keyAlpha), "MISS")
	if code := s.edge.Wait(10 * time.Millisecond); code != -1 {
		t.Errorf("the edge exited (%d) during the outage", code)
	}
}

// TestFaultErrorBurst proves the breaker and stale-if-error under a burst
// of 500 answers (fail_rate=1, then 0): fast 503s, an open breaker that
// stops calling the service, STALE for cached responses, recovery after
// the open interval. See runFaultOutage.
func TestFaultErrorBurst(t *testing.T) {
	runFaultOutage(t, faultOutage{
		start:   func(s *faultStack) { s.fake.Faults("service=inventory&fail_rate=1") },
		end:     func(s *faultStack) { s.fake.Faults("service=inventory&fail_rate=0") },
		counted: true,
	})
}

// TestFaultConnectionReset proves that connections the service aborts
// without an answer (TCP reset) are handled like errors: 503 or STALE,
// never 500/502, never a hang; the breaker opens and closes again. See
// runFaultOutage.
func TestFaultConnectionReset(t *testing.T) {
	runFaultOutage(t, faultOutage{
		start:   func(s *faultStack) { s.fake.Faults("service=inventory&reset=true") },
		end:     func(s *faultStack) { s.fake.Faults("service=inventory&reset=false") },
		counted: true,
	})
}

// TestFaultUpstreamKilled proves that the edge rides out the death of the
// upstream process (SIGKILL: refused connections, dead keep-alive
// connections) with fast 503s and STALE answers, and reconnects by itself
// when the process is back on the same address, without an edge restart.
// See runFaultOutage.
func TestFaultUpstreamKilled(t *testing.T) {
	runFaultOutage(t, faultOutage{
		start: func(s *faultStack) { s.fake.Kill() },
		end:   func(s *faultStack) { s.fake.Restart() },
	})
}

// faultTraffic is continuous client traffic against the edge, with the bench
// key (so that the rate limit never answers it) at one request per client
// every 5ms: each client requests next(client, i) (its i-th request) until
// stop, and every answer that is not a 200 within budget is recorded.
type faultTraffic struct {
	n    atomic.Int64
	stop chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	bad  []string
	max  time.Duration
}

func (s *faultStack) startTraffic(t *testing.T, clients int, budget time.Duration, next func(client, i int) string) *faultTraffic {
	tr := &faultTraffic{stop: make(chan struct{})}
	for c := 0; c < clients; c++ {
		tr.wg.Add(1)
		go func() {
			defer tr.wg.Done()
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for i := 0; ; i++ {
				select {
				case <-tr.stop:
					return
				case <-tick.C:
				}
				path := next(c, i)
				ctx, cancel := context.WithTimeout(context.Background(), budget+time.Second)
				r, err := procs.Get(ctx, client, s.edge.Base, path, faultKeyBench)
				cancel()
				tr.n.Add(1)
				tr.mu.Lock()
				switch {
				case err != nil:
					tr.bad = append(tr.bad, fmt.Sprintf("GET %s: %v", path, err))
				case r.Status != http.StatusOK:
					tr.bad = append(tr.bad, fmt.Sprintf("GET %s: %d %.200s", path, r.Status, r.Body))
				case r.Elapsed > budget:
					tr.bad = append(tr.bad, fmt.Sprintf("GET %s: 200 after %v, budget %v", path, r.Elapsed.Round(time.Millisecond), budget))
				}
				if r != nil {
					tr.max = max(tr.max, r.Elapsed)
				}
				tr.mu.Unlock()
				if r != nil && i%10 == 0 { // a sample: the validator costs CPU the edge needs
					checkGET(t, path, r)
				}
			}
		}()
	}
	return tr
}

// awaitMore waits until the clients have made n more requests.
func (tr *faultTraffic) awaitMore(t *testing.T, n int64) {
	t.Helper()
	want := tr.n.Load() + n
	faultEventually(t, 10*time.Second, "client traffic", func() (bool, string) {
		got := tr.n.Load()
		return got >= want, strconv.FormatInt(got, 10) + " requests"
	})
}

// finish stops the clients and fails the test for every bad answer.
func (tr *faultTraffic) finish(t *testing.T) {
	t.Helper()
	close(tr.stop)
	tr.wg.Wait()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	t.Logf("client traffic: %d requests, slowest %v", tr.n.Load(), tr.max.Round(time.Millisecond))
	for i, b := range tr.bad {
		if i == 10 {
			t.Errorf("... and %d more", len(tr.bad)-i)
			break
		}
		t.Errorf("client: %s", b)
	}
}

// faultCacheKeys counts the response cache entries of dealer 101 in Redis.
func faultCacheKeys(t *testing.T, rc *redis.Client) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	keys, err := rc.Keys(ctx, "edge:c*{d101}:g*").Result()
	if err != nil {
		return -1
	}
	return len(keys)
}

// usesRedisAgain checks, once, that the edge uses Redis again: /readyz
// and edge_redis_up see it up, the rate limiter has left its fallback, a
// response cached after fromKeys entries were counted has reached Redis
// (L2), and the purge subscription is active. Each call makes a new miss
// and a request of the limited key, which drive the cache and the limiter
// back to Redis.
func (s *faultStack) usesRedisAgain(t *testing.T, rc *redis.Client, fromKeys int, miss string) (bool, string) {
	t.Helper()
	faultExpect(t, "a miss after Redis came back", s.call(t, miss, faultRedisBudget, faultKeyBench), "MISS")
	if r := s.call(t, "/dealer/REWIND/listing", faultRedisBudget, faultKeyLimited); r.Status != http.StatusOK && r.Status != http.StatusTooManyRequests {
		t.Errorf("limited key after Redis came back: %d %.200s", r.Status, r.Body)
	}
	if rd := s.readyz(t); rd.Redis != "up" {
		return false, "readyz redis " + rd.Redis
	}
	if v, ok := s.edge.Metric("edge_redis_up"); !ok || v != 1 {
		return false, fmt.Sprintf("edge_redis_up %v", v)
	}
	if v, ok := s.edge.Metric("edge_ratelimit_fallback_active"); !ok || v != 0 {
		return false, fmt.Sprintf("edge_ratelimit_fallback_active %v", v)
	}
	if n := faultCacheKeys(t, rc); n <= fromKeys {
		return false, fmt.Sprintf("%d cache entries in Redis, had %d", n, fromKeys)
	}
	if !s.purgeSubscribed() {
		return false, "the cache's purge subscription is still reported lost"
	}
	return true, ""
}

// purgeSubscribed reports whether the edge's last word on the cache's
// purge subscription (one event line per state change) is that it is
// active.
func (s *faultStack) purgeSubscribed() bool {
	log := s.edge.Stderr.String()
	return strings.LastIndex(log, `"msg":"cache: purge subscription active"`) > strings.LastIndex(log, `"msg":"cache: purge subscription lost`)
}

// faultMissPath is the i-th of a series of inventory listings nobody asked for
// yet: a cache miss that the upstream fills.
func faultMissPath(series string, i int) string {
	return fmt.Sprintf("/dealer/NOS/listing?page_size=1&page=%d&q=%s", i+1, series)
}

// TestFaultRedisKilled proves that Redis dying (SIGKILL) and coming back
// under continuous client traffic fails no request: every answer is a 200
// (L1 hits and upstream fills) within ten Redis budgets; the rate limit
// still answers from the in-process fallback (demo-key-limited, 10/s burst
// 10, gets 429 rate_limited with Retry-After, never a 5xx); and after the
// restart the edge uses Redis again by itself (readyz "up",
// edge_redis_up 1, fallback inactive, new responses stored in Redis).
func TestFaultRedisKilled(t *testing.T) {
	s := startFaultStack(t, faultRedisConfig())
	rc := s.redis.Client()
	hits := []string{"/dealer/REWIND/listing", "/dealer/NOS/listing?page=2", "/dealer/content/faq/listing", "/dealer/content/hub"}
	for _, p := range hits {
		faultExpect(t, "warm "+p, s.call(t, p, faultSlowBudget, keyAlpha), "MISS")
	}
	faultExpect(t, "limited key", s.call(t, hits[0], faultSlowBudget, faultKeyLimited), "HIT")
	tr := s.startTraffic(t, 2, faultRedisBudget, func(c, i int) string {
		if i%4 == 3 {
			return faultMissPath("c"+strconv.Itoa(c), i)
		}
		return hits[i%len(hits)]
	})
	defer tr.finish(t)
	tr.awaitMore(t, 20)

	s.redis.Stop()
	tr.awaitMore(t, 40)
	// The Redis check's result answers for a second (ops.RedisCheckReuse).
	rd := s.readyz(t)
	for deadline := time.Now().Add(3 * time.Second); rd.Redis != "down" && time.Now().Before(deadline); rd = s.readyz(t) {
		time.Sleep(100 * time.Millisecond)
	}
	if rd.Redis != "down" || !slices.Contains(rd.Degraded, "redis") {
		t.Errorf("readyz with Redis dead: %+v", rd)
	}
	if v, _ := s.edge.Metric("edge_redis_errors_total"); v == 0 {
		t.Errorf("edge_redis_errors_total 0: the edge did not notice Redis die")
	}
	limited := 0
	for i := 0; i < 15; i++ {
		r := s.call(t, hits[0], faultRedisBudget, faultKeyLimited)
		switch {
		case r.Status == http.StatusOK:
		case r.Status == http.StatusTooManyRequests && faultIsProblem(r) && faultProblemCode(r) == "rate_limited":
			if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 {
				t.Errorf("429 with Retry-After %q", r.Header.Get("Retry-After"))
			}
			limited++
		default:
			t.Errorf("limited key with Redis dead: %d %.200s", r.Status, r.Body)
		}
	}
	if limited == 0 {
		t.Errorf("15 requests at once of a 10/s burst 10 key, none limited with Redis dead")
	}
	if v, _ := s.edge.Metric("edge_ratelimit_fallback_active"); v != 1 {
		t.Errorf("edge_ratelimit_fallback_active %v with Redis dead, want 1", v)
	}

	s.redis.Restart()
	i := 0
	faultEventually(t, 10*time.Second, "the edge using Redis again", func() (bool, string) {
		i++
		return s.usesRedisAgain(t, rc, 0, faultMissPath("after", i))
	})
	tr.awaitMore(t, 20)
}

// TestFaultRedisSlow proves that a Redis that accepts connections but
// stalls (CLIENT PAUSE ALL for 2s) costs a request at most about the Redis
// budget (50ms; every request is a 200 within 500ms, a quarter of the
// stall), for cache misses (L2 reads and writes, fill lock) and hits and
// the rate limiter alike, and that the edge uses Redis again by itself
// once it answers.
func TestFaultRedisSlow(t *testing.T) {
	s := startFaultStack(t, faultRedisConfig())
	rc := s.redis.Client()
	const hit = "/dealer/REWIND/listing?page_size=5"
	faultExpect(t, "warm", s.call(t, hit, faultSlowBudget, keyAlpha), "MISS")
	faultExpect(t, "L2 in use", s.call(t, faultMissPath("before", 0), faultSlowBudget, keyAlpha), "MISS")
	before := faultCacheKeys(t, rc)
	if before < 2 {
		t.Fatalf("%d cache entries in Redis before the stall; the test needs the edge to use Redis", before)
	}
	errsBefore, _ := s.edge.Metric("edge_redis_errors_total")

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	err := rc.Do(ctx, "CLIENT", "PAUSE", strconv.Itoa(int(faultRedisPause/time.Millisecond)), "ALL").Err()
	cancel()
	if err != nil {
		t.Fatalf("CLIENT PAUSE: %v", err)
	}
	pausedUntil := time.Now().Add(faultRedisPause)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	n := 0
	for ; time.Now().Add(faultRedisBudget).Before(pausedUntil); n++ {
		path := hit
		if n%2 == 0 {
			path = faultMissPath("paused", n)
		}
		faultExpect(t, "Redis stalled", s.call(t, path, faultRedisBudget, faultKeyBench), "MISS", "HIT")
		<-tick.C
	}
	t.Logf("%d requests during the stall", n)
	if v, _ := s.edge.Metric("edge_redis_errors_total"); v <= errsBefore {
		t.Errorf("edge_redis_errors_total did not move: the requests did not meet the stalled Redis")
	}

	i := 0
	faultEventually(t, 10*time.Second, "the edge using Redis again", func() (bool, string) {
		i++
		return s.usesRedisAgain(t, rc, before, faultMissPath("after", i))
	})
}
