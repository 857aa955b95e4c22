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
