package upstream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// The content list (the answer of a content type's view, six of which a
// cold hub reads) decoded by the inventory scanner (pagescan.go): the same
// accept/reject and result as the field reader, proven by
// TestContentScannerEqualsFieldReader and FuzzContentScanner.

// scanObject reads an object (null leaves dst as it is), calling field for
// every member; field reads the member's value into dst. field is a plain
// function, not a closure, so a member costs an indirect call and nothing
// else; it switches on the member's field id (shapeFields). The member
// names are predicted from the last object of the same shape (memberAt).
func scanObject[T any](s *invScanner, dst *T, shape objectShape, field func(s *invScanner, dst *T, id uint8) error) error {
	null, err := s.beginObject()
	if err != nil || null {
		return err
	}
	m := &s.names[shape]
	for prev := prevStart; ; {
		// memberAt, its common case (predicted) here rather than in a
		// call that returns the name.
		if id, ok := s.predicted(m, &prev); ok {
			if err := field(s, dst, id); err != nil {
				return named(m.known[prev], err)
			}
			continue
		}
		id, name, more, err := s.memberSlow(shape, &prev)
		if err != nil || !more {
			return err
		}
		if err := field(s, dst, id); err != nil {
			return named(name, err)
		}
	}
}

// errNoItems refuses a content list without its items member ({}, null,
// an object of another shape): a malformed answer, never an empty list
// (that is "items":[] or "items":null).
var errNoItems = errors.New("no items member")

func (s *invScanner) contentList(l *contentList) error {
	seen := false
	err := scanObject(s, l, shapeTop, func(s *invScanner, l *contentList, id uint8) error {
		if id == topItems {
			seen = true
			return s.contentItems(&l.Items)
		}
		return s.skip()
	})
	if err == nil && !seen {
		err = fmt.Errorf("%w: %w", errInventory, errNoItems)
	}
	return err
}

// maxPooledRecords bounds the record buffer a pooled scanner keeps.
const maxPooledRecords = 1024

// contentItems reads the items array into *dst as scanList does (null is
// nil, [] is empty, the elements start from their zero value). A record is
// a large struct, and growing the result itself copied and zeroed every
// record several times over: the records are read into a result made at
// the size countObjects counts, else (nothing counted: the first list a
// scanner reads) through the scanner's own record buffer, grown there and
// copied out at its exact length. The buffer is cleared after use, so a
// pooled scanner keeps no strings alive.
func (s *invScanner) contentItems(dst *[]ContentRecord) error {
	read := 0
	content := func(s *invScanner, c *ContentRecord) error {
		if read++; read > maxContentRecords {
			return errTooManyRecords
		}
		return s.content(c)
	}
	if n := s.countObjects(shapeContent); n > 0 {
		l := make([]ContentRecord, 0, n)
		err := scanList(s, &l, content)
		if l != nil && cap(l) > len(l)+len(l)/4+4 {
			// Far fewer than counted (objects inside the records that
			// start like one): keep only the room the records need.
			l = append(make([]ContentRecord, 0, len(l)), l...)
		}
		*dst = l
		return err
	}
	buf := s.records[:0]
	// The buffer goes back cleared, or not at all: one that grew left
	// records in the one it replaced, which is dropped (contentKeys takes
	// the buffer as zero).
	s.records = nil
	err := scanList(s, &buf, content)
	switch {
	case buf == nil:
		*dst = nil
	default:
		*dst = append(make([]ContentRecord, 0, len(buf)), buf...)
		clear(buf)
		if cap(buf) <= maxPooledRecords {
			s.records = buf[:0]
		}
	}
	return err
}

// countObjects counts, from i on, the openings of an object of the shape
// as the scanner's last one began (its first member as compact JSON, such
// as `{"id":`: the name memo's prediction for the first member), one
// vector search over the body; 0 when there is no prediction. It is the
// number of records of a list written as the last one was: a record that
// begins otherwise is not counted, an object inside a record that begins
// the same way is.
//
// It counts once per body (s.counted): a body that repeats its list member
// ("items":[],"items":[],…, which JSON allows and the last of which wins)
// would otherwise be searched to its end at every repetition, a time
// quadratic in its size; the lists after the first are grown as they are
// read. The count is capped at maxCountedRecords, so that a body that only
// repeats a record's opening (and fails further on) makes no slice of
// records larger than a valid list's: past the cap the list grows.
func (s *invScanner) countObjects(shape objectShape) int {
	m := &s.names[shape]
	if len(m.lead) == 0 || s.counted {
		return 0
	}
	s.counted = true
	return min(bytes.Count(s.b[s.i:], m.lead), maxCountedRecords)
}

