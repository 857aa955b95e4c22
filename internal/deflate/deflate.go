// Package deflate gzips a body held whole in memory into one dynamic
// deflate block whose Huffman codes are always the same: the shared code
// lengths below, in which every literal/length and distance symbol has a
// code, so any input can be coded with them. Every member it writes starts
// with the same bytes (Header), which internal/inflate recognises to reuse
// tables it built once (inflate.Know) instead of building them per body.
//
// The output is a standard gzip member (RFC 1952 around one RFC 1951
// dynamic block): any gzip reader decodes it. Matches are found greedily
// with a hash of four bytes, as the fast levels of zlib and
// klauspost/compress do.
package deflate

import (
	"encoding/binary"
	"hash/crc32"
	"math/bits"
	"sync"
)

const (
	numLitlen = 286
	numDist   = 30

	windowSize = 1 << 15
	minMatch   = 4 // the hash covers four bytes; a 3-byte match rarely pays with these codes
	maxMatch   = 258

	hashBits = 14
)

// The codes of the shared table: reversed (as deflate sends them) with
// their lengths.
var (
	litCode  [numLitlen]uint16
	litLen   [numLitlen]uint8
	distCode [numDist]uint16
	distLen  [numDist]uint8

	// header is the gzip header and the deflate block header (final
	// block, dynamic codes, the shared lengths), headerBits long; its
	// last byte is partial when headerBits%8 != 0.
	header     []byte
	headerBits int
)

// Length symbol (minus 257), its extra bits and base per match length.
var lengthSym [maxMatch + 1]uint8
var lengthBase = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115,
	131, 163, 195, 227, 258}
var lengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
var distBase = [30]uint16{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
	2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
var distExtra = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}

var precodeOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

func init() {
	for s := 0; s < 29; s++ {
		for l := int(lengthBase[s]); l < int(lengthBase[s])+1<<lengthExtra[s] && l <= maxMatch; l++ {
			lengthSym[l] = uint8(s)
		}
	}
	lengthSym[258] = 28
	canonical(sharedLens[:numLitlen], litCode[:], litLen[:])
	canonical(sharedLens[numLitlen:], distCode[:], distLen[:])
	header, headerBits = makeHeader()
}

// canonical assigns the canonical codes (RFC 1951 3.2.2) of lens,
// reversed.
func canonical(lens []uint8, codes []uint16, out []uint8) {
	var count [16]int
	for _, l := range lens {
		count[l]++
	}
	count[0] = 0
	var next [16]int
	code := 0
	for l := 1; l < 16; l++ {
		code = (code + count[l-1]) << 1
		next[l] = code
	}
	for s, l := range lens {
		out[s] = l
		if l != 0 {
			codes[s] = bits.Reverse16(uint16(next[l])) >> (16 - l)
			next[l]++
		}
	}
}

// Header returns the bytes every member Gzip writes starts with and how
// many of their bits are the headers' (the rest of the last byte is the
// block's data). The deflate block header starts at byte 10.
func Header() ([]byte, int) { return header, headerBits }

// bitWriter appends bits, least significant first.
type bitWriter struct {
	dst  []byte
	acc  uint64
	nacc uint
}

func (w *bitWriter) put(v uint64, n uint) {
	w.acc |= v << w.nacc
	w.nacc += n
	if w.nacc >= 32 {
		w.dst = binary.LittleEndian.AppendUint32(w.dst, uint32(w.acc))
		w.acc >>= 32
		w.nacc -= 32
	}
}

func (w *bitWriter) flush() {
	for w.nacc > 0 {
		w.dst = append(w.dst, byte(w.acc))
		w.acc >>= 8
		w.nacc -= min(w.nacc, 8)
	}
	w.acc = 0
}

