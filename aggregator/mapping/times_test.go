package mapping

import (
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// TestTimesStayRFC3339: contract 2.7, updated_at is "string, date-time"
// (RFC 3339: a four-digit year). An upstream time that is a valid RFC 3339
// time in its own offset but leaves years 0000-9999 once moved to UTC is
// published clamped, not as "10000-01-01T00:30:00Z" or
// "-0001-12-31T23:30:00Z" (found by an audit).
func TestTimesStayRFC3339(t *testing.T) {
	for _, in := range []string{"9999-12-31T23:30:00-01:00", "0000-01-01T00:30:00+01:00"} {
		ts, err := time.Parse(time.RFC3339, in)
		if err != nil {
			t.Fatal(err)
		}
		it := ContentItem(upstream.ContentRecord{ID: 1, Slug: "x", UpdatedAt: ts}, upstream.ContentFAQ, DetailForm)
		if _, err := time.Parse(time.RFC3339, it.UpdatedAt); err != nil || len(it.UpdatedAt) != len("2006-01-02T15:04:05Z") {
			t.Errorf("upstream %s: updated_at %q is not RFC 3339 (%v)", in, it.UpdatedAt, err)
		}
		d := VehicleDetail(upstream.Vehicle{IDAuto: "304b22ef-aeab-4381-ab25-ff3745fb4c70"}, upstream.Equipment{}, &upstream.Media{Podcast: &upstream.Podcast{PublishedAt: ts}})
		if _, err := time.Parse(time.RFC3339, d.Podcast.PublishedAt); err != nil {
			t.Errorf("upstream %s: podcast.published_at %q is not RFC 3339 (%v)", in, d.Podcast.PublishedAt, err)
		}
	}
}