// maxContentRecords bounds the records of one content list (before it,
// a 4 MiB answer of empty records, `{}`, made the edge allocate 2.4 GB; at
// the 32 MiB body limit about 18 GB). A record is a 352-byte struct
// however few bytes it takes in the answer; real summary records take
// several hundred bytes, so the 32 MiB limit holds fewer than this anyway.
const maxContentRecords = 50_000

var errTooManyRecords = errors.New("content list of more than 50000 records")

// maxCountedRecords bounds the records a list is made for before it is
// read (countObjects): a content corpus of the fake's largest dealer has a
// few hundred, a page at most 100.
const maxCountedRecords = 4096

func (s *invScanner) content(c *ContentRecord) error {
	return scanObject(s, c, shapeContent, contentField)
}

func contentField(s *invScanner, c *ContentRecord, id uint8) (err error) {
	switch id {
	case cfId:
		c.ID, err = s.int64()
	case cfType:
		c.Type, err = s.str()
	case cfDealerId:
		c.DealerID, err = s.int64()
	case cfSlug:
		c.Slug, err = s.str()
	case cfTopic:
		c.Topic, err = s.str()
	case cfCategory:
		c.Category, err = s.str()
	case cfBrand:
		c.Brand, err = s.str()
	case cfTitle:
		c.Title, err = s.str()
	case cfH1:
		c.H1, err = s.str()
	case cfMetaDescription:
		c.MetaDescription, err = s.str()
	case cfExcerpt:
		c.Excerpt, err = s.str()
	case cfBodyText:
		c.BodyText, err = s.str()
	case cfUrl:
		c.URL, err = s.str()
	case cfUpdatedAt:
		c.UpdatedAt, err = s.time()
	case cfSourceProvider:
		c.SourceProvider, err = s.str()
	case cfOverrideOf:
		c.OverrideOf, err = s.int64()
	case cfHiddenForDealer:
		c.HiddenForDealer, err = s.bool()
	case cfMediaUrl:
		c.MediaURL, err = s.str()
	case cfThumbnailUrl:
		c.ThumbnailURL, err = s.str()
	case cfDurationSeconds:
		c.DurationSeconds, err = s.int()
	case cfTranscript:
		c.Transcript, err = s.str()
	default: // template_id, source_id, body_html, render_payload, seo_payload, unknown
		err = s.skip()
	}
	return err
}

// contentPageSink decodes a content list for ContentPage: the key fields
// of every record (contentKeyField) into the scanner's record buffer, then
// pick, then the records pick chose, whole, from the same body. The keys
// do not outlive decodeBody; the chosen records own their strings. It
// accepts and rejects exactly what the content list decoder does
// (TestContentPageEqualsContentList): the fields it does not keep are
// still checked for their type.
type contentPageSink struct {
	pick func(keys []ContentRecord) []int32
	out  []ContentRecord
}

// contentSpan is where a record's JSON is in the body.
type contentSpan struct{ from, to int32 }

func (p *contentPageSink) decodeBody(body []byte) error {
	s := invScanners.Get().(*invScanner)
	s.b, s.i, s.depth, s.arena, s.counted = body, 0, 0, nil, false
	var keys []ContentRecord
	var spans []contentSpan
	null, mapped := true, false
	err := scanObject(s, p, shapeTop, func(s *invScanner, _ *contentPageSink, id uint8) (err error) {
		if id == topItems {
			if !mapped { // once a body: the map covers all of it, whatever repeats "items"
				s.mapStops() // dropped after wholeRecords, which reads through it too
				mapped = true
			}
			keys, spans, null, err = s.contentKeys()
			return err
		}
		return s.skip()
	})
	if err == nil && !mapped {
		err = fmt.Errorf("%w: %w", errInventory, errNoItems)
	}
	if err == nil {
		s.ws()
		if s.i != len(s.b) {
			err = s.fail("data after the top-level value")
		}
	}
	if err == nil {
		var idx []int32
		if !null {
			idx = p.pick(keys)
		} else {
			idx = p.pick([]ContentRecord{})
		}
		err = s.wholeRecords(body, spans, idx, &p.out)
	}
	s.dropStops()
	clear(keys)
	if cap(keys) <= maxPooledRecords {
		s.records = keys[:0]
	}
	if spans != nil && cap(spans) <= maxPooledRecords {
		s.spans = spans[:0]
	}
	s.b, s.arena = nil, nil
	if cap(s.scratch) > 64<<10 {
		s.scratch = nil
	}
	invScanners.Put(s)
	return err
}

