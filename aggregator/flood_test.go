package aggregator

import (
	"fmt"
	"sync"
	"testing"

	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// TestFloodThenOutage is the sequence of issue 12: resolve every valid
// demo and bench key, spray 300,000 random keys, take the dealers service
// down; every valid key still gets 200. With a fresh index the spray
// costs no call; without an index (lookups under the budget), the spray's
// keys live in their own cache and cannot evict a valid one.
func TestFloodThenOutage(t *testing.T) {
	spray := 300_000
	if raceEnabled || testing.Short() {
		spray = 30_000
	}
	var valid []string
	for _, k := range fake.DemoKeys {
		switch k.Key {
		case "demo-key-expired", "demo-key-orphan", "demo-key-revoked":
		default:
			valid = append(valid, k.Key)
		}
	}
	for i := range fake.BenchKeys {
		valid = append(valid, fake.BenchKey(i))
	}
	for _, c := range []struct {
		name    string
		index   bool
		maxCall int64 // dealers-service calls the spray may cause
	}{
		{"fresh index", true, 0},
		{"no index, lookup budget", false, 100 + 20*60}, // the burst, and the rate over a minute at most
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newIndexEdge(t, fake.Options{}, func(s *Settings) {
				s.AuthTTL = 1       // every cached key is past auth.ttl at once: the outage needs auth.stale
				s.LookupBurst = 100 // room for the 54 valid keys' first lookups
			}, c.index)
			if c.index {
				e.sync(t)
			}
			for _, k := range valid {
				if st := e.get(k); st != 200 {
					t.Fatalf("%s: %d before the flood", k, st)
				}
			}
			before := e.fk.Calls(upstream.SvcDealers)
			var wg sync.WaitGroup
			const workers = 8
			codes := make([]map[int]int, workers)
			for w := range workers {
				codes[w] = map[int]int{}
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := w; i < spray; i += workers {
						codes[w][e.get(fmt.Sprintf("spray-%08d-%d", i, w))]++
					}
				}()
			}
			wg.Wait()
			calls := e.fk.Calls(upstream.SvcDealers) - before
			all := map[int]int{}
			for _, m := range codes {
				for k, v := range m {
					all[k] += v
				}
			}
			t.Logf("%d sprayed requests: %v, %d dealers-service calls", spray, all, calls)
			if calls > c.maxCall {
				t.Fatalf("%d dealers-service calls for %d sprayed keys; want at most %d", calls, spray, c.maxCall)
			}
			if all[200] != 0 {
				t.Fatalf("a random key was accepted: %v", all)
			}
			e.fk.SetDown(upstream.SvcDealers, true)
			failed := 0
			for _, k := range valid {
				if st := e.get(k); st != 200 {
					failed++
					t.Errorf("%s: %d with the dealers service down after the flood", k, st)
				}
			}
			if failed > 0 {
				t.Fatalf("%d of %d valid keys refused", failed, len(valid))
			}
		})
	}
}
