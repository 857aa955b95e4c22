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

// maxPooledStopWords bounds the map a pooled scanner keeps (a 1 MiB body);
// it keeps the map of bytes beyond ASCII too, as many words again.
const maxPooledStopWords = 1 << 14

// mapStops makes the stop map of s.b, and the map of its bytes beyond
// ASCII, when the body is large enough and the CPU has the vector
// instructions for it; stopFrom and asciiRun then use them until
// dropStops. It reports whether a map was made.
func (s *invScanner) mapStops() bool {
	s.stops, s.highs = nil, nil
	if len(s.b) < minStopMapBytes {
		return false
	}
	n := (len(s.b) + 63) >> 6
	if cap(s.stopWords) < 2*n {
		s.stopWords = make([]uint64, 2*n)
	}
	m, h := s.stopWords[:n], s.stopWords[n:2*n]
	w := stopMaskWords(s.b, m, h)
	if w == 0 {
		return false
	}
	for ; w < n; w++ { // the last, partial chunk
		var x, y uint64
		for k := w << 6; k < len(s.b); k++ {
			if c := s.b[k]; c >= 0x80 {
				y |= 1 << (k & 63)
			} else if !strSafe[c] {
				x |= 1 << (k & 63)
			}
		}
		m[w], h[w] = x, y
	}
	s.stops, s.highs = m, h
	return true
}

// dropStops ends the maps' use (before s.b changes) and gives up large
// ones.
func (s *invScanner) dropStops() {
	s.stops, s.highs = nil, nil
	if cap(s.stopWords) > 2*maxPooledStopWords {
		s.stopWords = nil
	}
}

// asciiRun reports whether the bytes of s.b from i to j are all ASCII
// (none has its high bit), through the map of bytes beyond ASCII: a
// caller without one (s.highs nil) checks the bytes itself.
func (s *invScanner) asciiRun(i, j int) bool {
	if i >= j {
		return true
	}
	h := s.highs
	wi, wj := i>>6, (j-1)>>6
	lo := ^uint64(0) << (uint(i) & 63)      // the bits from i on in word wi
	hi := ^uint64(0) >> (63 - uint(j-1)&63) // the bits up to j-1 in word wj
	if wi == wj {
		return h[wi]&lo&hi == 0
	}
	if h[wi]&lo != 0 || h[wj]&hi != 0 {
		return false
	}
	for w := wi + 1; w < wj; w++ {
		if h[w] != 0 {
			return false
		}
	}
	return true
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
