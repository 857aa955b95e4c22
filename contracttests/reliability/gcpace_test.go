package reliability

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// TestGCPacing runs the real binary with a 64 KiB L1 (a live heap of a few
// MB) under listing fills and checks the collector's pacing an operator
// sees: with the default server.gc_min_growth_bytes the start log names it
// and edge_gc_percent, read after collections, is above Go's 100; with 0 the
// log says Go's default and the gauge stays 100.
func TestGCPacing(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set in the environment: the edge leaves the collector to it")
	}
	for _, tc := range []struct {
		name   string
		server map[string]any
		logged string
		above  bool
	}{
		{"default", map[string]any{}, `"msg":"gc pacing","by":"server.gc_min_growth_bytes","bytes":16777216`, true},
		{"off", map[string]any{"gc_min_growth_bytes": 0}, `"msg":"gc pacing","by":"go default"`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startStack(t, map[string]any{"server": tc.server, "cache": map[string]any{"l1_max_bytes": 65536}})
			if !strings.Contains(s.edge.Stderr.String(), tc.logged) {
				t.Fatalf("start log lacks %s:\n%s", tc.logged, tail(s.edge.Stderr.String()))
			}
			// Fills of distinct listings: each allocates its upstream
			// answer, its body and its entry, so the heap passes Go's
			// 4 MiB goal many times over.
			var wg sync.WaitGroup
			for w := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for ps := 1 + w; ps <= 100; ps += 4 {
						for page := 1; page <= 3; page++ {
							if r := s.get(t, fmt.Sprintf("/dealer/REWIND/listing?page=%d&page_size=%d", page, ps), "X-Api-Key: bench-key-000"); r.Status != 200 {
								t.Errorf("page %d of %d: %d", page, ps, r.Status)
							}
						}
					}
				}()
			}
			wg.Wait()
			gcs, ok := s.edge.Metric("go_gc_duration_seconds_count")
			if !ok || gcs < 1 {
				t.Fatalf("no collection after 300 fills (go_gc_duration_seconds_count %v, %v)", gcs, ok)
			}
			pct, ok := s.edge.Metric("edge_gc_percent")
			if !ok {
				t.Fatal("no edge_gc_percent")
			}
			t.Logf("%v collections, edge_gc_percent %v", gcs, pct)
			if tc.above && pct <= 100 {
				t.Fatalf("edge_gc_percent %v with a live heap of a few MB and a 16 MiB least growth, want above 100", pct)
			}
			if !tc.above && pct != 100 {
				t.Fatalf("edge_gc_percent %v with the pacing off, want 100", pct)
			}
		})
	}
}
