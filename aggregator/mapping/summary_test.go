package mapping

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dealer-edge/dealer-edge/publicshape"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake/corpus"
)

// TestSummaryKeepsListingItems: listings, the hub and search read the
// content service's summary view, so a listing or search item made from a
// summary record must be the one made from the whole record, for every
// record of the demo corpus and for bodies built to stress the preview
// (runs of white space, long words, multi-byte and invalid UTF-8).
func TestSummaryKeepsListingItems(t *testing.T) {
	if PreviewRunes+1 > upstream.SummaryBodyNonSpace {
		t.Fatalf("a %d-character preview needs %d non-space characters; the summary keeps %d", PreviewRunes, PreviewRunes+1, upstream.SummaryBodyNonSpace)
	}
	var recs []upstream.ContentRecord
	for _, d := range []int64{101, 102, 103} {
		for _, ct := range upstream.ContentTypes {
			recs = append(recs, corpus.Records(d, ct)...)
		}
	}
	if len(recs) < 100 {
		t.Fatalf("only %d corpus records", len(recs))
	}
	rng := rand.New(rand.NewPCG(7, 11))
	pieces := []string{"a", "parola", "è", "😀", " ", "  ", "\t\n", "\u00a0", "\u3000", "\xff", "x", strings.Repeat("z", 300), strings.Repeat(" ", 400)}
	for i := 0; i < 2000; i++ {
		var b strings.Builder
		for n := rng.IntN(400); n > 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		recs = append(recs, upstream.ContentRecord{ID: int64(i), Slug: "s", Title: "t", BodyText: b.String()})
	}
	cut := 0
	for _, r := range recs {
		s := upstream.ContentSummary(r)
		if s.BodyText != r.BodyText {
			cut++
		}
		for _, form := range []ContentForm{ListingForm, SearchForm} {
			want, got := ContentItem(r, "news", form), ContentItem(s, "news", form)
			if want != got {
				t.Fatalf("record %d (%d bytes of body): item from the summary\n%+v\nwant\n%+v", r.ID, len(r.BodyText), got, want)
			}
		}
		if p := publicshape.Preview(s.BodyText, PreviewRunes); p != publicshape.Preview(r.BodyText, PreviewRunes) {
			t.Fatalf("record %d: preview differs", r.ID)
		}
	}
	if cut < 100 {
		t.Fatalf("only %d of %d bodies were cut: the test does not exercise the cut", cut, len(recs))
	}
}
