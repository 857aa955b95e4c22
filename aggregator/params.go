package aggregator

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/publicshape"
)

// Bounds of the contract (section 8) and of this edge where the contract
// is silent (documented in the README).
const (
	defaultPage            = 1
	maxPage                = 1<<31 - 1
	defaultListPageSize    = 20
	maxListPageSize        = 100
	defaultPreviewPageSize = 5
	maxPreviewPageSize     = 20
	minSearchQ             = 2
	maxQLen                = 200  // runes; edge bound, the contract sets none
	maxFilterLen           = 1024 // runes, for category/topic/brand: past any value the content service publishes
	maxUpfitLen            = 80
	maxSlugLen             = 1024 // edge bound, the contract sets only a minimum; past any slug the edge lists
)

// Indexes of the query parameters the edge understands.
const (
	pPage = iota
	pPageSize
	pQ
	pCatalogType
	pUpfit
	pIDAuto
	pIDOfferta
	pCategory
	pTopic
	pBrand
	pSlug
	numParams
)

var paramNames = [numParams]string{"page", "page_size", "q", "catalog_type", "professional_upfit", "id_auto", "id_offerta", "category", "topic", "brand", "slug"}

func paramIndex(k []byte) int {
	switch string(k) {
	case "page":
		return pPage
	case "page_size":
		return pPageSize
	case "q":
		return pQ
	case "catalog_type":
		return pCatalogType
	case "professional_upfit":
		return pUpfit
	case "id_auto":
		return pIDAuto
	case "id_offerta":
		return pIDOfferta
	case "category":
		return pCategory
	case "topic":
		return pTopic
	case "brand":
		return pBrand
	case "slug":
		return pSlug
	}
	return -1
}

// rawParams holds the raw (percent-decoded) values of the known
// parameters of one request. Unknown parameters are ignored.
type rawParams struct {
	val   [numParams][]byte
	count [numParams]uint8
}

func (r *rawParams) collect(args *fasthttp.Args) {
	for k, v := range args.All() {
		if i := paramIndex(k); i >= 0 {
			if r.count[i] < 255 {
				r.count[i]++
			}
			r.val[i] = v
		}
	}
}

func (r *rawParams) has(i int) bool { return r.count[i] > 0 }

// params are the validated parameters of one request, in normalised form.
type params struct {
	page, pageSize int
	q              string
	catalogType    string
	upfit          string
	idAuto         string
	idOfferta      int64
	category       string
	topic          string
	brand          string
	slug           string
}

// validator collects per-field errors so one 422 lists them all.
type validator struct {
	raw  *rawParams
	errs []publicshape.FieldError
}

func (v *validator) add(i int, msg string) {
	v.errs = append(v.errs, publicshape.FieldError{Field: paramNames[i], Message: msg})
}

// present reports whether parameter i was given, and flags duplicates.
func (v *validator) present(i int) bool {
	switch c := v.raw.count[i]; {
	case c == 0:
		return false
	case c > 1:
		v.add(i, "must be given at most once")
		return false
	}
	return true
}

// integer parses parameter i as a decimal integer in [lo, hi], with def
// when absent.
func (v *validator) integer(i, def, lo, hi int) int {
	if !v.present(i) {
		return def
	}
	n, ok := parseDecimal(v.raw.val[i])
	if !ok || n < int64(lo) || n > int64(hi) {
		v.add(i, "must be an integer between "+strconv.Itoa(lo)+" and "+strconv.Itoa(hi))
		return def
	}
	return int(n)
}

