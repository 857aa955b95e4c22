package publicshape

import (
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// A content listing or hub section written from records read for its page
// used to map each record to a ContentItem (its preview a string of its
// own, its date another) and encode the item. AppendContentItemSource
// writes the listing item straight from what the record publishes, the
// preview straight into the buffer (AppendPreview), with the same bytes:
// AppendContentItem of the item ContentItemSource stands for
// (TestAppendContentItemSourceEqualsItem, FuzzAppendContentItemSource,
// and the fake corpus tests in aggregator/mapping and aggregator prove it).

// ContentItemSource is one content listing item (body_text_preview, no
// body_text, transcript or content_type) as a visible record gives it: the
// fields the contract publishes, which the caller chooses (the allowlist
// is aggregator/mapping's), each published as it is but the body, whose
// preview is made here.
type ContentItemSource struct {
	ID              int64 // the public id (an override's is the global record's)
	Slug            string
	Topic           string
	Category        string
	Brand           string
	Title           string
	H1              string
	MetaDescription string
	Excerpt         string
	// Body is what body_text_preview is made of: Preview(Body,
	// PreviewRunes), or Body itself when PreviewRunes is 0 (a record whose
	// body is its preview already).
	Body            string
	PreviewRunes    int
	SourceProvider  string // news only: the caller leaves it empty for the other types
	URL             string
	MediaURL        string
	ThumbnailURL    string
	DurationSeconds int
	UpdatedAt       []byte // RFC 3339 as published (ASCII digits and punctuation), empty for none
}

// AppendContentItemSource appends to dst the JSON of the content item src
// stands for, as AppendContentItem writes it (every member omitted when
// empty), and returns the extended buffer. The preview is not built as a
// string of its own but written into dst (AppendPreview).
func AppendContentItemSource(dst []byte, src *ContentItemSource) []byte {
	dst = append(dst, '{')
	first := true
	field := func(dst []byte, name string) []byte {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		return append(dst, name...)
	}
	str := func(dst []byte, name, v string) []byte {
		if v == "" {
			return dst
		}
		return appendString(field(dst, name), v)
	}
	if src.ID != 0 {
		dst = strconv.AppendInt(field(dst, `"id":`), src.ID, 10)
	}
	dst = str(dst, `"slug":`, src.Slug)
	dst = str(dst, `"topic":`, src.Topic)
	dst = str(dst, `"category":`, src.Category)
	dst = str(dst, `"brand":`, src.Brand)
	dst = str(dst, `"title":`, src.Title)
	dst = str(dst, `"h1":`, src.H1)
	dst = str(dst, `"meta_description":`, src.MetaDescription)
	dst = str(dst, `"excerpt":`, src.Excerpt)
	if src.PreviewRunes == 0 {
		dst = str(dst, `"body_text_preview":`, src.Body)
	} else if src.Body != "" {
		// An empty preview (a body of white space) is omitted, as an empty
		// string is: the member is taken back.
		mark, wasFirst := len(dst), first
		dst = field(dst, `"body_text_preview":`)
		at := len(dst)
		if dst = AppendPreview(dst, src.Body, src.PreviewRunes); len(dst) == at+2 {
			dst, first = dst[:mark], wasFirst
		}
	}
	dst = str(dst, `"source_provider":`, src.SourceProvider)
	dst = str(dst, `"url":`, src.URL)
	dst = str(dst, `"media_url":`, src.MediaURL)
	dst = str(dst, `"thumbnail_url":`, src.ThumbnailURL)
	if src.DurationSeconds != 0 {
		dst = strconv.AppendInt(field(dst, `"duration_seconds":`), int64(src.DurationSeconds), 10)
	}
	if len(src.UpdatedAt) > 0 {
		dst = appendString(field(dst, `"updated_at":`), unsafe.String(unsafe.SliceData(src.UpdatedAt), len(src.UpdatedAt)))
	}
	return append(dst, '}')
}

// AppendPreview appends Preview(body, max) to dst as a JSON string, the
// bytes appendString writes for it, and returns the extended buffer. In
// the common case (previewPlain: ASCII white space, valid UTF-8 up to the
// cut) the preview is written into dst as it is found, and escaped only
// if it has something to escape (a copy then); otherwise Preview makes it.
func AppendPreview(dst []byte, body string, max int) []byte {
	dst = append(dst, '"')
	base := len(dst)
	if max >= 1 {
		pv := previewText{into: true, out: dst, base: base}
		_, ok := previewPlain(&pv, body, max)
		if dst = pv.out; !ok {
			dst = append(dst[:base], Preview(body, max)...)
		}
	}
	if raw := dst[base:]; !escapeFree(unsafe.String(unsafe.SliceData(raw), len(raw))) {
		// appendString over a copy: its escapes overwrite the raw text.
		return appendString(dst[:base-1], string(raw))
	}
	return append(dst, '"')
}

// escapeFree reports whether appendString writes s as it is, between its
// quotes: nothing to escape (see appendString), no invalid UTF-8, no
// U+2028 or U+2029.
func escapeFree(s string) bool {
	i := safePrefix(s)
	for i < len(s) {
		b := s[i]
		if b < utf8.RuneSelf {
			if !htmlSafe[b] {
				return false
			}
			i += safePrefix(s[i:])
			continue
		}
		if b >= 0xC2 && b <= 0xDF && i+1 < len(s) && s[i+1]&0xC0 == 0x80 {
			i += 2
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if (c == utf8.RuneError && size == 1) || c == '\u2028' || c == '\u2029' {
			return false
		}
		i += size
	}
	return true
}
