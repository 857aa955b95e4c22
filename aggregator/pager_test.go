package aggregator

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake/corpus"
)

// TestPageSelectionEqualsView: a listing read page by page from the
// content service (content listing views off, upstream.ContentPage) is
// byte for byte the listing cut from the cached view, for every dealer,
// content type, filter value of the corpus (and an unknown one), page
// size and page up to one past the last.
func TestPageSelectionEqualsView(t *testing.T) {
	s := newBenchServer(t, true)
	if _, ok := s.backend.(contentPager); !ok {
		t.Fatalf("%T is not a contentPager: the test would prove nothing", s.backend)
	}
	viewSt := s.settings.Load()
	off := DefaultSettings()
	delete(off.Cache, RouteContentListing)
	if err := s.UpdateSettings(off); err != nil {
		t.Fatal(err)
	}
	pageSt := s.settings.Load()
	if pageSt.policy(RouteContentListing, "faq").TTL > 0 || viewSt.policy(RouteContentListing, "faq").TTL <= 0 {
		t.Fatal("settings: want views cached in one, off in the other")
	}
	cases := 0
	for _, d := range corpus.DealerIDs() {
		for _, ct := range upstream.ContentTypes {
			filters := map[[3]string]bool{{}: true, {"nope", "", ""}: true}
			for _, r := range corpus.Records(d, ct) {
				for _, v := range [][3]string{{r.Category, "", ""}, {"", r.Topic, ""}, {"", "", strings.ToUpper(r.Brand)}} {
					if v != ([3]string{}) {
						filters[v] = true
					}
				}
			}
			for f := range filters {
				for _, ps := range []int{1, 5, 100} {
					for page := 1; ; page++ {
						p := params{page: page, pageSize: ps, category: f[0], topic: f[1], brand: f[2]}
						want, wn := listingJSON(t, s, viewSt, d, ct, p)
						got, gn := listingJSON(t, s, pageSt, d, ct, p)
						if got != want {
							t.Fatalf("dealer %d %s %+v:\npaged %s\nview  %s", d, ct, p, got, want)
						}
						cases++
						if page > (max(wn, gn)+ps-1)/ps {
							break
						}
					}
				}
			}
		}
	}
	t.Logf("%d pages", cases)
}

func listingJSON(t *testing.T, s *Server, st *liveSettings, d int64, ct string, p params) (string, int) {
	t.Helper()
	l, err := s.listing(context.Background(), st, d, ct, p, true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.appendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), l.Total
}

// failingPager fails ContentPage for one content type (and Content, as
// failingContent does).
type failingPager struct {
	failingContent
	cp contentPager
}

func (f failingPager) ContentPage(ctx context.Context, dealerID int64, ct string, flt upstream.ContentFilter, pick func([]upstream.ContentRecord) []int32) ([]upstream.ContentRecord, error) {
	if ct == f.failType {
		return nil, fmt.Errorf("test: %w", upstream.ErrUnavailable)
	}
	return f.cp.ContentPage(ctx, dealerID, ct, flt, pick)
}

// TestColdHubDegradesWithoutOneSection: with content views off (the
// sections read page by page), a failing section is left out and the hub
// is marked partial and not cached, as with views.
func TestColdHubDegradesWithoutOneSection(t *testing.T) {
	s := newBenchServer(t, true)
	st := DefaultSettings()
	delete(st.Cache, RouteContentListing)
	if err := s.UpdateSettings(st); err != nil {
		t.Fatal(err)
	}
	cp := s.backend.(contentPager)
	s.backend = failingPager{failingContent: failingContent{Backend: s.backend, failType: "videos"}, cp: cp}
	checkHubWithoutVideos(t, s.Handler())
}