// makeHeader writes the gzip header and the block header of the shared
// code.
func makeHeader() ([]byte, int) {
	w := bitWriter{dst: []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}}
	// The code lengths run-length coded (RFC 1951 3.2.7): runs of a
	// length as 16 (3-6 repeats of the last), zeros as 17/18.
	type op struct{ sym, extra, nextra uint8 }
	var ops []op
	lens := sharedLens[:]
	for i := 0; i < len(lens); {
		l := lens[i]
		run := 1
		for i+run < len(lens) && lens[i+run] == l {
			run++
		}
		i += run
		if l == 0 {
			for run >= 11 {
				n := min(run, 138)
				ops = append(ops, op{18, uint8(n - 11), 7})
				run -= n
			}
			if run >= 3 {
				ops = append(ops, op{17, uint8(run - 3), 3})
				run = 0
			}
			for ; run > 0; run-- {
				ops = append(ops, op{0, 0, 0})
			}
			continue
		}
		ops = append(ops, op{l, 0, 0})
		run--
		for run >= 3 {
			n := min(run, 6)
			ops = append(ops, op{16, uint8(n - 3), 2})
			run -= n
		}
		for ; run > 0; run-- {
			ops = append(ops, op{l, 0, 0})
		}
	}
	var freq [19]int
	for _, o := range ops {
		freq[o.sym]++
	}
	var plens [19]uint8
	huffmanLengths(freq[:], plens[:], 7)
	var pcodes [19]uint16
	var pl [19]uint8
	canonical(plens[:], pcodes[:], pl[:])
	nclen := 19
	for nclen > 4 && plens[precodeOrder[nclen-1]] == 0 {
		nclen--
	}
	w.put(1, 1) // final
	w.put(2, 2) // dynamic
	w.put(numLitlen-257, 5)
	w.put(numDist-1, 5)
	w.put(uint64(nclen-4), 4)
	for i := 0; i < nclen; i++ {
		w.put(uint64(plens[precodeOrder[i]]), 3)
	}
	for _, o := range ops {
		w.put(uint64(pcodes[o.sym]), uint(pl[o.sym]))
		w.put(uint64(o.extra), uint(o.nextra))
	}
	n := len(w.dst)*8 + int(w.nacc)
	w.flush()
	return w.dst, n
}

// huffmanLengths sets lens to the lengths of a Huffman code for freq whose
// longest code is at most maxLen bits; symbols of frequency 0 get none.
// While the code is too long the frequencies are halved (rounding up, so
// none drops to 0), which flattens the code.
func huffmanLengths(freq []int, lens []uint8, maxLen int) {
	f := append([]int(nil), freq...)
	for {
		type node struct {
			w           int
			left, right int // children, -1 for a leaf
			sym         int
		}
		var nodes []node
		var live []int
		for s, w := range f {
			if w > 0 {
				nodes = append(nodes, node{w, -1, -1, s})
				live = append(live, len(nodes)-1)
			}
		}
		for i := range lens {
			lens[i] = 0
		}
		if len(live) == 1 {
			lens[nodes[0].sym] = 1
			return
		}
		for len(live) > 1 {
			// The two lightest (ties: the earlier made, deterministic).
			a, b := -1, -1
			for _, n := range live {
				if a < 0 || nodes[n].w < nodes[a].w {
					a, b = n, a
				} else if b < 0 || nodes[n].w < nodes[b].w {
					b = n
				}
			}
			nodes = append(nodes, node{nodes[a].w + nodes[b].w, a, b, -1})
			k := live[:0]
			for _, n := range live {
				if n != a && n != b {
					k = append(k, n)
				}
			}
			live = append(k, len(nodes)-1)
		}
		longest := 0
		var walk func(n, d int)
		walk = func(n, d int) {
			if nodes[n].left < 0 {
				lens[nodes[n].sym] = uint8(d)
				longest = max(longest, d)
				return
			}
			walk(nodes[n].left, d+1)
			walk(nodes[n].right, d+1)
		}
		walk(live[0], 0)
		if longest <= maxLen {
			return
		}
		for i := range f {
			if f[i] > 0 {
				f[i] = (f[i] + 1) / 2
			}
		}
	}
}

// tables pools the matcher's hash tables (64 KiB each).
var tables = sync.Pool{New: func() any { return new([1 << hashBits]int32) }}

// hash4 is the table index of four bytes: hb bits (shift = 32-hb),
// masked so that indexing the whole table needs no bounds check.
func hash4(u uint32, shift uint) uint32 { return (u * 0x1e35a7bd) >> (shift & 31) & (1<<hashBits - 1) }

// Gzip appends to dst src gzip-compressed with the shared code and returns
// the result.
func Gzip(dst, src []byte) []byte {
	w := bitWriter{dst: dst}
	full := headerBits / 8
	w.dst = append(w.dst, header[:full]...)
	if r := uint(headerBits % 8); r != 0 {
		w.acc, w.nacc = uint64(header[full]), r
	}
	t := tables.Get().(*[1 << hashBits]int32)
	tokens(&w, src, t, nil)
	tables.Put(t)
	w.put(uint64(litCode[256]), uint(litLen[256]))
	w.flush()
	w.dst = binary.LittleEndian.AppendUint32(w.dst, crc32.ChecksumIEEE(src))
	w.dst = binary.LittleEndian.AppendUint32(w.dst, uint32(len(src)))
	return w.dst
}

