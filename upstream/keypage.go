package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unsafe"
)

// KeySnapshotEach is KeySnapshot with each entry handed to each as it is
// decoded instead of collected in Items, which the returned page leaves
// empty: a snapshot of a million keys costs no allocation per key. The
// strings of the entry each receives point into the response body and are
// valid during the call only; each copies what it keeps. An error from
// each ends the decoding and is returned. A null item is handed on as a
// zero entry (no key), as KeySnapshot's Items hold it.
func (c *Client) KeySnapshotEach(ctx context.Context, after string, limit int, each func(*KeyIndexEntry) error) (KeySnapshotPage, error) {
	var out KeySnapshotPage
	b := c.begin("/dealers/v1/key-index")
	n := len(b)
	b = appendParam(b, "after", after)
	b = appendIntParam(b, "limit", limit)
	err := c.get(ctx, c.dealers, firstParam(b, n), &keySnapshotSink{page: &out, each: each})
	return out, err
}

// bodyDecoder is a destination that decodes a 200 body itself.
type bodyDecoder interface {
	decodeBody(body []byte) error
}

// keySnapshotSink decodes a KeySnapshotPage, handing its items to each.
type keySnapshotSink struct {
	page *KeySnapshotPage
	each func(*KeyIndexEntry) error
}

// errKeyPage reports a snapshot page that is not the JSON object of the
// contract.
var errKeyPage = errors.New("malformed key index page")

