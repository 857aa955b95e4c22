// Package inflate decompresses one gzip member held whole in memory into
// storage of a size known in advance: the cache's case, where a value read
// from Redis is a gzip body whose plain length the entry records.
//
// It does what a streaming reader (compress/flate, klauspost/compress)
// cannot: it never reads byte by byte through an interface, it refills a
// 64-bit bit buffer eight bytes at a time, its Huffman tables resolve most
// codes with one lookup whose entry also carries the symbol's base and its
// extra bits (one shift consumes both), and while the longest match fits
// in the output before its end it decodes in a fast loop: one refill a
// symbol or run of up to three literals, no check of room, matches copied
// sixteen (or eight) bytes at a time past their end, without a call. It
// allocates nothing, and on the edge's listing pages it takes about half
// the time of klauspost's gzip reader (BenchmarkGunzip, the median of
// seven runs of the ratio within a run: 0.53 for 20 vehicles, 0.46 for
// 100). The design follows libdeflate's decompressor (a bit buffer
// refilled a word at a time, root tables with subtables, a fast loop,
// tables filled by doubling); the code is written for Go's bounds checks.
//
// Building a dynamic block's Huffman tables is about a quarter of the
// inflation of a small or middle page. Know registers one block header
// (the cache's: internal/deflate codes every body with the same code
// lengths), whose tables are built once; a stream whose first block starts
// with exactly its bits takes them (BenchmarkGunzipShared,
// BenchmarkGunzipMix). Any other stream is decoded as before.
//
// Everything a gzip reader checks is checked: the header, the deflate
// stream (over-subscribed or incomplete codes, distances before the start,
// lengths past the end), the CRC-32 and the length in the trailer, and that
// nothing follows the member. A corrupt input returns an error, never a
// panic and never more than n bytes.
package inflate

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/bits"
	"sync"
	"sync/atomic"
)

// Errors returned by Gunzip.
var (
	ErrHeader   = errors.New("inflate: invalid gzip header")
	ErrCorrupt  = errors.New("inflate: corrupt deflate data")
	ErrSize     = errors.New("inflate: data does not have the expected length")
	ErrChecksum = errors.New("inflate: gzip checksum mismatch")
)

// Table entries (uint32): bits 0-5 the bits the symbol takes, its code (or
// what is left of it in a subtable) and the extra bits of a length or
// distance that follow it, so that one shift consumes both; bits 8-11 the
// code's length, where the extra bits start (in a subtable pointer: the
// subtable's index bits; bits 0-5 are then the root bits); the flags
// below; bits 16-31 the value (a literal byte, a length or distance base, a
// subtable's first index).
const (
	flagLiteral = 1 << 12
	flagEOB     = 1 << 13
	flagSub     = 1 << 14
	flagInvalid = 1 << 15

	// 11 as libdeflate's: on listing pages 1.5-2.4% less time than 10
	// (fewer codes go through a subtable; the root table is filled by
	// doubling, so its size costs little).
	litlenRootBits = 11
	distRootBits   = 8
	precodeBits    = 7

	// Table sizes: the root table and room for subtables. zlib's bounds for
	// complete codes (ENOUGH) are 2,342 entries for 288 symbols at root 11
	// (libdeflate's LITLEN_ENOUGH) and 402 for 30 at root 8; build refuses anything larger.
	litlenTableSize = 1<<litlenRootBits + 1024
	distTableSize   = 1<<distRootBits + 768

	maxLitlen = 286
	maxDist   = 30

	// fastRoom is the room in out the fast loop needs: the longest match
	// and the 15 bytes its last chunk may write past it (a match of 3 to
	// 16 bytes writes 32, which this covers too).
	fastRoom = 258 + 15
)

var lengthBase = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115,
	131, 163, 195, 227, 258}
var lengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
var distBase = [30]uint16{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
	2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
var distExtra = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}

