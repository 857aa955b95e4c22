package aggregator

import (
	"context"
	"testing"

	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/publicshape"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake/corpus"
)

// appendJSONByItems is a listing page as the edge wrote it before its
// items were written straight from their records
// (mapping.AppendListingItem): the items mapped (items, by
// mapping.ContentItem or ViewItem), each encoded by
// publicshape.AppendContentItem between the envelope's head and tail.
func (l *listingPage) appendJSONByItems(b []byte) ([]byte, error) {
	b = publicshape.AppendContentListingHead(b, &l.ContentListing)
	for i, it := range l.items() {
		if i > 0 {
			b = append(b, ',')
		}
		b = publicshape.AppendContentItem(b, &it)
	}
	return publicshape.AppendContentListingTail(b, &l.ContentListing)
}

// TestContentItemsFusedOverCorpus: over the fake's whole content corpus
// (every dealer and type), with views off (records read for the page, as
// a cold hub's sections) and cached (items of the memo), every hub section
// of page_size 1 to 10, every hub of those sections, and every listing
// page of 1, 20 and 100 items (and the empty page past the end) are the
// bytes the items path writes.
func TestContentItemsFusedOverCorpus(t *testing.T) {
	for _, viewsOn := range []bool{false, true} {
		t.Run(map[bool]string{true: "views cached", false: "views off"}[viewsOn], func(t *testing.T) {
			s := newBenchServer(t, true)
			st := DefaultSettings()
			if !viewsOn {
				for _, ct := range upstream.ContentTypes {
					st.ContentCache[ct] = cache.Policy{}
				}
			}
			if err := s.UpdateSettings(st); err != nil {
				t.Fatal(err)
			}
			live := s.settings.Load()
			ctx := context.Background()
			meta := &publicshape.Meta{Dealer: &publicshape.DealerMeta{ID: 7, Name: "Concessionaria <Prova> & co"}}
			shown := []int{0, 1, 2, 3, 4, 5}
			check := func(what string, l listingPage) {
				t.Helper()
				got, err := l.appendJSON([]byte("prefix"))
				if err != nil {
					t.Fatal(err)
				}
				want, err := l.appendJSONByItems([]byte("prefix"))
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != string(want) {
					t.Fatalf("%s:\n got %s\nwant %s", what, got, want)
				}
			}
			pages, items := 0, 0
			for _, d := range corpus.DealerIDs() {
				for size := 1; size <= 10; size++ {
					sections := make([]listingPage, len(upstream.ContentTypes))
					old := make([]listingPage, len(upstream.ContentTypes))
					for i, ct := range upstream.ContentTypes {
						l, err := s.listing(ctx, live, d, ct, params{page: 1, pageSize: size}, false)
						if err != nil {
							t.Fatal(err)
						}
						if (l.vis.memo != nil) != viewsOn {
							t.Fatalf("%s: memo %v with views on %v", ct, l.vis.memo != nil, viewsOn)
						}
						check("hub section", l)
						sections[i], old[i] = l, l
						items += int(l.to - l.from)
					}
					got, err := appendHubJSON(nil, meta, sections, shown)
					if err != nil {
						t.Fatal(err)
					}
					// The hub the items path wrote: the same envelope
					// around the sections written by appendJSONByItems.
					want, err := publicshape.AppendContentHubHead(nil, meta)
					if err != nil {
						t.Fatal(err)
					}
					for n, name := range []string{"faq", "glossary", "guides", "news", "podcasts", "videos"} {
						if n > 0 {
							want = append(want, ',')
						}
						want = append(want, `"`+name+`":`...)
						for i, ct := range upstream.ContentTypes {
							if ct == name {
								if want, err = old[i].appendJSONByItems(want); err != nil {
									t.Fatal(err)
								}
							}
						}
					}
					want = append(want, "}}"...)
					if string(got) != string(want) {
						t.Fatalf("hub of dealer %d, page_size %d:\n got %s\nwant %s", d, size, got, want)
					}
				}
				for _, ct := range upstream.ContentTypes {
					for _, size := range []int{1, 20, 100} {
						for page := 1; ; page++ {
							l, err := s.listing(ctx, live, d, ct, params{page: page, pageSize: size}, true)
							if err != nil {
								t.Fatal(err)
							}
							l.Meta = meta
							check("listing", l)
							pages++
							items += int(max(l.to-l.from, 0))
							if !l.HasNext && l.to-l.from <= 0 {
								break
							}
						}
					}
				}
			}
			if pages < 100 || items < 1000 {
				t.Fatalf("%d pages, %d items: too few to prove anything", pages, items)
			}
			t.Logf("%d listing pages, %d items", pages, items)
		})
	}
}
