package upstream

import (
	"strings"
	"testing"
)

// checkSkip compares skip (skipContainer first) with skipValue alone on b:
// the same verdict and, when both take it, the same end; skipContainer
// never takes what skipValue refuses and moves nothing when it declines.
func checkSkip(t *testing.T, b []byte, depth int) {
	t.Helper()
	general := invScanner{}
	general.b, general.depth = b, depth
	gerr := general.skipValue()

	fast := invScanner{}
	fast.b, fast.depth = b, depth
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
	ferr := full.skip()
	if (ferr == nil) != (gerr == nil) || (ferr == nil && full.i != general.i) {
		t.Fatalf("%q: skip %v at %d, skipValue %v at %d", b, ferr, full.i, gerr, general.i)
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
