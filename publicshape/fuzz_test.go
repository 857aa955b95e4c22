package publicshape

import (
	"regexp"
	"strings"
	"testing"
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
