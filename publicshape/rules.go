package publicshape

import (
	"errors"
	"math/bits"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Content types (path segment {content_type}).
const (
	ContentFAQ      = "faq"
	ContentNews     = "news"
	ContentGlossary = "glossary"
	ContentGuides   = "guides"
	ContentVideos   = "videos"
	ContentPodcasts = "podcasts"
)

// ContentHubType is the content_type of the hub envelope (2.11).
const ContentHubType = "hub"

// ProvinceCode returns s as meta.dealer.province publishes it (contract
// 2.8: an Italian two-letter province code): two ASCII letters, white space
// around them trimmed, in capitals ("mi" is "MI"). Anything else ("",
// "Milano", "M1") is no such code and gives "", which leaves the field out.
func ProvinceCode(s string) string {
	s = strings.TrimSpace(s)
	if len(s) != 2 {
		return ""
	}
	var b [2]byte
	for i := range 2 {
		c := s[i] | 0x20 // lower case; a byte that is no letter stays no letter
		if c < 'a' || c > 'z' {
			return ""
		}
		b[i] = c - 0x20
	}
	if b[0] == s[0] && b[1] == s[1] {
		return s
	}
	return string(b[:])
}

// IsContentType reports whether s is one of the six public content types.
func IsContentType(s string) bool {
	switch s {
	case ContentFAQ, ContentNews, ContentGlossary, ContentGuides, ContentVideos, ContentPodcasts:
		return true
	}
	return false
}

// IsDeprecatedType reports whether the content type is deprecated
// (section 9): guides and glossary. Their responses carry the Deprecation,
// Sunset and Link headers and the deprecation payload fields.
func IsDeprecatedType(contentType string) bool {
	return contentType == ContentGuides || contentType == ContentGlossary
}

// ---------------------------------------------------------------------------
// Slugs

// CanonicalSlug returns the canonical filter slug of s: lower case, the
// Italian accented vowels folded to ASCII (à->a, è/é->e, ì->i, ò->o,
// ù->u; the acute and circumflex forms too), every run of characters
// outside [a-z0-9] replaced by one hyphen, and no leading or trailing
// hyphen, and at most MaxSlugLen bytes (cut at the last hyphen within
// them, so that a published upfit slug can always be asked for as a
// filter, whose length is 1 to 80). The result is either empty or
// satisfies ValidSlug. A string that is already a valid slug of at most
// MaxSlugLen bytes is returned as is, without allocating.
func CanonicalSlug(s string) string {
	if ValidSlug(s) {
		return capSlug(s)
	}
	return capSlug(canonicalSlug(s))
}

// MaxSlugLen is the longest slug published (the professional_upfit
// filter's bound, contract 4.1).
const MaxSlugLen = 80

// capSlug cuts a valid slug to MaxSlugLen bytes, at its last hyphen
// within them when it has one.
func capSlug(s string) string {
	if len(s) <= MaxSlugLen {
		return s
	}
	cut := s[:MaxSlugLen]
	if i := strings.LastIndexByte(cut, '-'); i > 0 {
		return cut[:i]
	}
	return cut
}

func canonicalSlug(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	gap := false // a separator run was seen after the last written char
	for _, r := range s {
		c, ok := slugByte(r)
		if !ok {
			gap = b.Len() > 0
			continue
		}
		if gap {
			b.WriteByte('-')
			gap = false
		}
		b.WriteByte(c)
	}
	return b.String()
}

// UpfitSlug is the slug an upfit is published under, from the slug and
// label the inventory service stores: altro for the label Altro (any case,
// whatever its code and slug), else the canonical form of the stored slug,
// else of the label; empty when neither has a slug character (the upfit is
// not published). The service's upfit filter matches this form.
func UpfitSlug(slug, label string) string {
	label = strings.TrimSpace(label)
	if isAltro(label) {
		return altroSlug
	}
	if c := CanonicalSlug(slug); c != "" {
		return c
	}
	return CanonicalSlug(label)
}

// isAltro reports whether the trimmed label is Altro in any case. No
// letter of "altro" folds to a rune of another length (unicode.SimpleFold),
// so a label of another length never is.
func isAltro(label string) bool {
	return len(label) == len(AltroLabel) && strings.EqualFold(label, AltroLabel)
}

// slugByte maps one rune to its slug byte; ok is false for separators.
func slugByte(r rune) (byte, bool) {
	switch {
	case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		return byte(r), true
	case r >= 'A' && r <= 'Z':
		return byte(r) + ('a' - 'A'), true
	case r < utf8.RuneSelf:
		return 0, false
	}
	switch unicode.ToLower(r) {
	case 'à', 'á', 'â':
		return 'a', true
	case 'è', 'é', 'ê':
		return 'e', true
	case 'ì', 'í', 'î':
		return 'i', true
	case 'ò', 'ó', 'ô':
		return 'o', true
	case 'ù', 'ú', 'û':
		return 'u', true
	}
	return 0, false
}

// ValidSlug reports whether s matches ^[a-z0-9]+(-[a-z0-9]+)*$: groups of
// lower-case ASCII letters and digits joined by single hyphens. It is on
// the request path (the professional_upfit filter) and does not allocate.
func ValidSlug(s string) bool {
	if s == "" {
		return false
	}
	prevHyphen := true // forbids a leading hyphen
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			prevHyphen = false
		case c == '-':
			if prevHyphen {
				return false
			}
			prevHyphen = true
		default:
			return false
		}
	}
	return !prevHyphen
}

