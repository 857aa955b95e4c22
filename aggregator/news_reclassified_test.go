package aggregator

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/dealer-edge/dealer-edge/aggregator/mapping"
	"github.com/dealer-edge/dealer-edge/upstream"
)

// reclassifyNews turns one news edition readable by slug only into a
// first-party (listed) edition once flipped is set: the content service's
// answers before and after both have it readable by slug.
type reclassifyNews struct {
	Backend
	slug    string
	flipped atomic.Bool
}

func (b *reclassifyNews) Content(ctx context.Context, dealerID int64, ct string, f upstream.ContentFilter) ([]upstream.ContentRecord, error) {
	recs, err := b.Backend.Content(ctx, dealerID, ct, f)
	if err != nil || ct != upstream.ContentNews || !b.flipped.Load() {
		return recs, err
	}
	out := make([]upstream.ContentRecord, len(recs))
	copy(out, recs)
	for i := range out {
		if out[i].Slug == b.slug {
			out[i].SourceProvider = mapping.EditorialProvider
		}
	}
	return out, nil
}

// TestReclassifiedNewsStaysReadable: a news edition readable by slug
// only (an archive edition) is promoted to a first-party edition. It is
// readable by slug before and after, so its details must stay 200. The
// view (filled by a listing before the change: the edition not in it)
// and the slug-only entry (filled by the detail after the change: the
// edition no longer in it) are filled at different times, and together
// they answer 404 content_not_found until the view expires.
func TestReclassifiedNewsStaysReadable(t *testing.T) {
	e := newViewEnv(t, nil)
	slug := archiveNewsSlug(t, e)
	b := &reclassifyNews{Backend: e.s.backend, slug: slug}
	e.s.backend = b
	e.mustGet(t, "/dealer/content/news/listing") // the view: the edition is not listed
	b.flipped.Store(true)                        // promoted: still readable, now listed
	if sc, _, body := e.get(t, "/dealer/content/news/details?slug="+slug); sc != 200 {
		t.Errorf("details of an edition readable before and after its promotion: %d %s", sc, body)
	}
}

// archiveNewsSlug is the slug of one of dealer 101's own archive news
// editions (not editorial, not hidden).
func archiveNewsSlug(t *testing.T, e *viewEnv) string {
	t.Helper()
	all, err := e.s.backend.Content(context.Background(), 101, upstream.ContentNews, upstream.ContentFilter{Summary: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		if r.DealerID == 101 && r.SourceProvider != mapping.EditorialProvider && !r.HiddenForDealer {
			return r.Slug
		}
	}
	t.Fatal("no archive edition in the corpus")
	return ""
}