// contentKeys reads the items array of a content list: the key fields of
// each record, in the scanner's record buffer, and where each record is;
// null reports a null list.
func (s *invScanner) contentKeys() (keys []ContentRecord, spans []contentSpan, null bool, err error) {
	keys = s.records[:0]
	s.records = nil // back in decodeBody
	if null, err = s.beginArray(); err != nil || null {
		return keys, nil, null, err
	}
	spans = s.spans[:0] // back in decodeBody
	s.spans = nil
	for first := true; ; {
		more, err := s.element(&first)
		if err != nil || !more {
			return keys, spans, false, err
		}
		from := s.i
		if len(keys) >= maxContentRecords {
			return keys, spans, false, errTooManyRecords
		}
		if len(keys) < cap(keys) {
			// Zero already (invScanner.records): not zeroed again, which
			// while the collector marks is a write barrier per pointer.
			keys = keys[:len(keys)+1]
		} else {
			keys = append(keys, ContentRecord{})
		}
		if err := s.contentKey(&keys[len(keys)-1]); err != nil {
			return keys, spans, false, err
		}
		spans = append(spans, contentSpan{int32(from), int32(s.i)})
	}
}

// The kinds of a content record's members as contentKey reads a string
// value of theirs, by field id: skipped (the text fields, and id 0, a
// member only checked), kept as a view (the key strings), a timestamp.
const (
	keyOther uint8 = iota
	keySkipped
	keyString
	keyTime
)

var keyKinds = [32]uint8{
	0: keySkipped, cfTitle: keySkipped, cfH1: keySkipped, cfMetaDescription: keySkipped, cfExcerpt: keySkipped,
	cfBodyText: keySkipped, cfUrl: keySkipped, cfMediaUrl: keySkipped, cfThumbnailUrl: keySkipped, cfTranscript: keySkipped,
	cfType: keyString, cfSlug: keyString, cfTopic: keyString, cfCategory: keyString, cfBrand: keyString, cfSourceProvider: keyString,
	cfUpdatedAt: keyTime,
}

// nextStop is stopFrom(j) through the stop map stops, inline: the first
// stop at or after j, or end (the body's length) when there is none or
// no map.
func nextStop(stops []uint64, j, end int) int {
	w := j >> 6
	if w >= len(stops) {
		return end
	}
	if x := stops[w] >> (uint(j) & 63); x != 0 {
		return j + bits.TrailingZeros64(x)
	}
	for w++; w < len(stops); w++ {
		if x := stops[w]; x != 0 {
			return w<<6 + bits.TrailingZeros64(x)
		}
	}
	return end
}

// shortEscape marks the bytes after a backslash that make an escape of two
// bytes, each of which escape takes.
var shortEscape = [256]bool{'"': true, '\\': true, '/': true, 'b': true, 'f': true, 'n': true, 'r': true, 't': true}

// contentKey is scanObject(s, c, shapeContent, contentKeyField), the
// loop made for it: a cold hub section reads some 900 members of a
// type's records for their keys, most of them text only skipped. The
// predicted name (predicted's comparison) and the common values (a string
// skipped or kept as a view through the stop map, an id of digits, a
// timestamp of the services' form) are read here, without a call per
// member; anything else goes to memberSlow and contentKeyField as
// scanObject hands it to them, so the two accept, refuse and read the
// same (TestContentPageEqualsContentList, FuzzContentPage, with the map
// and without).
func (s *invScanner) contentKey(c *ContentRecord) error {
	null, err := s.beginObject()
	if err != nil || null {
		return err
	}
	m := &s.names[shapeContent]
	slots := m.slots
	b, stops := s.b, s.stops
	for prev := prevStart; ; {
		// predicted, inline.
		i := s.i
		var id uint8
		ok := false
		if uint(prev) < uint(len(slots)) {
			sl := &slots[prev]
			at := i
			if prev == prevStart {
				at-- // the brace
			}
			if cp := &sl.next; cp.n != 0 && at >= 0 && at+24 <= len(b) {
				w := b[at : at+24 : at+24]
				le := binary.LittleEndian
				if (le.Uint64(w)^cp.w0)&cp.m0|(le.Uint64(w[8:])^cp.w1)&cp.m1|(le.Uint64(w[16:])^cp.w2)&cp.m2 == 0 {
					i = at + cp.n
					s.i, prev = i, int(sl.nextAt)
					id, ok = sl.nextID, true
				}
			}
		}
		if !ok {
			if i < len(b) && b[i] == '}' { // the end of the record: memberSlow's first case
				s.i = i + 1
				s.depth--
				return nil
			}
			var name string
			var more bool
			id, name, more, err = s.memberSlow(shapeContent, &prev)
			if err != nil || !more {
				return err
			}
			if err := contentKeyField(s, c, id); err != nil {
				return named(name, err)
			}
			slots = m.slots // memberSlow may have learnt a name
			continue
		}
		// The value at i: its common cases, as contentKeyField reads
		// them.
		if i < len(b) && b[i] == '"' {
			// The string's first stop from the map (stopFrom, inline):
			// without escapes, its closing quote.
			k := nextStop(stops, i+1, len(b))
			plain := k < len(b) && b[k] == '"'
			switch keyKinds[id&31] {
			case keySkipped:
				// Skipped: what skipString, and skip (id 0), do first
				// (skipStringFast), its escapes of two bytes (a body's
				// paragraph breaks) inline.
				for !plain && k+1 < len(b) && b[k] == '\\' && shortEscape[b[k+1]] {
					k = nextStop(stops, k+2, len(b))
					plain = k < len(b) && b[k] == '"'
				}
				if plain {
					s.i = k + 1
					continue
				}
				if s.skipStringFast() {
					continue
				}
			case keyString:
				// A view of the body: keyStr's look-up.
				if plain && s.validRun(i+1, k) {
					v := bytesString(b[i+1 : k])
					s.i = k + 1
					switch id {
					case cfType:
						c.Type = v
					case cfSlug:
						c.Slug = v
					case cfTopic:
						c.Topic = v
					case cfCategory:
						c.Category = v
					case cfBrand:
						c.Brand = v
					default:
						c.SourceProvider = v
					}
					continue
				}
			case keyTime:
				if t, ok := utcSeconds(b, i); ok {
					c.UpdatedAt = t
					s.i = i + len(`"2006-01-02T15:04:05Z"`)
					continue
				}
			}
		} else if i < len(b) && (id == cfId || id == cfDealerId || id == cfOverrideOf) {
			// int64's common cases, the number followed by the end of the
			// member: 0 (a global record's dealer_id; int64 reads it
			// through numberLiteral and strconv) or 1 to 18 digits not
			// starting with 0 (smallUint's).
			j := i + 1
			var v uint64
			if b[i] != '0' {
				j = i
				for j < len(b) && j-i < 18 && b[j]-'0' <= 9 {
					v = v*10 + uint64(b[j]-'0')
					j++
				}
			}
			if j > i && j < len(b) && (b[j] == ',' || b[j] == '}') {
				s.i = j
				switch id {
				case cfId:
					c.ID = int64(v)
				case cfDealerId:
					c.DealerID = int64(v)
				default:
					c.OverrideOf = int64(v)
				}
				continue
			}
		}
		if err := contentKeyField(s, c, id); err != nil {
			return named(m.known[prev], err)
		}
	}
}