// precodeOrder is the order of the code length code's lengths in a dynamic
// block header (RFC 1951 3.2.7).
var precodeOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// Per-symbol entries without the code length (bits 0-5: the extra bits).
var litlenSym, distSym, precodeSym [288]uint32

func init() {
	for s := range litlenSym {
		switch {
		case s < 256:
			litlenSym[s] = flagLiteral | uint32(s)<<16
		case s == 256:
			litlenSym[s] = flagEOB
		case s < maxLitlen:
			litlenSym[s] = uint32(lengthBase[s-257])<<16 | uint32(lengthExtra[s-257])
		default:
			litlenSym[s] = flagInvalid
		}
	}
	for s := range distSym {
		if s < maxDist {
			distSym[s] = uint32(distBase[s])<<16 | uint32(distExtra[s])
		} else {
			distSym[s] = flagInvalid
		}
	}
	for s := range precodeSym {
		precodeSym[s] = uint32(s) << 16
	}
}

// codes holds a block's tables: the literal/length code's and the
// distance code's, side by side (one pointer reaches both).
type codes struct {
	litlen [litlenTableSize]uint32
	dist   [distTableSize]uint32
}

// decoder holds the tables of the block being decoded.
type decoder struct {
	codes
	precode [1 << precodeBits]uint32
	lens    [maxLitlen + 32]uint8
}

var decoders = sync.Pool{New: func() any { return new(decoder) }}

// The fixed code's tables (RFC 1951 3.2.6), built once.
var (
	fixedOnce sync.Once
	fixed     codes
)

func buildFixed() {
	var lens [288 + 32]uint8
	for i := 0; i < 288; i++ {
		switch {
		case i < 144:
			lens[i] = 8
		case i < 256:
			lens[i] = 9
		case i < 280:
			lens[i] = 7
		default:
			lens[i] = 8
		}
	}
	for i := 288; i < 320; i++ {
		lens[i] = 5
	}
	if !build(fixed.litlen[:], lens[:288], litlenRootBits, litlenSym[:]) ||
		!build(fixed.dist[:], lens[288:], distRootBits, distSym[:]) {
		panic("inflate: fixed tables")
	}
}

// knownHeader is a dynamic block header met again and again (the shared
// code of internal/deflate), with its tables built once: a stream that
// starts with its bits takes them as they are. The header's bits decide
// the tables and where the header ends (its parse reads nothing else), so
// a stream whose first bits are these has exactly these tables.
type knownHeader struct {
	codes
	head  []byte // the header's bytes; the last one's low nbits%8 bits are the header's when nbits%8 != 0
	nbits int
}

var known atomic.Pointer[knownHeader]

// Know makes Gunzip reuse the tables of the block header at the start of
// the raw deflate stream hdr (headerBits long) for every stream whose
// first block starts with these bits. It returns false, and changes
// nothing, when hdr does not start with a dynamic block header of that
// length.
func Know(hdr []byte, headerBits int) bool {
	if headerBits < 17 || headerBits > len(hdr)*8 {
		return false
	}
	// Parsed as any stream is: the tables and the bits the header takes.
	in := make([]byte, len(hdr)+8)
	copy(in, hdr)
	bitbuf, nbits, ip, pad, ok := refill(in, 0, 0, 0, 0)
	if !ok || bitbuf>>1&3 != 2 {
		return false
	}
	k := new(knownHeader)
	d := decoder{}
	bitbuf >>= 3
	nbits -= 3
	_, nbits, ip, pad, err := d.readTables(in, bitbuf, nbits, ip, pad)
	if err != nil || ip*8-int(nbits) != headerBits || pad != 0 {
		return false
	}
	k.codes = d.codes
	k.nbits = headerBits
	k.head = append([]byte(nil), hdr[:(headerBits+7)/8]...)
	known.Store(k)
	return true
}

