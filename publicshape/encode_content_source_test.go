package publicshape

import (
	"strings"
	"testing"
)

// itemOfSource is the item a ContentItemSource stands for: the old path's
// ContentItem, its preview made by Preview and its date a string.
func itemOfSource(src *ContentItemSource) ContentItem {
	it := ContentItem{
		ID: src.ID, Slug: src.Slug, Topic: src.Topic, Category: src.Category, Brand: src.Brand,
		Title: src.Title, H1: src.H1, MetaDescription: src.MetaDescription, Excerpt: src.Excerpt,
		BodyTextPreview: src.Body, SourceProvider: src.SourceProvider, URL: src.URL, MediaURL: src.MediaURL,
		ThumbnailURL: src.ThumbnailURL, DurationSeconds: src.DurationSeconds, UpdatedAt: string(src.UpdatedAt),
	}
	if src.PreviewRunes != 0 {
		it.BodyTextPreview = Preview(src.Body, src.PreviewRunes)
	}
	return it
}

func checkContentItemSource(t *testing.T, src *ContentItemSource) {
	t.Helper()
	it := itemOfSource(src)
	want := string(AppendContentItem([]byte("prefix"), &it))
	if got := string(AppendContentItemSource([]byte("prefix"), src)); got != want {
		t.Fatalf("%+v:\ngot  %s\nwant %s", src, got, want)
	}
}

// TestAppendContentItemSourceEqualsItem: the item written from its source
// is the bytes AppendContentItem writes for the item built from it, the
// preview made and written alike, for the members' every omission (an id
// of 0 makes another member first, an empty preview of a body of white
// space is omitted, with or without members before it).
func TestAppendContentItemSourceEqualsItem(t *testing.T) {
	full := ContentItemSource{
		ID: 42, Slug: "tagliando", Topic: "manutenzione", Category: "officina", Brand: "Fiat",
		Title: `Il "tagliando" <facile> & veloce`, H1: "Tagliando", MetaDescription: "Quando farlo", Excerpt: "In breve\u2028a capo",
		Body: strings.Repeat("Una frase di prova, con \"virgolette\".\n\nE un paragrafo à capo. ", 20), PreviewRunes: 240,
		SourceProvider: "dealer_editorial", URL: "https://x.example/a?b=1&c=2", MediaURL: "https://m.example/v.mp4",
		ThumbnailURL: "https://m.example/t.jpg", DurationSeconds: 95, UpdatedAt: []byte("2026-11-27T10:00:00Z"),
	}
	cases := map[string]func(s *ContentItemSource){
		"full":                      func(s *ContentItemSource) {},
		"no id":                     func(s *ContentItemSource) { s.ID = 0 },
		"nothing but the body":      func(s *ContentItemSource) { *s = ContentItemSource{Body: s.Body, PreviewRunes: 240} },
		"white body, no id":         func(s *ContentItemSource) { *s = ContentItemSource{Body: " \n\t\u00a0 ", PreviewRunes: 240, URL: "u"} },
		"white body":                func(s *ContentItemSource) { s.Body = "   \n  " },
		"white body only":           func(s *ContentItemSource) { *s = ContentItemSource{Body: "  ", PreviewRunes: 240} },
		"empty":                     func(s *ContentItemSource) { *s = ContentItemSource{} },
		"previewed":                 func(s *ContentItemSource) { s.Body, s.PreviewRunes = "già fatto <b>…", 0 },
		"short body":                func(s *ContentItemSource) { s.Body = "Breve." },
		"invalid UTF-8 body":        func(s *ContentItemSource) { s.Body = "a\xffb  c\u2029d" },
		"escapes after the break":   func(s *ContentItemSource) { s.Body = "uno\n\ndue <tre> & \"quattro\"" },
		"non-ASCII space":           func(s *ContentItemSource) { s.Body = "uno\u00a0due\u3000tre" },
		"cut after a written space": func(s *ContentItemSource) { s.Body, s.PreviewRunes = "ab\n\ncd efghij", 8 },
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			src := full
			edit(&src)
			checkContentItemSource(t, &src)
		})
	}
}

// FuzzAppendContentItemSource: for any text in every member, any preview
// length (0: the body is the preview) and any id, the item written from
// its source is the bytes of the item built from it.
func FuzzAppendContentItemSource(f *testing.F) {
	f.Add(int64(1), "slug", "Titolo <b>", "Corpo del testo.\n\nSecondo  paragrafo con più parole.", "dealer_editorial", "2026-01-02T03:04:05Z", 240, 12)
	f.Add(int64(0), "", "", "  \n ", "", "", 5, 0)
	f.Add(int64(-3), "a\xff", "\u2028", "ab \xffcd ef", "x", "", 3, -1)
	f.Add(int64(7), "s", "t", "ab\n\ncd efghij", "", "", 8, 0)
	f.Fuzz(func(t *testing.T, id int64, slug, title, body, provider, date string, runes, dur int) {
		runes %= 1000
		if runes < 0 {
			runes = -runes
		}
		src := ContentItemSource{ID: id, Slug: slug, Title: title, Excerpt: title, Body: body, PreviewRunes: runes,
			SourceProvider: provider, URL: slug, DurationSeconds: dur, UpdatedAt: []byte(date)}
		checkContentItemSource(t, &src)
		src = ContentItemSource{Body: body, PreviewRunes: runes, UpdatedAt: []byte(date)}
		checkContentItemSource(t, &src)
	})
}

// FuzzAppendPreview: AppendPreview writes the JSON string of Preview's
// preview, as appendString writes it, after what dst holds.
func FuzzAppendPreview(f *testing.F) {
	f.Add("Ciao mondo bello", 7)
	f.Add("  spazi \n\t ovunque  ", 3)
	f.Add("a\xffb c", 2)
	f.Add("Prima riga.\n\nSeconda  riga,\tterza <&>.", 20)
	f.Add("ab\n\ncd ef", 5)
	f.Add("x\u2028y z", 0)
	f.Fuzz(func(t *testing.T, body string, max int) {
		max %= 1000
		want := string(appendString([]byte("dst"), Preview(body, max)))
		if got := string(AppendPreview([]byte("dst"), body, max)); got != want {
			t.Fatalf("AppendPreview(%q, %d) = %s, want %s", body, max, got, want)
		}
	})
}

// TestAppendPreviewEqualsPreview: AppendPreview over Preview's reference
// cases (TestPreviewEqualsReference's borders of previewPlain).
func TestAppendPreviewEqualsPreview(t *testing.T) {
	bodies := []string{"Ciao mondo bello", "  spazi \n\t ovunque  ", "àèìòù àèìòù", "a\xffb c", "Supercalifragilistico",
		"a\u00a0b\u0085c\u2028d\u3000e", "\v\f\r x", "", "ab cd", "àb cè", "più è già", "ab cd\n\nef", "ab  cd", " ab", "ab ",
		"ab \u00a0", "ab\n\u00a0", "ab\n \u00a0cd", "  ab\n\ncd  ef \t", "ab\n\ncd ef", "ab\tcd", "ab \xffcd", "ab\xff",
		"<a> & \"b\"\n\n<c>", "ab\n\ncd\n\nef gh"}
	for _, body := range bodies {
		for max := -1; max <= 12; max++ {
			want := string(appendString(nil, Preview(body, max)))
			if got := string(AppendPreview(nil, body, max)); got != want {
				t.Errorf("AppendPreview(%q, %d) = %s, want %s", body, max, got, want)
			}
		}
	}
}
