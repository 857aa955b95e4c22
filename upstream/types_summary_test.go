package upstream

import "testing"

func TestCutAfterNonSpace(t *testing.T) {
	cases := []struct {
		s    string
		n    int
		want string
	}{
		{"", 3, ""},
		{"abc", 3, "abc"},
		{"abcd", 3, "abc"},
		{"a b  c d", 3, "a b  c"},
		{"  \t a", 1, "  \t a"},
		{"èèèè", 2, "èè"},
		{"a\xffb", 2, "a\xff"},
		{"a\u00a0\u3000b c", 2, "a\u00a0\u3000b"},
		{"ab", 5, "ab"},
	}
	for _, c := range cases {
		if got := cutAfterNonSpace(c.s, c.n); got != c.want {
			t.Errorf("cutAfterNonSpace(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
	r := ContentRecord{ID: 1, Slug: "s", BodyText: "x", Transcript: "t", BodyHTML: "<p>", RenderPayload: Opaque{"a": 1}, SEOPayload: Opaque{"b": 2}, SourceID: "src", TemplateID: "tpl"}
	s := ContentSummary(r)
	if s.Transcript != "" || s.BodyHTML != "" || s.RenderPayload != nil || s.SEOPayload != nil || s.SourceID != "src" || s.TemplateID != "tpl" || s.BodyText != "x" {
		t.Errorf("ContentSummary: %+v", s)
	}
	if r.Transcript != "t" || r.RenderPayload == nil {
		t.Error("ContentSummary changed its argument")
	}
}
