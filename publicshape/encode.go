package publicshape

import (
	"errors"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"
)

// The inventory listing is the largest body a miss builds, and the one
// built most: it is encoded here by hand, straight into the caller's
// buffer, with no reflection. The output is byte for byte what
// encoding/json.Marshal gives for the same value (field order, omitempty,
// null for a nil slice and [] for an empty one, number formatting, string
// escaping with HTML-safe escapes, U+2028/U+2029 and invalid UTF-8);
// TestAppendInventoryListingEqualsMarshal and FuzzAppendInventoryListing
// prove it. A field added to InventoryListing, InventoryItem or
// ProfessionalUpfit must be added here too: the tests compare the field
// lists with reflection and fail until it is.

// ErrUnsupportedFloat is returned for a NaN or an infinite price, which
// JSON cannot carry (encoding/json refuses them too).
var ErrUnsupportedFloat = errors.New("publicshape: unsupported float value (NaN or infinity)")

// AppendInventoryListing appends the JSON encoding of l to dst, exactly
// as encoding/json.Marshal(l) would give it, and returns the extended
// buffer. It fails only on a NaN or infinite price (ErrUnsupportedFloat),
// where Marshal fails too; dst is then returned as it was given.
func AppendInventoryListing(dst []byte, l *InventoryListing) ([]byte, error) {
	start := len(dst)
	dst = append(dst, `{"service":`...)
	dst = appendString(dst, l.Service)
	dst = appendPaging(dst, l.Page, l.PageSize, l.Total, l.HasNext)
	dst = append(dst, `,"items":`...)
	if l.Items == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i := range l.Items {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendInventoryItem(dst, &l.Items[i]); err != nil {
				return dst[:start], err
			}
		}
		dst = append(dst, ']')
	}
	return append(dst, '}'), nil
}

// appendInventoryItem appends one InventoryItem object.
func appendInventoryItem(dst []byte, it *InventoryItem) ([]byte, error) {
	dst = append(dst, '{')
	if it.IDAuto != "" {
		dst = append(dst, `"id_auto":`...)
		dst = appendString(dst, it.IDAuto)
		dst = append(dst, ',')
	}
	if it.IDOfferta != 0 {
		dst = append(dst, `"id_offerta":`...)
		dst = strconv.AppendInt(dst, it.IDOfferta, 10)
		dst = append(dst, ',')
	}
	dst = append(dst, `"service":`...)
	dst = appendString(dst, it.Service)
	dst = append(dst, `,"nome_canonico":`...)
	dst = appendString(dst, it.NomeCanonico)
	dst = append(dst, `,"marca":`...)
	dst = appendString(dst, it.Marca)
	dst = append(dst, `,"modello":`...)
	dst = appendString(dst, it.Modello)
	dst = appendOptString(dst, `,"allestimento":`, it.Allestimento)
	dst = appendOptString(dst, `,"catalog_type":`, it.CatalogType)
	if len(it.ProfessionalUpfits) > 0 {
		dst = append(dst, `,"professional_upfits":[`...)
		for i := range it.ProfessionalUpfits {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendUpfit(dst, &it.ProfessionalUpfits[i])
		}
		dst = append(dst, ']')
	}
	if it.PrimaryProfessionalUpfit != nil {
		dst = append(dst, `,"primary_professional_upfit":`...)
		dst = appendUpfit(dst, it.PrimaryProfessionalUpfit)
	}
	if it.PrezzoVendita != nil {
		dst = append(dst, `,"prezzo_vendita":`...)
		var ok bool
		if dst, ok = appendFloat(dst, *it.PrezzoVendita); !ok {
			return dst, ErrUnsupportedFloat
		}
	}
	dst = appendOptString(dst, `,"cover_url":`, it.CoverURL)
	if it.HasPodcast != nil {
		dst = append(dst, `,"has_podcast":`...)
		dst = strconv.AppendBool(dst, *it.HasPodcast)
	}
	if it.HasVideo != nil {
		dst = append(dst, `,"has_video":`...)
		dst = strconv.AppendBool(dst, *it.HasVideo)
	}
	return append(dst, '}'), nil
}

// appendUpfit appends one ProfessionalUpfit object (no field is omitted).
func appendUpfit(dst []byte, u *ProfessionalUpfit) []byte {
	dst = append(dst, `{"code":`...)
	dst = appendString(dst, u.Code)
	dst = append(dst, `,"slug":`...)
	dst = appendString(dst, u.Slug)
	dst = append(dst, `,"label":`...)
	dst = appendString(dst, u.Label)
	dst = append(dst, `,"display_label":`...)
	dst = appendString(dst, u.DisplayLabel)
	dst = append(dst, `,"family":`...)
	dst = appendString(dst, u.Family)
	dst = append(dst, `,"is_primary":`...)
	dst = strconv.AppendBool(dst, u.IsPrimary)
	return append(dst, '}')
}

