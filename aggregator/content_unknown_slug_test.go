package aggregator

import (
	"net/url"
	"regexp"
	"testing"

	"github.com/dealer-edge/dealer-edge/aggregator/mapping"
	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
	"github.com/dealer-edge/dealer-edge/upstream/fake/corpus"
)

// TestUnknownContentSlugAnsweredFromView: a content detail of a slug the
// dealer's fresh view does not hold is a 404 without a content call, for
// every type (for news, whose view leaves out the editions readable by
// slug only, with their slugs' own cached entry).
// Before, each such request (repeated or not: a 404 is not cached) read
// the type's whole corpus in full form, a few hundred KB, for one token.
// A slug the dealer has is still read whole and found, another dealer's
// slug is the same 404 as one nobody has, and with views off for the type
// the detail asks the service as before.
func TestUnknownContentSlugAnsweredFromView(t *testing.T) {
	const key, dealer, other = "demo-key-alpha", 101, 102
	own := func(ct string, d int64, onlyOf bool) string {
		mine := map[string]bool{}
		for _, r := range corpus.Records(dealer, ct) {
			mine[r.Slug] = true
		}
		for _, r := range corpus.Records(d, ct) {
			if r.DealerID == d && !r.HiddenForDealer && r.OverrideOf == 0 && (!onlyOf || !mine[r.Slug]) {
				return r.Slug
			}
		}
		return ""
	}
	for _, ct := range upstream.ContentTypes {
		t.Run(ct, func(t *testing.T) {
			e := newIndexEdge(t, fake.Options{}, nil, false)
			svc := fake.ContentTypeService(ct)
			details := func(slug string) (int, string) {
				return e.body(t, "/dealer/content/"+ct+"/details?slug="+url.QueryEscape(slug), key)
			}
			st, missing := details("no-such-slug-0")
			if st != 404 {
				t.Fatalf("unknown slug: %d %s", st, missing)
			}
			before := e.fk.Calls(svc)
			for _, slug := range []string{"no-such-slug-0", "no-such-slug-1", "no-such-slug-0", "x"} {
				if st, body := details(slug); st != 404 {
					t.Fatalf("%s: %d %s", slug, st, body)
				}
			}
			if n := e.fk.Calls(svc) - before; n != 0 {
				t.Fatalf("%d content calls for 4 unknown slugs with the view fresh; want 0", n)
			}
			if s := own(ct, other, true); s == "" {
				t.Logf("dealer %d has no %s item dealer %d lacks", other, ct, dealer)
			} else {
				st, body := details(s)
				if st != 404 || withoutRequestID(body) != withoutRequestID(missing) {
					t.Fatalf("dealer %d's slug %s: %d %s; want the unknown slug's %s", other, s, st, body, missing)
				}
			}
			s := own(ct, dealer, false)
			if s == "" {
				t.Fatalf("dealer %d has no %s item of its own", dealer, ct)
			}
			if st, body := details(s); st != 200 {
				t.Fatalf("the dealer's own slug %s: %d %s", s, st, body)
			}
			// Items in no listing but readable by slug (news editions that
			// are not first-party) are still found.
			listed := map[string]bool{}
			for _, r := range mapping.Visible(dealer, ct, corpus.Records(dealer, ct), mapping.Discovery) {
				listed[r.Slug] = true
			}
			slugOnly := 0
			for _, r := range mapping.Visible(dealer, ct, corpus.Records(dealer, ct), mapping.BySlug) {
				if !listed[r.Slug] {
					slugOnly++
					if st, body := details(r.Slug); st != 200 {
						t.Fatalf("slug-only %s: %d %s", r.Slug, st, body)
					}
				}
			}
			if ct == upstream.ContentNews && slugOnly == 0 {
				t.Fatal("the corpus has no news readable by slug only")
			}
		})
	}
	t.Run("views off", func(t *testing.T) {
		e := newIndexEdge(t, fake.Options{}, func(s *Settings) {
			s.ContentCache = map[string]cache.Policy{"faq": {}}
		}, false)
		before := e.fk.Calls(fake.ContentTypeService("faq"))
		for range 2 {
			if st, body := e.body(t, "/dealer/content/faq/details?slug=no-such-slug", key); st != 404 {
				t.Fatalf("%d %s", st, body)
			}
		}
		if n := e.fk.Calls(fake.ContentTypeService("faq")) - before; n != 2 {
			t.Fatalf("%d content calls for 2 unknown slugs with views off; want 2 (the detail's own reads)", n)
		}
	})
}

var requestIDField = regexp.MustCompile(`"request_id":"[^"]*"`)

// withoutRequestID is a problem body without its request id.
func withoutRequestID(body string) string { return requestIDField.ReplaceAllString(body, "") }
