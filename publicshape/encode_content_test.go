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

// checkContentListing fails unless head + items + tail is what json.Marshal
// writes for l with those items.
func checkContentListing(t *testing.T, l ContentListing) {
	t.Helper()
	dst := AppendContentListingHead([]byte("x"), &l)
	for i := range l.Items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendContentItem(dst, &l.Items[i])
	}
	dst, err := AppendContentListingTail(dst, &l)
	if err != nil {
		t.Fatalf("tail: %v", err)
	}
	want, err := json.Marshal(l)
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	if got := string(dst[1:]); got != string(want) {
		t.Fatalf("listing encoded as\n%s\nwant\n%s", got, want)
	}
}

// TestAppendContentListingEqualsMarshal: the hand-written envelope around
// the items, with every optional field off and on, filters of one and
// several keys (sorted as encoding/json sorts them), escapes in every
// string, a dealer meta, and deprecation fields.
func TestAppendContentListingEqualsMarshal(t *testing.T) {
	item := ContentItem{ID: 7, Slug: "s", Title: "T <b>", UpdatedAt: "2026-01-31T01:55:03Z"}
	dep := Deprecation{Deprecated: true, Deprecation: "@1767225600", Sunset: "Wed, 30 Jun 2027 23:59:59 GMT", SuccessorVersion: "https://e.example/?a=1&b=<2>"}
	meta := &Meta{Dealer: &DealerMeta{ID: 101, Name: "Autosalone \"Alpha\" & figli", City: "Milano"}}
	cases := []struct {
		name string
		l    ContentListing
	}{
		{"zero", ContentListing{Items: []ContentItem{}}},
		{"hub section", ContentListing{ContentType: "faq", Page: 1, PageSize: 5, Total: 47, HasNext: true, Items: []ContentItem{item, item}}},
		{"deprecated section", ContentListing{ContentType: "guides", Page: 1, PageSize: 5, Total: 3, Items: []ContentItem{item}, Deprecation: dep}},
		{"listing page", ContentListing{ContentType: "news", Page: 3, PageSize: 20, Total: 0, Items: []ContentItem{}, Meta: meta}},
		{"query and filters", ContentListing{ContentType: "news", Page: 1, PageSize: 10, Items: []ContentItem{item}, Q: "auto \"elettrica\" <&>",
			Filters: map[string]string{"topic": "t", "category": "c\u2028", "brand": "Citroën"}, Meta: meta, Deprecation: dep}},
		{"one filter", ContentListing{Items: []ContentItem{}, Filters: map[string]string{"brand": "\xff"}}},
		{"big numbers", ContentListing{Page: math.MaxInt64, PageSize: math.MinInt64, Total: -1, Items: []ContentItem{}}},
		{"meta without dealer", ContentListing{Items: []ContentItem{}, Meta: &Meta{}}},
		{"partial deprecation", ContentListing{Items: []ContentItem{}, Deprecation: Deprecation{Sunset: "x"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkContentListing(t, c.l) })
	}
}

// FuzzAppendContentListing: any strings, numbers and filters.
func FuzzAppendContentListing(f *testing.F) {
	f.Add("faq", 1, 5, 47, true, "q", "category", "c", "topic", "t", "@1", "sunset", "https://x/", true)
	f.Add("", 0, 0, 0, false, "", "", "", "", "", "", "", "", false)
	f.Add("n\xffws", -1, 2, 3, true, "<&>", "b\u2028", "\x00", "b", "z", "", "\xed\xa0\x80", "", false)
	f.Fuzz(func(t *testing.T, ct string, page, size, total int, next bool, q, k1, v1, k2, v2, dep, sunset, succ string, deprecated bool) {
		l := ContentListing{ContentType: ct, Page: page, PageSize: size, Total: total, HasNext: next, Q: q,
			Items: []ContentItem{{ID: 1, Title: v1}}, Deprecation: Deprecation{Deprecated: deprecated, Deprecation: dep, Sunset: sunset, SuccessorVersion: succ}}
		if k1 != "" || k2 != "" {
			l.Filters = map[string]string{k1: v1, k2: v2}
		}
		checkContentListing(t, l)
	})
}

// TestAppendMetaEqualsMarshal: the hand-written meta, nil, without a
// dealer, with a dealer whose strings need escapes and with the zero
// dealer, is what encoding/json writes.
func TestAppendMetaEqualsMarshal(t *testing.T) {
	cases := []struct {
		name string
		meta *Meta
	}{
		{"nil", nil},
		{"without dealer", &Meta{}},
		{"zero dealer", &Meta{Dealer: &DealerMeta{}}},
		{"dealer", &Meta{Dealer: &DealerMeta{ID: 101, Name: "Autosalone \"Alpha\" & figli <srl>", BrandName: "Citroën", City: "Milano\u2028",
			Province: "MI\x00", PrimaryDomain: "a\xffb.example.it"}}},
		{"negative id", &Meta{Dealer: &DealerMeta{ID: math.MinInt64}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkMeta(t, c.meta) })
	}
}

// FuzzAppendMeta: any id and strings.
func FuzzAppendMeta(f *testing.F) {
	f.Add(int64(101), "Autosalone \"Alpha\"", "Citroën", "Milano", "MI", "a.example.it")
	f.Add(int64(-1), "\xff<&>", "\u2028", "\x00\t", "", "\xed\xa0\x80")
	f.Fuzz(func(t *testing.T, id int64, name, brand, city, province, domain string) {
		checkMeta(t, &Meta{Dealer: &DealerMeta{ID: id, Name: name, BrandName: brand, City: city, Province: province, PrimaryDomain: domain}})
	})
}

func checkMeta(t *testing.T, meta *Meta) {
	t.Helper()
	got, err := appendMeta([]byte("x"), meta)
	if err != nil {
		t.Fatal(err)
	}
	want := "x"
	if meta != nil {
		m, err := json.Marshal(meta)
		if err != nil {
			t.Fatal(err)
		}
		want += `,"meta":` + string(m)
	}
	if string(got) != want {
		t.Fatalf("appendMeta(%+v):\n got %s\nwant %s", meta, got, want)
	}
}
