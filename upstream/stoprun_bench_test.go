package upstream

import (
	"strconv"
	"strings"
	"testing"
)

// BenchmarkStopRun: the end of a string's run at a few lengths (the
// member values of a content record are 5-300 bytes), 32 bytes an
// instruction with AVX2 after the first sixteen (-tags purego for the
// word-at-a-time loop alone).
func BenchmarkStopRun(b *testing.B) {
	for _, n := range []int{8, 40, 130, 300} {
		s := []byte(strings.Repeat("a", n) + `"` + strings.Repeat("x", 4000))
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				if stopRun(s, 0) != n {
					b.Fatal("wrong end")
				}
			}
		})
	}
}
