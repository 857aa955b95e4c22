//go:build !amd64 || purego

package publicshape

// hasAVX2 is false without safeprefix_amd64.s: safePrefix goes a word at a
// time.
var hasAVX2 = false

// safeBlocksAVX2 is never called without safeprefix_amd64.s.
func safeBlocksAVX2(s string) int { return 0 }
