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
	var i int
	switch {
	case len(s) > 7 && hasPrefixFold(s, "http://"):
		i = 7
	case len(s) > 8 && hasPrefixFold(s, "https://"):
		i = 8
	default:
		return ""
	}
	// The host: a name of hostByte bytes, not empty, then an optional
	// port of digits, then the end or the path, query or fragment. A byte
	// that is none of these ('@' of userinfo, '[' of an IPv6 literal, '%'
	// of an escape) refuses the URL.
	h := i
	for i < len(s) && hostByte[s[i]] {
		i++
	}
	if i == h {
		return ""
	}
	if i < len(s) && s[i] == ':' {
		i++
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && s[i] != '/' && s[i] != '?' && s[i] != '#' {
		return ""
	}
	// The rest: URI bytes, each '%' starting an escape of two hex digits;
	// eight plain bytes at a time while there are (the common case).
	for ; i+8 <= len(s); i += 8 {
		b := s[i : i+8]
		if !(uriByte[b[0]] && uriByte[b[1]] && uriByte[b[2]] && uriByte[b[3]] &&
			uriByte[b[4]] && uriByte[b[5]] && uriByte[b[6]] && uriByte[b[7]]) {
			break
		}
	}
	for ; i < len(s); i++ {
		if uriByte[s[i]] {
			continue
		}
		if s[i] != '%' || i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return ""
		}
		i += 2
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

// uriByte is true for the bytes a URI holds as they are (RFC 3986 section
// 2: printable ASCII without space, '"', '<', '>', '\', '^', backtick,
// '{', '|', '}'); '%' is false, checked apart as the start of an escape.
// hostByte is true for the bytes of a host name (letters, digits, '-',
// '.', '_', '~'). One table lookup a byte: the check runs for every
// listed vehicle's cover URL on a listing miss.
var uriByte, hostByte = func() (u, h [256]bool) {
	for c := 0x21; c < 0x7f; c++ {
		u[c] = true
	}
	for _, c := range []byte("\"<>\\^`{|}%") {
		u[c] = false
	}
	for c := 0; c < 256; c++ {
		h[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
	}
	return u, h
}()

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
