package upstream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
)

// The inventory answers of the miss path (vehicle and offer pages and
// records) are decoded by a scanner made for their shapes: it walks the
// body once, switches on the member name bytes, cuts the strings it keeps
// from one copy of the body and skips every other value (internal-only
// fields such as source_ids, lookup_cascade, tech_data_dir, payloads) with
// a validating skip that builds nothing. No closure, no token, no
// allocation per member.
//
// It accepts exactly the inputs the jsontext field reader (decode.go)
// accepts and gives the same result: the same tokenizer rules (RFC 8259
// grammar, duplicate names allowed, invalid UTF-8 and \u escapes of lone
// surrogates allowed in strings and replaced by U+FFFD in the strings
// kept, nesting up to 10000), null for a zero value, the last of
// duplicate members winning (a repeated object merged into the first),
// nil for a null list and an empty slice for [].
// TestInventoryScannerEqualsFieldReader and FuzzInventoryScanner prove it
// against the field reader.

// maxNesting is jsontext's nesting limit: arrays and objects inside each
// other, the outermost counted.
const maxNesting = 10000

// errInventory reports a body that is not valid JSON of the shape asked.
var errInventory = errors.New("malformed inventory body")

// invScanner is one decoding: the body, the read position, and the
// arena the kept strings are copied to (the body belongs to the HTTP
// response and is reused after the call).
type invScanner struct {
	jsonCursor
	depth   int
	arena   []byte          // kept strings, appended (keep); the bytes of a string once made never change
	scratch []byte          // unquoting buffer of escaped strings
	records []ContentRecord // a content list's records as they are read (contentItems, contentKeys); zero up to its capacity while pooled: its users clear what they wrote
	spans   []contentSpan   // where each record of a content page is (contentKeys)
	floats  []float64       // the block floatPtr takes numbers from; never pooled
	names   [numShapes]nameMemo
	// With reuse (a VehiclePage with ReuseStrings), upfits is the block
	// the records' upfit lists are cut from (upfitList) and floatPtr's
	// blocks grow; owned reports that b is the page's own copy of the
	// body, which the strings without escapes are views of (keepBytes,
	// kept) instead of copies in the arena.
	upfits []Upfit
	reuse  bool
	owned  bool
	// stops is the stop map of b while one is in use (stopmap.go), else
	// nil; stopWords is its pooled storage.
	// highs is the map of the bytes beyond ASCII that goes with it.
	stops, highs, stopWords []uint64
	// counted reports that countObjects searched this body already.
	counted bool
}

var invScanners = sync.Pool{New: func() any { return new(invScanner) }}

// scanInventory decodes body into out when out is one of the inventory
// types the scanner knows; ok is false for any other type.
func scanInventory(body []byte, out any) (ok bool, err error) {
	switch out.(type) {
	case *VehiclePage, *Vehicle, *OfferPage, *offerListing, *Offer, *contentList:
	default:
		return false, nil
	}
	s := invScanners.Get().(*invScanner)
	page := reusedMemory(out)
	if page != nil {
		s.reuse = true
		s.upfits, s.floats = page.upfits[:0], page.floats[:0]
		if len(body) <= maxReusedBody {
			// The page keeps the body (a copy, unless roundTrip handed it
			// its own): its strings without escapes are views of it, one
			// copy of the body instead of one of each string.
			if len(body) != len(page.body) || unsafe.SliceData(body) != unsafe.SliceData(page.body) {
				page.body = append(page.body[:0], body...)
			}
			body, s.owned = page.body, true
		}
	}
	s.b, s.i, s.depth, s.counted = body, 0, 0, false
	// Only the strings kept are copied, into one arena (strings.Builder
	// does not zero what it allocates): about a third of a vehicle page
	// (names, syntax and internal fields are not kept), a tenth of an
	// offer page (mostly numeric quotations), most of a content list (its
	// summary texts). A larger need grows it.
	keep := len(body) / 3
	switch out.(type) {
	case *OfferPage, *offerListing:
		keep = len(body) / 6
	case *contentList:
		keep = len(body)
	}
	switch {
	case s.reuse && (s.owned || cap(page.arena) > 0):
		// Its strings are no longer in use (ReuseStrings). With the body
		// owned the arena holds only the strings unquoted: none in most
		// pages, so it is made when one is (keep, reserve).
		s.arena = page.arena[:0]
	default:
		s.newArena(keep + 64)
	}
	// The maps of the body's quotes, backslashes and control characters
	// and of its bytes beyond ASCII (stopmap.go), made in one vector pass:
	// the end of a string and whether it is ASCII are then looked up, not
	// scanned for.
	s.mapStops()
	switch o := out.(type) {
	case *VehiclePage:
		err = s.vehiclePage(o)
	case *Vehicle:
		err = s.vehicle(o)
	case *OfferPage:
		err = s.offerPage(o)
	case *offerListing:
		err = s.offerListing(o)
	case *Offer:
		err = s.offer(o)
	case *contentList:
		err = s.contentList(o)
	}
	if err == nil {
		s.ws()
		if s.i != len(s.b) {
			err = s.fail("data after the top-level value")
		}
	}
	if s.reuse {
		page.arena, page.upfits, page.floats = nil, nil, nil
		if cap(s.arena) <= maxReusedArena {
			page.arena = s.arena // the last block, the largest
		}
		if cap(s.upfits) <= maxReusedUpfits {
			page.upfits = s.upfits
		}
		if cap(s.floats) <= maxReusedFloats {
			page.floats = s.floats
		}
		if cap(page.body) > maxReusedBody {
			page.body = nil
		}
	}
	// Keep neither the body nor the strings nor the numbers in the pool.
	s.dropStops()
	s.b, s.floats, s.arena, s.upfits = nil, nil, nil, nil
	s.reuse, s.owned = false, false
	if cap(s.scratch) > 64<<10 {
		s.scratch = nil
	}
	invScanners.Put(s)
	return true, err
}

func (s *invScanner) fail(what string) error {
	return fmt.Errorf("%w: %s at byte %d", errInventory, what, s.i)
}

// peek skips white space and returns the next byte (0 at the end).
func (s *invScanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// literal reads w (true, false or null) at i.
func (s *invScanner) literal(w string) error {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return nil
	}
	return s.fail("invalid literal")
}

// open enters an array or object at i (its opening byte) within the
// nesting limit.
func (s *invScanner) open() error {
	if s.depth == maxNesting {
		return s.fail("exceeded max depth")
	}
	s.depth++
	s.i++
	return nil
}

// beginObject reads null (null is true) or the start of an object; any
// other value is an error.
func (s *invScanner) beginObject() (null bool, err error) {
	switch s.peek() {
	case '{':
		return false, s.open()
	case 'n':
		return true, s.literal("null")
	default:
		return false, s.fail("want a JSON object")
	}
}

// objectShape is the kind of object scanObject reads, for the member
// names it predicts (nameMemo).
type objectShape uint8

const (
	shapeTop objectShape = iota // a page or list around the records
	shapeContent
	shapeVehicle
	shapeUpfit
	shapeAIContent
	shapeOffer
	shapeQuotation
	numShapes
)

// The members each shape reads, by field id: memberAt gives a member's id
// (from the memo, or fieldID for a name it does not keep) and the field
// functions switch on it, a jump through a table rather than a string
// comparison per case. Id 0 is a member only checked and skipped.
const (
	topTotal uint8 = iota + 1
	topItems
)

const (
	cfId uint8 = iota + 1
	cfType
	cfDealerId
	cfSlug
	cfTopic
	cfCategory
	cfBrand
	cfTitle
	cfH1
	cfMetaDescription
	cfExcerpt
	cfBodyText
	cfUrl
	cfUpdatedAt
	cfSourceProvider
	cfOverrideOf
	cfHiddenForDealer
	cfMediaUrl
	cfThumbnailUrl
	cfDurationSeconds
	cfTranscript
)

const (
	vfIdAuto uint8 = iota + 1
	vfDealerId
	vfService
	vfMake
	vfModel
	vfTrim
	vfCatalogType
	vfVersionCode
	vfUpfits
	vfSalePriceEur
	vfCoverUrl
	vfMediaUrls
	vfHasPodcast
	vfHasVideo
	vfAiContent
	vfConfirmedOptionals
	vfConfirmedPackages
	vfUpdatedAt
)