// appendFloat appends f as encoding/json formats a float64 (like ES6:
// 'f' notation, 'e' below 1e-6 and from 1e21 on, with the exponent's
// leading zero dropped). ok is false for NaN and infinities.
func appendFloat(dst []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, false
	}
	abs := math.Abs(f)
	if abs < 1e15 && f != 0 && f == math.Trunc(f) {
		// An integer below 2^53 (a price in whole euros): the shortest
		// 'f' form is its digits.
		return strconv.AppendInt(dst, int64(f), 10), true
	}
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, true
}

// htmlSafe marks the ASCII bytes encoding/json writes as they are (with
// HTML escaping on, as Marshal has it): printable, not a quote, a
// backslash, <, > or &.
var htmlSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// minVectorPrefix is the shortest string whose safe prefix is looked for
// 32 bytes at a time (with AVX2): below it, the call costs more than the
// words (BenchmarkSafePrefix).
const minVectorPrefix = 32

// safePrefix returns the length of the longest prefix of s made of
// htmlSafe bytes: 32 bytes at a time with AVX2 for a long string, else
// eight at a time while it can.
func safePrefix(s string) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	i := 0
	if len(s) >= minVectorPrefix && hasAVX2 {
		// 32 bytes an instruction over the whole blocks; the words below
		// take the rest (fewer than 32 bytes) or confirm nothing.
		if i = safeBlocksAVX2(s); i < len(s)&^31 {
			return i
		}
	}
	for ; i+8 <= len(s); i += 8 {
		t := s[i : i+8]
		x := uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
			uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
		// High bit of each byte that is ", \, <, >, & (zero after the
		// xor), a control character or beyond ASCII. Bits above the first
		// flagged byte may be wrong; the first one is right.
		q, e, l, g, a := x^(lo*'"'), x^(lo*'\\'), x^(lo*'<'), x^(lo*'>'), x^(lo*'&')
		m := (x | (x-lo*0x20)&^x | (q-lo)&^q | (e-lo)&^e | (l-lo)&^l | (g-lo)&^g | (a-lo)&^a) & hi
		if m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for i < len(s) && s[i] < utf8.RuneSelf && htmlSafe[s[i]] {
		i++
	}
	return i
}