// counts are the symbols' frequencies in a corpus (the shared lengths'
// derivation).
type counts struct {
	litlen [numLitlen]int
	dist   [numDist]int
}

// tokens finds matches greedily and writes the symbols, or counts them
// when cnt is not nil.
func tokens(w *bitWriter, src []byte, t *[1 << hashBits]int32, cnt *counts) {
	// Positions are stored plus one: 0 is no position (the pooled table
	// is cleared, and positions are only trusted within the window and
	// after a check of the bytes). A small body takes a part of the table
	// as large as itself (at least 1 KiB): clearing all 64 KiB would cost
	// a 1 KB page a third of its compression.
	hb := min(hashBits, max(8, bits.Len(uint(len(src)))))
	shift := uint(32 - hb)
	clear(t[:1<<hb])
	lit := func(c byte) {
		if cnt != nil {
			cnt.litlen[c]++
			return
		}
		w.put(uint64(litCode[c]), uint(litLen[c]))
	}
	i := 0
	end := len(src) - minMatch
	skip := 32 // literals in a row: after 32 the matcher strides (incompressible input)
	for i <= end {
		cur := binary.LittleEndian.Uint32(src[i:])
		h := hash4(cur, shift)
		cand := int(t[h]) - 1
		t[h] = int32(i + 1)
		if cand < 0 || i-cand > windowSize || binary.LittleEndian.Uint32(src[cand:]) != cur {
			step := skip >> 5
			skip++
			for k := 0; k < step && i < len(src); k++ {
				lit(src[i])
				i++
			}
			continue
		}
		skip = 32
		n := matchLen(src, i, cand)
		// One step of lazy matching: a longer match at the next
		// position takes over, src[i] going as a literal.
		for n < lazyBelow && i+1 <= end {
			nx := binary.LittleEndian.Uint32(src[i+1:])
			h1 := hash4(nx, shift)
			c1 := int(t[h1]) - 1
			t[h1] = int32(i + 2)
			if c1 < 0 || i+1-c1 > windowSize || binary.LittleEndian.Uint32(src[c1:]) != nx {
				break
			}
			n1 := matchLen(src, i+1, c1)
			if n1 <= n {
				break
			}
			lit(src[i])
			i, cand, n = i+1, c1, n1
		}
		d := i - cand
		ls := lengthSym[n]
		ds := distSymbol(d)
		if cnt != nil {
			cnt.litlen[257+int(ls)]++
			cnt.dist[ds]++
		} else {
			w.put(uint64(litCode[257+int(ls)]), uint(litLen[257+int(ls)]))
			if e := lengthExtra[ls]; e != 0 {
				w.put(uint64(n-int(lengthBase[ls])), uint(e))
			}
			w.put(uint64(distCode[ds]), uint(distLen[ds]))
			if e := distExtra[ds]; e != 0 {
				w.put(uint64(d-int(distBase[ds])), uint(e))
			}
		}
		// Index a few positions in the match (its end ones), as the fast
		// levels do.
		next := i + n
		if next-1 <= end && n > 1 {
			p := next - 1
			t[hash4(binary.LittleEndian.Uint32(src[p:]), shift)] = int32(p + 1)
		}
		if next-2 <= end && n > 2 {
			p := next - 2
			t[hash4(binary.LittleEndian.Uint32(src[p:]), shift)] = int32(p + 1)
		}
		i = next
	}
	for ; i < len(src); i++ {
		lit(src[i])
	}
}

// lazyBelow: a match shorter than this is checked against one at the
// next position.
const lazyBelow = 32

// matchLen is the length of the match of src[i:] at cand (at least
// minMatch bytes match), at most maxMatch.
func matchLen(src []byte, i, cand int) int {
	n := minMatch
	limit := min(len(src)-i, maxMatch)
	for n+8 <= limit {
		x := binary.LittleEndian.Uint64(src[i+n:]) ^ binary.LittleEndian.Uint64(src[cand+n:])
		if x != 0 {
			return n + bits.TrailingZeros64(x)>>3
		}
		n += 8
	}
	for n < limit && src[i+n] == src[cand+n] {
		n++
	}
	return n
}

// distSymbol is the distance code of d (1-32768).
func distSymbol(d int) int {
	d--
	if d < 4 {
		return d
	}
	nb := bits.Len(uint(d)) - 1 // d >= 4: the code is 2*nb + the bit below the top
	return 2*nb + int(d>>(nb-1)&1)
}