const (
	ufCode uint8 = iota + 1
	ufSlug
	ufLabel
	ufDealerAlias
	ufFamily
	ufPrimary
)

const (
	afHeadline uint8 = iota + 1
	afDescription
	afHighlights
)

const (
	ofIdOfferta uint8 = iota + 1
	ofDealerId
	ofSlug
	ofMake
	ofModel
	ofVersion
	ofCoverUrl
	ofQuotations
	ofUpdatedAt
)

const (
	qfMonths uint8 = iota + 1
	qfKmPerYear
	qfMonthlyFeeEur
)

// shapeFields holds the names of each shape's members, by field id.
var shapeFields = [numShapes][]string{
	shapeTop: {
		topTotal: "total", topItems: "items",
	},
	shapeContent: {
		cfId: "id", cfType: "type", cfDealerId: "dealer_id", cfSlug: "slug", cfTopic: "topic", cfCategory: "category", cfBrand: "brand", cfTitle: "title", cfH1: "h1", cfMetaDescription: "meta_description", cfExcerpt: "excerpt", cfBodyText: "body_text", cfUrl: "url", cfUpdatedAt: "updated_at", cfSourceProvider: "source_provider", cfOverrideOf: "override_of", cfHiddenForDealer: "hidden_for_dealer", cfMediaUrl: "media_url", cfThumbnailUrl: "thumbnail_url", cfDurationSeconds: "duration_seconds", cfTranscript: "transcript",
	},
	shapeVehicle: {
		vfIdAuto: "id_auto", vfDealerId: "dealer_id", vfService: "service", vfMake: "make", vfModel: "model", vfTrim: "trim", vfCatalogType: "catalog_type", vfVersionCode: "version_code", vfUpfits: "upfits", vfSalePriceEur: "sale_price_eur", vfCoverUrl: "cover_url", vfMediaUrls: "media_urls", vfHasPodcast: "has_podcast", vfHasVideo: "has_video", vfAiContent: "ai_content", vfConfirmedOptionals: "confirmed_optionals", vfConfirmedPackages: "confirmed_packages", vfUpdatedAt: "updated_at",
	},
	shapeUpfit: {
		ufCode: "code", ufSlug: "slug", ufLabel: "label", ufDealerAlias: "dealer_alias", ufFamily: "family", ufPrimary: "primary",
	},
	shapeAIContent: {
		afHeadline: "headline", afDescription: "description", afHighlights: "highlights",
	},
	shapeOffer: {
		ofIdOfferta: "id_offerta", ofDealerId: "dealer_id", ofSlug: "slug", ofMake: "make", ofModel: "model", ofVersion: "version", ofCoverUrl: "cover_url", ofQuotations: "quotations", ofUpdatedAt: "updated_at",
	},
	shapeQuotation: {
		qfMonths: "months", qfKmPerYear: "km_per_year", qfMonthlyFeeEur: "monthly_fee_eur",
	},
}

// fieldID is the field id of a member name in an object of the given
// shape, 0 for a member the shape does not read.
func fieldID(shape objectShape, name string) uint8 {
	for id, n := range shapeFields[shape] {
		if id > 0 && n == name {
			return uint8(id)
		}
	}
	return 0
}

// Bounds of a nameMemo: the distinct names it keeps and the length of
// each.
const (
	maxMemoNames   = 96
	maxMemoNameLen = 64
)

// nameMemo predicts the member names of the objects of one shape. A
// service encodes every record of a kind with the same members in the same
// order, some of them optional, so the name after a given name is most
// likely the one that followed it last time: the next member's name is
// checked against that one, a comparison of its bytes, instead of being
// scanned as a string. Following names rather than positions, an absent
// optional member costs one miss, not a miss for every member after it.
// Only names whose JSON is their own bytes (no escape) are kept, so equal
// bytes are an equal name. The strings are copies (never views of a body),
// each distinct name copied once, and outlive a pooled scanner's use.
//
// Entry 0 of known, ids, pat and slots stands for the start of an object
// (before its first member); a name learnt is entry 1 on. A position in
// an object (memberAt's prev) is the entry of the name just read, 0
// before the first member, prevUnknown after a name the memo does not
// keep.
type nameMemo struct {
	known  []string    // known[i]: a distinct name learnt, at most maxMemoNames
	ids    []uint8     // ids[i]: known[i]'s field id in its shape (fieldID), 0 for a member only skipped
	pat    []namePat   // pat[i]: known[i] as words, for memberAt's comparison
	cpat   []memberPat // cpat[i]: known[i] as a member after a comma, `,"name":`, for the slots
	slots  []memoSlot  // slots[i]: the prediction after known[i]
	misses int         // names not as predicted (TestNameMemo)
	lead   []byte      // the predicted first member as compact JSON with its brace, `{"name":` (countObjects)
}

// memoSlot is the prediction after a name, kept together so that memberAt's
// common case is one load of it and a comparison: the predicted member as
// compact JSON (its pattern), its entry and its field id.
type memoSlot struct {
	next   memberPat // the predicted member: `,"name":` (`{"name":` after the start); n 0 for none or a long name
	nextAt int16     // the predicted name's entry; 0 none
	nextID uint8     // ids[nextAt]
}

// Values of memberAt's prev besides an entry of nameMemo.known.
const (
	prevStart   = 0  // before the first member
	prevUnknown = -1 // after a name the memo does not keep: no prediction
)

// predict returns the entry of the name expected after prev, or -1.
func (m *nameMemo) predict(prev int) int {
	if prev < 0 || prev >= len(m.slots) || m.slots[prev].nextAt == 0 {
		return -1
	}
	return int(m.slots[prev].nextAt)
}

// learn records that name followed prev in an object of the given shape
// and returns name's entry, copying it the first time the shape has it;
// prevUnknown when it cannot be kept (too long, or the memo is full).
func (m *nameMemo) learn(shape objectShape, prev int, name string) int {
	if len(m.known) == 0 {
		m.known, m.ids, m.pat, m.cpat, m.slots = []string{""}, []uint8{0}, []namePat{{}}, []memberPat{{}}, []memoSlot{{}}
	}
	idx := -1
	for i, n := range m.known[1:] {
		if n == name {
			idx = i + 1
			break
		}
	}
	if idx < 0 {
		if len(m.known) > maxMemoNames || len(name) > maxMemoNameLen {
			return prevUnknown
		}
		idx = len(m.known)
		m.known = append(m.known, strings.Clone(name))
		m.ids = append(m.ids, fieldID(shape, name))
		m.pat = append(m.pat, newNamePat(name))
		m.cpat = append(m.cpat, newMemberPat(',', name))
		m.slots = append(m.slots, memoSlot{})
	}
	if prev >= 0 && int(m.slots[prev].nextAt) != idx {
		m.slots[prev] = memoSlot{next: m.cpat[idx], nextAt: int16(idx), nextID: m.ids[idx]}
		if prev == prevStart {
			m.slots[prev].next = newMemberPat('{', name)
			m.lead = append(append(append(m.lead[:0], `{"`...), name...), `":`...)
		}
	}
	return idx
}

// size is the number of names the memo keeps.
func (m *nameMemo) size() int { return max(len(m.known)-1, 0) }

// namePat is a name of under 16 bytes and its closing quote as two
// little-endian words, with masks of the bytes that count: memberAt
// compares the next 16 bytes of the body with it in two steps instead of
// calling the runtime's comparison. A longer name has zero masks and is
// compared as a string.
type namePat struct{ w0, w1, m0, m1 uint64 }

func newNamePat(name string) namePat {
	if len(name) >= 16 {
		return namePat{}
	}
	var b, m [16]byte
	copy(b[:], name)
	b[len(name)] = '"'
	for i := range len(name) + 1 {
		m[i] = 0xFF
	}
	return namePat{
		w0: binary.LittleEndian.Uint64(b[:8]), w1: binary.LittleEndian.Uint64(b[8:]),
		m0: binary.LittleEndian.Uint64(m[:8]), m1: binary.LittleEndian.Uint64(m[8:]),
	}
}

// memberPat is a member of an object in compact JSON with the byte before
// it, lead: the comma (`,"name":`) or, for the first member, the opening
// brace (`{"name":`), at most 24 bytes (names of up to 20), as three
// little-endian words with masks of the bytes that count; n is its length,
// 0 for a longer name.
type memberPat struct {
	w0, w1, w2, m0, m1, m2 uint64
	n                      int
}

