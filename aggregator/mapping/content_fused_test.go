package mapping

import (
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/publicshape"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake/corpus"
)

// listingItemByItem is a listing item as the edge wrote it before
// AppendListingItem: the record mapped by ContentItem (by ViewItem for a
// view record), then encoded.
func listingItemByItem(dst []byte, r *upstream.ContentRecord, ct string, previewed bool) []byte {
	var it publicshape.ContentItem
	if previewed {
		it = ViewItem(r, ct, ListingForm)
	} else {
		it = ContentItem(*r, ct, ListingForm)
	}
	return publicshape.AppendContentItem(dst, &it)
}

// TestListingItemOverCorpus: every record of the fake's content corpus
// (every dealer and type, whole and in the summary view, visible or not,
// an override with its public id, and as a view record whose body is its
// preview), written by AppendListingItem, is the bytes the item path
// writes.
func TestListingItemOverCorpus(t *testing.T) {
	items := 0
	var got, want []byte
	for _, d := range corpus.DealerIDs() {
		for _, ct := range upstream.ContentTypes {
			recs := corpus.Records(d, ct)
			view := ViewRecords(Visible(d, ct, recs, Discovery))
			for _, r := range recs {
				pub := r
				PublicID(&pub)
				for _, rec := range []upstream.ContentRecord{r, pub, upstream.ContentSummary(r)} {
					want = listingItemByItem(append(want[:0], "prefix"...), &rec, ct, false)
					if got = AppendListingItem(append(got[:0], "prefix"...), &rec, ct, false); string(got) != string(want) {
						t.Fatalf("dealer %d %s %q: bodies differ\ngot  %s\nwant %s", d, ct, rec.Slug, got, want)
					}
					items++
				}
			}
			for i := range view {
				want = listingItemByItem(want[:0], &view[i], ct, true)
				if got = AppendListingItem(got[:0], &view[i], ct, true); string(got) != string(want) {
					t.Fatalf("dealer %d %s %q (view): bodies differ\ngot  %s\nwant %s", d, ct, view[i].Slug, got, want)
				}
				items++
			}
		}
	}
	if items < 1000 {
		t.Fatalf("%d items: too few to prove anything", items)
	}
}

// FuzzAppendListingItem: for records made of fuzzed text (escapes, white
// space of every kind and invalid UTF-8 in the body and the other
// members), any id, duration and update time (zero, before year 0, past
// 9999, in another offset), of news and of another type, raw and as a
// view record, AppendListingItem writes the bytes the item path writes.
func FuzzAppendListingItem(f *testing.F) {
	f.Add(int64(1), int64(0), "slug", "Titolo <b> & \"c\"", "Corpo.\n\nSecondo  paragrafo, più parole.", "global_wire", int64(1764230400), 12, uint8(0))
	f.Add(int64(0), int64(9), "", "", " \n\u00a0 ", "", int64(0), 0, uint8(0xff))
	f.Add(int64(-3), int64(4), "a\xff", "\u2028x", "ab \xffcd ef", "dealer_editorial", int64(-62167219300), -1, uint8(3))
	f.Add(int64(5), int64(0), "s", "t", "ab\n\ncd efghij", "", int64(253402300900), 7, uint8(6))
	f.Fuzz(func(t *testing.T, id, overrideOf int64, slug, text, body, provider string, unix int64, dur int, flags uint8) {
		on := func(bit int) bool { return flags&(1<<bit) != 0 }
		r := upstream.ContentRecord{
			ID: id, OverrideOf: overrideOf, Type: "x", DealerID: id ^ 1, Slug: slug, Topic: text, Category: slug, Brand: text,
			Title: text, H1: slug, MetaDescription: text, Excerpt: body, BodyText: body, URL: slug,
			SourceProvider: provider, MediaURL: text, ThumbnailURL: slug, DurationSeconds: dur, Transcript: body,
			TemplateID: "internal", SourceID: "internal", HiddenForDealer: on(3),
		}
		if !on(0) {
			r.UpdatedAt = time.Unix(unix%(400*366*86400*30), int64(dur&0x3fffffff)).In(time.FixedZone("x", (dur%24)*3600))
		}
		if on(4) {
			PublicID(&r)
		}
		ct := upstream.ContentTypes[int(flags>>5)%len(upstream.ContentTypes)]
		if on(1) {
			ct = upstream.ContentNews
		}
		previewed := on(2)
		want := listingItemByItem(nil, &r, ct, previewed)
		if got := AppendListingItem(nil, &r, ct, previewed); string(got) != string(want) {
			t.Fatalf("%s previewed %v: bodies differ\ngot  %s\nwant %s", ct, previewed, got, want)
		}
	})
}