// wholeRecords decodes the records at idx (indices into spans) of body whole,
// as the content list decoder reads them, into a new *out. Each is read
// where it is in body (s.b), through the body's stop map when there is
// one: the end of each string and whether it is ASCII are looked up.
func (s *invScanner) wholeRecords(body []byte, spans []contentSpan, idx []int32, out *[]ContentRecord) error {
	*out = make([]ContentRecord, len(idx))
	n := 0
	for _, i := range idx {
		n += int(spans[i].to - spans[i].from)
	}
	s.newArena(n + 64)
	for k, i := range idx {
		sp := spans[i]
		s.b, s.i = body, int(sp.from)
		if err := s.content(&(*out)[k]); err != nil {
			return err
		}
	}
	return nil
}

// contentKeyField is contentField for ContentPage's keys: the fields that
// decide visibility, order and the category/topic/brand filters are read
// (their strings views of the body: the keys live only while it is read),
// the others checked as contentField would read them and skipped.
func contentKeyField(s *invScanner, c *ContentRecord, id uint8) (err error) {
	switch id {
	case cfId, cfDealerId, cfUpdatedAt, cfOverrideOf, cfHiddenForDealer:
		return contentField(s, c, id)
	case cfType:
		c.Type, err = s.keyStr()
	case cfSlug:
		c.Slug, err = s.keyStr()
	case cfTopic:
		c.Topic, err = s.keyStr()
	case cfCategory:
		c.Category, err = s.keyStr()
	case cfBrand:
		c.Brand, err = s.keyStr()
	case cfSourceProvider:
		c.SourceProvider, err = s.keyStr()
	case cfTitle, cfH1, cfMetaDescription, cfExcerpt, cfBodyText, cfUrl, cfMediaUrl, cfThumbnailUrl, cfTranscript:
		switch s.peek() {
		case '"':
			err = s.skipString()
		case 'n':
			err = s.literal("null")
		default:
			err = s.fail("want a string")
		}
	case cfDurationSeconds:
		_, err = s.int()
	default:
		err = s.skip()
	}
	return err
}

// skipString moves past the string at i (its opening quote), accepting and
// refusing what stringBody does, without keeping it: an escaped string is
// unquoted into the scratch buffer (unquoteFast, else stringView's
// general path), which is how stringBody checks it.
func (s *invScanner) skipString() error {
	if s.skipStringFast() {
		return nil
	}
	start := s.i
	if s.unquoteFast(start, safeRun(s.b, start+1)) {
		return nil
	}
	_, _, err := s.stringView()
	return err
}
