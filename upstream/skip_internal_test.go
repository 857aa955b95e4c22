package upstream

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// checkSkip compares skip (skipContainer first) with skipValue alone on b:
// the same verdict and, when both take it, the same end; skipContainer
// never takes what skipValue refuses and moves nothing when it declines.
// skip and skipContainer read through the stop map where b is large
// enough for one, skipValue never: b is checked again padded to that size.
func checkSkip(t *testing.T, b []byte, depth int) {
	t.Helper()
	general := invScanner{}
	general.b, general.depth = b, depth
	gerr := general.skipValue()

	fast := invScanner{}
	fast.b, fast.depth = b, depth
	fast.mapStops()
	fast.ws()
	at := fast.i
	if took := fast.skipContainer(); !took {
		if fast.i != at {
			t.Fatalf("%q: skipContainer declined but moved from %d to %d", b, at, fast.i)
		}
	} else if gerr != nil || fast.i != general.i {
		t.Fatalf("%q: skipContainer took it up to %d; skipValue: %v at %d", b, fast.i, gerr, general.i)
	}
	full := invScanner{}
	full.b, full.depth = b, depth
	full.mapStops()
	ferr := full.skip()
	if (ferr == nil) != (gerr == nil) || (ferr == nil && full.i != general.i) {
		t.Fatalf("%.60q: skip %v at %d, skipValue %v at %d", b, ferr, full.i, gerr, general.i)
	}
	if len(b) < minStopMapBytes && hasAVX2 {
		checkSkip(t, append(append([]byte(nil), b...), strings.Repeat(" ", minStopMapBytes)...), depth)
	}
}

