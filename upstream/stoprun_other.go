//go:build !amd64 || purego

package upstream

// stopBlocks is stoprun_amd64.go's block step; without it stopRun goes a
// word at a time from j.
func stopBlocks(b []byte, j int) int { return j }

// stopMaskWords is stoprun_amd64.go's bitmap step; without it no stop map
// is built.
func stopMaskWords(b []byte, out, high []uint64) int { return 0 }

// hasAVX2 is false without stoprun_amd64.s.
var hasAVX2 = false
