package publicshape

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func FuzzCanonicalSlug(f *testing.F) {
	for _, s := range []string{"", "Gru Idraulica", "Attività più", "--a--b--", "a\xffb", "ÀÈÌÒÙ", "冷 ñ", "gru-idraulica"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := CanonicalSlug(s)
		if got != "" && !ValidSlug(got) {
			t.Fatalf("CanonicalSlug(%q) = %q is neither empty nor a valid slug", s, got)
		}
		if again := CanonicalSlug(got); again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, got, again)
		}
	})
}

var slugRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func FuzzValidSlug(f *testing.F) {
	for _, s := range []string{"", "a", "a-b", "-a", "a-", "a--b", "A", "città"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidSlug(s), slugRE.MatchString(s); got != want {
			t.Fatalf("ValidSlug(%q) = %v, regexp says %v", s, got, want)
		}
	})
}

func FuzzPreview(f *testing.F) {
	f.Add("Ciao mondo bello", 7)
	f.Add("  spazi \n\t ovunque  ", 3)
	f.Add("àèìòù àèìòù", 8)
	f.Add("a\xffb c", 2)
	f.Add("ab \u00a0", 3)
	f.Add("Prima riga.\n\nSeconda  riga,\tterza.", 20)
	f.Add("Supercalifragilistico", 5)
	f.Fuzz(func(t *testing.T, body string, max int) {
		max %= 1000
		got := Preview(body, max)
		if !utf8.ValidString(got) {
			t.Fatalf("Preview(%q, %d) = %q is not valid UTF-8", body, max, got)
		}
		if max < 1 {
			if got != "" {
				t.Fatalf("Preview(%q, %d) = %q, want empty", body, max, got)
			}
			return
		}
		if n := utf8.RuneCountInString(got); n > max+1 {
			t.Fatalf("Preview(%q, %d) has %d runes", body, max, n)
		}
		var valid strings.Builder // one U+FFFD per invalid byte, as range yields
		for _, r := range body {
			valid.WriteRune(r)
		}
		collapsed := strings.Join(strings.Fields(valid.String()), " ")
		if strings.HasSuffix(got, Ellipsis) && got != collapsed {
			prefix := strings.TrimSuffix(got, Ellipsis)
			if !strings.HasPrefix(collapsed, prefix) {
				t.Fatalf("Preview(%q, %d) = %q is not a prefix of %q", body, max, got, collapsed)
			}
		} else if got != collapsed {
			t.Fatalf("Preview(%q, %d) = %q, want the whole collapsed body %q", body, max, got, collapsed)
		}
	})
}

// previewByRange is Preview as it was first written, over range and
// unicode.IsSpace: the reference FuzzPreviewEqualsReference holds the
// ASCII fast path of Preview to.
func previewByRange(body string, max int) string {
	if max < 1 {
		return ""
	}
	var b strings.Builder
	n := 0
	lastSpace := -1
	pending := false
	for _, r := range body {
		if unicode.IsSpace(r) {
			pending = n > 0
			continue
		}
		if pending {
			if n+2 > max {
				b.WriteString(Ellipsis)
				return b.String()
			}
			lastSpace = b.Len()
			b.WriteByte(' ')
			n++
			pending = false
		}
		if n+1 > max {
			s := b.String()
			if lastSpace > 0 {
				s = s[:lastSpace]
			}
			return s + Ellipsis
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

func TestPreviewEqualsReference(t *testing.T) {
	cases := []struct {
		body string
		max  int
	}{
		{"Ciao mondo bello", 7}, {"  spazi \n\t ovunque  ", 3}, {"àèìòù àèìòù", 8}, {"a\xffb c", 2},
		{"Supercalifragilistico", 5}, {"a\u00a0b\u0085c\u2028d\u3000e", 4}, {"\v\f\r x", 1}, {"", 5}, {"x", 0},
		{"connettività senza fili per gli smartphone", 240}, {"\xe2\x80 \xed\xa0\x80", 3},
		// previewPlain's borders: the body exactly max runes, one more, a
		// space or an accented letter at the cut, one long word, white
		// space that is not a single ASCII space after the cut point.
		{"ab cd", 5}, {"ab cd", 4}, {"ab cd", 3}, {"ab cd", 2}, {"àb cè", 4}, {"àb cè", 5}, {"abcdef", 3},
		{"più è già", 6}, {"più è già", 5}, {"ab cd\n\nef", 5}, {"ab cd\n\nef", 7}, {"ab  cd", 6},
		{" ab", 3}, {"ab ", 3}, {"ab \u00a0", 3}, {"ab\n\u00a0", 3}, {"ab\n \u00a0cd", 9}, {"  ab\n\ncd  ef \t", 9}, {"ab\n\ncd ef", 5}, {"ab\n\ncd ef", 7}, {"ab\tcd", 5}, {"ab\u00a0cd", 5}, {"ab \xffcd", 4}, {"ab\xff", 9},
	}
	for _, c := range cases {
		if got, want := Preview(c.body, c.max), previewByRange(c.body, c.max); got != want {
			t.Errorf("Preview(%q, %d) = %q, want %q", c.body, c.max, got, want)
		}
	}
}

func FuzzPreviewEqualsReference(f *testing.F) {
	f.Add("Ciao mondo bello", 7)
	f.Add("a\u00a0b\u0085c\u2028d", 3)
	f.Add("a\xffb c", 2)
	f.Add("ab \u00a0", 3)
	f.Add("Prima riga.\n\nSeconda  riga,\tterza.", 20)
	f.Fuzz(func(t *testing.T, body string, max int) {
		max %= 1000
		if got, want := Preview(body, max), previewByRange(body, max); got != want {
			t.Fatalf("Preview(%q, %d) = %q, want %q", body, max, got, want)
		}
	})
}

// TestTextRun holds textRun (eight bytes a step) to its definition, a
// byte at a time, on random strings of few bytes that end a run (control
// characters, bytes of UTF-8 sequences, two spaces in a row) at every
// offset, across the eight-byte blocks' borders.
func TestTextRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	alphabet := []byte{'a', 'Z', '!', '~', 0x7f, ' ', ' ', ' ', '\n', 0x1f, 0x80, 0xc3, 0xff}
	for range 20000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		s := string(b)
		want := 0
		for want < len(s) && s[want] >= 0x20 && s[want] < 0x80 && (s[want] != ' ' || want == 0 || s[want-1] != ' ') {
			want++
		}
		if got := textRun(s); got != want {
			t.Fatalf("textRun(%q) = %d, want %d", s, got, want)
		}
	}
}