// TestSkipContainer: the one-loop skip of arrays and objects (internal
// members such as source_ids and lookup_cascade) takes exactly what the
// general skip takes and ends where it ends: compact and with white
// space, escapes and text beyond ASCII inside, brackets inside strings,
// every kind of value, nesting at its bounds (64 levels of its own, the
// scanner's limit), and every way of being malformed, at the end of the
// input too.
func TestSkipContainer(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	cases := []string{
		`{}`, `[]`, `{"dms":"DMS-101-288923","feed":"autoscout24:294528135afd"}`,
		`["jato","eurotax","manual"]`, `{ "a" : [ 1 , -2.5e3 , true , false , null ] , "b" : { } }`,
		"{\n\t\"a\":\r\n[1]\n}", `{"a":"x\"]}\\","b":"\u00e8\ud83d\ude00"}`, `["caffè","\n\t"]`,
		`[{"a":[{"b":[]}]},{},[[]]]`, `{"a":1}trailing`, `[1] ,`, `{"[":"]","{":"}"}`,
		deep(63), deep(64), deep(65), deep(200), `[[[` + `]]`, `[` + deep(64) + `]`,
		// malformed
		`{`, `[`, `{"a"`, `{"a":`, `{"a":1`, `{"a":1,`, `{"a":1,}`, `[1,]`, `[,1]`, `{,}`, `{"a" 1}`, `{"a":1 "b":2}`,
		`[1 2]`, `{1:2}`, `{"a":1]`, `[1}`, `[01]`, `[-]`, `[1.]`, `[1e]`, `[.5]`, `[tru]`, `[nul]`, `[falsey]`,
		`["\x01"]`, `["\q"]`, `["\u12"]`, `["\ud800"]`, `["abc`, `["abc\`, "[\x00]", `{"a\x01":1}`, `[+1]`,
		"[\v1]", `["a"]]`, `{"a":{"b":1}`, `["\u00e8`, "[\"\xff\"]", `[1,"x",{"y":[null]}`,
	}
	for _, c := range cases {
		for _, depth := range []int{0, maxNesting - 70, maxNesting - 1} {
			checkSkip(t, []byte(c), depth)
		}
	}
}

// FuzzSkipContainer: skip with the one-loop path agrees with skipValue.
func FuzzSkipContainer(f *testing.F) {
	for _, c := range []string{`{"dms":"D","feed":"a:b"}`, `["jato","eurotax"]`, `{ "a" : [ 1 , 2.5 , true ] }`,
		`[{"a":"\n"}]`, `[1,]`, `["\ud800"]`, `[[[[]]]]`} {
		f.Add([]byte(c), 0)
	}
	f.Fuzz(func(t *testing.T, b []byte, depth int) {
		if depth < 0 || depth > maxNesting {
			depth = 0
		}
		checkSkip(t, b, depth)
	})
}

// checkKeepString compares keepString with stringBody on the string at
// the start of b, with an arena of the given room holding a string made
// before: the same value and end where keepString takes it, nothing moved
// where it declines, the earlier string intact either way.
func checkKeepString(t *testing.T, b []byte, room int) {
	t.Helper()
	ref := invScanner{}
	ref.b = b
	want, werr := ref.stringBody(true)

	s := invScanner{}
	s.b = b
	if s.mapStops() != (len(b) >= minStopMapBytes && hasAVX2) {
		t.Fatalf("map made for %d bytes", len(b))
	}
	s.newArena(room)
	before := ""
	if room >= 3 {
		before = s.keep("pre")
	}
	got, ok := s.keepString()
	if !ok {
		if s.i != 0 {
			t.Fatalf("%q: keepString declined but moved to %d", b, s.i)
		}
	} else if werr != nil || got != want || s.i != ref.i {
		t.Fatalf("%q (room %d): keepString %q up to %d; stringBody %q, %v up to %d", b, room, got, s.i, want, werr, ref.i)
	}
	if room >= 3 && before != "pre" {
		t.Fatalf("%q: the string made before became %q", b, before)
	}
	if ok {
		// The next string goes after it, leaving it intact.
		if next := s.keep(strings.Repeat("z", 40)); next != strings.Repeat("z", 40) || got != want {
			t.Fatalf("%q: %q after the next string", b, got)
		}
	}
	if s.stops != nil {
		// keyStr's look-up through the maps gives what strIn gives.
		ks, gs := invScanner{}, invScanner{}
		ks.b, gs.b = b, b
		ks.mapStops()
		kv, kerr := ks.keyStr()
		gv, gerr := gs.strIn(false)
		if kv != gv || (kerr == nil) != (gerr == nil) || (kerr == nil && ks.i != gs.i) {
			t.Fatalf("%.40q: keyStr %q, %v up to %d; strIn %q, %v up to %d", b, kv, kerr, ks.i, gv, gerr, gs.i)
		}
	}
	if s.stops != nil {
		// str's look-up through the maps gives what strIn gives, for a
		// body the result owns (views) or not (copies).
		for _, owned := range []bool{false, true} {
			ss, gs := invScanner{}, invScanner{}
			ss.b, gs.b = b, b
			ss.owned = owned
			ss.mapStops()
			sv, serr := ss.str()
			gv, gerr := gs.strIn(true)
			if sv != gv || (serr == nil) != (gerr == nil) || (serr == nil && ss.i != gs.i) {
				t.Fatalf("%.40q (owned %v): str %q, %v up to %d; strIn %q, %v up to %d", b, owned, sv, serr, ss.i, gv, gerr, gs.i)
			}
		}
	}
	if len(b) < minStopMapBytes {
		// In a body large enough for the maps, which keepString then
		// reads (the string's end and whether it is ASCII).
		checkKeepString(t, append(append([]byte(nil), b...), strings.Repeat(" xè", minStopMapBytes/4)...), room)
	}
}

// TestKeepString: the one-pass read of a kept string gives what
// stringBody gives (and keyStr's look-up what strIn gives): ASCII, text beyond ASCII, escapes of every kind
// (surrogate pairs, at the start and the end, one after another), long
// runs through the vector scan, an arena too full for the value (moved to
// a new block); and declines control characters, invalid UTF-8 before and
// after an escape, bad escapes, lone surrogates and the end of the input.
func TestKeepString(t *testing.T) {
	long := strings.Repeat("abcdefghij", 10)
	cases := []string{
		`""`, `"a"`, `"` + long + `"`, `"caffè latte"`, `"è"`, `"` + long + `è` + long + `"`,
		`"\n"`, `"a\nb"`, `"Sì.\n\nPrima"`, `"\"quoted\" \\ \/ \b\f\r\t"`, `"\u00e8\u0041"`, `"\ud83d\ude00x"`,
		`"x\ud83d\ude00"`, `"` + long + `\n` + long + `è\t` + long + `"`, `"è\n"`, `"\nè"`, `"\u0000"`, `"\u2028"`,
		`"a"trailing`, `"\n",`,
		// declined
		"\"a\x01\"", "\"\xff\"", "\"è\xff\"", "\"\\n\xff\"", "\"\\n\xc3\"", "\"è\\n\x01\"", `"\q"`, `"\u12"`, `"\ud800"`,
		`"\ud800x"`, `"\udc00"`, `"\ud83d\u0041"`, `"abc`, `"abc\`, `"\n`, `"è`, `"\u00e8`, "\"\xed\xa0\x80\"",
	}
	for _, c := range cases {
		for _, room := range []int{0, 3, 4, 8, 1 << 10} {
			checkKeepString(t, []byte(c), room)
		}
	}
}

// FuzzKeepString: keepString agrees with stringBody.
func FuzzKeepString(f *testing.F) {
	for _, c := range []string{`"a"`, `"caffè\n"`, `"\ud83d\ude00"`, "\"\xff\\n\"", `"\u00e8è\t"`} {
		f.Add([]byte(c), 4)
	}
	f.Fuzz(func(t *testing.T, b []byte, room int) {
		if len(b) == 0 || b[0] != '"' {
			b = append([]byte{'"'}, b...)
		}
		checkKeepString(t, b, max(0, min(room, 1<<12)))
	})
}

// TestCountedRecords: a content list is read into a result sized by
// countObjects once the scanner has read a list: the same records as the
// field reader reads whether the count is exact, too high (objects inside
// the records that begin like one, trimmed to the records' room) or too
// low (records that begin otherwise, grown), and for an empty, a null
// and an absent list.
func TestCountedRecords(t *testing.T) {
	rec := func(id int, extra string) string {
		return `{"id":` + strconv.Itoa(id) + `,"type":"faq","slug":"s` + strconv.Itoa(id) + `"` + extra + `}`
	}
	list := func(n int, extra func(i int) string) string {
		var b strings.Builder
		b.WriteString(`{"items":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(rec(i, extra(i)))
		}
		b.WriteString(`]}`)
		return b.String()
	}
	none := func(int) string { return "" }
	cases := []struct {
		name string
		body string
	}{
		{"exact", list(30, none)},
		{"nested objects counted", list(30, func(int) string { return `,"render_payload":[{"id":1},{"id":2},{"id":3}]` })},
		{"records that begin otherwise", strings.ReplaceAll(list(30, none), `{"id":`, `{"type":"x","id":`)},
		{"spaced", strings.ReplaceAll(list(30, none), `,`, `, `)},
		{"empty", `{"items":[]}`},
		{"null", `{"items":null}`},
		{"exact again", list(5, none)},
	}
	var s invScanner
	for _, c := range cases {
		for pass := range 2 { // the second reads with the count
			s.b, s.i, s.depth, s.counted = []byte(c.body), 0, 0, false
			s.newArena(64)
			var got, want contentList
			err := s.contentList(&got)
			if _, werr := readFields([]byte(c.body), &want); err != nil || werr != nil {
				t.Fatalf("%s: %v, field reader %v", c.name, err, werr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s, pass %d: %d records, field reader %d", c.name, pass, len(got.Items), len(want.Items))
			}
			if n := len(got.Items); cap(got.Items) > n+n/4+4 {
				t.Errorf("%s, pass %d: room for %d records kept for %d", c.name, pass, cap(got.Items), n)
			}
		}
	}
}

// TestCountedVehicles: a vehicle page's items are read into a result sized
// by countObjects when the page has no room of its own: the same records as
// the field reader reads with an exact count, one too high (trimmed) or too
// low (grown); a page with room (a pooled one) is filled in place and keeps
// its room.
func TestCountedVehicles(t *testing.T) {
	page := func(n int, rec func(i int) string) string {
		var b strings.Builder
		b.WriteString(`{"total":` + strconv.Itoa(n) + `,"items":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(rec(i))
		}
		b.WriteString(`]}`)
		return b.String()
	}
	plain := func(i int) string {
		return `{"id_auto":"v` + strconv.Itoa(i) + `","dealer_id":101,"service":"REWIND","make":"Fiat"}`
	}
	cases := []struct {
		name, body string
		room       int
	}{
		{"exact", page(40, plain), 0},
		{"nested objects counted", page(40, func(i int) string {
			return strings.TrimSuffix(plain(i), "}") + `,"payloads":[{"id_auto":1},{"id_auto":2},{"id_auto":3}]}`
		}), 0},
		{"records that begin otherwise", page(40, func(i int) string {
			return strings.Replace(plain(i), `{"id_auto":`, `{"make":"x","id_auto":`, 1)
		}), 0},
		{"pooled page", page(10, plain), 100},
		{"empty", `{"total":0,"items":[]}`, 0},
	}
	var s invScanner
	for _, c := range cases {
		for pass := range 2 {
			s.b, s.i, s.depth, s.counted = []byte(c.body), 0, 0, false
			s.newArena(64)
			got := VehiclePage{Items: make([]Vehicle, 0, c.room)}
			var want VehiclePage
			err := s.vehiclePage(&got)
			if _, werr := readFields([]byte(c.body), &want); err != nil || werr != nil {
				t.Fatalf("%s: %v, field reader %v", c.name, err, werr)
			}
			if !reflect.DeepEqual(got.Items, want.Items) && !(len(got.Items) == 0 && len(want.Items) == 0) {
				t.Fatalf("%s, pass %d: %d records, field reader %d", c.name, pass, len(got.Items), len(want.Items))
			}
			n := len(got.Items)
			if c.room > 0 && cap(got.Items) != c.room {
				t.Errorf("%s, pass %d: the page's room became %d", c.name, pass, cap(got.Items))
			}
			if c.room == 0 && pass == 1 && cap(got.Items) > n+n/4+4 {
				t.Errorf("%s, pass %d: room for %d records kept for %d", c.name, pass, cap(got.Items), n)
			}
		}
	}
}
