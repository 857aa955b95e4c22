package publicshape

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// safePrefixRef is safePrefix a byte at a time.
func safePrefixRef(s string) int {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf && htmlSafe[s[i]] {
		i++
	}
	return i
}

// TestSafePrefix: safePrefix stops where a byte-at-a-time loop does, for
// every stopping byte at every offset of strings on both sides of the
// vector threshold and the 32-byte blocks.
func TestSafePrefix(t *testing.T) {
	stops := []byte{'"', '\\', '<', '>', '&', 0x00, 0x1f, 0x80, 0xc3, 0xff, '\n'}
	for _, n := range []int{0, 1, 7, 8, 31, 32, 33, minVectorPrefix - 1, minVectorPrefix, 63, 64, 65, 95, 96, 130, 300} {
		base := strings.Repeat("a/b:c.d-", n/8+1)[:n]
		if got := safePrefix(base); got != n {
			t.Fatalf("len %d, nothing to stop at: %d", n, got)
		}
		for at := 0; at < n; at++ {
			for _, c := range stops {
				b := []byte(base)
				b[at] = c
				if got, want := safePrefix(string(b)), safePrefixRef(string(b)); got != want {
					t.Fatalf("len %d, %#x at %d: %d, want %d", n, c, at, got, want)
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		b := make([]byte, rng.IntN(200))
		for i := range b {
			b[i] = byte(0x20 + rng.IntN(0x5f))
			if rng.IntN(150) == 0 {
				b[i] = byte(rng.IntN(256))
			}
		}
		if got, want := safePrefix(string(b)), safePrefixRef(string(b)); got != want {
			t.Fatalf("%q: %d, want %d", b, got, want)
		}
	}
}

// FuzzSafePrefix: safePrefix equals the byte-at-a-time loop.
func FuzzSafePrefix(f *testing.F) {
	f.Add(strings.Repeat("https://cdn.example.it/x", 4) + "&y")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := safePrefix(s), safePrefixRef(s); got != want {
			t.Fatalf("%q: %d, want %d", s, got, want)
		}
	})
}

// BenchmarkSafePrefix: the safe prefix of plain strings of a few lengths
// (a content item's texts are 5-300 bytes, a vehicle's URLs about 100).
func BenchmarkSafePrefix(b *testing.B) {
	for _, n := range []int{16, 24, 32, 40, 48, 64, 100, 300} {
		s := strings.Repeat("abcdefgh", n/8+1)[:n]
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				if safePrefix(s) != n {
					b.Fatal("wrong prefix")
				}
			}
		})
	}
}
