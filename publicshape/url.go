package publicshape

// PublicURL returns s when it is what the OpenAPI document's `format: uri`
// fields (cover_url, media_urls, url, media_url, thumbnail_url, audio_url,
// video_url) can carry and a dealer site can load: an absolute http or
// https URL (scheme in any case) with a host name (no userinfo, no IPv6
// literal), written in URI characters
// only (RFC 3986 section 2: printable ASCII without space, `"`, `<`, `>`,
// `\`, `^`, backtick, `{`, `|`, `}`), every `%` starting an escape of two
// hex digits. Anything else is "", which the encoders leave out as they
// leave out an empty field: a relative path, an empty entry or a value
// with spaces from a service is never published as a URL (README,
// Decisions). One pass over the bytes, no allocation.
func PublicURL(s string) string {
	var rest string
	switch {
	case len(s) > 7 && hasPrefixFold(s, "http://"):
		rest = s[7:]
	case len(s) > 8 && hasPrefixFold(s, "https://"):
		rest = s[8:]
	default:
		return ""
	}
	host := rest
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; c == '/' || c == '?' || c == '#' {
			host = rest[:i]
			break
		}
	}
	if !validHost(host) {
		return ""
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || uriExcluded[c] {
			return ""
		}
		if c == '%' && (i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2])) {
			return ""
		}
	}
	return s
}

// PublicURLs returns the entries of urls that PublicURL keeps, in order:
// urls itself when it keeps them all.
func PublicURLs(urls []string) []string {
	for i, u := range urls {
		if PublicURL(u) == "" {
			kept := append(make([]string, 0, len(urls)-1), urls[:i]...)
			for _, u := range urls[i+1:] {
				if PublicURL(u) != "" {
					kept = append(kept, u)
				}
			}
			return kept
		}
	}
	return urls
}

// validHost reports a host a URL may name: a registered name or IPv4
// address (letters, digits, '-', '.', '_', '~'), not empty, with an
// optional port of digits. Userinfo (a name and password before '@') is
// refused: a credential in a published URL would be a leak. So are IPv6
// literals and escapes, which no media or page URL needs.
func validHost(host string) bool {
	for i := len(host) - 1; i >= 0; i-- {
		if host[i] == ':' {
			for j := i + 1; j < len(host); j++ {
				if host[j] < '0' || host[j] > '9' {
					return false
				}
			}
			host = host[:i]
			break
		}
	}
	if host == "" {
		return false
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

// uriExcluded are the printable ASCII bytes RFC 3986 does not allow in a
// URI.
var uriExcluded = [256]bool{'"': true, '<': true, '>': true, '\\': true, '^': true, '`': true, '{': true, '|': true, '}': true}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// hasPrefixFold reports whether s starts with the lowercase ASCII prefix,
// in any case.
func hasPrefixFold(s, prefix string) bool {
	for i := 0; i < len(prefix); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}
