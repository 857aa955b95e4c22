package upstream

// jsonCursor is a read position in a JSON body, shared by the scanners made
// for one shape (the inventory and content answers, pagescan.go; the key
// snapshot pages, keypage.go).
type jsonCursor struct {
	b []byte
	i int
}

// ws skips JSON white space. Every white space byte is at most ' ', so
// the common case (none) is one comparison.
func (s *jsonCursor) ws() {
	if s.i < len(s.b) && s.b[s.i] > ' ' {
		return
	}
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// digits reads a run of decimal digits at i and reports whether there was
// at least one.
func (s *jsonCursor) digits() bool {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}