// parseDecimal parses ASCII digits whose value fits an int64 (id_offerta is
// an int64: its largest value has 19 digits); leading zeros do not count
// towards the 19 (0042 is 42, however many zeros lead it).
func parseDecimal(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	for len(b) > 1 && b[0] == '0' {
		b = b[1:]
	}
	if len(b) > 19 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// text validates parameter i as text of at most maxRunes runes: valid
// UTF-8, no control characters. Whitespace is trimmed and runs of it are
// collapsed. An absent or blank value gives "".
func (v *validator) text(i, maxRunes int) string {
	if !v.present(i) {
		return ""
	}
	b := v.raw.val[i]
	if !utf8.Valid(b) {
		v.add(i, "must be valid UTF-8")
		return ""
	}
	for j, c := range b {
		// C0 (but tab), DEL, and C1 (U+0080-U+009F: 0xC2 0x80-0x9F in
		// valid UTF-8).
		if c < 0x20 && c != '\t' || c == 0x7f || c == 0xc2 && j+1 < len(b) && b[j+1] < 0xa0 {
			v.add(i, "must not contain control characters")
			return ""
		}
	}
	s := normalizeSpace(b)
	if utf8.RuneCountInString(s) > maxRunes {
		v.add(i, "must be at most "+strconv.Itoa(maxRunes)+" characters long")
		return ""
	}
	return s
}

// normalizeSpace trims b and collapses runs of whitespace into one space.
func normalizeSpace(b []byte) string {
	return strings.Join(strings.Fields(string(b)), " ")
}

// forbid flags parameter i as not applicable here.
func (v *validator) forbid(i int, why string) {
	if v.raw.has(i) {
		v.add(i, why)
	}
}

func (v *validator) failed() *apiError {
	if len(v.errs) == 0 {
		return nil
	}
	return validation(v.errs)
}

// validUUID reports whether b is a UUID in the canonical 8-4-4-4-12 hex
// form (any case).
func validUUID(b []byte) bool {
	if len(b) != 36 || b[8] != '-' || b[13] != '-' || b[18] != '-' || b[23] != '-' {
		return false
	}
	// Eight bytes a step (the last two words overlap), the hyphens, checked
	// above, let through by their words' masks: the listing checks every
	// item's id_auto (a per-byte switch cost about 3% of a 20-item listing
	// miss, bench/ab.sh AB_ROW=c; a table load per digit 26 ns a UUID).
	le := binary.LittleEndian
	const (
		hyphens1 = 0x80<<(8*0) | 0x80<<(8*5) // bytes 8 and 13 of b
		hyphens2 = 0x80<<(8*2) | 0x80<<(8*7) // bytes 18 and 23
	)
	bad := nonHex8(le.Uint64(b[0:])) |
		nonHex8(le.Uint64(b[8:]))&^hyphens1 |
		nonHex8(le.Uint64(b[16:]))&^hyphens2 |
		nonHex8(le.Uint64(b[24:])) |
		nonHex8(le.Uint64(b[28:]))
	return bad == 0
}

// nonHex8 returns w with the high bit of each of its bytes that is not a
// hex digit (either case) set, every other bit clear. The sums stay within
// their bytes: each adds at most 0x50 to a byte of at most 0x7f.
func nonHex8(w uint64) uint64 {
	const (
		ones = 0x0101010101010101
		high = 0x80 * ones
	)
	a := w &^ high // the bytes' low seven bits; a byte >= 0x80 is refused below
	digit := (a + (0x80-'0')*ones) &^ (a + (0x80-'9'-1)*ones)
	l := a | 0x20*ones // an upper-case letter as lower case ('0'..'9' are read from a)
	letter := (l + (0x80-'a')*ones) &^ (l + (0x80-'f'-1)*ones)
	return (^(digit | letter) | w) & high
}

// parseInventoryListing validates 4.1's parameters for a valid service.
func parseInventoryListing(raw *rawParams, service string) (params, *apiError) {
	v := validator{raw: raw}
	p := params{
		page:     v.integer(pPage, defaultPage, 1, maxPage),
		pageSize: v.integer(pPageSize, defaultListPageSize, 1, maxListPageSize),
		// The inventory service matches q as the content service does
		// (upstream's package doc), and a listing does not echo q: its
		// canonical form is one cache entry and one call for every
		// variant of a query.
		q: normalizeQuery(v.text(pQ, maxQLen)),
	}
	if service == publicshape.ServiceNLT {
		v.forbid(pCatalogType, "is supported for REWIND and NOS only")
		v.forbid(pUpfit, "is supported for REWIND and NOS only")
		return p, v.failed()
	}
	if v.present(pCatalogType) {
		switch ct := string(raw.val[pCatalogType]); ct {
		case publicshape.CatalogAuto, publicshape.CatalogVcom, publicshape.CatalogVind:
			p.catalogType = ct
		default:
			v.add(pCatalogType, "must be one of auto, vcom, vind")
		}
	}
	if v.present(pUpfit) {
		u := raw.val[pUpfit]
		switch {
		case len(u) < 1 || len(u) > maxUpfitLen:
			v.add(pUpfit, "must be 1 to 80 characters long")
		case !publicshape.ValidSlug(string(u)):
			v.add(pUpfit, "must be lowercase letters and digits in groups joined by single hyphens")
		case p.catalogType == publicshape.CatalogAuto:
			v.add(pUpfit, "applies to vcom and vind vehicles only, not catalog_type auto")
		default:
			p.upfit = string(u)
		}
	}
	return p, v.failed()
}

// parseInventoryDetails validates 4.2's identifiers. A malformed
// identifier is 400 invalid_identifier (the contract's rule); a missing
// one, or the other service's identifier, is a 422.
func parseInventoryDetails(raw *rawParams, service string) (params, *apiError) {
	v := validator{raw: raw}
	var p params
	want, other := pIDAuto, pIDOfferta
	if service == publicshape.ServiceNLT {
		want, other = pIDOfferta, pIDAuto
	}
	v.forbid(other, "is not an identifier of "+service+"; pass "+paramNames[want])
	if !raw.has(want) {
		v.add(want, "is required for "+service)
		return p, v.failed()
	}
	if !v.present(want) {
		return p, v.failed()
	}
	if err := v.failed(); err != nil {
		return p, err
	}
	id := raw.val[want]
	if want == pIDAuto {
		if !validUUID(id) {
			return p, problemf(codeInvalidIdentifier, "id_auto must be a UUID")
		}
		p.idAuto = strings.ToLower(string(id))
		return p, nil
	}
	n, ok := parseDecimal(id)
	if !ok || n < 1 {
		return p, problemf(codeInvalidIdentifier, "id_offerta must be a positive integer, at most 9223372036854775807")
	}
	p.idOfferta = n
	return p, nil
}

// parseHub validates 4.3's parameters.
func parseHub(raw *rawParams) (params, *apiError) {
	v := validator{raw: raw}
	p := params{pageSize: v.integer(pPageSize, defaultPreviewPageSize, 1, maxPreviewPageSize)}
	return p, v.failed()
}

// parseSearch validates 4.4's parameters.
func parseSearch(raw *rawParams) (params, *apiError) {
	v := validator{raw: raw}
	p := params{pageSize: v.integer(pPageSize, defaultPreviewPageSize, 1, maxPreviewPageSize)}
	if !raw.has(pQ) {
		v.add(pQ, "is required")
		return p, v.failed()
	}
	before := len(v.errs)
	p.q = v.text(pQ, maxQLen)
	if len(v.errs) == before && utf8.RuneCountInString(p.q) < minSearchQ {
		v.add(pQ, "must be at least 2 characters long")
	}
	p.q = normalizeQuery(p.q)
	return p, v.failed()
}

// parseContentListing validates 4.5's parameters for a valid type.
func parseContentListing(raw *rawParams, contentType string) (params, *apiError) {
	v := validator{raw: raw}
	p := params{
		page:     v.integer(pPage, defaultPage, 1, maxPage),
		pageSize: v.integer(pPageSize, defaultListPageSize, 1, maxListPageSize),
		q:        normalizeQuery(v.text(pQ, maxQLen)),
	}
	switch contentType {
	case "faq", "news", "glossary":
		p.category = v.text(pCategory, maxFilterLen)
	default:
		v.forbid(pCategory, "is a filter of faq, news and glossary only")
	}
	if contentType == "guides" {
		p.topic = v.text(pTopic, maxFilterLen)
	} else {
		v.forbid(pTopic, "is a filter of guides only")
	}
	if contentType == "news" {
		p.brand = v.text(pBrand, maxFilterLen)
	} else {
		v.forbid(pBrand, "is a filter of news only")
	}
	return p, v.failed()
}

// parseContentDetails validates 4.6's parameters.
func parseContentDetails(raw *rawParams) (params, *apiError) {
	v := validator{raw: raw}
	var p params
	if !raw.has(pSlug) {
		v.add(pSlug, "is required")
		return p, v.failed()
	}
	if v.present(pSlug) {
		s := raw.val[pSlug]
		switch {
		case len(s) == 0:
			v.add(pSlug, "must be at least 1 character long")
		case !utf8.Valid(s):
			v.add(pSlug, "must be valid UTF-8")
		case utf8.RuneCount(s) > maxSlugLen: // characters, as the OpenAPI maxLength counts
			v.add(pSlug, "must be at most 1024 characters long")
		default:
			p.slug = string(s)
		}
	}
	return p, v.failed()
}

func isService(s string) bool {
	return s == publicshape.ServiceRewind || s == publicshape.ServiceNOS || s == publicshape.ServiceNLT
}

func isContentType(s string) bool {
	switch s {
	case "faq", "news", "glossary", "guides", "videos", "podcasts":
		return true
	}
	return false
}

// appendKey appends the normalised cache key of a request: the route, the
// path value and every parameter that shapes the response, defaults
// applied, in a fixed order, NUL-separated (text parameters cannot contain
// control characters, so the encoding is unambiguous).
func appendKey(dst []byte, route, pathValue string, p *params) []byte {
	dst = append(dst, route...)
	dst = append(dst, 0)
	dst = append(dst, pathValue...)
	dst = append(dst, 0, 'p')
	dst = strconv.AppendInt(dst, int64(p.page), 10)
	dst = append(dst, 0, 's')
	dst = strconv.AppendInt(dst, int64(p.pageSize), 10)
	dst = append(dst, 0, 'q')
	dst = append(dst, p.q...)
	dst = append(dst, 0, 'c')
	dst = append(dst, p.catalogType...)
	dst = append(dst, 0, 'u')
	dst = append(dst, p.upfit...)
	dst = append(dst, 0, 'a')
	dst = append(dst, p.idAuto...)
	dst = append(dst, 0, 'o')
	dst = strconv.AppendInt(dst, p.idOfferta, 10)
	dst = append(dst, 0, 'C')
	dst = append(dst, p.category...)
	dst = append(dst, 0, 'T')
	dst = append(dst, p.topic...)
	dst = append(dst, 0, 'B')
	dst = append(dst, p.brand...)
	dst = append(dst, 0, 'S')
	dst = append(dst, p.slug...)
	return dst
}