func newMemberPat(lead byte, name string) memberPat {
	const size = 24
	if len(name)+4 > size {
		return memberPat{}
	}
	var b, m [size]byte
	b[0], b[1] = lead, '"'
	k := 2
	k += copy(b[k:], name)
	k += copy(b[k:], `":`)
	for i := range k {
		m[i] = 0xFF
	}
	le := binary.LittleEndian
	return memberPat{
		w0: le.Uint64(b[:8]), w1: le.Uint64(b[8:16]), w2: le.Uint64(b[16:]),
		m0: le.Uint64(m[:8]), m1: le.Uint64(m[8:16]), m2: le.Uint64(m[16:]),
		n: k,
	}
}

// memberAt moves to the next member of an object of the given shape: it
// returns the member's field id in the shape (fieldID) and its name with
// the colon read (the scanner is then at the value), or more false after
// the closing brace. prev is the memo's entry of the previous name
// (prevStart before the first member, when the object's opening brace
// has just been read) and is moved to this one's. A name whose bytes
// equal the predicted one is taken as it is, any other is read as a
// string and learnt: the two accept and refuse the same input (a
// predicted name is a plain string, the colon is checked the same way).
func (s *invScanner) memberAt(shape objectShape, prev *int) (id uint8, name string, more bool, err error) {
	if id, ok := s.predicted(&s.names[shape], prev); ok {
		return id, s.names[shape].known[*prev], true, nil
	}
	return s.memberSlow(shape, prev)
}

// predicted is memberAt's common case, m the memo of the object's shape:
// a member named as predicted, in compact JSON: its pattern (the comma, or
// the opening brace before the first member, the quoted name and the
// colon) at the byte before it, compared as three words. It moves past it and to its entry and returns
// its field id; it moves nothing otherwise. memberSlow reads the same
// bytes to the same place.
func (s *invScanner) predicted(m *nameMemo, prev *int) (id uint8, ok bool) {
	pv := *prev
	if uint(pv) >= uint(len(m.slots)) {
		return 0, false
	}
	sl := &m.slots[pv]
	at := s.i
	if pv == prevStart {
		at-- // the brace, read by beginObject
	}
	if cp := &sl.next; cp.n != 0 && at+24 <= len(s.b) {
		w := s.b[at : at+24]
		le := binary.LittleEndian
		if (le.Uint64(w)^cp.w0)&cp.m0|(le.Uint64(w[8:])^cp.w1)&cp.m1|(le.Uint64(w[16:])^cp.w2)&cp.m2 == 0 {
			s.i = at + cp.n
			*prev = int(sl.nextAt)
			return sl.nextID, true
		}
	}
	return 0, false
}

// memberSlow is memberAt past its common case: white space, a name not
// as predicted (read as a string and learnt), the end of the object.
func (s *invScanner) memberSlow(shape objectShape, prev *int) (id uint8, name string, more bool, err error) {
	m := &s.names[shape]
	pv := *prev
	first := pv == prevStart
	p := m.predict(pv) // the name expected here, or -1
	c := s.peek()
	if c == '}' {
		s.i++
		s.depth--
		return 0, "", false, nil
	}
	if !first {
		if c != ',' {
			return 0, "", false, s.fail("want ',' or '}' after an object value")
		}
		s.i++
		c = s.peek()
	}
	if c != '"' {
		return 0, "", false, s.fail("want a member name")
	}
	if p > 0 {
		n, at := m.known[p], s.i+1
		if pt := &m.pat[p]; pt.m0 != 0 && at+16 <= len(s.b) {
			// The name and its closing quote, as two words.
			if (binary.LittleEndian.Uint64(s.b[at:])^pt.w0)&pt.m0 == 0 &&
				(binary.LittleEndian.Uint64(s.b[at+8:])^pt.w1)&pt.m1 == 0 {
				s.i = at + len(n) + 1
				name, id = n, m.ids[p]
				*prev = p
			}
		} else if end := at + len(n); end < len(s.b) && s.b[end] == '"' && string(s.b[at:end]) == n {
			s.i = end + 1
			name, id = n, m.ids[p]
			*prev = p
		}
	}
	if name == "" {
		m.misses++
		var inBody bool
		if name, inBody, err = s.stringView(); err != nil {
			return 0, "", false, err
		}
		if inBody && name != "" {
			if *prev = m.learn(shape, pv, name); *prev > 0 {
				id = m.ids[*prev]
			} else {
				id = fieldID(shape, name)
			}
		} else {
			*prev = prevUnknown
			id = fieldID(shape, name)
		}
	}
	if s.peek() != ':' {
		return 0, "", false, s.fail("want ':' after a member name")
	}
	s.i++
	return id, name, true, nil
}

// beginArray reads null (null is true) or the start of an array.
func (s *invScanner) beginArray() (null bool, err error) {
	switch s.peek() {
	case '[':
		return false, s.open()
	case 'n':
		return true, s.literal("null")
	default:
		return false, s.fail("want a JSON array")
	}
}

// element moves to the next element of the array being read, or returns
// false after the closing bracket.
func (s *invScanner) element(first *bool) (more bool, err error) {
	c := s.peek()
	if c == ']' {
		s.i++
		s.depth--
		return false, nil
	}
	if *first {
		*first = false
	} else {
		if c != ',' {
			return false, s.fail("want ',' or ']' after an array element")
		}
		s.i++
		c = s.peek()
	}
	if c == 0 {
		return false, s.fail("unexpected end of input")
	}
	return true, nil
}

// scanList reads an array of T into *dst the way the field reader does: null
// is a nil slice, [] an empty one; the elements reuse *dst's room and
// start from their zero value; elem reads one element.
func scanList[T any](s *invScanner, dst *[]T, elem func(*invScanner, *T) error) error {
	null, err := s.beginArray()
	if err != nil {
		return err
	}
	if null {
		*dst = nil
		return nil
	}
	l := (*dst)[:0]
	defer func() { *dst = l }()
	if l == nil {
		l = []T{}
	}
	first := true
	for {
		more, err := s.element(&first)
		if err != nil || !more {
			return err
		}
		if cap(l) == 0 {
			l = make([]T, 0, 2) // upfits and string lists are short: room for two at once
		}
		var zero T
		l = append(l, zero)
		if err := elem(s, &l[len(l)-1]); err != nil {
			return err
		}
	}
}

// scanCounted is scanList for a page's records (large structs) into a
// slice with no room yet: the result is made at the size countObjects
// counts, not grown from two by doubling (each growth copying and zeroing
// every record so far), and trimmed to the records' room when the count
// was far over. A slice with room (a pooled page) is filled as scanList
// fills it.
func scanCounted[T any](s *invScanner, dst *[]T, shape objectShape, elem func(*invScanner, *T) error) error {
	if cap(*dst) > 0 {
		return scanList(s, dst, elem)
	}
	n := s.countObjects(shape)
	if n == 0 {
		return scanList(s, dst, elem)
	}
	*dst = make([]T, 0, n)
	err := scanList(s, dst, elem)
	if l := *dst; l != nil && cap(l) > len(l)+len(l)/4+4 {
		*dst = append(make([]T, 0, len(l)), l...)
	}
	return err
}

// strSafe marks the bytes that a string can hold as they are: not a
// quote, a backslash, a control character or a byte beyond ASCII.
var strSafe = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// safeRun returns the end of the run of bytes from j on that a string
// holds as they are (strSafe), sixteen at a time while it can.
func safeRun(b []byte, j int) int {
	for ; j+16 <= len(b); j += 16 {
		if m := unsafeBytes(binary.LittleEndian.Uint64(b[j:])); m != 0 {
			return j + bits.TrailingZeros64(m)/8
		}
		if m := unsafeBytes(binary.LittleEndian.Uint64(b[j+8:])); m != 0 {
			return j + 8 + bits.TrailingZeros64(m)/8
		}
	}
	for j < len(b) && strSafe[b[j]] {
		j++
	}
	return j
}

// unsafeBytes has the high bit set of the lowest byte of the eight in x
// (little-endian) that safeRun stops at: a quote or a backslash (zero
// after the xor), a control character (below 0x20) or a byte beyond
// ASCII; bits above it may be wrong. A byte beyond ASCII keeps its high
// bit through the xor and the subtraction (and does not borrow); below
// the first one no byte has its high bit, so a byte's high bit after the
// subtractions is that byte's own verdict (a borrow starts only at a
// flagged byte).
func unsafeBytes(x uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	q := x ^ (lo * '"')
	e := x ^ (lo * '\\')
	return ((q - lo) | (e - lo) | (x - lo*0x20)) & hi
}