// build fills table for the canonical Huffman code with the code lengths
// lens (root bits looked up first, longer codes through subtables), each
// symbol's entry made from sym. It refuses an over-subscribed code and an
// incomplete one, except a code of one symbol of length 1 and a code of no
// symbols, as zlib and compress/flate do; the rest of their root table
// decodes as invalid.
func build(table []uint32, lens []uint8, root uint, sym []uint32) bool {
	// Counted in four arrays: runs of one length (long runs of unused
	// symbols in every table) make no chain of increments of one
	// counter, each waiting for the last.
	var counts [4][16]int
	var all uint8
	i := 0
	for ; i+4 <= len(lens); i += 4 {
		l0, l1, l2, l3 := lens[i], lens[i+1], lens[i+2], lens[i+3]
		all |= l0 | l1 | l2 | l3
		counts[0][l0&15]++
		counts[1][l1&15]++
		counts[2][l2&15]++
		counts[3][l3&15]++
	}
	for ; i < len(lens); i++ {
		all |= lens[i]
		counts[0][lens[i]&15]++
	}
	if all > 15 {
		return false
	}
	var count [16]int
	for l := range count {
		count[l] = counts[0][l] + counts[1][l] + counts[2][l] + counts[3][l]
	}
	count[0] = 0
	left, maxLen := 1, 0
	for l := 1; l <= 15; l++ {
		left = left<<1 - count[l]
		if left < 0 {
			return false
		}
		if count[l] != 0 {
			maxLen = l
		}
	}
	rootSize := 1 << root
	if maxLen == 0 || (left > 0 && maxLen == 1 && count[1] == 1) {
		for i := 0; i < rootSize; i++ {
			table[i] = flagInvalid
		}
		if maxLen == 0 {
			return true
		}
	} else if left > 0 {
		return false
	}
	// The symbols sorted by code length: the codes' order. Unused
	// symbols come in runs, which the branch predicts.
	var offs [16]int
	for l := 1; l < 15; l++ {
		offs[l+1] = offs[l] + count[l]
	}
	var sorted [288 + 32]uint16
	for s, l := range lens {
		if l != 0 {
			sorted[offs[l&15]] = uint16(s)
			offs[l&15]++
		}
	}
	remain := count
	code := 0
	i = 0
	// The root table as libdeflate fills it: the codes of length l are
	// written once each into the first 2^l entries, which are then copied
	// into the next 2^l before the codes of length l+1 go in, so every
	// entry ends up in each slot whose low l bits are its reversed code.
	// What the copies carry into slots of longer codes (left from an
	// earlier table, or copied from such) is overwritten by those codes or
	// by a subtable's link; only the one-symbol code leaves slots unused,
	// and those were made invalid above.
	rootLen := min(maxLen, int(root))
	for l := 1; l <= rootLen; l++ {
		if l > 1 {
			copy(table[1<<(l-1):1<<l], table[:1<<(l-1)])
		}
		for n := count[l]; n > 0; n-- {
			s := sorted[i]
			i++
			ri := int(bits.Reverse16(uint16(code)) >> (16 - l))
			code++
			table[ri] = sym[s] + uint32(l) | uint32(l)<<8
		}
		code <<= 1
	}
	for size := 1 << rootLen; size < rootSize; size <<= 1 {
		copy(table[size:2*size], table[:size])
	}
	next := rootSize
	prefix, subStart, subBits := -1, 0, 0
	for l := rootLen + 1; l <= maxLen; l++ {
		for n := count[l]; n > 0; n-- {
			s := sorted[i]
			i++
			ri := int(bits.Reverse16(uint16(code)) >> (16 - l))
			code++
			if p := ri & (rootSize - 1); p != prefix {
				// A new subtable: as many index bits as the codes under
				// this prefix need (zlib's inflate_table).
				prefix, subStart = p, next
				subBits = l - int(root)
				room := 1 << subBits
				for subBits+int(root) < maxLen {
					room -= remain[subBits+int(root)]
					if room <= 0 {
						break
					}
					subBits++
					room <<= 1
				}
				next += 1 << subBits
				if next > len(table) || subStart >= 1<<16 {
					return false
				}
				table[p] = flagSub | uint32(subBits)<<8 | uint32(subStart)<<16 | uint32(root)
			}
			sl := l - int(root)
			if sl > subBits {
				return false
			}
			e := sym[s] + uint32(sl) | uint32(sl)<<8
			for k := ri >> root; k < 1<<subBits; k += 1 << sl {
				table[subStart+k] = e
			}
			remain[l]--
		}
		code <<= 1
	}
	return true
}