// decodeBody decodes the page with a scanner made for its one shape: the
// generic decoder builds four strings and a time per entry, most of the
// cost of loading a large snapshot. Unknown members are skipped, as the
// generic decoder does; a member that appears twice keeps its last value.
func (k *keySnapshotSink) decodeBody(body []byte) error {
	s := keyScanner{jsonCursor{b: body}}
	*k.page = KeySnapshotPage{}
	sawItems := false
	err := s.members("a page", func(name string) error {
		switch name {
		case "items":
			// Entries are handed on as they come: a second list cannot be
			// taken back, so it is refused rather than merged.
			if sawItems {
				return s.fail("items twice")
			}
			sawItems = true
			return k.items(&s)
		case "next", "cursor":
			v, ok := s.stringOrNull()
			if !ok {
				return s.fail(name)
			}
			if name == "next" {
				k.page.Next = string(v)
			} else {
				k.page.Cursor = string(v)
			}
		case "total":
			if s.null() { // zero, as the generic decoder makes it
				k.page.Total = 0
				return nil
			}
			n, ok := s.int()
			if !ok || int64(int(n)) != n {
				return s.fail("total")
			}
			k.page.Total = int(n)
		default:
			return s.skipMember(name, 1)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.end()
}

func (k *keySnapshotSink) items(s *keyScanner) error {
	if s.null() {
		return nil
	}
	if !s.consume('[') {
		return s.fail("items is an array")
	}
	if s.consume(']') {
		return nil
	}
	var e KeyIndexEntry
	var exp time.Time
	for {
		if s.null() {
			// A null entry is a zero entry, as in the generic decoder's
			// Items: no key (an empty hash), which the key index refuses
			// as malformed.
			e = KeyIndexEntry{}
		} else if err := s.entry(&e, &exp); err != nil {
			return err
		}
		if err := k.each(&e); err != nil {
			return err
		}
		if s.consume(',') {
			continue
		}
		if s.consume(']') {
			return nil
		}
		return s.fail("',' or ']'")
	}
}

// keyScanner reads the JSON of a key page from b at i.
type keyScanner struct{ jsonCursor }

func (s *keyScanner) fail(what string) error {
	return fmt.Errorf("%w: %s at byte %d", errKeyPage, what, s.i)
}

// consume skips white space and c, if c is next.
func (s *keyScanner) consume(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// end checks that only white space follows.
func (s *keyScanner) end() error {
	s.ws()
	if s.i != len(s.b) {
		return s.fail("end of the page")
	}
	return nil
}

func (s *keyScanner) null() bool {
	s.ws()
	if len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// str reads a string and returns its contents, unescaped. Without an
// escape the contents are a slice of the body (no copy).
func (s *keyScanner) str() ([]byte, bool) {
	if !s.consume('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			v := s.b[start:s.i]
			s.i++
			return v, true
		case c == '\\' || c >= 0x80:
			// An escape, or a byte beyond ASCII: the standard decoder
			// unescapes, and replaces invalid UTF-8 as the generic
			// decoder does.
			return s.escaped(start)
		case c < 0x20:
			return nil, false
		}
		s.i++
	}
	return nil, false
}

// escaped finishes a string that holds an escape or a non-ASCII byte
// (rare in a key page: hashes, statuses and cursors are plain ASCII) with
// the standard decoder.
func (s *keyScanner) escaped(start int) ([]byte, bool) {
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '\\':
			s.i += 2
			continue
		case c == '"':
			var v string
			if json.Unmarshal(s.b[start-1:s.i+1], &v) != nil {
				return nil, false
			}
			s.i++
			return []byte(v), true
		case c < 0x20:
			return nil, false
		}
		s.i++
	}
	return nil, false
}

func (s *keyScanner) stringOrNull() ([]byte, bool) {
	if s.null() {
		return nil, true
	}
	return s.str()
}

// name reads a member name and its colon. The string points into the
// body (or an unescaped copy) and is compared, never kept.
func (s *keyScanner) name() (string, bool) {
	v, ok := s.str()
	if !ok || !s.consume(':') {
		return "", false
	}
	return bytesString(v), true
}

// int reads an integer (no fraction, no exponent) that fits an int64.
func (s *keyScanner) int() (int64, bool) {
	s.ws()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	digits := s.i
	if !s.digits() || (s.b[digits] == '0' && s.i-digits > 1) {
		return 0, false
	}
	if s.i < len(s.b) {
		if c := s.b[s.i]; c == '.' || c == 'e' || c == 'E' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(unsafe.String(&s.b[start], s.i-start), 10, 64)
	return n, err == nil
}

// members reads an object, calling member with each name while the
// scanner is at its value, which member reads.
func (s *keyScanner) members(what string, member func(name string) error) error {
	if !s.consume('{') {
		return s.fail(what + " is an object")
	}
	if s.consume('}') {
		return nil
	}
	for {
		name, ok := s.name()
		if !ok {
			return s.fail("member name in " + what)
		}
		if err := member(name); err != nil {
			return err
		}
		if s.consume(',') {
			continue
		}
		if s.consume('}') {
			return nil
		}
		return s.fail("',' or '}' in " + what)
	}
}

// skipMember skips the value of an unknown member of an object nested
// depth deep (the page is 1, an item 3).
func (s *keyScanner) skipMember(name string, depth int) error {
	if !s.skip(depth) {
		return s.fail("value of " + strconv.Quote(name))
	}
	return nil
}

// skip skips one value of any kind, inside depth arrays and objects: the
// nesting of all of them, the page included, is bounded by jsontext's
// limit (maxNesting), as in the generic decoder.
func (s *keyScanner) skip(depth int) bool {
	s.ws()
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '"':
		_, ok := s.str()
		return ok
	case '{':
		if depth >= maxNesting {
			return false
		}
		s.i++
		if s.consume('}') {
			return true
		}
		for {
			if _, ok := s.name(); !ok || !s.skip(depth+1) {
				return false
			}
			if s.consume(',') {
				continue
			}
			return s.consume('}')
		}
	case '[':
		if depth >= maxNesting {
			return false
		}
		s.i++
		if s.consume(']') {
			return true
		}
		for {
			if !s.skip(depth + 1) {
				return false
			}
			if s.consume(',') {
				continue
			}
			return s.consume(']')
		}
	case 't':
		return s.word("true")
	case 'f':
		return s.word("false")
	case 'n':
		return s.word("null")
	default:
		return s.number()
	}
}

func (s *keyScanner) word(w string) bool {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	return false
}

// number skips a JSON number of the RFC 8259 grammar (no leading zero),
// which the generic decoder checks even in a member it does not keep.
func (s *keyScanner) number() bool {
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	start := s.i
	if !s.digits() || (s.b[start] == '0' && s.i-start > 1) {
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// entry reads one KeyIndexEntry object into e (reset first); exp holds the
// expiry that e.ExpiresAt points to.
func (s *keyScanner) entry(e *KeyIndexEntry, exp *time.Time) error {
	*e = KeyIndexEntry{}
	return s.members("an item", func(name string) error {
		switch name {
		case "key_sha256", "status", "plan":
			v, ok := s.stringOrNull()
			if !ok {
				return s.fail(name)
			}
			switch name {
			case "key_sha256":
				e.KeySHA256 = bytesString(v)
			case "status":
				e.Status = bytesString(v)
			default:
				e.Plan = bytesString(v)
			}
		case "dealer_id":
			if s.null() {
				e.DealerID = 0
				return nil
			}
			n, ok := s.int()
			if !ok {
				return s.fail("dealer_id")
			}
			e.DealerID = n
		case "expires_at":
			if s.null() {
				e.ExpiresAt = nil
				return nil
			}
			v, ok := s.str()
			if !ok {
				return s.fail("expires_at")
			}
			t, err := parseTimestamp(bytesString(v))
			if err != nil {
				return s.fail("expires_at: not an RFC 3339 time")
			}
			*exp = t
			e.ExpiresAt = exp
		default:
			return s.skipMember(name, 3)
		}
		return nil
	})
}

// bytesString views b as a string without a copy; b must not change while
// the string is in use (the body is not written to while it is decoded).
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}
