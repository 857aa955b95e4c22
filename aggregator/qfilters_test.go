package aggregator

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dealer-edge/dealer-edge/aggregator/mapping"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake/corpus"
)

// TestQWithFiltersEqualsService: a listing with q and category /
// topic / brand (filters now matched on the view, q only sent to the
// service) selects, on the demo corpus, the same records in the same
// order as the service's own q+filters answer cut to the visible view
// (hidden and override records included), for many q words, not one.
func TestQWithFiltersEqualsService(t *testing.T) {
	s := newBenchServer(t, true)
	st := s.settings.Load()
	ctx := context.Background()
	cases, nonEmpty := 0, 0
	for _, d := range corpus.DealerIDs() {
		for _, ct := range upstream.ContentTypes {
			recs := corpus.Records(d, ct)
			words := map[string]bool{}
			filters := map[[3]string]bool{}
			for i, r := range recs {
				if i%3 == 0 {
					if w := strings.Fields(r.Title); len(w) > 0 {
						words[strings.ToLower(w[len(w)/2])] = true
					}
				}
				filters[[3]string{r.Category, "", ""}] = true
				filters[[3]string{"", r.Topic, ""}] = true
				filters[[3]string{"", "", strings.ToUpper(r.Brand)}] = true
			}
			all, err := s.backend.Content(ctx, d, ct, upstream.ContentFilter{Summary: true})
			if err != nil {
				t.Fatal(err)
			}
			vis := mapping.Visible(d, ct, all, mapping.Discovery)
			n := 0
			for q := range words {
				if n++; n > 6 {
					break
				}
				for f := range filters {
					if f == ([3]string{}) {
						continue
					}
					uf := upstream.ContentFilter{Q: q, Category: f[0], Topic: f[1], Brand: f[2], Summary: true}
					matched, err := s.backend.Content(ctx, d, ct, uf)
					if err != nil {
						t.Fatal(err)
					}
					hit := map[string]bool{}
					for _, m := range matched {
						hit[fmt.Sprint(m.DealerID, "/", m.Slug)] = true
					}
					var want []string
					for _, r := range vis {
						if hit[fmt.Sprint(r.DealerID, "/", r.Slug)] {
							want = append(want, fmt.Sprint(r.ID, ":", r.Slug))
						}
					}
					sel, err := s.listingSelection(ctx, st, d, ct, &params{q: q, category: f[0], topic: f[1], brand: f[2]})
					if err != nil {
						t.Fatal(err)
					}
					var got []string
					for i := 0; i < sel.len(); i++ {
						got = append(got, fmt.Sprint(sel.at(i).ID, ":", sel.at(i).Slug))
					}
					if strings.Join(got, ",") != strings.Join(want, ",") {
						t.Fatalf("dealer %d %s q %q filter %q:\nedge    %v\nservice %v", d, ct, q, f, got, want)
					}
					cases++
					if len(want) > 0 {
						nonEmpty++
					}
				}
			}
		}
	}
	t.Logf("%d cases, %d with matches", cases, nonEmpty)
	if nonEmpty < 50 {
		t.Fatalf("only %d non-empty cases", nonEmpty)
	}
}