// ---------------------------------------------------------------------------
// Professional upfits (2.3)

// AltroLabel is the taxonomy label of the catch-all upfit. It is always one
// facet (slug "altro"); the dealer's own name for it is only its
// display_label.
const AltroLabel = "Altro"

// altroSlug is the slug of the Altro facet.
const altroSlug = "altro"

// UpfitSource is one professional upfit as the catalog knows it, the only
// input Upfits reads.
type UpfitSource struct {
	Code        string // stable master-data code; sources without one are dropped
	Slug        string // taxonomy slug; empty means derive it from Label
	Label       string // canonical taxonomy label
	DealerAlias string // the dealer's name for an Altro upfit; ignored otherwise
	Family      string // display/filter family
	Primary     bool   // flagged primary by the catalog
}

// Upfits maps catalog upfits to the public ones (2.3), field by field:
//
//   - slug is CanonicalSlug(Slug), or CanonicalSlug(Label) when that is
//     empty; a source with no code, or whose slug comes out empty, is
//     dropped (it could not be filtered on);
//   - label is the canonical taxonomy label and display_label the same
//     label, except for Altro (any case): its label stays "Altro" and its
//     slug "altro", so it is one facet whatever the dealer calls it, and
//     its display_label is the dealer alias, or "Altro" when there is none;
//   - sources are deduplicated by code: the first one wins, and it counts
//     as flagged primary when any of its duplicates is;
//   - a non-empty result has exactly one primary: the first item flagged
//     primary, or the first item when none is.
//
// It returns (nil, nil) when no upfit remains. The second result points to
// a copy of the primary item, for primary_professional_upfit.
func Upfits(src []UpfitSource) ([]ProfessionalUpfit, *ProfessionalUpfit) {
	if len(src) == 0 {
		return nil, nil
	}
	out, primary := upfitsInto(make([]ProfessionalUpfit, 0, len(src)), src)
	if len(out) == 0 {
		return nil, nil
	}
	p := out[primary]
	return out, &p
}

// upfitsInto is Upfits appending to out (empty, so a caller can lend one
// on its stack) instead of a slice of its own: it returns the upfits and
// the index of the primary one among them (meaningless when none remains).
func upfitsInto(out []ProfessionalUpfit, src []UpfitSource) ([]ProfessionalUpfit, int) {
next:
	for i := range src {
		s := &src[i]
		code := strings.TrimSpace(s.Code)
		if code == "" {
			continue
		}
		for j := range out {
			if out[j].Code == code {
				out[j].IsPrimary = out[j].IsPrimary || s.Primary
				continue next
			}
		}
		u := ProfessionalUpfit{
			Code:      code,
			Family:    strings.TrimSpace(s.Family),
			IsPrimary: s.Primary, // normalised below
		}
		// UpfitSlug's rules, on the label trimmed once.
		if label := strings.TrimSpace(s.Label); isAltro(label) {
			u.Slug = altroSlug
			u.Label = AltroLabel
			u.DisplayLabel = AltroLabel
			if alias := strings.TrimSpace(s.DealerAlias); alias != "" {
				u.DisplayLabel = alias
			}
		} else {
			if u.Slug = CanonicalSlug(s.Slug); u.Slug == "" {
				if u.Slug = CanonicalSlug(label); u.Slug == "" {
					continue
				}
			}
			u.Label, u.DisplayLabel = label, label
		}
		out = append(out, u)
	}
	primary := -1
	for i := range out {
		if out[i].IsPrimary && primary < 0 {
			primary = i
			continue
		}
		out[i].IsPrimary = false
	}
	if primary < 0 && len(out) > 0 {
		primary = 0
		out[0].IsPrimary = true
	}
	return out, primary
}

