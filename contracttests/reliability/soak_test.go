package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/contracttests/procs"
)

// Bounds of TestSoakMixedLoad.
const (
	soakClients = 16
	// soakMaxRPS bounds the request count: at most soakMaxRPS x duration
	// requests, whatever the machine.
	soakMaxRPS = 50000
	// No growth between the warm-up sample and the end of the run:
	soakGoroutineSlack = 50       // goroutines once idle workers retired <= warm-up + 50
	soakMemSlack       = 32 << 20 // end RSS (and heap in use) <= 2 x warm-up + 32 MiB
	soakRSSCeiling     = 256 << 20
)

type soakKind int

const (
	soakHit       soakKind = iota // a small set of hot URLs: cache hits
	soakMiss                      // varying pages, sizes and q: misses
	soakLimited                   // demo-key-limited (10/s, burst 10): 200 or 429
	soakBadParams                 // 422 validation_error
	soakBadKey                    // 401 invalid_api_key / missing_api_key, 429 once over the failed-auth limit
	soakKinds
)

var soakKindNames = [soakKinds]string{"hit", "miss", "rate-limited", "bad-params", "bad-key"}

// soakWeights: per 100 requests.
var soakWeights = [soakKinds]int{60, 25, 8, 4, 3}

// soakDuration is the run length: $SOAK (a Go duration), else 10s, or 60s
// when $CI is set.
func soakDuration(t *testing.T) time.Duration {
	d := 10 * time.Second
	if os.Getenv("CI") != "" {
		d = 60 * time.Second
	}
	if v := os.Getenv("SOAK"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil || d < 3*time.Second {
			t.Fatalf("SOAK=%q: want a Go duration of at least 3s", v)
		}
	}
	return d
}