// Gunzip decompresses src, which must be exactly one gzip member whose data
// is n bytes, into dst's storage when it has room for n bytes (a new slice
// otherwise), and returns the n bytes.
func Gunzip(dst, src []byte, n int) ([]byte, error) {
	body, err := gzipHeader(src)
	if err != nil {
		return nil, err
	}
	if n < 0 || len(body) < 8 {
		return nil, ErrCorrupt
	}
	out := dst[:0]
	if cap(out) >= n {
		out = out[:n]
	} else {
		out = make([]byte, n)
	}
	d := decoders.Get().(*decoder)
	used, err := d.inflate(out, body[:len(body)-8])
	decoders.Put(d)
	if err != nil {
		return nil, err
	}
	if used != len(body)-8 {
		// Bytes between the deflate stream's end and the trailer: the
		// member does not end where src does.
		return nil, ErrSize
	}
	trailer := body[len(body)-8:]
	if binary.LittleEndian.Uint32(trailer[4:]) != uint32(n) {
		return nil, ErrSize
	}
	if crc32.ChecksumIEEE(out) != binary.LittleEndian.Uint32(trailer) {
		return nil, ErrChecksum
	}
	return out, nil
}

// gzipHeader returns what follows src's gzip header (RFC 1952 2.3).
func gzipHeader(src []byte) ([]byte, error) {
	const (
		fhcrc    = 1 << 1
		fextra   = 1 << 2
		fname    = 1 << 3
		fcomment = 1 << 4
	)
	if len(src) < 10 || src[0] != 0x1f || src[1] != 0x8b || src[2] != 8 || src[3]&0xe0 != 0 {
		return nil, ErrHeader
	}
	flg := src[3]
	p := 10
	if flg&fextra != 0 {
		if len(src) < p+2 {
			return nil, ErrHeader
		}
		p += 2 + int(binary.LittleEndian.Uint16(src[p:]))
		if p > len(src) {
			return nil, ErrHeader
		}
	}
	for _, f := range [2]byte{fname, fcomment} {
		if flg&f == 0 {
			continue
		}
		for {
			if p >= len(src) {
				return nil, ErrHeader
			}
			p++
			if src[p-1] == 0 {
				break
			}
		}
	}
	if flg&fhcrc != 0 {
		if len(src) < p+2 {
			return nil, ErrHeader
		}
		if uint16(crc32.ChecksumIEEE(src[:p])) != binary.LittleEndian.Uint16(src[p:]) {
			return nil, ErrHeader
		}
		p += 2
	}
	return src[p:], nil
}

