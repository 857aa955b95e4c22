package upstream

import "math/bits"

// The stop map of a content list: one bit per byte of the body, set where
// stopRun would stop (a quote, a backslash or a control character). A
// cold hub section reads the key fields of every record of its type's
// corpus and skips the rest, most of it text (titles, excerpts, body
// previews, URLs: about 370 KB for a hub's six sections); with the map,
// skipping a string looks its end up a word of 64 bytes at a time instead
// of testing its bytes, and the map itself is made in one vector pass
// over the body (32 bytes an instruction).

// minStopMapBytes is the smallest body worth a map: below it the map's
// pass costs about what the lookups save.
const minStopMapBytes = 2 << 10

// maxPooledStopWords bounds the map a pooled scanner keeps (a 1 MiB body).
const maxPooledStopWords = 1 << 14

// mapStops makes the stop map of s.b when the body is large enough and
// the CPU has the vector instructions for it; stopFrom then uses it until
// dropStops. It reports whether a map was made.
func (s *invScanner) mapStops() bool {
	s.stops = nil
	if len(s.b) < minStopMapBytes {
		return false
	}
	n := (len(s.b) + 63) >> 6
	if cap(s.stopWords) < n {
		s.stopWords = make([]uint64, n)
	}
	m := s.stopWords[:n]
	w := stopMaskWords(s.b, m)
	if w == 0 {
		return false
	}
	for ; w < n; w++ { // the last, partial chunk
		var x uint64
		for k := w << 6; k < len(s.b); k++ {
			if c := s.b[k]; c < 0x80 && !strSafe[c] {
				x |= 1 << (k & 63)
			}
		}
		m[w] = x
	}
	s.stops = m
	return true
}

// dropStops ends the map's use (before s.b changes) and gives up a large
// one.
func (s *invScanner) dropStops() {
	s.stops = nil
	if cap(s.stopWords) > maxPooledStopWords {
		s.stopWords = nil
	}
}

// stopFrom is stopRun(s.b, j): through the stop map when there is one.
func (s *invScanner) stopFrom(j int) int {
	m := s.stops
	if m == nil {
		return stopRun(s.b, j)
	}
	w := j >> 6
	if w >= len(m) {
		return len(s.b)
	}
	if x := m[w] >> (uint(j) & 63); x != 0 {
		return j + bits.TrailingZeros64(x)
	}
	for w++; w < len(m); w++ {
		if x := m[w]; x != 0 {
			return w<<6 + bits.TrailingZeros64(x)
		}
	}
	return len(s.b)
}
