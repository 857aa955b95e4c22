package publicshape

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

// checkContentItem fails unless AppendContentItem gives exactly what
// json.Marshal gives for it, and leaves the prefix of the buffer it
// appends to untouched.
func checkContentItem(t *testing.T, it *ContentItem) {
	t.Helper()
	want, err := json.Marshal(it)
	if err != nil {
		t.Fatal(err)
	}
	got := AppendContentItem([]byte("prefix"), it)
	if string(got[:6]) != "prefix" {
		t.Fatalf("prefix overwritten: %q", got)
	}
	if g := string(got[6:]); g != string(want) {
		t.Fatalf("encoding differs\ngot  %s\nwant %s", g, want)
	}
}

// TestAppendContentItemEqualsMarshal: the corner cases of every field (the
// fake corpus is compared in aggregator/mapping).
func TestAppendContentItemEqualsMarshal(t *testing.T) {
	full := ContentItem{
		ID: 10617, ContentType: "news", Slug: "fiat-grande-panda", Topic: "t", Category: "c", Brand: "Fiat", Title: "Fiat Grande Panda, al via", H1: "H1 <b>",
		MetaDescription: "Sono aperti gli ordini & co", Excerpt: "connettività", BodyTextPreview: "Sono aperti…", BodyText: "a\nb", SourceProvider: "dealer_editorial",
		URL: "https://x/y?a=1&b=2", MediaURL: "https://m/a.mp3", ThumbnailURL: "https://m/t.jpg", DurationSeconds: 312, Transcript: "tr", UpdatedAt: "2026-01-31T01:55:03Z",
	}
	cases := []struct {
		name string
		it   ContentItem
	}{
		{"zero", ContentItem{}},
		{"full", full},
		{"id only", ContentItem{ID: -1}},
		{"duration only", ContentItem{DurationSeconds: math.MinInt64}},
		{"last field only", ContentItem{UpdatedAt: "x"}},
		{"big numbers", ContentItem{ID: math.MaxInt64, DurationSeconds: math.MaxInt64}},
		{"escapes", ContentItem{Title: "\"\\/\b\f\n\r\t\x00\x01\x1f\x7f", Excerpt: "<script>&amp;</script>", H1: "a\u2028b\u2029c\u2027", Slug: "Citroën ë-C4 ✓ 冷 😀"}},
		{"invalid utf-8", ContentItem{Title: "a\xffb\xc3", Excerpt: "\xed\xa0\x80", H1: "\xe2\x80", URL: "\xf0\x9f\x98"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkContentItem(t, &c.it) })
	}
}

// TestAppendContentItemKnowsEveryField: the hand-written encoder writes
// the fields this list names, in this order; a field added to ContentItem
// fails here until the encoder (and the list) learn it.
func TestAppendContentItemKnowsEveryField(t *testing.T) {
	want := []string{"id,omitempty", "content_type,omitempty", "slug,omitempty", "topic,omitempty", "category,omitempty", "brand,omitempty", "title,omitempty",
		"h1,omitempty", "meta_description,omitempty", "excerpt,omitempty", "body_text_preview,omitempty", "body_text,omitempty", "source_provider,omitempty",
		"url,omitempty", "media_url,omitempty", "thumbnail_url,omitempty", "duration_seconds,omitempty", "transcript,omitempty", "updated_at,omitempty"}
	var tags []string
	for f := range reflect.TypeFor[ContentItem]().Fields() {
		tags = append(tags, f.Tag.Get("json"))
	}
	if !reflect.DeepEqual(tags, want) {
		t.Errorf("ContentItem has the fields %q, the encoder writes %q", tags, want)
	}
}

// FuzzAppendContentItem: on random items (strings of any bytes, any
// numbers, any presence of the fields), the hand-written encoder gives
// exactly what json.Marshal gives.
func FuzzAppendContentItem(f *testing.F) {
	f.Add("news", "Fiat <Panda> & \u2028", "https://x/y?a=1&b=2", "\xff\x00", "connettività", int64(10617), int64(312), uint32(0xfffff))
	f.Add("", "", "", "", "", int64(0), int64(0), uint32(0))
	f.Add("faq", "\"\\\n", "\u2029", "a", "b", int64(-1), int64(-7), uint32(0x55555))
	f.Fuzz(func(t *testing.T, s1, s2, s3, s4, s5 string, n1, n2 int64, mask uint32) {
		strs := []string{s1, s2, s3, s4, s5}
		on := func(bit int) bool { return mask&(1<<bit) != 0 }
		var it ContentItem
		fields := []*string{&it.ContentType, &it.Slug, &it.Topic, &it.Category, &it.Brand, &it.Title, &it.H1, &it.MetaDescription, &it.Excerpt,
			&it.BodyTextPreview, &it.BodyText, &it.SourceProvider, &it.URL, &it.MediaURL, &it.ThumbnailURL, &it.Transcript, &it.UpdatedAt}
		for i, p := range fields {
			if on(i) {
				*p = strs[i%len(strs)]
			}
		}
		if on(17) {
			it.ID = n1
		}
		if on(18) {
			it.DurationSeconds = int(n2)
		}
		checkContentItem(t, &it)
	})
}