// inflate decodes the raw deflate stream in into out, which it must fill
// exactly, and returns how many bytes of in the stream took (its last byte
// included).
func (d *decoder) inflate(out, in []byte) (int, error) {
	var (
		bitbuf uint64 // the next nbits bits of the stream, least significant first; above them either zeros or the stream's next bits
		nbits  uint   // valid bits in bitbuf
		ip     int    // next byte of in to load
		pad    int    // zero bytes loaded past in's end
		o      int    // next byte of out to write
	)
	// The first block's header may be the known one.
	var c *codes
	final := false
	var btype uint64
	if k := known.Load(); k != nil && len(in) > k.nbits/8 {
		full, rem := k.nbits/8, uint(k.nbits%8)
		if string(in[:full]) == string(k.head[:full]) && (in[full]^k.head[min(full, len(k.head)-1)])&(1<<rem-1) == 0 {
			final = k.head[0]&1 != 0
			c = &k.codes
			ip = full
			if rem != 0 {
				bitbuf, nbits, ip = uint64(in[full])>>rem, 8-rem, full+1
			}
		}
	}
	for {
		if c != nil {
			goto decode
		}
		if nbits < 3 {
			var ok bool
			if bitbuf, nbits, ip, pad, ok = refill(in, bitbuf, nbits, ip, pad); !ok {
				return 0, ErrCorrupt
			}
		}
		final = bitbuf&1 != 0
		btype = (bitbuf >> 1) & 3
		bitbuf >>= 3
		nbits -= 3
		switch btype {
		case 0:
			// Stored: from the next byte boundary, LEN, NLEN and LEN bytes.
			nbits -= nbits & 7
			if int(nbits>>3) < pad {
				return 0, ErrCorrupt
			}
			ip -= int(nbits>>3) - pad
			bitbuf, nbits, pad = 0, 0, 0
			if ip+4 > len(in) {
				return 0, ErrCorrupt
			}
			ln := int(binary.LittleEndian.Uint16(in[ip:]))
			if uint16(ln) != ^binary.LittleEndian.Uint16(in[ip+2:]) {
				return 0, ErrCorrupt
			}
			ip += 4
			if ip+ln > len(in) || o+ln > len(out) {
				return 0, ErrCorrupt
			}
			copy(out[o:], in[ip:ip+ln])
			ip += ln
			o += ln
			if final {
				return d.finish(o, len(out), ip, 0, 0)
			}
			continue
		case 1:
			fixedOnce.Do(buildFixed)
			c = &fixed
		case 2:
			var err error
			if bitbuf, nbits, ip, pad, err = d.readTables(in, bitbuf, nbits, ip, pad); err != nil {
				return 0, err
			}
			c = &d.codes
		default:
			return 0, ErrCorrupt
		}
	decode:
		// The block's codes.
		cur := c
		c = nil // the next block reads its header
		lt, dt := &cur.litlen, &cur.dist
		var eob bool
		if ip+8 <= len(in) && o <= len(out)-fastRoom {
			var err error
			if bitbuf, nbits, ip, o, eob, err = fast(out, in, cur, bitbuf, nbits, ip, o); err != nil {
				return 0, err
			}
		}
		for !eob {
			if nbits < 48 {
				if ip+8 <= len(in) {
					bitbuf |= binary.LittleEndian.Uint64(in[ip:]) << (nbits & 63)
					k := (63 - nbits) >> 3
					ip += int(k)
					nbits += k << 3
				} else {
					var ok bool
					if bitbuf, nbits, ip, pad, ok = refill(in, bitbuf, nbits, ip, pad); !ok {
						return 0, ErrCorrupt
					}
				}
			}
			e := lt[bitbuf&(1<<litlenRootBits-1)]
			if e&flagSub != 0 {
				bitbuf >>= litlenRootBits
				nbits -= litlenRootBits
				e = lt[(e>>16+uint32(bitbuf)&(1<<(e>>8&15)-1))%litlenTableSize]
			}
			saved := bitbuf
			bitbuf >>= e & 63
			nbits -= uint(e & 63)
			if e&flagLiteral != 0 {
				if o >= len(out) {
					return 0, ErrCorrupt
				}
				out[o] = byte(e >> 16)
				o++
				// Literals come in runs: the next code, if it is a literal
				// of the root table (at most 11 bits; 33 are loaded),
				// without going round the loop.
				e = lt[bitbuf&(1<<litlenRootBits-1)]
				if e&flagLiteral != 0 && o < len(out) {
					bitbuf >>= e & 63
					nbits -= uint(e & 63)
					out[o] = byte(e >> 16)
					o++
				}
				continue
			}
			if e&(flagEOB|flagInvalid) != 0 {
				if e&flagInvalid == 0 {
					eob = true
					break
				}
				return 0, ErrCorrupt
			}
			length := int(e>>16) + int(saved&(1<<(e&63)-1)>>(e>>8&15))

			e = dt[bitbuf&(1<<distRootBits-1)]
			if e&flagSub != 0 {
				bitbuf >>= distRootBits
				nbits -= distRootBits
				e = dt[(e>>16+uint32(bitbuf)&(1<<(e>>8&15)-1))%distTableSize]
			}
			if e&flagInvalid != 0 {
				return 0, ErrCorrupt
			}
			saved = bitbuf
			bitbuf >>= e & 63
			nbits -= uint(e & 63)
			distance := int(e>>16) + int(saved&(1<<(e&63)-1)>>(e>>8&15))
			if distance > o || length > len(out)-o {
				return 0, ErrCorrupt
			}
			src := o - distance
			end := o + length
			if length > 16 && distance >= length {
				// A long match that does not overlap its source (most of
				// a listing page's: a record's keys and values repeat the
				// record before): one memmove, which moves 17-64 bytes in
				// four vector loads and stores. On the edge's listing
				// pages the decode takes 13-17% less time for 100
				// vehicles and about 6% less for 20 (BenchmarkGunzip,
				// minimum of ten alternating runs, two sets).
				copy(out[o:end], out[src:src+length])
				o = end
				continue
			}
			if distance >= 8 && end+8 <= len(out) {
				// Eight bytes at a time: every word read was written
				// before (distance >= 8); the last may write up to seven
				// bytes past end, which later output overwrites.
				for o < end {
					binary.LittleEndian.PutUint64(out[o:], binary.LittleEndian.Uint64(out[src:]))
					o += 8
					src += 8
				}
				o = end
				continue
			}
			for ; o < end; o++ {
				out[o] = out[src]
				src++
			}
		}
		if final {
			return d.finish(o, len(out), ip, nbits, pad)
		}
	}
}

