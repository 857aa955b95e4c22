package upstream

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// refSafeRun and refStopRun are safeRun and stopRun a byte at a time.
func refSafeRun(b []byte, j int) int {
	for j < len(b) && strSafe[b[j]] {
		j++
	}
	return j
}

func refStopRun(b []byte, j int) int {
	for ; j < len(b); j++ {
		if c := b[j]; c < 0x80 && !strSafe[c] {
			break
		}
	}
	return j
}

// checkRuns fails unless the word-at-a-time runs end where the byte-at-a-
// time ones do from every start in b.
func checkRuns(t testing.TB, b []byte) {
	t.Helper()
	for j := 0; j <= len(b); j++ {
		if got, want := safeRun(b, j), refSafeRun(b, j); got != want {
			t.Fatalf("safeRun(%q, %d) = %d, want %d", b, j, got, want)
		}
		if got, want := stopRun(b, j), refStopRun(b, j); got != want {
			t.Fatalf("stopRun(%q, %d) = %d, want %d", b, j, got, want)
		}
	}
}

func TestRunsMatchBytewise(t *testing.T) {
	if raceEnabled {
		t.Skip("one goroutine over pure functions (and assembly the detector does not see): run without -race")
	}
	// Bytes that matter: every class, and values next to the borders the
	// word tricks rely on (0x1f/0x20, 0x21-0x23, 0x5b-0x5d, 0x7f/0x80, 0xa2,
	// 0xdc, 0xff).
	alphabet := []byte{0, 1, 0x1f, 0x20, 0x21, '"', 0x23, 0x5b, '\\', 0x5d, 'a', 0x7f, 0x80, 0xa2, 0xc3, 0xdc, 0xe0, 0xff}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 4000 {
		b := make([]byte, rng.IntN(48))
		if n%5 == 0 { // several of stopBlocks' 32-byte blocks
			b = make([]byte, 32+rng.IntN(160))
		}
		for i := range b {
			if rng.IntN(4) == 0 {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			} else {
				b[i] = 'a' + byte(rng.IntN(26))
			}
		}
		if n%3 == 0 { // long plain runs with one stop somewhere
			for i := range b {
				b[i] = 'x'
			}
			if len(b) > 0 {
				b[rng.IntN(len(b))] = alphabet[rng.IntN(len(alphabet))]
			}
		}
		checkRuns(t, b)
	}
	// Every single byte value at every position of two words and of two
	// 32-byte blocks.
	for c := range 256 {
		for p := range 70 {
			b := make([]byte, 70)
			for i := range b {
				b[i] = 'y'
			}
			b[p] = byte(c)
			checkRuns(t, b)
		}
	}
}

func FuzzRuns(f *testing.F) {
	f.Add([]byte("abcdefgh\"ijklmnop"))
	f.Add([]byte("caff\xc3\xa8 latte \\n\x01"))
	f.Fuzz(func(t *testing.T, b []byte) { checkRuns(t, b) })
}

