package upstream_test

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// checkUnquoteFast fails unless the scanner's one-pass unquoting of the
// JSON string q either falls back (false) or gives exactly what
// jsontext.AppendUnquote gives, without error.
func checkUnquoteFast(t testing.TB, q []byte) (fast bool) {
	t.Helper()
	got, ok := upstream.UnquoteFast(q)
	if !ok {
		return false
	}
	want, err := jsontext.AppendUnquote(nil, q)
	if err != nil {
		t.Fatalf("%q: fast path accepted %q, jsontext rejects: %v", q, got, err)
	}
	if got != string(want) {
		t.Fatalf("%q: fast path %q, jsontext %q", q, got, want)
	}
	return true
}

func TestUnquoteFast(t *testing.T) {
	cases := []struct {
		name, q string
		fast    bool // taken by the fast path (else the general path decides)
	}{
		{"plain", `"abc"`, true},
		{"accent escape", `"connettivit\u00e0 senza fili"`, true},
		{"every simple escape", `"\" \\ \/ \b \f \n \r \t"`, true},
		{"utf-8 as is", "\"caff\xc3\xa8 \xe2\x82\xac\"", true},
		{"surrogate pair", `"\ud83d\ude00!"`, true},
		{"upper-case hex", `"\u00E8\uD83D\uDE00"`, true},
		{"nul escape", `"a\u0000b"`, true},
		{"replacement char", "\"\xef\xbf\xbd\"", true},
		{"lone high surrogate", `"\ud83d"`, false},
		{"high then not low", `"\ud83d\u0041"`, false},
		{"lone low surrogate", `"\ude00"`, false},
		{"invalid utf-8", "\"\xe8\\n\"", false},
		{"utf-8 surrogate", "\"\xed\xa0\x80\"", false},
		{"bad escape", `"\x"`, false},
		{"short unicode escape", `"\u00e"`, false},
		{"control character", "\"a\nb\"", false},
		{"unterminated", `"abc\n`, false},
		{"backslash at end", `"abc\`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := checkUnquoteFast(t, []byte(c.q)); got != c.fast {
				t.Errorf("fast path taken = %v, want %v", got, c.fast)
			}
		})
	}
}

// FuzzUnquoteFast: on any input the one-pass unquoting does not panic,
// and whenever it does not fall back it equals jsontext.AppendUnquote.
func FuzzUnquoteFast(f *testing.F) {
	for _, s := range []string{`"a\u00e8b"`, `"\ud83d\ude00"`, `"\"\\\/\b\f\n\r\t"`, "\"\xe8\"", `"\ud800\u0041"`, `"abc`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		q := append([]byte{'"'}, b...)
		checkUnquoteFast(t, q)
		checkUnquoteFast(t, append(q, '"'))
	})
}

// checkSkipFast fails unless the copy-free skip of the string at the start
// of b takes every string unquoteFast takes and ends where it ends, and
// whatever it takes (invalid UTF-8 too) the general path and consumeString
// accept and end at the same place: skipString's and skip's answers do not
// depend on which path took the string.
func checkSkipFast(t testing.TB, b []byte) (fast bool) {
	t.Helper()
	end, ok := upstream.SkipStringFast(b)
	if uEnd, uOK := upstream.UnquoteFastEnd(b); uOK && (!ok || end != uEnd) {
		t.Fatalf("%q: skip (%d, %v), unquoteFast (%d, true)", b, end, ok, uEnd)
	}
	if ok {
		gEnd, err := upstream.SkipStringGeneral(b)
		if err != nil || gEnd != end {
			t.Fatalf("%q: skip (%d, true), the general path (%d, %v)", b, end, gEnd, err)
		}
		// skip (a value of any kind) takes it first too: consumeString
		// must agree.
		if cEnd, err := upstream.ConsumeStringEnd(b); err != nil || cEnd != end {
			t.Fatalf("%q: skip (%d, true), consumeString (%d, %v)", b, end, cEnd, err)
		}
	}
	return ok
}

func TestSkipStringFast(t *testing.T) {
	long := strings.Repeat("connettività senza fili, ", 20)
	cases := []struct {
		name, b string
		fast    bool
	}{
		{"plain", `"abc"`, true},
		{"empty", `""`, true},
		{"followed by more", `"abc","d":1`, true},
		{"long accented text", `"` + long + `"`, true},
		{"accent at every offset", "\"\xc3\xa0a\xc3\xa0ab\xc3\xa0abc\xc3\xa0abcd\xc3\xa0abcdefgh\xc3\xa0\"", true},
		{"four-byte rune across words", "\"abcdef\xf0\x9f\x98\x80ghijklmno\"", true},
		{"quote after high bytes in one word", "\"\xc3\xa8\xc3\xa8\xc3\xa8\"xx", true},
		{"escapes", `"\" \\ \/ \b \f \n \r \t \u00e8 \ud83d\ude00"`, true},
		{"escape then accents", "\"\\n\xc3\xa8" + long + "\"", true},
		{"replacement char", "\"\xef\xbf\xbd\"", true},
		{"lone high surrogate", `"\ud83d"`, false},
		{"high then not low", `"\ud83d\u0041"`, false},
		{"lone low surrogate", `"\ude00"`, false},
		{"invalid utf-8", "\"\xe8\\n\"", true},
		{"invalid utf-8 late in a long run", "\"" + long + "\xe8abcdefghijkl\"", true},
		{"truncated rune before the quote", "\"abcdefg\xc3\"", true},
		{"utf-8 surrogate", "\"\xed\xa0\x80\"", true},
		{"invalid byte in the stop's word", "\"ab\xc3\"xxxx", true},
		{"bad escape", `"\x"`, false},
		{"short unicode escape", `"\u00e"`, false},
		{"control character", "\"a\nb\"", false},
		{"control character after accents", "\"\xc3\xa8\xc3\xa8\x01\"", false},
		{"del is plain", "\"a\x7fb\"", true},
		{"unterminated", `"abc\n`, false},
		{"unterminated long", `"` + long, false},
		{"backslash at end", `"abc\`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := checkSkipFast(t, []byte(c.b)); got != c.fast {
				t.Errorf("fast skip taken = %v, want %v", got, c.fast)
			}
		})
	}
}

// FuzzSkipStringFast: on any input the copy-free skip does not panic,
// takes what unquoteFast takes, and ends every string it takes where the
// general path does.
func FuzzSkipStringFast(f *testing.F) {
	for _, s := range []string{`a\u00e8b"`, `\ud83d\ude00"x`, "caff\xc3\xa8 latte, caff\xc3\xa8\"", "\xe8\"", `\ud800\u0041"`, `abc`, "abcdefg\x1fh\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkSkipFast(t, append([]byte{'"'}, b...))
	})
}