// fast decodes the symbols of a block while a word of input and the
// longest match with a chunk's overrun fit (ip+8 <= len(in), o <=
// len(out)-fastRoom), and returns the state where it stops: at the end of
// the block (eob), or where the careful loop takes over. It is a function
// of its own, without calls, so that its state stays in registers.
//
// One refill a round (then 56 bits or more are loaded, and a match takes
// at most 48: a 15-bit length code, 5 extra bits, a 15-bit distance code,
// 13 extra bits), up to three literals a round, no checks of room in out.
// nbits is right modulo 64 only (it holds at most 63): a symbol takes its
// whole entry off it, whose bits 6-7 are zero, which saves a mask.
func fast(out, in []byte, c *codes, bitbuf uint64, nbits uint, ip, o int) (uint64, uint, int, int, bool, error) {
	out = out[:len(out):len(out)] // one length for every bounds check
	inEnd, outEnd := len(in)-8, len(out)-fastRoom
	if ip > inEnd || o > outEnd {
		return bitbuf, nbits, ip, o, false, nil
	}
	// Each symbol's root entry is looked up before the refill that comes
	// first in its round (libdeflate's preload): right after a word refill
	// all 64 bits of bitbuf are the stream's, a round takes at most 48,
	// so at least 16 of the next symbol's bits are in place before the
	// refill, and the refill only ORs in the same bits above them. The
	// lookup then waits for the last shift, not for the next word's load.
	bitbuf |= binary.LittleEndian.Uint64(in[ip:]) << (nbits & 63)
	ip += int(7 - (nbits>>3)&7)
	nbits |= 56
	e := c.litlen[bitbuf&(1<<litlenRootBits-1)]
	for ip <= inEnd && o <= outEnd {
		bitbuf |= binary.LittleEndian.Uint64(in[ip:]) << (nbits & 63)
		ip += int(7 - (nbits>>3)&7)
		nbits |= 56
		if e&flagSub != 0 {
			bitbuf >>= litlenRootBits
			nbits -= litlenRootBits
			e = c.litlen[(e>>16+uint32(bitbuf)&(1<<(e>>8&15)-1))%litlenTableSize]
		}
		saved := bitbuf
		bitbuf >>= e & 63
		nbits -= uint(e)
		if e&flagLiteral != 0 {
			// At most 15 bits taken: two more literals of the root
			// table (11 bits each) are loaded, and the next round's
			// entry after them (at most 37 bits taken).
			out[o] = byte(e >> 16)
			o++
			e = c.litlen[bitbuf&(1<<litlenRootBits-1)]
			if e&flagLiteral != 0 {
				bitbuf >>= e & 63
				nbits -= uint(e)
				out[o] = byte(e >> 16)
				o++
				e = c.litlen[bitbuf&(1<<litlenRootBits-1)]
				if e&flagLiteral != 0 {
					bitbuf >>= e & 63
					nbits -= uint(e)
					out[o] = byte(e >> 16)
					o++
					e = c.litlen[bitbuf&(1<<litlenRootBits-1)]
				}
			}
			continue
		}
		if e&(flagEOB|flagInvalid) != 0 {
			if e&flagInvalid == 0 {
				return bitbuf, nbits & 63, ip, o, true, nil
			}
			return bitbuf, nbits, ip, o, false, ErrCorrupt
		}
		length := int(e>>16) + int(saved&(1<<(e&63)-1)>>(e>>8&15))

		e = c.dist[bitbuf&(1<<distRootBits-1)]
		if e&flagSub != 0 {
			bitbuf >>= distRootBits
			nbits -= distRootBits
			e = c.dist[(e>>16+uint32(bitbuf)&(1<<(e>>8&15)-1))%distTableSize]
		}
		if e&flagInvalid != 0 {
			return bitbuf, nbits, ip, o, false, ErrCorrupt
		}
		saved = bitbuf
		bitbuf >>= e & 63
		nbits -= uint(e)
		distance := int(e>>16) + int(saved&(1<<(e&63)-1)>>(e>>8&15))
		if distance > o {
			return bitbuf, nbits, ip, o, false, ErrCorrupt
		}
		// The next round's entry (at most 48 bits taken), before the
		// copy's stores.
		e = c.litlen[bitbuf&(1<<litlenRootBits-1)]
		// Room for length bytes and a chunk past them is there: copy
		// chunks, the last may write up to 15 bytes past the match,
		// which later output overwrites.
		src := o - distance
		end := o + length
		switch {
		case distance >= 16:
			// Every chunk read was written before. Two chunks
			// whatever the length: no branch to mispredict for
			// most of a page's matches.
			*(*[16]byte)(out[o:]) = *(*[16]byte)(out[src:])
			*(*[16]byte)(out[o+16:]) = *(*[16]byte)(out[src+16:])
			for p := 32; p < length; p += 16 {
				*(*[16]byte)(out[o+p:]) = *(*[16]byte)(out[src+p:])
			}
		case distance >= 8:
			// Every word read was written before.
			for o < end {
				binary.LittleEndian.PutUint64(out[o:], binary.LittleEndian.Uint64(out[src:]))
				o += 8
				src += 8
			}
		case distance == 1:
			w := uint64(out[src]) * 0x0101010101010101
			for o < end {
				binary.LittleEndian.PutUint64(out[o:], w)
				o += 8
			}
		default:
			// A word from distance back has its first distance
			// bytes right: step by distance.
			for o < end {
				binary.LittleEndian.PutUint64(out[o:], binary.LittleEndian.Uint64(out[src:]))
				o += distance
				src += distance
			}
		}
		o = end
	}
	return bitbuf, nbits & 63, ip, o, false, nil
}