// TestNameMemo: a name is predicted from the one before it, so an absent
// optional member costs a miss or two, not one for every later member; each
// distinct name is copied once (relearning allocates nothing) and never
// aliases a body; long names and names past the bound are not kept.
func TestNameMemo(t *testing.T) {
	var m nameMemo
	body := []byte("idslug")
	a := m.learn(shapeContent, prevStart, bytesString(body[0:2]))
	b := m.learn(shapeContent, a, bytesString(body[2:6]))
	copy(body, "XXXXXX")
	if m.known[a] != "id" || m.known[b] != "slug" {
		t.Fatalf("the memo aliases the body: %q", m.known)
	}
	if m.predict(prevStart) != a || m.predict(a) != b || m.predict(b) != -1 || m.predict(prevUnknown) != -1 {
		t.Fatalf("predictions %d %d %d", m.predict(prevStart), m.predict(a), m.predict(b))
	}
	if m.learn(shapeContent, b, strings.Repeat("n", maxMemoNameLen+1)) != prevUnknown {
		t.Fatal("a name over the length bound was kept")
	}
	allocs := testing.AllocsPerRun(100, func() {
		m.learn(shapeContent, prevStart, "id")
		m.learn(shapeContent, a, "slug")
	})
	if allocs != 0 {
		t.Fatalf("%v allocations relearning known names", allocs)
	}
	for k := range maxMemoNames + 4 {
		m.learn(shapeContent, prevStart, strconv.Itoa(k))
	}
	if m.size() != maxMemoNames || len(m.slots) != len(m.known) || len(m.ids) != len(m.known) || len(m.cpat) != len(m.known) {
		t.Fatalf("%d names kept, at most %d", m.size(), maxMemoNames)
	}

	// Records with optional members, read twice by one scanner: the second
	// pass misses only where a record's layout differs from the one
	// before it (two misses each: the absent or extra member, and the name
	// after it).
	rec := func(i int, opt bool) string {
		r := `{"id":` + strconv.Itoa(i) + `,"type":"faq","slug":"s` + strconv.Itoa(i) + `"`
		if opt {
			r += `,"hidden_for_dealer":true`
		}
		return r + `,"title":"t","body_text":"b","updated_at":"2026-01-02T03:04:05Z"}`
	}
	list := `{"items":[`
	changes := 0
	for i := range 40 {
		opt := i%7 == 3
		if i > 0 {
			list += ","
		}
		if opt || (i > 0 && (i-1)%7 == 3) {
			changes++
		}
		list += rec(i, opt)
	}
	list += "]}"
	var s invScanner
	for pass := range 2 {
		s.b, s.i, s.depth = []byte(list), 0, 0
		before := s.names[shapeContent].misses
		var l contentList
		if err := s.contentList(&l); err != nil || len(l.Items) != 40 {
			t.Fatalf("pass %d: %v, %d records", pass, err, len(l.Items))
		}
		if misses := s.names[shapeContent].misses - before; pass == 1 && misses > 2*changes {
			t.Fatalf("second pass: %d misses for %d layout changes", misses, changes)
		}
	}
}

// TestNamePatterns: memberAt takes a predicted name from the body when its
// bytes and the closing quote follow, whatever the name's length (the two
// words up to 15 bytes, the string comparison past them) and whatever is
// left of the body after it (the words need 16 bytes); a name that differs
// in one byte, is longer or shorter is read as a string instead (a miss).
func TestNamePatterns(t *testing.T) {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	for n := 1; n <= 20; n++ {
		name := letters[:n]
		changed := name[:n-1] + "Z"
		for _, c := range []struct {
			got  string
			miss bool
		}{{name, false}, {changed, true}, {name + "x", true}, {name[:n-1], n > 1}} {
			if c.got == "" {
				continue
			}
			for _, pad := range []string{"", "                    "} {
				var s invScanner
				m := &s.names[shapeContent]
				m.learn(shapeContent, prevStart, name)
				s.b, s.i = []byte(`{"`+c.got+`":1}`+pad), 1
				prev := prevStart
				_, got, more, err := s.memberAt(shapeContent, &prev)
				if err != nil || !more || got != c.got || s.b[s.i] != '1' {
					t.Fatalf("name %q, body %q: got %q %v %v at %d", name, s.b, got, more, err, s.i)
				}
				if miss := m.misses == 1; miss != c.miss {
					t.Errorf("name %q, body %q: miss %v, want %v", name, s.b, miss, c.miss)
				}
			}
		}
	}
}

// TestInt64FastPath: the in-place read of a plain positive integer gives
// what the general path (the literal through strconv.ParseInt) gives, value,
// error and position, on either side of its borders.
func TestInt64FastPath(t *testing.T) {
	general := func(b []byte) (int64, error, int) {
		s := invScanner{}
		s.b = b
		lit, ok, err := s.number()
		if !ok {
			return 0, err, s.i
		}
		v, err := strconv.ParseInt(lit, 10, 64)
		return v, err, s.i
	}
	for _, in := range []string{"1", "7,", "42}", "9 ", "123456789012345678", "123456789012345678,",
		"1234567890123456789", "9223372036854775807", "9223372036854775808", "99999999999999999999",
		"1.5", "1e3", "1E3", "15.", "0", "01", "-7", "-0", " 12", "x", "", "null"} {
		s := invScanner{}
		s.b = []byte(in)
		v, err := s.int64()
		wv, werr, wi := general([]byte(in))
		if v != wv || (err == nil) != (werr == nil) || (err == nil && s.i != wi) {
			t.Errorf("int64(%q) = %d, %v at %d; the general path %d, %v at %d", in, v, err, s.i, wv, werr, wi)
		}
	}
}
