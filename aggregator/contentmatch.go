package aggregator

import (
	"context"

	"golang.org/x/sync/errgroup"

	"github.com/dealer-edge/dealer-edge/aggregator/mapping"
	"github.com/dealer-edge/dealer-edge/upstream"
)

// visibleMatches returns the records of one content type that match f and
// are visible under the public rules, in the public order.
//
// The rules relate records to each other (a dealer's override replaces a
// global record and keeps its id and slug; a hidden global record hides
// the dealer's override of it), but the content service matches every
// record on its own text: a filtered answer can hold a global record
// without the override that replaces it (the replaced global answer would
// come back, under the override's slug), or an override without the hidden
// global record it belongs to. So with a filter the rules are applied to
// the whole view, fetched at the same time, and of its visible records
// those the service matched are kept.
func (s *Server) visibleMatches(ctx context.Context, dealerID int64, ct string, f upstream.ContentFilter, scope mapping.Scope) ([]upstream.ContentRecord, error) {
	whole := upstream.ContentFilter{Summary: f.Summary} // the whole view, in the same form
	if f == whole {
		recs, err := s.backend.Content(ctx, dealerID, ct, f)
		if err != nil {
			return nil, err
		}
		return mapping.Visible(dealerID, ct, recs, scope), nil
	}
	var all, matched []upstream.ContentRecord
	var g errgroup.Group // no shared cancellation: see contentSearch
	g.Go(guard(func() (err error) {
		all, err = s.backend.Content(ctx, dealerID, ct, whole)
		return err
	}))
	g.Go(guard(func() (err error) {
		matched, err = s.backend.Content(ctx, dealerID, ct, f)
		return err
	}))
	if err := g.Wait(); err != nil {
		return nil, err
	}
	// A record is its dealer id and slug: slugs are unique within a type,
	// and an override shares its slug only with the global record.
	type recKey struct {
		dealerID int64
		slug     string
	}
	hit := make(map[recKey]bool, len(matched))
	for i := range matched {
		hit[recKey{matched[i].DealerID, matched[i].Slug}] = true
	}
	vis := mapping.Visible(dealerID, ct, all, scope)
	out := vis[:0]
	for _, r := range vis {
		if hit[recKey{r.DealerID, r.Slug}] {
			out = append(out, r)
		}
	}
	return out, nil
}