// ---------------------------------------------------------------------------
// Text

// NomeCanonico returns the canonical display name of a vehicle: make,
// model and trim joined by single spaces, with every run of white space
// inside them collapsed and the result trimmed. Empty parts are skipped.
func NomeCanonico(marca, modello, allestimento string) string {
	var b strings.Builder
	b.Grow(len(marca) + len(modello) + len(allestimento) + 2)
	for _, part := range [...]string{marca, modello, allestimento} {
		for w := range strings.FieldsSeq(part) { // no slice of the words
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
	}
	return b.String()
}

// AppendNomeCanonico appends NomeCanonico(marca, modello, allestimento) to
// dst: at most len(marca)+len(modello)+len(allestimento)+2 bytes, so a
// caller can lay the names of a page out in one buffer of that room.
//
// It splits the parts as strings.FieldsSeq does (unicode.IsSpace; an
// invalid byte is no space) with a loop of its own: the iterator's closure
// made the parts leak, and with them whatever a caller's struct holds
// beside the strings (AppendInventoryItemSource's upfits).
func AppendNomeCanonico(dst []byte, marca, modello, allestimento string) []byte {
	start := len(dst)
	dst = appendWords(dst, start, marca)
	dst = appendWords(dst, start, modello)
	return appendWords(dst, start, allestimento)
}

// appendWords appends the words of s to dst, each after a space when dst
// is longer than start.
func appendWords(dst []byte, start int, s string) []byte {
	for i := 0; i < len(s); {
		if n := spaceAt(s, i); n > 0 {
			i += n
			continue
		}
		j := i + 1
		for j < len(s) && spaceAt(s, j) == 0 {
			j++
		}
		if len(dst) > start {
			dst = append(dst, ' ')
		}
		dst = append(dst, s[i:j]...)
		i = j
	}
	return dst
}

// spaceAt returns the length of the white space rune (unicode.IsSpace) at
// s[i], or 0 when there is none there. A word's continuation bytes are no
// space: scanning on from a rune's first byte, a word's end is found at a
// rune's start.
func spaceAt(s string, i int) int {
	if c := s[i]; c < utf8.RuneSelf {
		if asciiSpace[c] {
			return 1
		}
		return 0
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if unicode.IsSpace(r) {
		return n
	}
	return 0
}

// Ellipsis is appended by Preview to a truncated preview.
const Ellipsis = "…"

// Preview returns the plain-text preview of body (body_text_preview):
// runs of white space are collapsed to one space and the ends trimmed;
// when the result is longer than max runes it is cut at the last word
// boundary at or before max runes (or, for a single word longer than max,
// at max runes) and Ellipsis is appended, so the preview is never longer
// than max+1 runes. Cuts fall between runes, never inside a UTF-8
// sequence; invalid UTF-8 in body comes out as U+FFFD, so the result is
// always valid UTF-8. A max below 1 gives "".
func Preview(body string, max int) string {
	if max < 1 {
		return ""
	}
	var pv previewText
	if p, ok := previewPlain(&pv, body, max); ok {
		return p
	}
	var b strings.Builder
	b.Grow(min(len(body), max*utf8.UTFMax) + len(Ellipsis))
	n := 0          // runes written
	lastSpace := -1 // byte offset in b of the last space written
	pending := false
	for i := 0; i < len(body); {
		// A run of ASCII that is not white space (nearly all of a body) is
		// taken at once; any other byte is one rune, as range over body
		// yields them (an invalid byte is U+FFFD of size 1).
		r, size := rune(body[i]), 1
		if r < utf8.RuneSelf {
			if asciiSpace[r] {
				pending = n > 0
				i++
				continue
			}
			size = asciiWord(body[i:])
		} else {
			r, size = utf8.DecodeRuneInString(body[i:])
			if unicode.IsSpace(r) {
				pending = n > 0
				i += size
				continue
			}
		}
		word := body[i : i+size]
		i += size
		if pending {
			if n+2 > max { // the space and r do not fit: cut at this boundary
				b.WriteString(Ellipsis) // fits the reserved capacity unless body had invalid UTF-8
				return b.String()
			}
			lastSpace = b.Len()
			b.WriteByte(' ')
			n++
			pending = false
		}
		if r >= utf8.RuneSelf {
			if n+1 > max { // r does not fit and we are inside a word
				return cutWord(b.String(), lastSpace)
			}
			b.WriteRune(r)
			n++
			continue
		}
		if n+len(word) > max { // the run does not fit: its first max-n bytes do
			b.WriteString(word[:max-n])
			return cutWord(b.String(), lastSpace)
		}
		b.WriteString(word)
		n += len(word)
	}
	return b.String()
}

// previewPlain is Preview for a body whose white space is ASCII and whose
// text up to the cut is valid UTF-8 (the common case: the content
// service's summaries are paragraphs of plain text). It finds the cut on
// the body itself, a run of printable ASCII words apart by single spaces
// at a time. The preview is a slice of the body while every run of white
// space is one ASCII space; from the first other run on (a paragraph break) it is built from the
// slices between such runs, each run written as one space. Nothing is
// built rune by rune. ok is false as soon as the body holds anything else
// before the cut (invalid UTF-8, white space outside ASCII); Preview's
// general path then decides. With pv.into set the preview is appended
// to pv.out instead and p is empty (AppendPreview).
func previewPlain(pv *previewText, body string, max int) (p string, ok bool) {
	n := 0 // runes of the preview so far
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c-'!' < utf8.RuneSelf-'!': // printable ASCII: words apart by single spaces at once
			if n >= max {
				return pv.cut(body, i), true
			}
			// The run of printable ASCII and spaces (at most max-n more
			// runes fit), up to two spaces in a row and without a space at
			// its end: each space in it is one between two words, which stays
			// in the slice, as the white space case keeps it. The space
			// that ends a run is left to that case.
			j := i + textRun(body[i:min(len(body), i+max-n)])
			if body[j-1] == ' ' {
				j--
			}
			if k := strings.LastIndexByte(body[i:j], ' '); k >= 0 {
				pv.lastSpace = pv.written() + i + k - pv.seg + 1
			}
			n += j - i
			i = j
		case c < utf8.RuneSelf && asciiSpace[c]: // a run of white space
			j := i + 1
			for j < len(body) && body[j] < utf8.RuneSelf && asciiSpace[body[j]] {
				j++
			}
			if n == 0 { // leading: dropped
				pv.seg, i = j, j
				continue
			}
			if j == len(body) { // trailing: dropped
				return pv.end(body, i, ""), true
			}
			if body[j] >= utf8.RuneSelf {
				// The run goes on if the next rune is white space too: the
				// general path knows whether anything follows it.
				if r, size := utf8.DecodeRuneInString(body[j:]); (r == utf8.RuneError && size == 1) || unicode.IsSpace(r) {
					return "", false
				}
			}
			if n+2 > max { // the space and the next rune do not fit
				return pv.end(body, i, Ellipsis), true
			}
			pv.space(body, i, j, max)
			n++
			i = j
		case c < utf8.RuneSelf: // a control character: one rune
			if n >= max {
				return pv.cut(body, i), true
			}
			n++
			i++
		default:
			r, size := utf8.DecodeRuneInString(body[i:])
			if (r == utf8.RuneError && size == 1) || unicode.IsSpace(r) {
				return "", false
			}
			if n >= max {
				return pv.cut(body, i), true
			}
			n++
			i += size
		}
	}
	return pv.end(body, len(body), ""), true
}