// TestSoakMixedLoad runs the real edge (with redis-server and fake-upstream)
// under a bounded mixed load from 16 clients on loopback: cache hits,
// misses, a rate-limited key and bad requests. Every answer must be the
// expected one for its kind (no 5xx, no transport error, no unexpected
// status), and the edge must not grow: goroutines and memory sampled after
// the warm-up and at the end stay within fixed bounds, and RSS stays under
// 256 MiB throughout.
func TestSoakMixedLoad(t *testing.T) {
	dur := soakDuration(t)
	warm := min(max(dur/5, time.Second), 10*time.Second)
	// Short TTLs, so that the miss URLs miss again during the run.
	pol := map[string]any{"ttl": "2s", "stale_while_revalidate": "1s", "stale_if_error": "1m"}
	config := map[string]any{
		"cache": map[string]any{"routes": map[string]any{
			"inventory_listing": pol, "inventory_details": pol, "content_hub": pol,
			"content_search": pol, "content_listing": pol, "content_details": pol,
		}},
		"log": map[string]any{"access_sample": 0},
	}
	s := startStack(t, config)
	seed := time.Now().UnixNano()
	t.Logf("duration %v (warm-up %v), %d clients, seed %d", dur, warm, soakClients, seed)

	hot := soakHotURLs(t, s)
	hc := procs.Client(10 * time.Second)
	defer hc.CloseIdleConnections()

	var (
		issued  atomic.Int64
		gzipped atomic.Int64 // answers sent gzip-coded
		maxReqs = int64(dur.Seconds() * soakMaxRPS)
		stats   = make([]*soakStats, soakClients)
		wg      sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(dur)
	for i := range soakClients {
		st := newSoakStats()
		stats[i] = st
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed + int64(i)))
			for n := 0; time.Now().Before(deadline) && issued.Add(1) <= maxReqs; n++ {
				kind, path, hdr := soakNext(rng, hot)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				t0 := time.Now()
				if i%2 == 1 { // half the clients take gzip, as most HTTP client libraries ask for it
					hdr = append(hdr[:len(hdr):len(hdr)], "Accept-Encoding: gzip")
				}
				r, err := procs.Get(ctx, hc, s.edge.Base, path, hdr...)
				cancel()
				st.record(kind, path, r, err, time.Since(t0))
				if err == nil && r.Header.Get("Content-Encoding") == "gzip" {
					gzipped.Add(1)
				}
				if err == nil && n%25 == 0 { // a sample against the OpenAPI document: validating all would load the CPU the edge needs
					checkGET(t, path, r)
				}
			}
		}()
	}

	// Samples: after the warm-up and just before the end, both under load;
	// every 500 ms in between for the peaks.
	var peakRSS, peakG float64
	sample := func(what string) soakSample {
		sm := soakSampleOf(t, s.edge)
		peakRSS, peakG = max(peakRSS, sm.rss), max(peakG, sm.goroutines)
		t.Logf("%-8s at %5.1fs: %s", what, time.Since(start).Seconds(), sm)
		return sm
	}
	time.Sleep(time.Until(start.Add(warm)))
	warmS := sample("warm-up")
	for time.Until(deadline) > 750*time.Millisecond {
		time.Sleep(500 * time.Millisecond)
		sm := soakSampleOf(t, s.edge)
		peakRSS, peakG = max(peakRSS, sm.rss), max(peakG, sm.goroutines)
	}
	time.Sleep(time.Until(deadline.Add(-250 * time.Millisecond)))
	endS := sample("end")
	wg.Wait()
	elapsed := time.Since(start)
	hc.CloseIdleConnections()
	time.Sleep(time.Second)
	idleS := sample("idle")
	// Pooled workers (hub sections, cache refreshes, the Redis batcher's
	// flushers: internal/workers) outlive their last job by 10 s, and how
	// many the run left depends on how slow the machine was at its end: a
	// leak is what is still there once they have retired.
	for settle := time.Now().Add(15 * time.Second); idleS.goroutines > warmS.goroutines+soakGoroutineSlack && time.Now().Before(settle); {
		time.Sleep(time.Second)
		idleS = soakSampleOf(t, s.edge)
	}
	t.Logf("%-8s at %5.1fs: %s", "settled", time.Since(start).Seconds(), idleS)
	if hwm, ok := s.edge.Metric("process_resident_memory_peak_bytes"); ok {
		peakRSS = max(peakRSS, hwm)
	}

	// Report.
	all := newSoakStats()
	for _, st := range stats {
		all.merge(st)
	}
	total := all.total()
	t.Logf("%d requests in %v: %.0f requests/s; latency p50 %v p99 %v max %v; %d answers gzip-coded", total, elapsed.Round(time.Millisecond),
		float64(total)/elapsed.Seconds(), all.quantile(0.5), all.quantile(0.99), all.quantile(1), gzipped.Load())
	if gzipped.Load() == 0 {
		t.Error("no answer was gzip-coded although half the clients accept gzip")
	}
	if v, ok := s.edge.Metric("edge_gzip_responses_total"); !ok || int64(v) != gzipped.Load() {
		t.Errorf("edge_gzip_responses_total %v (found %v), clients saw %d gzip-coded answers", v, ok, gzipped.Load())
	}
	for k := range soakKinds {
		t.Logf("  %-12s %7d  status %s  X-Cache %s", soakKindNames[k], all.n[k], soakCounts(all.status[k]), soakCounts(all.xcache[k]))
	}
	t.Logf("goroutines warm-up %.0f, end %.0f, settled %.0f, peak %.0f (bound: settled <= warm-up + %d)",
		warmS.goroutines, endS.goroutines, idleS.goroutines, peakG, soakGoroutineSlack)
	t.Logf("RSS warm-up %s, end %s, idle %s, peak %s (bounds: end <= 2 x warm-up + %s = %s; peak < %s)",
		soakMiB(warmS.rss), soakMiB(endS.rss), soakMiB(idleS.rss), soakMiB(peakRSS), soakMiB(soakMemSlack), soakMiB(2*warmS.rss+soakMemSlack), soakMiB(soakRSSCeiling))
	t.Logf("heap in use warm-up %s, end %s, idle %s (bound: end <= %s)",
		soakMiB(warmS.heap), soakMiB(endS.heap), soakMiB(idleS.heap), soakMiB(2*warmS.heap+soakMemSlack))

	activations, _ := s.edge.Metric("edge_ratelimit_fallback_activations_total")
	var ops []string
	for _, m := range []string{"edge_ratelimit_admitted_total", "edge_ratelimit_rejected_total", "edge_ratelimit_fallback_activations_total",
		"edge_redis_errors_total", "edge_cache_coalesced_total", "edge_cache_fills_total", "edge_cache_fill_errors_total", "edge_cache_l1_entries", "edge_cache_l1_bytes"} {
		v, _ := s.edge.Metric(m)
		ops = append(ops, fmt.Sprintf("%s %.0f", strings.TrimPrefix(m, "edge_"), v))
	}
	t.Logf("edge: %s", strings.Join(ops, ", "))

	// Assertions.
	if all.unexpected > 0 {
		t.Errorf("%d unexpected answers; the first ones:\n  %s", all.unexpected, strings.Join(all.examples, "\n  "))
	}
	for k := range soakKinds {
		if all.n[k] == 0 {
			t.Errorf("no %s requests were made", soakKindNames[k])
		}
	}
	if all.status[soakLimited]["429"] == 0 {
		t.Errorf("demo-key-limited was never rate limited (%s)", soakCounts(all.status[soakLimited]))
	}
	// demo-key-limited is 10/s, burst 10: over the run at most
	// 10 x (T + 250 ms) + 10 (README, rate limiting). Every fall-back to the
	// in-process limiter (a Redis reply over its 50 ms budget, which a busy
	// 2-core machine produces) starts an interval with a bucket of its own,
	// and so does every return to Redis: up to one more burst each.
	if got, bound := all.status[soakLimited]["200"], int(10*(elapsed.Seconds()+0.25))+10*(1+2*int(activations)); got > bound {
		t.Errorf("demo-key-limited admitted %d requests in %v, over the bound %d (%.0f fallback activations)", got, elapsed, bound, activations)
	}
	if all.xcache[soakHit]["HIT"] == 0 || all.xcache[soakMiss]["MISS"] == 0 {
		t.Errorf("the load made no hits or no misses: hot %s, miss %s", soakCounts(all.xcache[soakHit]), soakCounts(all.xcache[soakMiss]))
	}
	if idleS.goroutines > warmS.goroutines+soakGoroutineSlack {
		t.Errorf("goroutines grew: warm-up %.0f, end %.0f, settled %.0f (bound %.0f)", warmS.goroutines, endS.goroutines, idleS.goroutines, warmS.goroutines+soakGoroutineSlack)
	}
	if endS.rss > 2*warmS.rss+soakMemSlack {
		t.Errorf("RSS grew: warm-up %s, end %s (bound %s)", soakMiB(warmS.rss), soakMiB(endS.rss), soakMiB(2*warmS.rss+soakMemSlack))
	}
	if endS.heap > 2*warmS.heap+soakMemSlack {
		t.Errorf("heap in use grew: warm-up %s, end %s (bound %s)", soakMiB(warmS.heap), soakMiB(endS.heap), soakMiB(2*warmS.heap+soakMemSlack))
	}
	if peakRSS >= soakRSSCeiling {
		t.Errorf("RSS peaked at %s, over %s", soakMiB(peakRSS), soakMiB(soakRSSCeiling))
	}
	if code := s.edge.Wait(0); code != -1 {
		t.Errorf("dealer-edge exited during the run (code %d)", code)
	}
	if strings.Contains(s.edge.Stderr.String(), "panic") {
		t.Errorf("dealer-edge logged a panic")
	}
}