// skipStringFast moves past the string at i (its opening quote) when
// its escapes are ones unquoteFast reads and it has no control character,
// without copying, decoding or validating it as UTF-8: most of a content
// record's text is skipped. The UTF-8 check is not needed for a string
// that is only skipped: such a string is accepted by the general path
// too, valid UTF-8 or not (stringView reads invalid UTF-8 as the field
// reader does, with AllowInvalidUTF8), and ends at the same quote
// (TestSkipStringFast, FuzzSkipStringFast). It reports false and moves
// nothing on anything else (a control character, a bad escape or a lone
// surrogate, the end of the input); skipString's slower paths then
// decide, errors included.
func (s *invScanner) skipStringFast() bool {
	b := s.b
	n := s.i + 1
	for {
		k := s.stopFrom(n)
		if k >= len(b) {
			return false
		}
		switch b[k] {
		case '"':
			s.i = k + 1
			return true
		case '\\':
			_, width, ok := escape(b, k)
			if !ok {
				return false
			}
			n = k + width
		default: // a control character
			return false
		}
	}
}

// stopRun returns the end of the run of bytes from j on that skipping a
// string passes over: anything but a quote, a backslash or a control
// character, bytes beyond ASCII included: the first 32 bytes a word at a
// time (most member values are short, and below about 40 bytes the words
// beat the vector call, BenchmarkStopRun), then 32 at a time with AVX2
// (stopBlocks), else sixteen at a time while it can.
func stopRun(b []byte, j int) int {
	vector := j + 32 // where stopBlocks takes over
	for ; j+16 <= len(b); j += 16 {
		if j == vector {
			if j = stopBlocks(b, j); j+16 > len(b) {
				break
			}
		}
		if m := stopBytes(binary.LittleEndian.Uint64(b[j:])); m != 0 {
			return j + bits.TrailingZeros64(m)/8
		}
		if m := stopBytes(binary.LittleEndian.Uint64(b[j+8:])); m != 0 {
			return j + 8 + bits.TrailingZeros64(m)/8
		}
	}
	for ; j < len(b); j++ {
		if c := b[j]; c < 0x80 && !strSafe[c] {
			break
		}
	}
	return j
}

// stopBytes has the high bit set of the lowest byte of the eight in x
// (little-endian) that stopRun stops at: a quote or a backslash (zero
// after the xor) or a control character (below 0x20); bits above it may
// be wrong. A byte beyond ASCII is none of them (^x clears its bit), keeps
// its high bit through the xors and does not borrow, so a borrow starts
// only at a flagged byte.
func stopBytes(x uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	q := x ^ (lo * '"')
	e := x ^ (lo * '\\')
	return ((q - lo) | (e - lo) | (x - lo*0x20)) &^ x & hi
}

// stringBody reads a string at i (its opening quote) and returns its
// value: copied into the arena when arena is set (a value that outlives
// the body), else, without escapes, a view of the body; an escaped string
// is unquoted into a string of its own either way.
func (s *invScanner) stringBody(arena bool) (string, error) {
	start := s.i
	j := safeRun(s.b, start+1)
	if j < len(s.b) && s.b[j] == '"' { // the common case: no escape, ASCII
		s.i = j + 1
		return s.kept(bytesString(s.b[start+1:j]), arena), nil
	}
	if j < len(s.b) && s.b[j] >= 0x80 {
		// Text beyond ASCII (accented words) without escapes: when the
		// bytes up to the closing quote are valid UTF-8 they are the
		// string as they are, which is what unquoteFast would copy out.
		if k := stopRun(s.b, j); k < len(s.b) && s.b[k] == '"' && utf8.Valid(s.b[j:k]) {
			s.i = k + 1
			return s.kept(bytesString(s.b[start+1:k]), arena), nil
		}
	}
	if s.unquoteFast(start, j) {
		if arena {
			return s.keep(bytesString(s.scratch)), nil
		}
		return string(s.scratch), nil
	}
	v, inBody, err := s.stringView()
	if inBody {
		v = s.kept(v, arena)
	}
	return v, err
}

// kept is v, a view of the body, copied into the arena when arena is set
// and the body is not the result's own (owned).
func (s *invScanner) kept(v string, arena bool) string {
	if arena && !s.owned {
		return s.keep(v)
	}
	return v
}

// unquoteFast reads the string at start (its opening quote), whose bytes
// up to j hold as they are (safeRun), and unquotes it into s.scratch in
// one pass, when it is valid UTF-8 and its escapes are valid and stand
// for Unicode scalar values (a \u surrogate only as half of a pair): what
// jsontext.AppendUnquote gives for such a string (FuzzUnquoteFast). On
// anything else (invalid UTF-8, a lone surrogate, a bad escape, a control
// character, the end of the input) it reports false and moves nothing:
// stringView then validates and unquotes the string as the field reader
// does, errors included.
func (s *invScanner) unquoteFast(start, j int) bool {
	b := s.b
	if j > len(b) {
		return false
	}
	out := append(s.scratch[:0], b[start+1:j]...)
	n := j
	for n < len(b) {
		switch c := b[n]; {
		case c == '"':
			s.scratch = out
			s.i = n + 1
			return true
		case c == '\\':
			r, width, ok := escape(b, n)
			if !ok {
				s.scratch = out[:0]
				return false
			}
			out = utf8.AppendRune(out, r)
			n += width
		case c >= 0x80:
			r, size := utf8.DecodeRune(b[n:])
			if r == utf8.RuneError && size == 1 {
				s.scratch = out[:0]
				return false
			}
			out = append(out, b[n:n+size]...)
			n += size
		default: // a control character
			s.scratch = out[:0]
			return false
		}
		k := safeRun(b, n)
		out = append(out, b[n:k]...)
		n = k
	}
	s.scratch = out[:0]
	return false
}

// escape reads the escape at b[k] (its backslash) as unquoteFast takes
// it: one of the simple escapes, or a \u escape that stands for a Unicode
// scalar value (a surrogate only as the high half of a pair followed by
// the low half). It returns the rune and the escape's width in bytes, or
// ok false for anything else (a bad escape, a lone surrogate, the end of
// the input).
func escape(b []byte, k int) (r rune, width int, ok bool) {
	if k+1 >= len(b) {
		return 0, 0, false
	}
	switch e := b[k+1]; e {
	case '"', '\\', '/':
		return rune(e), 2, true
	case 'b':
		return '\b', 2, true
	case 'f':
		return '\f', 2, true
	case 'n':
		return '\n', 2, true
	case 'r':
		return '\r', 2, true
	case 't':
		return '\t', 2, true
	case 'u':
		r, ok := hex4(b, k+2)
		if !ok {
			return 0, 0, false
		}
		if r < 0xD800 || r > 0xDFFF {
			return r, 6, true
		}
		r2, ok := hex4(b, k+8)
		if !ok || r >= 0xDC00 || b[k+6] != '\\' || b[k+7] != 'u' || r2 < 0xDC00 || r2 > 0xDFFF {
			return 0, 0, false
		}
		return 0x10000 + (r-0xD800)<<10 + (r2 - 0xDC00), 12, true
	}
	return 0, 0, false
}

