package aggregator

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSpanMethod(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"GET", "GET"}, {"HEAD", "HEAD"}, {"DELETE", "DELETE"}, {"get", "_OTHER"}, {"FOO", "_OTHER"},
		{"", "_OTHER"}, {strings.Repeat("X", 1000), "_OTHER"},
	} {
		if got := spanMethod([]byte(c.in)); got != c.want {
			t.Errorf("spanMethod(%.10q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestSpanPathCutsAtCharacter: url.path is cut to at most 256 bytes before
// a character that would not fit whole, never inside it. Before
// 2026-11-27 it was cut at byte 256 whatever it held, and a path whose
// 256th byte was inside a multi-byte character (a percent-encoded "é",
// "€" or emoji, which the path is decoded from) was exported ending in
// U+FFFD.
func TestSpanPathCutsAtCharacter(t *testing.T) {
	type tc struct {
		name, path string
		want       int // length of the result
	}
	cases := []tc{
		{"short", "/dealer/NOS/listing", len("/dealer/NOS/listing")},
		{"exactly the bound", strings.Repeat("a", maxSpanPath), maxSpanPath},
		{"ascii over the bound", strings.Repeat("a", 1000), maxSpanPath},
	}
	// Each character of 2, 3 and 4 bytes at every offset across the
	// bound: the cut is before it unless it ends at the bound.
	for _, ch := range []string{"é", "€", "😀"} {
		for start := maxSpanPath - len(ch) + 1; start <= maxSpanPath; start++ {
			want := start // the character does not fit whole
			if start+len(ch) <= maxSpanPath {
				want = maxSpanPath
			}
			cases = append(cases, tc{
				name: fmt.Sprintf("%d-byte character at byte %d", len(ch), start),
				path: strings.Repeat("a", start) + ch + strings.Repeat("b", 10),
				want: want,
			})
		}
		// The character ending exactly at the bound is kept.
		cases = append(cases, tc{
			name: fmt.Sprintf("%d-byte character ending at the bound", len(ch)),
			path: strings.Repeat("a", maxSpanPath-len(ch)) + ch + "b",
			want: maxSpanPath,
		})
	}
	// Bytes that are not UTF-8 (%80 decoded) cost at most 3 bytes.
	cases = append(cases, tc{"continuation bytes only", strings.Repeat("\x80", 300), maxSpanPath - 3})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := spanPath([]byte(c.path))
			if len(got) != c.want || !strings.HasPrefix(c.path, string(got)) {
				t.Fatalf("spanPath cut %d bytes to %d, want %d", len(c.path), len(got), c.want)
			}
			if utf8.ValidString(c.path) && !utf8.Valid(got) {
				t.Errorf("cut inside a character: ends in %q", got[max(len(got)-4, 0):])
			}
		})
	}
	long := []byte(strings.Repeat("a", 255) + "€")
	if n := testing.AllocsPerRun(100, func() { _ = spanPath(long) }); n != 0 {
		t.Errorf("spanPath allocates %v times", n)
	}
}