// soakHot is the hot URL set: per dealer (index 0..2 = 101..103) the same
// eight endpoints, with one of its own vehicles and FAQ slugs.
type soakHot [3][]string

func soakHotURLs(t *testing.T, s *stack) *soakHot {
	t.Helper()
	var hot soakHot
	for d := range 3 {
		hdr := "X-Api-Key: " + fmt.Sprintf("bench-key-%03d", d)
		var inv struct {
			Items []struct {
				IDAuto string `json:"id_auto"`
			} `json:"items"`
		}
		var faq struct {
			Items []struct {
				Slug string `json:"slug"`
			} `json:"items"`
		}
		for _, x := range []struct {
			path string
			v    any
		}{{"/dealer/REWIND/listing?page_size=1", &inv}, {"/dealer/content/faq/listing?page_size=1", &faq}} {
			r := s.get(t, x.path, hdr)
			if r.Status != 200 {
				t.Fatalf("GET %s: %d %s", x.path, r.Status, r.Body)
			}
			if err := json.Unmarshal(r.Body, x.v); err != nil {
				t.Fatalf("GET %s: %v", x.path, err)
			}
		}
		if len(inv.Items) == 0 || len(faq.Items) == 0 {
			t.Fatalf("dealer %d: no vehicle or no FAQ", 101+d)
		}
		hot[d] = []string{
			"/dealer/REWIND/listing?page_size=10",
			"/dealer/NOS/listing?page_size=10",
			"/dealer/NLT/listing?page_size=10",
			"/dealer/REWIND/details?id_auto=" + inv.Items[0].IDAuto,
			"/dealer/content/faq/listing?page_size=5",
			"/dealer/content/faq/details?slug=" + url.QueryEscape(faq.Items[0].Slug),
			"/dealer/content/hub",
			"/dealer/content/search?q=noleggio",
		}
	}
	return &hot
}