// hex4 returns the value of the four hex digits at b[i:i+4]; ok is false
// when there are not four or one is not a hex digit.
func hex4(b []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// stringView reads a string at i (its opening quote) and returns its
// value: a view of the body (inBody) when it has no escape and valid
// UTF-8, valid while the body is, else unquoted the way the field reader
// does it into a string of its own (invalid UTF-8 and a \u escape of a
// lone surrogate become U+FFFD).
func (s *invScanner) stringView() (v string, inBody bool, err error) {
	start := s.i
	j := safeRun(s.b, start+1)
	if j < len(s.b) && s.b[j] == '"' {
		s.i = j + 1
		return bytesString(s.b[start+1 : j]), true, nil
	}
	s.i = start
	end, err := s.consumeString()
	if err != nil {
		return "", false, err
	}
	q := s.b[start:end]
	body := q[1 : len(q)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return bytesString(body), true, nil
	}
	if utf8.Valid(body) {
		if s.scratch, err = jsontext.AppendUnquote(s.scratch[:0], q); err == nil {
			return string(s.scratch), false, nil
		}
		// A lone surrogate (\ud83d), which AppendUnquote refuses and the
		// field reader makes U+FFFD (unquoteLenient).
	}
	out, err := unquoteLenient(q)
	return out, false, err
}

// consumeString validates the string at i as jsontext does with invalid
// UTF-8 allowed (escapes checked, control characters refused, surrogates
// not paired) and moves past it; it returns the new position.
func (s *invScanner) consumeString() (int, error) {
	b := s.b
	n := s.i + 1
	for n < len(b) {
		n = safeRun(b, n)
		if n >= len(b) {
			break
		}
		c := b[n]
		switch {
		case c >= 0x80:
			n++
		case c == '"':
			s.i = n + 1
			return s.i, nil
		case c == '\\':
			if n+1 >= len(b) {
				s.i = n
				return 0, s.fail("unexpected end of input in a string")
			}
			switch b[n+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				n += 2
			case 'u':
				if n+6 > len(b) || !isHex4(b[n+2:n+6]) {
					s.i = n
					return 0, s.fail("invalid escape sequence in a string")
				}
				n += 6
			default:
				s.i = n
				return 0, s.fail("invalid escape sequence in a string")
			}
		default: // a control character
			s.i = n
			return 0, s.fail("invalid character in a string")
		}
	}
	s.i = n
	return 0, s.fail("unexpected end of input in a string")
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// newArena gives the scanner an arena of its own with room for n bytes.
// An arena is never reused, but by a VehiclePage with ReuseStrings: the
// strings made from it belong to the decoded values.
func (s *invScanner) newArena(n int) { s.arena = make([]byte, 0, n) }

// keep returns a copy of v in the arena: a string over the arena's bytes,
// which nothing writes again (the arena only grows at its end, and a full
// one is replaced by a new block rather than moved, so the strings made
// keep the old one).
func (s *invScanner) keep(v string) string {
	if len(v) == 0 {
		return ""
	}
	n := len(s.arena)
	if cap(s.arena)-n < len(v) {
		s.newArena(max(2*cap(s.arena), len(v), 1024))
		n = 0
	}
	s.arena = append(s.arena, v...)
	return unsafe.String(&s.arena[n], len(v))
}

// maxReusedArena bounds the arena a VehiclePage keeps for its next
// decoding (ReuseStrings), so that one huge page does not pin its memory:
// the strings of a 100-item summary page of the fake's corpus take about
// 21 KB.
const maxReusedArena = 64 << 10

// Bounds of the rest a VehiclePage keeps for its next decoding
// (ReuseStrings): the body it owns (a 100-item summary page of the fake's
// corpus is about 68 KB; a larger body is not kept, its strings copied
// into the arena as without ReuseStrings), its upfits' block and its
// prices' block.
const (
	maxReusedBody   = 256 << 10
	maxReusedUpfits = 1024
	maxReusedFloats = 1024
)

// ReuseStrings makes every later decoding into p cut the strings of its
// records, their upfit lists and their prices from the memory of the last
// one's instead of allocating it anew: the page keeps a copy of the body
// (up to maxReusedBody), which the strings without escapes are views of,
// and the blocks the rest were cut from (up to maxReusedArena,
// maxReusedUpfits, maxReusedFloats). A decoding overwrites them. It is for
// a caller that decodes into one pooled page again and again (the edge's
// listing fill) and keeps no string, upfit list or price of p's records,
// nor anything that refers to one, once it decodes into p again or gives
// p back to its pool: what it builds from the records it copies (a body
// encoded from them).
func (p *VehiclePage) ReuseStrings() { p.mem.reuse = true }

// ReuseStrings is VehiclePage.ReuseStrings for an offer page that
// ListOffersInto decodes into.
func (p *OfferPage) ReuseStrings() { p.mem.reuse = true }

// reusedMemory is the memory out keeps for its next decoding when it is a
// page decoded with ReuseStrings (a VehiclePage, or an OfferPage read as a
// listing), else nil.
func reusedMemory(out any) *pageMemory {
	var m *pageMemory
	switch p := out.(type) {
	case *VehiclePage:
		m = &p.mem
	case *offerListing:
		m = &p.mem
	default:
		return nil
	}
	if !m.reuse {
		return nil
	}
	return m
}

// keepBytes is keep for bytes of the body: a view of them when the body is
// the result's own (owned).
func (s *invScanner) keepBytes(v []byte) string {
	if s.owned {
		return bytesString(v)
	}
	return s.keep(bytesString(v))
}

// str reads a string into the arena (a view of a body the result owns);
// null is "". The common cases (a string right at i: ASCII, text beyond
// ASCII, escapes) are read by keepString, the commonest of them (short,
// ASCII, no escape) looked up here in one word of the maps without its
// calls; anything else by strIn (TestKeepString, FuzzKeepString).
func (s *invScanner) str() (string, error) {
	if i := s.i; i < len(s.b) && s.b[i] == '"' {
		// keepString's common case, looked up in one word of each map: a
		// string that ends at a quote in the same word of the stop map
		// as its first byte, with no byte beyond ASCII (most values are
		// short). It is what keepString gives for it.
		if j := i + 1; j>>6 < len(s.stops) {
			w, sh := j>>6, uint(j)&63
			if x := s.stops[w] >> sh; x != 0 {
				n := bits.TrailingZeros64(x)
				if k := j + n; s.b[k] == '"' && s.highs[w]>>sh&(1<<n-1) == 0 {
					s.i = k + 1
					return s.keepBytes(s.b[j:k]), nil
				}
			}
		}
		if v, ok := s.keepString(); ok {
			return v, nil
		}
	}
	return s.strIn(true)
}

// keepString reads the string at i (its opening quote) into the arena in
// one pass when its bytes are valid UTF-8 and its escapes are ones
// unquoteFast takes: the value stringBody gives (the bytes as they are,
// each escape as escape reads it), without unquoteFast's copy through the
// scratch buffer and its rune-by-rune reading of text beyond ASCII. With
// the body's maps (stopmap.go) the end of each run and whether it is ASCII
// are looked up; without them ASCII is found sixteen bytes at a time
// (safeRun) and the rest of a text by stopRun. A run beyond ASCII is
// checked by utf8.Valid (a UTF-8 sequence never spans an escape, whose
// bytes are ASCII). On anything else (a control character, invalid
// UTF-8, a bad escape or a lone surrogate, the end of the input) it
// reports false and moves nothing, the arena's strings as they were:
// stringBody's slower paths then decide, errors included (TestKeepString,
// FuzzKeepString, with and without the maps).
func (s *invScanner) keepString() (string, bool) {
	b, i := s.b, s.i
	var k int // the first quote, backslash or control character
	if s.stops != nil {
		// From the maps: where the run ends and whether it is ASCII.
		if k = s.stopFrom(i + 1); k >= len(b) || !s.asciiRun(i+1, k) && !utf8.Valid(b[i+1:k]) {
			return "", false
		}
	} else if k = safeRun(b, i+1); k < len(b) && b[k] >= 0x80 {
		j := k
		if k = stopRun(b, k); k >= len(b) || !utf8.Valid(b[j:k]) {
			return "", false
		}
	}
	if k < len(b) && b[k] == '"' { // the common case: no escape
		s.i = k + 1
		return s.keepBytes(b[i+1 : k]), true
	}
	if k >= len(b) || b[k] != '\\' {
		return "", false
	}
	// Escapes: the runs between them and the runes they stand for are
	// appended to the arena from mark on.
	mark := s.reserve(len(s.arena), k-i-1+utf8.UTFMax)
	s.arena = append(s.arena, b[i+1:k]...)
	for n := k; ; {
		r, width, ok := escape(b, n)
		if !ok {
			s.arena = s.arena[:mark]
			return "", false
		}
		mark = s.reserve(mark, utf8.UTFMax)
		s.arena = utf8.AppendRune(s.arena, r)
		n += width
		k = s.stopFrom(n)
		if k >= len(b) || b[k] < ' ' || !s.validRun(n, k) {
			s.arena = s.arena[:mark]
			return "", false
		}
		mark = s.reserve(mark, k-n)
		s.arena = append(s.arena, b[n:k]...)
		if b[k] == '"' {
			s.i = k + 1
			return unsafe.String(&s.arena[mark], len(s.arena)-mark), true
		}
		n = k // a backslash
	}
}

// validRun reports whether the bytes of s.b from i to j are valid UTF-8:
// at once when the map of bytes beyond ASCII has none there.
func (s *invScanner) validRun(i, j int) bool {
	if s.highs != nil && s.asciiRun(i, j) {
		return true
	}
	return utf8.Valid(s.b[i:j])
}

// reserve makes room for n more bytes at the end of the arena, whose
// bytes from mark on are a value being made: when the arena is full they
// are moved to a new block (the strings made before keep the old one). It
// returns where the value now starts.
func (s *invScanner) reserve(mark, n int) int {
	if cap(s.arena)-len(s.arena) >= n {
		return mark
	}
	part := s.arena[mark:]
	s.newArena(max(2*cap(s.arena), len(part)+n, 1024))
	s.arena = append(s.arena, part...)
	return 0
}

// keyStr is str for a value used only while the body is being read
// (ContentPage's keys, dropped before decodeBody returns): a string
// without escapes is a view of the body, not a copy in the arena.
//
// With the body's maps (contentKeys makes them) the common case, a string
// right at i without escapes and valid UTF-8, is looked up here: the view
// stringBody gives for it.
func (s *invScanner) keyStr() (string, error) {
	if i := s.i; s.stops != nil && i < len(s.b) && s.b[i] == '"' {
		if k := s.stopFrom(i + 1); k < len(s.b) && s.b[k] == '"' && s.validRun(i+1, k) {
			s.i = k + 1
			return bytesString(s.b[i+1 : k]), nil
		}
	}
	return s.strIn(false)
}

// strIn reads a string (stringBody) or null ("").
func (s *invScanner) strIn(arena bool) (string, error) {
	switch s.peek() {
	case '"':
		return s.stringBody(arena)
	case 'n':
		return "", s.literal("null")
	default:
		return "", s.fail("want a string")
	}
}

// numberLiteral reads a number of the JSON grammar at i and returns its
// text.
func (s *invScanner) numberLiteral() (string, error) {
	start := s.i
	if s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case !s.digits():
		return "", s.fail("invalid number")
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return "", s.fail("invalid number")
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return "", s.fail("invalid number")
		}
	}
	return bytesString(s.b[start:s.i]), nil // parsed at once, never kept
}

