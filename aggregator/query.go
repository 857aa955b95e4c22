package aggregator

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// normalizeQuery returns the canonical form of a text query (q of search,
// content listings and inventory listings, whose service matches q the
// same way), already trimmed and space-collapsed: what
// the content service's matching depends on and nothing else. The service
// (upstream.ContentFilter.Q; corpus.Filter in the fake) keeps a record when
// every whitespace-separated word of q, lowercased, is a substring of its
// lowercased title, excerpt or body; the edge's ranking (mapping.Ranked)
// asks the same of the title. So the answer does not depend on case
// (strings.ToLower, applied by both, is idempotent), on word order, on
// repeated words, or on a word contained in another word of q (the longer
// one implies it). The canonical form is the lowercased words, without
// those contained in another, sorted and joined by one space.
//
// It is the q of the cache key, of the upstream call and of the echo in
// the body, so that every variant of one query shares one cache entry and
// one fill (TestNormalizeQueryKeepsMatches proves the equivalence on the
// corpus). An empty or already canonical one-word q is returned without
// allocating.
func normalizeQuery(q string) string {
	if q == "" {
		return q
	}
	lq := q
	if hasUpperOrNonASCII(q) {
		lq = strings.ToLower(q)
	}
	if !strings.Contains(lq, " ") {
		return lq
	}
	var arr [16]string
	words := arr[:0]
	for w := range strings.FieldsSeq(lq) {
		words = append(words, w)
	}
	slices.Sort(words)
	words = slices.Compact(words)
	out := words[:0]
	for i, w := range words {
		contained := false
		for j, o := range words {
			if j != i && len(o) > len(w) && strings.Contains(o, w) {
				contained = true
				break
			}
		}
		if !contained {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// hasUpperOrNonASCII reports whether strings.ToLower could change s.
func hasUpperOrNonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			for _, r := range s[i:] {
				if unicode.ToLower(r) != r {
					return true
				}
			}
			return false
		}
		if 'A' <= c && c <= 'Z' {
			return true
		}
	}
	return false
}