var (
	soakServices = []string{"REWIND", "NOS", "NLT"}
	soakTypes    = []string{"faq", "news", "glossary", "guides", "videos", "podcasts"}
	soakMakes    = []string{"fiat", "ford", "renault", "iveco", "volkswagen", "toyota", "peugeot", "citroen"}
	soakWords    = []string{"noleggio", "garanzia", "auto", "furgone", "elettrica", "ibrida", "permuta", "tagliando", "leasing", "consegna"}
	soakBad      = []string{
		"/dealer/REWIND/listing?page=0",
		"/dealer/NOS/listing?page_size=101",
		"/dealer/content/search?q=a",
		"/dealer/NLT/listing?catalog_type=auto",
		"/dealer/content/guides/listing?category=x",
		"/dealer/REWIND/details",
		"/dealer/content/faq/details",
	}
)

// soakNext draws the next request: its kind, path and headers. The miss
// URLs come from a bounded key space (a few thousand entries, a few MiB),
// so that the cache's growth is bounded too and memory growth means a leak.
func soakNext(rng *rand.Rand, hot *soakHot) (soakKind, string, []string) {
	bench := func() (int, string) {
		i := rng.Intn(50)
		return i % 3, "X-Api-Key: " + fmt.Sprintf("bench-key-%03d", i)
	}
	n := rng.Intn(100)
	kind := soakKind(0)
	for ; n >= soakWeights[kind]; kind++ {
		n -= soakWeights[kind]
	}
	switch kind {
	case soakHit:
		d, key := bench()
		if rng.Intn(2) == 0 {
			key = "Authorization: Bearer " + strings.TrimPrefix(key, "X-Api-Key: ")
		}
		return kind, hot[d][rng.Intn(len(hot[d]))], []string{key}
	case soakMiss:
		_, key := bench()
		var p string
		switch rng.Intn(5) {
		case 0, 1:
			p = fmt.Sprintf("/dealer/%s/listing?page=%d&page_size=%d", soakServices[rng.Intn(3)], 1+rng.Intn(16), 1+rng.Intn(10))
		case 2:
			p = fmt.Sprintf("/dealer/%s/listing?q=%s&page_size=%d", soakServices[rng.Intn(3)], soakMakes[rng.Intn(len(soakMakes))], 1+rng.Intn(10))
		case 3:
			p = fmt.Sprintf("/dealer/content/%s/listing?page=%d&page_size=%d", soakTypes[rng.Intn(6)], 1+rng.Intn(10), 1+rng.Intn(10))
			if rng.Intn(3) == 0 {
				p += "&q=" + soakWords[rng.Intn(len(soakWords))]
			}
		default:
			p = fmt.Sprintf("/dealer/content/search?q=%s&page_size=%d", soakWords[rng.Intn(len(soakWords))], 1+rng.Intn(5))
		}
		return kind, p, []string{key}
	case soakLimited:
		return kind, hot[0][rng.Intn(len(hot[0]))], []string{"X-Api-Key: demo-key-limited"}
	case soakBadParams:
		_, key := bench()
		return kind, soakBad[rng.Intn(len(soakBad))], []string{key}
	default:
		p := hot[0][rng.Intn(len(hot[0]))]
		if rng.Intn(4) == 0 {
			return kind, p, nil // no key at all
		}
		return kind, p, []string{fmt.Sprintf("X-Api-Key: soak-unknown-key-%02d", rng.Intn(16))}
	}
}

// soakStats is one client's record (no locking: merged at the end).
type soakStats struct {
	n          [soakKinds]int
	status     [soakKinds]map[string]int
	xcache     [soakKinds]map[string]int
	lat        []time.Duration
	unexpected int
	examples   []string
}

func newSoakStats() *soakStats {
	st := &soakStats{}
	for k := range soakKinds {
		st.status[k], st.xcache[k] = map[string]int{}, map[string]int{}
	}
	return st
}