// previewText is the preview previewPlain has found so far: the text
// written to b (empty while the preview is a slice of the body), or to
// out from base on when into is set, then the body from seg on.
type previewText struct {
	b         strings.Builder
	into      bool   // the preview is appended to out (AppendPreview), not to b
	out       []byte // held here, not pointed to, so that it stays on the caller's stack
	base      int    // where the preview starts in out
	seg       int    // body offset of the text not yet written to b
	lastSpace int    // offset in the preview of the last space kept, plus one (0: none)
}

// written is the length of the preview written so far.
func (pv *previewText) written() int {
	if pv.into {
		return len(pv.out) - pv.base
	}
	return pv.b.Len()
}

// space keeps the run of white space body[i:j] as one space.
func (pv *previewText) space(body string, i, j, max int) {
	if j == i+1 && body[i] == ' ' { // already one space: stays in the slice
		pv.lastSpace = pv.written() + i - pv.seg + 1
		return
	}
	if pv.into {
		pv.out = append(pv.out, body[pv.seg:i]...)
		pv.lastSpace = pv.written() + 1
		pv.out = append(pv.out, ' ')
		pv.seg = j
		return
	}
	if pv.b.Cap() == 0 {
		pv.b.Grow(min(len(body)-pv.seg, max*utf8.UTFMax) + len(Ellipsis))
	}
	pv.b.WriteString(body[pv.seg:i])
	pv.lastSpace = pv.b.Len() + 1
	pv.b.WriteByte(' ')
	pv.seg = j
}