// number reads a number (ok) or null (not ok).
func (s *invScanner) number() (lit string, ok bool, err error) {
	switch c := s.peek(); {
	case c == '-' || '0' <= c && c <= '9':
		lit, err = s.numberLiteral()
		return lit, err == nil, err
	case c == 'n':
		return "", false, s.literal("null")
	default:
		return "", false, s.fail("want a number")
	}
}

// smallUint reads, in place, a number of 1 to maxDigits digits without
// sign, fraction or exponent and not starting with 0: the common case of
// ids (int64, up to 18 digits) and of prices in whole euros (floatPtr, up
// to 15, exact as a float64, which is what strconv.ParseFloat gives).
// Anything else leaves the scanner where it was, for the general path.
func (s *invScanner) smallUint(maxDigits int) (uint64, bool) {
	s.peek()
	i := s.i
	if i >= len(s.b) || s.b[i] < '1' || s.b[i] > '9' {
		return 0, false
	}
	var v uint64
	j := i
	for ; j < len(s.b) && j-i < maxDigits && '0' <= s.b[j] && s.b[j] <= '9'; j++ {
		v = v*10 + uint64(s.b[j]-'0')
	}
	if j < len(s.b) && (s.b[j] == '.' || s.b[j] == 'e' || s.b[j] == 'E' || '0' <= s.b[j] && s.b[j] <= '9') {
		return 0, false
	}
	s.i = j
	return v, true
}

func (s *invScanner) int64() (int64, error) {
	// The common case (ids) read in place; anything else, and any error,
	// is read by the general path below.
	if v, ok := s.smallUint(18); ok {
		return int64(v), nil
	}
	lit, ok, err := s.number()
	if !ok {
		return 0, err
	}
	return strconv.ParseInt(lit, 10, 64)
}

func (s *invScanner) int() (int, error) {
	n, err := s.int64()
	if err == nil && int64(int(n)) != n {
		return 0, strconv.ErrRange
	}
	return int(n), err
}

func (s *invScanner) float() (float64, error) {
	lit, ok, err := s.number()
	if !ok {
		return 0, err
	}
	return strconv.ParseFloat(lit, 64)
}

// floatPtr reads a number or null (nil).
func (s *invScanner) floatPtr() (*float64, error) {
	var f float64
	if v, ok := s.smallUint(15); ok {
		f = float64(v) // exact: below 2^53
	} else {
		lit, ok, err := s.number()
		if !ok {
			return nil, err
		}
		if f, err = strconv.ParseFloat(lit, 64); err != nil {
			return nil, err
		}
	}
	// From a block of the decoding's own (a price per vehicle: one
	// allocation per 32 instead of one each). The block is never reused:
	// the pointers belong to the result.
	if len(s.floats) == cap(s.floats) {
		n := 32
		if s.reuse {
			// The page keeps the last block (ReuseStrings): growing it
			// makes that one room for a whole page.
			n = max(n, 2*cap(s.floats))
		}
		s.floats = make([]float64, 0, n)
	}
	s.floats = append(s.floats, f)
	return &s.floats[len(s.floats)-1], nil
}

// bool reads true, false or null (false).
func (s *invScanner) bool() (bool, error) {
	switch s.peek() {
	case 't':
		return true, s.literal("true")
	case 'f':
		return false, s.literal("false")
	case 'n':
		return false, s.literal("null")
	default:
		return false, s.fail("want a boolean")
	}
}

// time reads an RFC 3339 timestamp (null is the zero time).
func (s *invScanner) time() (time.Time, error) {
	switch s.peek() {
	case 'n':
		return time.Time{}, s.literal("null")
	case '"':
	default:
		return time.Time{}, s.fail("want a string")
	}
	if t, ok := utcSeconds(s.b, s.i); ok {
		s.i += len(`"2006-01-02T15:04:05Z"`)
		return t, nil
	}
	v, _, err := s.stringView()
	if err != nil {
		return time.Time{}, err
	}
	t, err := parseTimestamp(v)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad timestamp %q", v)
	}
	return t, nil
}

func (s *invScanner) strings(dst *[]string) error {
	*dst = nil
	return scanList(s, dst, func(s *invScanner, v *string) (err error) {
		*v, err = s.str()
		return err
	})
}

// skipStr validates and moves past the string at i (a value or a member
// name of a skipped container) without keeping it. Whatever the copy-free
// skip takes consumeString takes too, and ends at the same quote (no
// control character, escapes it reads).
func (s *invScanner) skipStr() error {
	if s.skipStringFast() {
		return nil
	}
	_, err := s.consumeString()
	return err
}

// skip validates and moves past one value of any kind: an array or an
// object by skipContainer when it takes it, anything else (and whatever
// skipContainer leaves) by skipValue.
func (s *invScanner) skip() error {
	if c := s.peek(); (c == '{' || c == '[') && s.skipContainer() {
		return nil
	}
	return s.skipValue()
}

// skipContainer moves past the array or object at i (its opening byte)
// in one loop, its nesting kept as bits rather than a call per value, when
// it is valid JSON at most 64 levels deep: it checks what skipValue checks
// (the grammar, white space included, strings by skipStringFast, numbers
// by numberLiteral, literals, the nesting limit). It reports false and
// moves nothing on anything else (an error of any kind, a string
// skipStringFast leaves to the general path, deeper nesting); skipValue
// then decides, errors included. Internal members (source_ids,
// lookup_cascade, payloads) are skipped here.
func (s *invScanner) skipContainer() bool {
	start := s.i
	end, ok := s.containerEnd(start)
	if !ok {
		s.i = start
		return false
	}
	s.i = end
	return true
}

