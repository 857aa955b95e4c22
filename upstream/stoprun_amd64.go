//go:build !purego

package upstream

import "golang.org/x/sys/cpu"

// hasAVX2 reports whether stopRun may use stopIndexAVX2.
var hasAVX2 = cpu.X86.HasAVX2

// stopIndexAVX2 is in stoprun_amd64.s: the index of the first quote,
// backslash or control character in b's whole 32-byte blocks, or the end
// of those blocks.
//
//go:noescape
func stopIndexAVX2(b []byte) int

// stopBlocks moves j past the 32-byte blocks of b from j on that hold no
// byte stopRun stops at, 32 bytes an instruction where the CPU has AVX2;
// it returns j unchanged otherwise.
func stopBlocks(b []byte, j int) int {
	if hasAVX2 && len(b)-j >= 32 {
		return j + stopIndexAVX2(b[j:])
	}
	return j
}

// stopMaskAVX2 is in stoprun_amd64.s: the stop bitmap of b's whole 64-byte
// chunks into out (bit k of out[w] for b[64*w+k]) and the bitmap of its
// bytes beyond ASCII into high, as many words as both hold; it returns the
// number written.
//
//go:noescape
func stopMaskAVX2(b []byte, out, high []uint64) int

// stopMaskWords writes the stop bitmap of b's whole 64-byte chunks into
// out, and that of its bytes beyond ASCII into high, where the CPU has
// AVX2 and returns how many words it wrote (0 without AVX2: the scanner
// then keeps no map and goes by stopRun).
func stopMaskWords(b []byte, out, high []uint64) int {
	if !hasAVX2 {
		return 0
	}
	return stopMaskAVX2(b, out, high)
}