// end returns the preview up to body offset i, with suffix (or appends
// them to out and returns "").
func (pv *previewText) end(body string, i int, suffix string) string {
	if pv.into {
		pv.out = append(append(pv.out, body[pv.seg:i]...), suffix...)
		return ""
	}
	if pv.b.Cap() == 0 {
		return body[pv.seg:i] + suffix
	}
	pv.b.WriteString(body[pv.seg:i])
	pv.b.WriteString(suffix)
	return pv.b.String()
}

// cut ends the preview inside a word that does not fit, the word starting
// before body offset i: at the last space kept, or at i for a single word
// longer than max; Ellipsis follows.
func (pv *previewText) cut(body string, i int) string {
	if pv.lastSpace == 0 {
		return pv.end(body, i, Ellipsis)
	}
	at := pv.lastSpace - 1
	if w := pv.written(); at >= w {
		return pv.end(body, pv.seg+at-w, Ellipsis)
	}
	if pv.into { // the space written last, after a run
		pv.out = append(pv.out[:pv.base+at], Ellipsis...)
		return ""
	}
	return pv.b.String()[:at] + Ellipsis // the space written last, after a run
}

// textRun returns the length of the run of printable ASCII bytes and
// spaces (0x20 to 0x7F) at the start of s, up to the second of two
// spaces in a row, eight bytes a step.
func textRun(s string) int {
	const ones, highs, lows = 0x0101010101010101, 0x8080808080808080, 0x7f7f7f7f7f7f7f7f
	j := 0
	var before uint64 // 0x80 when the byte before the block is a space
	for ; j+8 <= len(s); j += 8 {
		x := uint64(s[j]) | uint64(s[j+1])<<8 | uint64(s[j+2])<<16 | uint64(s[j+3])<<24 |
			uint64(s[j+4])<<32 | uint64(s[j+5])<<40 | uint64(s[j+6])<<48 | uint64(s[j+7])<<56
		// A byte below 0x20 borrows into its high bit, a byte from 0x80
		// has it; a borrow can only mark bytes after a marked one, so the
		// lowest mark is the first byte that ends the run.
		m := ((x - ' '*ones) | x) & highs
		// The spaces, each marked exactly (no carry crosses a byte), and
		// of them those after a space.
		t := x ^ (' ' * ones)
		sp := ^(((t & lows) + lows) | t | lows)
		m |= sp & (sp<<8 | before)
		if m != 0 {
			return j + bits.TrailingZeros64(m)/8
		}
		before = sp >> 56
	}
	for j < len(s) && s[j]-' ' < utf8.RuneSelf-' ' && (s[j] != ' ' || j == 0 || s[j-1] != ' ') {
		j++
	}
	return j
}

