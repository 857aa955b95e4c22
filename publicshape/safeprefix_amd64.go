//go:build !purego

package publicshape

import "golang.org/x/sys/cpu"

// hasAVX2 reports whether safePrefix may use safeBlocksAVX2.
var hasAVX2 = cpu.X86.HasAVX2

// safeBlocksAVX2 is in safeprefix_amd64.s: the index of the first byte of
// s's whole 32-byte blocks that safePrefix stops at, or the end of those
// blocks.
//
//go:noescape
func safeBlocksAVX2(s string) int