// appendString appends s as a JSON string the way encoding/json.Marshal
// does: \" \\ \b \f \n \r \t as short escapes, other control characters
// and < > & as \u00XX, U+2028 and U+2029 as \u2028 and \u2029, each byte
// of invalid UTF-8 as \ufffd.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	i := safePrefix(s)
	if i == len(s) { // the common case: nothing to escape
		dst = append(dst, s...)
		return append(dst, '"')
	}
	start := 0
	for i < len(s) {
		if b := s[i]; b < utf8.RuneSelf {
			if htmlSafe[b] {
				i += safePrefix(s[i:]) // this byte and the safe ones after it, eight at a time
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		if b := s[i]; b >= 0xC2 && b <= 0xDF && i+1 < len(s) && s[i+1]&0xC0 == 0x80 {
			i += 2 // a letter of two bytes (è, à): valid, and not U+2028 or U+2029
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendContentItem appends the JSON encoding of it to dst, exactly as
// encoding/json.Marshal(it) would give it (every field is omitempty), and
// returns the extended buffer. Listing and hub items are written from
// their sources instead (AppendContentItemSource, which the tests hold to
// this); it is the reference the edge's item encoders are proven against.
// TestAppendContentItemEqualsMarshal, FuzzAppendContentItem and the fake
// corpus test in aggregator/mapping prove it; a field added to ContentItem
// fails TestAppendContentItemKnowsEveryField until it is added here.
func AppendContentItem(dst []byte, it *ContentItem) []byte {
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
	if it.ID != 0 {
		dst = strconv.AppendInt(field(dst, `"id":`), it.ID, 10)
	}
	dst = str(dst, `"content_type":`, it.ContentType)
	dst = str(dst, `"slug":`, it.Slug)
	dst = str(dst, `"topic":`, it.Topic)
	dst = str(dst, `"category":`, it.Category)
	dst = str(dst, `"brand":`, it.Brand)
	dst = str(dst, `"title":`, it.Title)
	dst = str(dst, `"h1":`, it.H1)
	dst = str(dst, `"meta_description":`, it.MetaDescription)
	dst = str(dst, `"excerpt":`, it.Excerpt)
	dst = str(dst, `"body_text_preview":`, it.BodyTextPreview)
	dst = str(dst, `"body_text":`, it.BodyText)
	dst = str(dst, `"source_provider":`, it.SourceProvider)
	dst = str(dst, `"url":`, it.URL)
	dst = str(dst, `"media_url":`, it.MediaURL)
	dst = str(dst, `"thumbnail_url":`, it.ThumbnailURL)
	if it.DurationSeconds != 0 {
		dst = strconv.AppendInt(field(dst, `"duration_seconds":`), int64(it.DurationSeconds), 10)
	}
	dst = str(dst, `"transcript":`, it.Transcript)
	dst = str(dst, `"updated_at":`, it.UpdatedAt)
	return append(dst, '}')
}

// AppendContentListingHead appends the JSON of l's envelope up to its
// items, `{"content_type":...,"has_next":...,"items":[`, and
// AppendContentListingTail what follows them (`]`, the fields after the
// items, `}`). With items encoded between the two (AppendContentItem,
// comma-separated) they write exactly what encoding/json.Marshal gives for
// l with those items (TestAppendContentListingEqualsMarshal,
// FuzzAppendContentListing); l.Items itself is not read. A listing page or
// a hub section is written this way around items that were encoded once
// per cached view.
func AppendContentListingHead(dst []byte, l *ContentListing) []byte {
	dst = append(dst, `{"content_type":`...)
	dst = appendString(dst, l.ContentType)
	dst = appendPaging(dst, l.Page, l.PageSize, l.Total, l.HasNext)
	return append(dst, `,"items":[`...)
}

// appendPaging appends the paging fields both listing envelopes have, in
// their order: page, page_size, total, has_next, each after a comma.
func appendPaging(dst []byte, page, pageSize, total int, hasNext bool) []byte {
	dst = append(dst, `,"page":`...)
	dst = strconv.AppendInt(dst, int64(page), 10)
	dst = append(dst, `,"page_size":`...)
	dst = strconv.AppendInt(dst, int64(pageSize), 10)
	dst = append(dst, `,"total":`...)
	dst = strconv.AppendInt(dst, int64(total), 10)
	dst = append(dst, `,"has_next":`...)
	return strconv.AppendBool(dst, hasNext)
}

// AppendContentListingTail: see AppendContentListingHead. Its error is
// json.Marshal's of l.Meta (never, for the types Meta holds); dst is then
// returned as it was given.
func AppendContentListingTail(dst []byte, l *ContentListing) ([]byte, error) {
	start := len(dst)
	dst = append(dst, ']')
	dst = appendOptString(dst, `,"q":`, l.Q)
	if len(l.Filters) > 0 {
		keys := make([]string, 0, len(l.Filters))
		for k := range l.Filters {
			keys = append(keys, k)
		}
		slices.Sort(keys) // encoding/json writes a map's keys sorted
		dst = append(dst, `,"filters":{`...)
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			dst = appendString(dst, l.Filters[k])
		}
		dst = append(dst, '}')
	}
	dst, err := appendMeta(dst, l.Meta)
	if err != nil {
		return dst[:start], err
	}
	dst = appendDeprecation(dst, &l.Deprecation)
	return append(dst, '}'), nil
}

// AppendContentHubHead appends what encoding/json.Marshal writes for a
// ContentHub with meta up to its sections' members,
// `{"content_type":"hub","meta":...,"sections":{`; the sections follow,
// each `"<type>":` and its listing, in the order of their names (Marshal
// sorts a map's keys), then `}}`. Its error is json.Marshal's of meta;
// dst is then returned as it was given.
func AppendContentHubHead(dst []byte, meta *Meta) ([]byte, error) {
	start := len(dst)
	dst = append(dst, `{"content_type":"hub"`...)
	dst, err := appendMeta(dst, meta)
	if err != nil {
		return dst[:start], err
	}
	return append(dst, `,"sections":{`...), nil
}

// appendMeta appends `,"meta":` and meta's JSON (what encoding/json
// writes, TestAppendMetaEqualsMarshal and FuzzAppendMeta), or nothing for
// a nil meta (omitempty). It is written by hand: every content listing and
// hub written on a miss has one.
func appendMeta(dst []byte, meta *Meta) ([]byte, error) {
	if meta == nil {
		return dst, nil
	}
	dst = append(dst, `,"meta":{`...)
	if d := meta.Dealer; d != nil {
		dst = append(dst, `"dealer":{"id":`...)
		dst = strconv.AppendInt(dst, d.ID, 10)
		dst = appendStringField(dst, `,"name":`, d.Name)
		dst = appendStringField(dst, `,"brand_name":`, d.BrandName)
		dst = appendStringField(dst, `,"city":`, d.City)
		dst = appendStringField(dst, `,"province":`, d.Province)
		dst = appendStringField(dst, `,"primary_domain":`, d.PrimaryDomain)
		dst = append(dst, '}')
	}
	return append(dst, '}'), nil
}

// appendStringField appends name (`,"field":`) and s as a JSON string
// when s is not empty, and nothing otherwise (omitempty).
func appendStringField(dst []byte, name, s string) []byte {
	if s == "" {
		return dst
	}
	return appendString(append(dst, name...), s)
}

// appendDeprecation appends the deprecation fields that are set, each
// after a comma, as encoding/json writes the embedded Deprecation.
func appendDeprecation(dst []byte, d *Deprecation) []byte {
	if d.Deprecated {
		dst = append(dst, `,"deprecated":true`...)
	}
	dst = appendOptString(dst, `,"deprecation":`, d.Deprecation)
	dst = appendOptString(dst, `,"sunset":`, d.Sunset)
	return appendOptString(dst, `,"successor_version":`, d.SuccessorVersion)
}

// appendOptString appends the member named by key (a comma, the quoted
// name and a colon) with the string v, unless v is empty (omitempty).
func appendOptString(dst []byte, key, v string) []byte {
	if v == "" {
		return dst
	}
	return appendString(append(dst, key...), v)
}