// containerEnd is skipContainer's loop: the end of the array or object at
// i, or false. It moves s.i (skipStringFast and numberLiteral read there).
func (s *invScanner) containerEnd(i int) (int, bool) {
	b := s.b
	var objs uint64 // bit k: the container open at level k is an object
	d := 0          // containers open
	var c byte
value: // a value at i, after white space
	i = wsFrom(b, i)
	if i >= len(b) {
		return 0, false
	}
	switch c = b[i]; {
	case c == '{' || c == '[':
		if d == 64 || s.depth+d >= maxNesting {
			return 0, false
		}
		if c == '{' {
			objs |= 1 << d
		} else {
			objs &^= 1 << d
		}
		d++
		if i = wsFrom(b, i+1); i >= len(b) {
			return 0, false
		}
		if c == '{' {
			if b[i] == '}' {
				i++
				d--
				goto after
			}
			goto name
		}
		if b[i] == ']' {
			i++
			d--
			goto after
		}
		goto value
	case c == '"':
		if s.i = i; !s.skipStringFast() {
			return 0, false
		}
		i = s.i
	case c == '-' || '0' <= c && c <= '9':
		if s.i = i; s.numberEnd() {
			return 0, false
		}
		i = s.i
	case c == 't':
		if !hasLiteral(b, i, "true") {
			return 0, false
		}
		i += len("true")
	case c == 'f':
		if !hasLiteral(b, i, "false") {
			return 0, false
		}
		i += len("false")
	case c == 'n':
		if !hasLiteral(b, i, "null") {
			return 0, false
		}
		i += len("null")
	default:
		return 0, false
	}
after: // a value has been read, up to i
	if d == 0 {
		return i, true
	}
	if i = wsFrom(b, i); i >= len(b) {
		return 0, false
	}
	c = b[i]
	if objs&(1<<(d-1)) != 0 {
		switch c {
		case ',':
			i = wsFrom(b, i+1)
			goto name
		case '}':
			i++
			d--
			goto after
		}
		return 0, false
	}
	switch c {
	case ',':
		i++
		goto value
	case ']':
		i++
		d--
		goto after
	}
	return 0, false
name: // a member name at i, white space read
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	if s.i = i; !s.skipStringFast() {
		return 0, false
	}
	if i = wsFrom(b, s.i); i >= len(b) || b[i] != ':' {
		return 0, false
	}
	i++
	goto value
}

// numberEnd moves past the number at i as numberLiteral reads it; it
// reports true for an invalid number.
func (s *invScanner) numberEnd() (bad bool) {
	_, err := s.numberLiteral()
	return err != nil
}

// hasLiteral reports whether b holds w at i.
func hasLiteral(b []byte, i int, w string) bool {
	return len(b)-i >= len(w) && string(b[i:i+len(w)]) == w
}