// cutWord ends a preview s whose next rune does not fit: at the last
// space written (its offset in s), or at the end of s for a single word
// longer than max.
func cutWord(s string, lastSpace int) string {
	if lastSpace > 0 {
		s = s[:lastSpace]
	}
	return s + Ellipsis
}

// asciiWord returns the length of the run of ASCII bytes that are not
// white space at the start of s (at least one: s[0] is one).
func asciiWord(s string) int {
	j := 1
	for j < len(s) && s[j] < utf8.RuneSelf && !asciiSpace[s[j]] {
		j++
	}
	return j
}

// asciiSpace marks the ASCII bytes unicode.IsSpace reports.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// ---------------------------------------------------------------------------
// Deprecation (section 9)

// httpTimeFormat is the IMF-fixdate form of an HTTP-date (RFC 9110 5.6.7),
// the same layout as net/http.TimeFormat; times must be in UTC.
const httpTimeFormat = "Mon, 02 Jan 2006 15:04:05 GMT"

// DeprecationPolicy is the deprecation of the guides and glossary content
// types. Its zero value is not valid; see Validate.
type DeprecationPolicy struct {
	// Deprecation is when the types were deprecated (Deprecation header,
	// RFC 9745, and the deprecation payload field).
	Deprecation time.Time
	// Sunset is when the types may stop being served (Sunset header,
	// RFC 8594, and the sunset payload field). It must be after
	// Deprecation.
	Sunset time.Time
	// SuccessorURL is the canonical home of the corpus: the Link
	// rel="successor-version" target and the successor_version field. It
	// must be an absolute http or https URL.
	SuccessorURL string
	// SunsetInfoURL is the Link rel="sunset" target, a page about the
	// sunset. Empty means SuccessorURL.
	SunsetInfoURL string
}

// Validate reports what is wrong with the policy, naming each bad field:
// both times set, Deprecation not before the Unix epoch, Sunset after
// Deprecation, SuccessorURL (and SunsetInfoURL when set) absolute http or
// https URLs that can stand inside a Link header.
func (p DeprecationPolicy) Validate() error {
	var errs []error
	switch {
	case p.Deprecation.IsZero():
		errs = append(errs, errors.New("publicshape: deprecation policy: deprecation: not set"))
	case p.Deprecation.Unix() < 0:
		errs = append(errs, errors.New("publicshape: deprecation policy: deprecation: before 1970"))
	}
	switch {
	case p.Sunset.IsZero():
		errs = append(errs, errors.New("publicshape: deprecation policy: sunset: not set"))
	case !p.Sunset.After(p.Deprecation):
		errs = append(errs, errors.New("publicshape: deprecation policy: sunset: must be after deprecation"))
	}
	if err := checkLinkURL(p.SuccessorURL); err != nil {
		errs = append(errs, errors.New("publicshape: deprecation policy: successor_url: "+err.Error()))
	}
	if p.SunsetInfoURL != "" {
		if err := checkLinkURL(p.SunsetInfoURL); err != nil {
			errs = append(errs, errors.New("publicshape: deprecation policy: sunset_info_url: "+err.Error()))
		}
	}
	return errors.Join(errs...)
}

// checkLinkURL accepts an absolute http(s) URL with a host and no
// character that would break a Link header value.
func checkLinkURL(s string) error {
	if s == "" {
		return errors.New("not set")
	}
	if strings.ContainsAny(s, "<>\" \t\r\n,;") {
		return errors.New("contains a character not allowed in a Link header")
	}
	for i := 0; i < len(s); i++ {
		// RFC 8288 section 3: the target is a URI-Reference (ASCII); an
		// IRI must be sent percent-encoded, its host in punycode.
		if s[i] < 0x21 || s[i] > 0x7e {
			return errors.New("must be ASCII: percent-encode other characters (punycode in the host)")
		}
	}
	u, err := url.Parse(s)
	if err != nil {
		return errors.New("not a URL")
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return errors.New("must be an absolute http or https URL")
	}
	return nil
}

// deprecationValue is the structured date "@<unix-seconds>" (RFC 9745).
func (p DeprecationPolicy) deprecationValue() string {
	return "@" + strconv.FormatInt(p.Deprecation.Unix(), 10)
}