// record files one answer and checks it against what its kind allows.
func (st *soakStats) record(kind soakKind, path string, r *procs.Response, err error, took time.Duration) {
	st.n[kind]++
	st.lat = append(st.lat, took)
	if err != nil {
		st.status[kind]["error"]++
		st.bad(kind, path, "transport error: "+err.Error())
		return
	}
	st.status[kind][strconv.Itoa(r.Status)]++
	if r.Status == 200 {
		st.xcache[kind][r.Header.Get("X-Cache")]++
	}
	var problem struct {
		Code string `json:"code"`
	}
	if r.Status != 200 {
		_ = json.Unmarshal(r.Body, &problem)
	}
	ok := false
	switch {
	case r.Status == 200 && (kind == soakHit || kind == soakMiss || kind == soakLimited):
		xc := r.Header.Get("X-Cache")
		ok = json.Valid(r.Body) && (xc == "HIT" || xc == "MISS" || xc == "STALE") && r.Header.Get("X-Edge-Partial") == ""
	case r.Status == 429 && (kind == soakLimited || kind == soakBadKey):
		// A bad-key client is over its address's failed-auth limit
		// (rate_limit.failed_auth) after its burst.
		ra, err := strconv.Atoi(r.Header.Get("Retry-After"))
		ok = problem.Code == "rate_limited" && err == nil && ra >= 1
	case r.Status == 422 && kind == soakBadParams:
		ok = problem.Code == "validation_error"
	case r.Status == 401 && kind == soakBadKey:
		ok = problem.Code == "invalid_api_key" || problem.Code == "missing_api_key"
	}
	if !ok {
		body := string(r.Body)
		if len(body) > 300 {
			body = body[:300] + "..."
		}
		st.bad(kind, path, fmt.Sprintf("%d X-Cache %q Retry-After %q: %s", r.Status, r.Header.Get("X-Cache"), r.Header.Get("Retry-After"), body))
	}
}

func (st *soakStats) bad(kind soakKind, path, what string) {
	st.unexpected++
	if len(st.examples) < 5 {
		st.examples = append(st.examples, soakKindNames[kind]+" GET "+path+": "+what)
	}
}

func (st *soakStats) merge(o *soakStats) {
	for k := range soakKinds {
		st.n[k] += o.n[k]
		for s, n := range o.status[k] {
			st.status[k][s] += n
		}
		for s, n := range o.xcache[k] {
			st.xcache[k][s] += n
		}
	}
	st.lat = append(st.lat, o.lat...)
	st.unexpected += o.unexpected
	for _, e := range o.examples {
		if len(st.examples) < 10 {
			st.examples = append(st.examples, e)
		}
	}
}

func (st *soakStats) total() int {
	n := 0
	for _, v := range st.n {
		n += v
	}
	return n
}

func (st *soakStats) quantile(q float64) time.Duration {
	if len(st.lat) == 0 {
		return 0
	}
	if !sort.SliceIsSorted(st.lat, func(i, j int) bool { return st.lat[i] < st.lat[j] }) {
		sort.Slice(st.lat, func(i, j int) bool { return st.lat[i] < st.lat[j] })
	}
	return st.lat[min(len(st.lat)-1, int(q*float64(len(st.lat))))].Round(10 * time.Microsecond)
}

func soakCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		name := k
		if name == "" {
			name = `""`
		}
		fmt.Fprintf(&b, "%s=%d", name, m[k])
	}
	return "{" + b.String() + "}"
}

type soakSample struct{ goroutines, rss, heap float64 }

func (s soakSample) String() string {
	return fmt.Sprintf("goroutines %.0f, RSS %s, heap in use %s", s.goroutines, soakMiB(s.rss), soakMiB(s.heap))
}

// soakSampleOf reads the edge's own figures from its /metrics.
func soakSampleOf(t *testing.T, e *procs.Edge) soakSample {
	t.Helper()
	var sm soakSample
	for _, m := range []struct {
		name string
		v    *float64
	}{{"go_goroutines", &sm.goroutines}, {"process_resident_memory_bytes", &sm.rss}, {"go_memstats_heap_inuse_bytes", &sm.heap}} {
		v, ok := e.Metric(m.name)
		if !ok {
			t.Fatalf("/metrics has no %s", m.name)
		}
		*m.v = v
	}
	return sm
}

func soakMiB(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }
