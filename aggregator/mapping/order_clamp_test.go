package mapping

import (
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// TestClampedTimesInSlugOrder: items a client sees with the same
// updated_at are in slug order, also when the time was clamped to RFC
// 3339's years on output (README, Listings and content): rfc3339 publishes
// every time past year 9999 (in UTC) as 9999-12-31T23:59:59Z and before
// year 0 as 0000-01-01T00:00:00Z. Before 2026-11-27 VisibleOrder compared
// the unclamped seconds, so such items came out of slug order.
func TestClampedTimesInSlugOrder(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	recs := []upstream.ContentRecord{
		{ID: 1, Type: "faq", DealerID: 101, Slug: "a-typo-year-20260", Title: "A", UpdatedAt: at.AddDate(18234, 0, 0)},
		{ID: 2, Type: "faq", DealerID: 101, Slug: "b-typo-year-20261", Title: "B", UpdatedAt: at.AddDate(18235, 0, 0)},
		{ID: 3, Type: "faq", DealerID: 101, Slug: "c-last-second", Title: "C", UpdatedAt: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)},
	}
	vis := Visible(101, "faq", recs, Discovery)
	for i := 1; i < len(vis); i++ {
		a := ContentItem(vis[i-1], "faq", ListingForm)
		b := ContentItem(vis[i], "faq", ListingForm)
		if a.UpdatedAt == b.UpdatedAt && a.Slug > b.Slug {
			t.Errorf("items %q and %q both show updated_at %s, want them in slug order", a.Slug, b.Slug, a.UpdatedAt)
		}
	}
}