// finish checks that the stream filled out (o of outLen bytes) and did not
// take the zero bytes loaded past its input, and returns the bytes taken.
func (d *decoder) finish(o, outLen, ip int, nbits uint, pad int) (int, error) {
	if o != outLen {
		return 0, ErrSize
	}
	whole := int(nbits >> 3) // unread whole bytes loaded; the partial one is the stream's last
	if whole < pad {
		return 0, ErrCorrupt
	}
	return ip - (whole - pad), nil
}

// readTables reads a dynamic block's code lengths and builds its tables.
// The bit buffer holds at least 56 bits on entry.
func (d *decoder) readTables(in []byte, b uint64, n uint, ip, pad int) (uint64, uint, int, int, error) {
	var ok bool
	if b, n, ip, pad, ok = refill(in, b, n, ip, pad); !ok {
		return b, n, ip, pad, ErrCorrupt
	}
	nlit := int(b&31) + 257
	ndist := int(b>>5&31) + 1
	nclen := int(b>>10&15) + 4
	b >>= 14
	n -= 14
	if nlit > maxLitlen || ndist > maxDist {
		return b, n, ip, pad, ErrCorrupt
	}
	var clens [19]uint8
	for i := 0; i < nclen; i++ {
		if n < 3 {
			if b, n, ip, pad, ok = refill(in, b, n, ip, pad); !ok {
				return b, n, ip, pad, ErrCorrupt
			}
		}
		clens[precodeOrder[i]] = uint8(b & 7)
		b >>= 3
		n -= 3
	}
	if !build(d.precode[:], clens[:], precodeBits, precodeSym[:]) {
		return b, n, ip, pad, ErrCorrupt
	}
	lens := d.lens[:nlit+ndist]
	for i := 0; i < len(lens); {
		if n < 14 {
			if ip+8 <= len(in) {
				b |= binary.LittleEndian.Uint64(in[ip:]) << (n & 63)
				ip += int(7 - (n>>3)&7)
				n |= 56
			} else if b, n, ip, pad, ok = refill(in, b, n, ip, pad); !ok {
				return b, n, ip, pad, ErrCorrupt
			}
		}
		e := d.precode[b&(1<<precodeBits-1)]
		cl := uint(e & 63)
		if e&flagInvalid != 0 || cl == 0 {
			return b, n, ip, pad, ErrCorrupt
		}
		b >>= cl
		n -= cl
		sym := e >> 16
		if sym < 16 {
			lens[i] = uint8(sym)
			i++
			continue
		}
		var rep int
		var val uint8
		switch sym {
		case 16:
			if i == 0 {
				return b, n, ip, pad, ErrCorrupt
			}
			val = lens[i-1]
			rep = 3 + int(b&3)
			b >>= 2
			n -= 2
		case 17:
			rep = 3 + int(b&7)
			b >>= 3
			n -= 3
		default:
			rep = 11 + int(b&127)
			b >>= 7
			n -= 7
		}
		if i+rep > len(lens) {
			return b, n, ip, pad, ErrCorrupt
		}
		for ; rep > 0; rep-- {
			lens[i] = val
			i++
		}
	}
	if lens[256] == 0 {
		// No end-of-block code: the block could never end.
		return b, n, ip, pad, ErrCorrupt
	}
	if !build(d.litlen[:], lens[:nlit], litlenRootBits, litlenSym[:]) ||
		!build(d.dist[:], lens[nlit:], distRootBits, distSym[:]) {
		return b, n, ip, pad, ErrCorrupt
	}
	return b, n, ip, pad, nil
}

// refill loads bytes of in into the bit buffer: a word when eight bytes are
// left (then it holds at least 56 bits), else byte by byte until it holds
// more than 48, loading zeros past the end of in, at most eight bytes of
// them (a stream that takes them is corrupt, which finish finds).
func refill(in []byte, bitbuf uint64, nbits uint, ip, pad int) (uint64, uint, int, int, bool) {
	if ip+8 <= len(in) {
		bitbuf |= binary.LittleEndian.Uint64(in[ip:]) << (nbits & 63)
		k := (63 - nbits) >> 3
		return bitbuf, nbits + k<<3, ip + int(k), pad, true
	}
	for nbits <= 48 {
		if ip < len(in) {
			bitbuf |= uint64(in[ip]) << nbits
			ip++
		} else {
			if pad >= 8 {
				return bitbuf, nbits, ip, pad, false
			}
			pad++
		}
		nbits += 8
	}
	return bitbuf, nbits, ip, pad, true
}
