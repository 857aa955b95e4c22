package mapping

import (
	"math/rand/v2"
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

// TestRFC3339EqualsFormat holds rfc3339's digits to what
// Format(time.RFC3339) writes for the same second in UTC, on random times
// over years 0000-9999 in several zones with sub-second parts, the zero
// time and times clamped at both ends.
func TestRFC3339EqualsFormat(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	zones := []*time.Location{time.UTC, time.FixedZone("CET", 3600), time.FixedZone("W", -11*3600-1800)}
	first, last := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()
	times := []time.Time{{}, time.Date(-5, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(10000, 1, 1, 0, 30, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 30, 0, 0, time.FixedZone("m1", -3600)), time.Date(2026, 11, 27, 9, 5, 7, 999999999, time.UTC)}
	for range 20000 {
		times = append(times, time.Unix(first+rng.Int64N(last-first+1), rng.Int64N(1e9)).In(zones[rng.IntN(len(zones))]))
	}
	for _, at := range times {
		want := ""
		if !at.IsZero() {
			want = time.Unix(publishedUnix(at), 0).UTC().Format(time.RFC3339)
		}
		if got := rfc3339(at); got != want {
			t.Fatalf("rfc3339(%v) = %q, want %q", at, got, want)
		}
	}
}
