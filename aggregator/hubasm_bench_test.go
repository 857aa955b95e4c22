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
	s := newBenchServer(b, true)
	st := DefaultSettings()
	for _, ct := range upstream.ContentTypes {
		st.ContentCache[ct] = cache.Policy{}
	}
	if err := s.UpdateSettings(st); err != nil {
		b.Fatal(err)
	}
	live := s.settings.Load()
	sections := make([]listingPage, len(upstream.ContentTypes))
	shown := make([]int, len(upstream.ContentTypes))
	for i, ct := range upstream.ContentTypes {
		l, err := s.listing(context.Background(), live, 101, ct, params{page: 1, pageSize: 5}, false)
		if err != nil {
			b.Fatal(err)
		}
		if l.vis.memo != nil || l.to-l.from != 5 {
			b.Fatalf("%s: section of %d items, memo %v", ct, l.to-l.from, l.vis.memo != nil)
		}
		sections[i], shown[i] = l, i
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
		l, err := s.listing(context.Background(), live, 101, ct, params{page: 1, pageSize: 20}, true)
		if err != nil {
			b.Fatal(err)
		}
		l.Meta = &publicshape.Meta{Dealer: &publicshape.DealerMeta{ID: 101, Name: "Concessionaria Bench"}}
		pages[i] = l
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
