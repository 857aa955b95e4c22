package reliability

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/contracttests/procs"
)

// TestSearchVariantFloodBounded is the audit's search flood (717 distinct
// search variants from one key caused 8,600 content calls in 12 s): one
// key of a plan of 10/s burst 20 sends distinct searches (and case and
// order variants of them) as fast as 8 connections allow for 3 s. With a
// search costing 5 tokens, the edge admits at most (burst + rate x T) / 5
// searches, each at most one fill of 12 content calls; every other
// request is 429 with Retry-After before reaching the cache or the
// upstream, and variants of an admitted query are the same cache entry.
func TestSearchVariantFloodBounded(t *testing.T) {
	const (
		rate, burst, cost = 10, 20, 5
		callsPerFill      = 12
		dur               = 3 * time.Second
	)
	s := startStack(t, map[string]any{
		"rate_limit": map[string]any{
			"default": map[string]any{"rate": rate, "burst": burst},
			"plans":   map[string]any{"default": map[string]any{"rate": rate, "burst": burst}},
			"costs":   map[string]any{"content_search": cost},
		},
		"log": map[string]any{"access_sample": 0},
	})
	before := s.fake.Calls()["content"]
	var (
		n, admitted, limited atomic.Int64
		mu                   sync.Mutex
		bad                  []string
	)
	fail := func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(bad) < 10 {
			bad = append(bad, fmt.Sprintf(f, a...))
		}
	}
	start := time.Now()
	stop := start.Add(dur)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(stop); i++ {
				// Distinct queries, each also sent as a case and order
				// variant: "flood 3 7" then "7 FLOOD 3".
				base := fmt.Sprintf("flood%d x%d", w, i/2)
				q := base
				if i%2 == 1 {
					q = strings.ToUpper(fmt.Sprintf("x%d flood%d", i/2, w))
				}
				n.Add(1)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				r, err := procs.Get(ctx, client, s.edge.Base, "/dealer/content/search?q="+url.QueryEscape(q), "X-Api-Key: demo-key-gamma")
				cancel()
				switch {
				case err != nil:
					fail("%s: %v", q, err)
				case r.Status == 200:
					admitted.Add(1)
					if p := r.Header.Get("RateLimit-Policy"); !strings.HasSuffix(p, fmt.Sprintf(";edge-cost=%d", cost)) {
						fail("%s: RateLimit-Policy %q", q, p)
					}
				case r.Status == 429:
					limited.Add(1)
					if r.Header.Get("Retry-After") == "" {
						fail("%s: 429 without Retry-After", q)
					}
				default:
					fail("%s: %d %s", q, r.Status, r.Body)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	calls := s.fake.Calls()["content"] - before
	for _, b := range bad {
		t.Error(b)
	}
	maxAdmitted := int64((burst+rate*elapsed.Seconds())/cost) + 1
	t.Logf("%d searches in %v: %d admitted (bound %d), %d limited, %d content calls (bound %d; %d without the cost)",
		n.Load(), elapsed.Round(time.Millisecond), admitted.Load(), maxAdmitted, limited.Load(), calls,
		maxAdmitted*callsPerFill, int64(burst+rate*elapsed.Seconds())*callsPerFill)
	if admitted.Load() > maxAdmitted {
		t.Errorf("admitted %d searches, the key's cost-weighted budget allows %d", admitted.Load(), maxAdmitted)
	}
	if calls > maxAdmitted*callsPerFill {
		t.Errorf("%d content calls, bound %d (%d searches x %d calls)", calls, maxAdmitted*callsPerFill, maxAdmitted, callsPerFill)
	}
	if calls > admitted.Load()*callsPerFill {
		t.Errorf("%d content calls for %d admitted searches: more than one fill each", calls, admitted.Load())
	}
	if limited.Load() == 0 || admitted.Load() < burst/cost {
		t.Errorf("flood not limited as expected: %d admitted, %d limited", admitted.Load(), limited.Load())
	}
}