// sunsetValue is the HTTP-date of Sunset, in GMT.
func (p DeprecationPolicy) sunsetValue() string {
	return p.Sunset.UTC().Format(httpTimeFormat)
}

// Fields returns the deprecation payload fields of guides and glossary
// envelopes: deprecated true, deprecation "@<unix-seconds>", sunset as an
// HTTP-date and successor_version. They equal the header values of
// Headers.
func (p DeprecationPolicy) Fields() Deprecation {
	return Deprecation{
		Deprecated:       true,
		Deprecation:      p.deprecationValue(),
		Sunset:           p.sunsetValue(),
		SuccessorVersion: p.SuccessorURL,
	}
}

// Headers returns the values of the Deprecation, Sunset and Link response
// headers of guides and glossary responses, for example:
//
//	Deprecation: @1735689600
//	Sunset: Thu, 31 Dec 2026 23:59:59 GMT
//	Link: <https://example.com/>; rel="successor-version", <https://example.com/>; rel="sunset"
func (p DeprecationPolicy) Headers() (deprecation, sunset, link string) {
	info := p.SunsetInfoURL
	if info == "" {
		info = p.SuccessorURL
	}
	link = "<" + p.SuccessorURL + `>; rel="successor-version", <` + info + `>; rel="sunset"`
	return p.deprecationValue(), p.sunsetValue(), link
}

// ---------------------------------------------------------------------------
// Problems (section 7)

// DefaultProblemBase is the base URL of the problem type documentation
// used when none is configured; ProblemTypeURI appends the code to it.
const DefaultProblemBase = "https://dealer-edge.example/problems"

// ProblemTypeURI returns the type URI of a problem: base (DefaultProblemBase
// when empty), without trailing slashes, then "/" and the code.
func ProblemTypeURI(base, code string) string {
	if base == "" {
		base = DefaultProblemBase
	}
	return strings.TrimRight(base, "/") + "/" + code
}

// ProblemSpec is one problem code with its HTTP status and title.
type ProblemSpec struct {
	Code   string
	Status int
	Title  string
}

// problems is the table behind Problems and ProblemFor. The first
// seventeen rows are the contract's codes (section 7) plus not_found
// (unknown route), method_not_allowed (a method other than GET) and
// precondition_failed (an If-Match no current tag matches); the last five
// are answered before routing, to requests that are not valid HTTP.
var problems = [...]ProblemSpec{
	{"invalid_service", 400, "Invalid service"},
	{"invalid_content_type", 400, "Invalid content type"},
	{"invalid_identifier", 400, "Invalid identifier"},
	{"missing_api_key", 401, "Missing API key"},
	{"invalid_api_key", 401, "Invalid API key"},
	{"expired_api_key", 401, "Expired API key"},
	{"dealer_not_found", 404, "Dealer not found"},
	{"vehicle_not_found", 404, "Vehicle not found"},
	{"offer_not_found", 404, "Offer not found"},
	{"content_not_found", 404, "Content not found"},
	{"not_found", 404, "Not found"},
	{"method_not_allowed", 405, "Method not allowed"},
	{"precondition_failed", 412, "Precondition failed"},
	{"validation_error", 422, "Validation error"},
	{"rate_limited", 429, "Rate limit exceeded"},
	{"internal_error", 500, "Internal error"},
	{"service_unavailable", 503, "Service unavailable"},
	{"bad_request", 400, "Bad request"},
	{"request_timeout", 408, "Request timeout"},
	{"request_too_large", 413, "Request too large"},
	{"uri_too_long", 414, "URI too long"},
	{"request_header_too_large", 431, "Request header fields too large"},
}

// Problems returns every known problem code, with its status and title, in
// a fresh slice the caller may keep.
func Problems() []ProblemSpec { return slices.Clone(problems[:]) }

// ProblemFor returns the HTTP status and title of a problem code; ok is
// false for an unknown code.
func ProblemFor(code string) (status int, title string, ok bool) {
	for i := range problems {
		if problems[i].Code == code {
			return problems[i].Status, problems[i].Title, true
		}
	}
	return 0, "", false
}
