package upstream

import (
	"math/rand/v2"
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

// TestNameMemo: names are learnt by position, copied once per distinct
// name (records that alternate between two layouts allocate nothing once
// both are known), escaped or long names are not learnt, and a body's
// bytes are never kept.
func TestNameMemo(t *testing.T) {
	var m nameMemo
	body := []byte("idslugtitle")
	m.learn(0, bytesString(body[0:2]))
	m.learn(1, bytesString(body[2:6]))
	m.learn(5, "far") // not next to a known position: ignored
	if got := m.names; len(got) != 2 || got[0] != "id" || got[1] != "slug" {
		t.Fatalf("names %q", got)
	}
	copy(body, "XXXXXX")
	if m.names[0] != "id" || m.names[1] != "slug" {
		t.Fatalf("the memo aliases the body: %q", m.names)
	}
	m.learn(2, "title")
	long := strings.Repeat("n", maxMemoNameLen+1)
	m.learn(3, long)
	if len(m.names) != 3 {
		t.Fatalf("a name over %d bytes was learnt", maxMemoNameLen)
	}
	// An optional member at 1 shifts the others; then the usual layout
	// again: no copies once each name is known.
	m.learn(1, "hidden")
	allocs := testing.AllocsPerRun(100, func() {
		m.learn(1, "hidden")
		m.learn(2, "slug")
		m.learn(1, "slug")
		m.learn(2, "title")
	})
	if allocs != 0 {
		t.Fatalf("%v allocations a round of known names", allocs)
	}
	for k := range maxMemoNames + 4 {
		m.learn(k, "x")
	}
	if len(m.names) > maxMemoNames {
		t.Fatalf("%d names kept, at most %d", len(m.names), maxMemoNames)
	}
}
