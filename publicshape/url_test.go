package publicshape

import (
	"net/url"
	"slices"
	"testing"
)

func TestPublicURL(t *testing.T) {
	for s, keep := range map[string]bool{
		"https://cdn.example/a.jpg":           true,
		"http://cdn.example":                  true,
		"HTTPS://CDN.example/a%20b.jpg?x=1#f": true,
		"https://[::1]:8443/a":                false,
		"https://cdn.example:8443/a":          true,
		"https://cdn.example:84a3/a":          false,
		"https://cdn.example:/a":              true,
		"http://[":                            false,
		"https://cdn.example/a%2":             false,
		"https://cdn.example/a%zz":            false,
		"":                                    false,
		"/media/cover.jpg":                    false,
		"thumbs/v.jpg":                        false,
		"//cdn.example/a.jpg":                 false,
		"https://":                            false,
		"https:///a.jpg":                      false,
		"https://:443/a":                      false,
		"https://cdn.example/a b.jpg":         false,
		"https://cdn.example/à.jpg":           false,
		"https://cdn.example/a\x00":           false,
		"https://cdn.example/a\"onload=x":     false,
		"javascript:alert(1)":                 false,
		"ftp://cdn.example/a":                 false,
		"data:image/png;base64,AAAA":          false,
		"https://cdn.example/{id}":            false,
		"https://cdn.example/a\\b":            false,
		" https://cdn.example/a":              false,
		"https://cdn.example/a\t":             false,
		"https://cdn.example/a?q=%E2%82%AC":   true,
		"https://user:secret@cdn.example/a":   false,
	} {
		got := PublicURL(s)
		if keep && got != s || !keep && got != "" {
			t.Errorf("PublicURL(%q) = %q, keep %v", s, got, keep)
		}
	}
}

func TestPublicURLs(t *testing.T) {
	all := []string{"https://a.example/1", "https://a.example/2"}
	if got := PublicURLs(all); &got[0] != &all[0] {
		t.Errorf("a list whose entries are all kept is copied")
	}
	got := PublicURLs([]string{"https://a.example/1", "", "/rel", "https://a.example/2"})
	if !slices.Equal(got, all) {
		t.Errorf("PublicURLs = %q, want %q", got, all)
	}
	if got := PublicURLs(nil); got != nil {
		t.Errorf("PublicURLs(nil) = %q", got)
	}
}

// FuzzPublicURL: every URL PublicURL keeps is an absolute http(s) URL with
// a host for net/url, as the OpenAPI validator's format uri reads it.
func FuzzPublicURL(f *testing.F) {
	for _, s := range []string{"https://cdn.example/a.jpg", "http://x/%41", "/rel", "https://[::1]/", "https://a@b/?#"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if PublicURL(s) == "" {
			return
		}
		u, err := url.Parse(s)
		if err != nil || !u.IsAbs() || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "HTTP" && u.Scheme != "HTTPS" && len(u.Scheme) == 0) {
			t.Fatalf("PublicURL kept %q: url.Parse %+v, %v", s, u, err)
		}
	})
}