// wsFrom is the end of the JSON white space at i.
func wsFrom(b []byte, i int) int {
	for i < len(b) && b[i] <= ' ' {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue validates and moves past one value of any kind, the general
// way.
func (s *invScanner) skipValue() error {
	switch c := s.peek(); c {
	case '"':
		return s.skipStr()
	case '{':
		if err := s.open(); err != nil {
			return err
		}
		first := true
		for {
			c := s.peek()
			if c == '}' {
				s.i++
				s.depth--
				return nil
			}
			if first {
				first = false
			} else {
				if c != ',' {
					return s.fail("want ',' or '}' after an object value")
				}
				s.i++
				c = s.peek()
			}
			if c != '"' {
				return s.fail("want a member name")
			}
			if err := s.skipStr(); err != nil {
				return err
			}
			if s.peek() != ':' {
				return s.fail("want ':' after a member name")
			}
			s.i++
			if err := s.skipValue(); err != nil {
				return err
			}
		}
	case '[':
		if err := s.open(); err != nil {
			return err
		}
		first := true
		for {
			more, err := s.element(&first)
			if err != nil || !more {
				return err
			}
			if err := s.skipValue(); err != nil {
				return err
			}
		}
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		if c == '-' || '0' <= c && c <= '9' {
			_, err := s.numberLiteral()
			return err
		}
		return s.fail("want a JSON value")
	}
}

// named wraps the error of a member's value with its name, as the field
// reader does.
func named(name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", name, err)
}

func (s *invScanner) vehiclePage(p *VehiclePage) error {
	return scanObject(s, p, shapeTop, vehiclePageField)
}

func vehiclePageField(s *invScanner, p *VehiclePage, id uint8) (err error) {
	switch id {
	case topTotal:
		p.Total, err = s.int()
	case topItems:
		err = scanCounted(s, &p.Items, shapeVehicle, (*invScanner).vehicle)
	default:
		err = s.skip()
	}
	return err
}

func (s *invScanner) vehicle(v *Vehicle) error { return scanObject(s, v, shapeVehicle, vehicleField) }

func vehicleField(s *invScanner, v *Vehicle, id uint8) (err error) {
	switch id {
	case vfIdAuto:
		v.IDAuto, err = s.str()
	case vfDealerId:
		v.DealerID, err = s.int64()
	case vfService:
		v.Service, err = s.str()
	case vfMake:
		v.Make, err = s.str()
	case vfModel:
		v.Model, err = s.str()
	case vfTrim:
		v.Trim, err = s.str()
	case vfCatalogType:
		v.CatalogType, err = s.str()
	case vfVersionCode:
		v.VersionCode, err = s.str()
	case vfUpfits:
		err = s.upfitList(&v.Upfits)
	case vfSalePriceEur:
		v.SalePrice, err = s.floatPtr()
	case vfCoverUrl:
		v.CoverURL, err = s.str()
	case vfMediaUrls:
		err = s.strings(&v.MediaURLs)
	case vfHasPodcast:
		v.HasPodcast, err = s.bool()
	case vfHasVideo:
		v.HasVideo, err = s.bool()
	case vfAiContent:
		if s.peek() == 'n' {
			v.AIContent = nil
			err = s.literal("null")
			break
		}
		// A repeated ai_content merges into the first, as the field
		// reader and the reflection decoder do.
		if v.AIContent == nil {
			v.AIContent = new(AIContent)
		}
		err = s.aiContent(v.AIContent)
	case vfConfirmedOptionals:
		err = s.strings(&v.ConfirmedOptionals)
	case vfConfirmedPackages:
		err = s.strings(&v.ConfirmedPackages)
	case vfUpdatedAt:
		v.UpdatedAt, err = s.time()
	default: // source_ids, lookup_cascade, tech_data_dir, payloads, raw_version_optionals, unknown
		err = s.skip()
	}
	return err
}

func (s *invScanner) upfit(u *Upfit) error { return scanObject(s, u, shapeUpfit, upfitField) }

// upfitList reads a vehicle's upfits into *dst as scanList does. With
// reuse (a VehiclePage with ReuseStrings) a list read into an empty *dst
// is cut from the page's block of upfits, which the next decoding cuts
// its own from again, instead of a slice of its own per vehicle: the list
// is read into the block's free room and, when it fits there, takes it
// (its capacity clipped to its length, so nothing appended to it reaches
// the next list); a list longer than the room is grown as scanList grows
// it.
func (s *invScanner) upfitList(dst *[]Upfit) error {
	if !s.reuse || cap(*dst) > 0 {
		return scanList(s, dst, (*invScanner).upfit)
	}
	if cap(s.upfits)-len(s.upfits) < 4 {
		s.upfits = make([]Upfit, 0, max(32, 2*cap(s.upfits)))
	}
	n := len(s.upfits)
	room := s.upfits[n:n:cap(s.upfits)]
	*dst = room
	err := scanList(s, dst, (*invScanner).upfit)
	if l := *dst; cap(l) > 0 && unsafe.SliceData(l) == unsafe.SliceData(room) {
		s.upfits = s.upfits[:n+len(l)]
		*dst = l[:len(l):len(l)]
	}
	return err
}

func upfitField(s *invScanner, u *Upfit, id uint8) (err error) {
	switch id {
	case ufCode:
		u.Code, err = s.str()
	case ufSlug:
		u.Slug, err = s.str()
	case ufLabel:
		u.Label, err = s.str()
	case ufDealerAlias:
		u.DealerAlias, err = s.str()
	case ufFamily:
		u.Family, err = s.str()
	case ufPrimary:
		u.Primary, err = s.bool()
	default: // source_id, lookup_cascade, unknown
		err = s.skip()
	}
	return err
}

func (s *invScanner) aiContent(a *AIContent) error {
	return scanObject(s, a, shapeAIContent, aiContentField)
}

func aiContentField(s *invScanner, a *AIContent, id uint8) (err error) {
	switch id {
	case afHeadline:
		a.Headline, err = s.str()
	case afDescription:
		a.Description, err = s.str()
	case afHighlights:
		err = s.strings(&a.Highlights)
	default: // render_template, seo_payload, prompt_id, unknown
		err = s.skip()
	}
	return err
}

func (s *invScanner) offerPage(p *OfferPage) error { return scanObject(s, p, shapeTop, offerPageField) }

func offerPageField(s *invScanner, p *OfferPage, id uint8) (err error) {
	switch id {
	case topTotal:
		p.Total, err = s.int()
	case topItems:
		err = scanCounted(s, &p.Items, shapeOffer, (*invScanner).offer)
	default:
		err = s.skip()
	}
	return err
}

func (s *invScanner) offer(o *Offer) error { return scanObject(s, o, shapeOffer, offerField) }

// offerListing is an offer page as the offer listing reads it: the offers
// without their quotations. A listing item publishes none of an offer's
// quotations (mapping.offerSource), only its detail does, and they are
// most of an offer page's work (a list of objects of numbers per offer):
// they are skipped like an internal member (a validating skip that builds
// nothing), so Quotations stays nil: a quotation that is valid JSON but
// not of its type, which an OfferPage refuses, no longer fails a listing
// that does not show it. Every other field is read as in an OfferPage.
// TestOfferListingIsOfferPageWithoutQuotations proves it.
type offerListing OfferPage

func (s *invScanner) offerListing(p *offerListing) error {
	return scanObject(s, p, shapeTop, offerListingField)
}

func offerListingField(s *invScanner, p *offerListing, id uint8) (err error) {
	switch id {
	case topTotal:
		p.Total, err = s.int()
	case topItems:
		err = scanCounted(s, &p.Items, shapeOffer, (*invScanner).listedOffer)
	default:
		err = s.skip()
	}
	return err
}

// listedOffer reads an offer of an offerListing.
func (s *invScanner) listedOffer(o *Offer) error {
	return scanObject(s, o, shapeOffer, listedOfferField)
}

func listedOfferField(s *invScanner, o *Offer, id uint8) error {
	if id == ofQuotations {
		return s.skip()
	}
	return offerField(s, o, id)
}

func offerField(s *invScanner, o *Offer, id uint8) (err error) {
	switch id {
	case ofIdOfferta:
		o.IDOfferta, err = s.int64()
	case ofDealerId:
		o.DealerID, err = s.int64()
	case ofSlug:
		o.Slug, err = s.str()
	case ofMake:
		o.Make, err = s.str()
	case ofModel:
		o.Model, err = s.str()
	case ofVersion:
		o.Version, err = s.str()
	case ofCoverUrl:
		o.CoverURL, err = s.str()
	case ofQuotations:
		err = scanList(s, &o.Quotations, (*invScanner).quotation)
	case ofUpdatedAt:
		o.UpdatedAt, err = s.time()
	default: // source_ids, lookup_cascade, render_payload, unknown
		err = s.skip()
	}
	return err
}

func (s *invScanner) quotation(q *Quotation) error {
	return scanObject(s, q, shapeQuotation, quotationField)
}

func quotationField(s *invScanner, q *Quotation, id uint8) (err error) {
	switch id {
	case qfMonths:
		q.Months, err = s.int()
	case qfKmPerYear:
		q.KmPerYear, err = s.int()
	case qfMonthlyFeeEur:
		q.MonthlyFee, err = s.float()
	default: // internal_cost_eur, source_rate_id, unknown
		err = s.skip()
	}
	return err
}

// utcSeconds reads the string at i (its opening quote) when it is a
// timestamp in the one form the services write, "2006-01-02T15:04:05Z"
// (UTC, whole seconds), with every field in range: the time.Time that
// time.Parse(time.RFC3339Nano, ...) gives for it, about a fifth of the
// cost. Anything else (another form, an offset, a fraction, a field out
// of range, the end of the input) reports false and moves nothing:
// parseTimestamp (the reflection decoder's rules) then decides, errors
// included (FuzzUTCSeconds). The form it takes passes parseTimestamp's
// checks: a two-digit hour, no fraction, no offset.
func utcSeconds(b []byte, i int) (time.Time, bool) {
	const n = len(`"2006-01-02T15:04:05Z"`)
	if len(b)-i < n {
		return time.Time{}, false
	}
	// The 22 bytes as three little-endian words (the last two overlap at
	// byte 14), checked and read a word at a time: the punctuation by a
	// comparison under a mask, the digits by their high nibble (3) and
	// that of the byte plus 6 (3 still: 0-9, not :-?). No byte carries
	// into the next: a digit's plus 6 stays in its byte, a punctuation
	// byte gets 0.
	le := binary.LittleEndian
	w0 := le.Uint64(b[i:])     // "YYYY-MM
	w1 := le.Uint64(b[i+8:])   // -DDThh:m
	w2 := le.Uint64(b[i+n-8:]) // :mm:ssZ"
	const (
		p0 = 0x00_00_2D_00_00_00_00_22 // " and -
		m0 = 0x00_00_FF_00_00_00_00_FF
		d0 = 0xFF_FF_00_FF_FF_FF_FF_00 // digits: Y Y Y Y, M M
		p1 = 0x00_3A_00_00_54_00_00_2D // -, T, :
		m1 = 0x00_FF_00_00_FF_00_00_FF
		d1 = 0xFF_00_FF_FF_00_FF_FF_00 // D D, h h, m
		p2 = 0x22_5A_00_00_3A_00_00_3A // :, :, Z, "
		m2 = 0xFF_FF_00_00_FF_00_00_FF
		d2 = 0x00_00_FF_FF_00_FF_FF_00 // m m, s s
		hi = 0xF0F0F0F0F0F0F0F0
		t3 = 0x3030303030303030
		s6 = 0x0606060606060606
	)
	if w0&m0 != p0 || w1&m1 != p1 || w2&m2 != p2 ||
		w0&(d0&hi) != d0&t3 || (w0+d0&s6)&(d0&hi) != d0&t3 ||
		w1&(d1&hi) != d1&t3 || (w1+d1&s6)&(d1&hi) != d1&t3 ||
		w2&(d2&hi) != d2&t3 || (w2+d2&s6)&(d2&hi) != d2&t3 {
		return time.Time{}, false
	}
	// Byte k of a word (its value minus '0' where it is a digit).
	w0 -= d0 & t3
	w1 -= d1 & t3
	w2 -= d2 & t3
	dig := func(w uint64, k uint) int { return int(w >> (8 * k) & 0xFF) }
	year := dig(w0, 1)*1000 + dig(w0, 2)*100 + dig(w0, 3)*10 + dig(w0, 4)
	month := dig(w0, 6)*10 + dig(w0, 7)
	day := dig(w1, 1)*10 + dig(w1, 2)
	hour := dig(w1, 4)*10 + dig(w1, 5)
	minute := dig(w2, 1)*10 + dig(w2, 2)
	sec := dig(w2, 4)*10 + dig(w2, 5)
	if month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	if day > 28 && day > daysIn(month, year) {
		return time.Time{}, false
	}
	return time.Unix(unixDays(year, month, day)*86400+int64(hour*3600+minute*60+sec), 0).UTC(), true
}

// unixDays is the number of days from 1970-01-01 to the date (proleptic
// Gregorian, year 0-9999, month 1-12, day 1-31), the civil-to-days
// algorithm of Howard Hinnant's date library: what time.Date computes,
// without its normalisation of out-of-range fields (utcSeconds has none).
// The year counts from March (January and February belong to the year
// before), shifted by an era of 400 years so that it is never negative:
// the leap days up to it are then plain unsigned divisions, and an era is
// a whole number of days (146097).
func unixDays(year, month, day int) int64 {
	y := uint(year + 400)
	if month <= 2 {
		y--
	}
	days := 365*y + y/4 - y/100 + y/400 + uint(marchDays[month&15]) + uint(day) - 1
	return int64(days) - (719468 + 146097)
}

// marchDays is the number of days from March 1 to the first of the month
// (1-12) in a year that starts in March: (153*mp+2)/5 for mp the months
// since March.
var marchDays = [16]uint16{1: 306, 2: 337, 3: 0, 4: 31, 5: 61, 6: 92, 7: 122, 8: 153, 9: 184, 10: 214, 11: 245, 12: 275}

// daysIn is the number of days of month in year (proleptic Gregorian).
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
