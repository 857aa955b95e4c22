package aggregator

import (
	"context"
	"testing"

	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/publicshape"
	"github.com/dealer-edge/dealer-edge/upstream"
)

// BenchmarkHubAssembly measures what a cold hub does after its last
// section has arrived: the six sections of 5 (views off: their records
// read for the page only, so mapped, previewed and encoded here) written
// as the hub's body (appendHubJSON) into a reused buffer, as the hub's
// pooled fill body is. The sections are read once, before the loop.
func BenchmarkHubAssembly(b *testing.B) {
	sections := viewsOffPages(b, 5, false)
	shown := make([]int, len(sections))
	for i, l := range sections {
		if l.vis.memo != nil || l.to-l.from != 5 {
			b.Fatalf("%s: section of %d items, memo %v", upstream.ContentTypes[i], l.to-l.from, l.vis.memo != nil)
		}
		shown[i] = i
	}
	meta := &publicshape.Meta{Dealer: &publicshape.DealerMeta{ID: 101, Name: "Concessionaria Bench", BrandName: "Bench", City: "Milano", Province: "MI", PrimaryDomain: "bench.example.it"}}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = appendHubJSON(buf[:0], meta, sections, shown); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(buf)))
}

// BenchmarkContentListingBody measures the body of a content listing page
// of 20 read for the page (views off: content_listing's cache off), the
// fake's first dealer's first page of each type, written as a listing miss
// writes it (appendJSON: each item straight from its record) and, for
// comparison, by the items path it replaced (appendJSONByItems: the items
// mapped, then encoded).
func BenchmarkContentListingBody(b *testing.B) {
	pages := viewsOffPages(b, 20, true)
	for i := range pages {
		pages[i].Meta = &publicshape.Meta{Dealer: &publicshape.DealerMeta{ID: 101, Name: "Concessionaria Bench"}}
	}
	for _, byItems := range []bool{false, true} {
		b.Run(map[bool]string{false: "fused", true: "by_items"}[byItems], func(b *testing.B) {
			var buf []byte
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				for i := range pages {
					var err error
					if byItems {
						buf, err = pages[i].appendJSONByItems(buf[:0])
					} else {
						buf, err = pages[i].appendJSON(buf[:0])
					}
					if err != nil {
						b.Fatal(err)
					}
					n += len(buf)
				}
			}
			b.SetBytes(int64(n / max(b.N, 1)))
		})
	}
}

// viewsOffPages reads the first page of pageSize of each content type of
// the fake's first dealer with the content views off (content_listing's
// cache off), as a cold hub's sections (echo false) or a listing miss
// (echo true) read them.
func viewsOffPages(b *testing.B, pageSize int, echo bool) []listingPage {
	b.Helper()
	s := newBenchServer(b, true)
	st := DefaultSettings()
	for _, ct := range upstream.ContentTypes {
		st.ContentCache[ct] = cache.Policy{}
	}
	if err := s.UpdateSettings(st); err != nil {
		b.Fatal(err)
	}
	live := s.settings.Load()
	pages := make([]listingPage, len(upstream.ContentTypes))
	for i, ct := range upstream.ContentTypes {
		l, err := s.listing(context.Background(), live, 101, ct, params{page: 1, pageSize: pageSize}, echo)
		if err != nil {
			b.Fatal(err)
		}
		pages[i] = l
	}
	return pages
}
