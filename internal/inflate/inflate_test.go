package inflate

import (
	"bytes"
	"compress/flate"
	stdgzip "compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"syscall"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/dealer-edge/dealer-edge/internal/deflate"
)

// reference decompresses src with klauspost's gzip reader under Gunzip's
// rules (one member of exactly n bytes), the edge's decoder before this
// package.
func reference(src []byte, n int) ([]byte, error) {
	br := bytes.NewReader(src)
	r, err := gzip.NewReader(br)
	if err != nil {
		return nil, err
	}
	r.Multistream(false)
	out := make([]byte, n)
	if _, err := io.ReadFull(r, out); err != nil {
		return nil, err
	}
	var one [1]byte
	if m, err := r.Read(one[:]); m != 0 || err != io.EOF {
		return nil, errors.New("longer")
	}
	if br.Len() != 0 {
		return nil, errors.New("trailing bytes")
	}
	return out, nil
}

func gzipLevel(t testing.TB, data []byte, level int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, level)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	w.Close()
	return buf.Bytes()
}

// stdGzip compresses with the standard library, whose encoder makes other
// block shapes (stored blocks at level 0, fixed codes for short inputs).
func stdGzip(t testing.TB, data []byte, level int, hdr stdgzip.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := stdgzip.NewWriterLevel(&buf, level)
	if err != nil {
		t.Fatal(err)
	}
	w.Header = hdr
	w.Write(data)
	w.Close()
	return buf.Bytes()
}

func corpus(t testing.TB) map[string][]byte {
	t.Helper()
	c := map[string][]byte{"empty": {}, "one byte": {'x'}}
	for _, f := range []string{"listing20.json", "listing100.json"} {
		b, err := os.ReadFile("testdata/" + f)
		if err != nil {
			t.Fatal(err)
		}
		c[f] = b
	}
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 70000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	c["random 70 KB (stored blocks)"] = random
	text := make([]byte, 100000)
	for i := range text {
		text[i] = "aaaaabbbccd  \n{}\":,"[rng.IntN(19)]
	}
	c["skewed letters (long codes)"] = text
	c["run of one byte"] = bytes.Repeat([]byte{'z'}, 50000)
	c["short pattern"] = bytes.Repeat([]byte("abcabcab"), 4000)
	return c
}

func TestGunzipRoundTrip(t *testing.T) {
	for name, data := range corpus(t) {
		var payloads []struct {
			how string
			gz  []byte
		}
		for _, level := range []int{gzip.HuffmanOnly, gzip.NoCompression, 1, 2, 5, gzip.DefaultCompression, 9} {
			payloads = append(payloads, struct {
				how string
				gz  []byte
			}{fmt.Sprintf("klauspost level %d", level), gzipLevel(t, data, level)})
		}
		for _, level := range []int{0, 1, 6, 9} {
			payloads = append(payloads, struct {
				how string
				gz  []byte
			}{"stdlib", stdGzip(t, data, level, stdgzip.Header{})})
		}
		payloads = append(payloads, struct {
			how string
			gz  []byte
		}{"stdlib with name, comment, extra", stdGzip(t, data, 6, stdgzip.Header{Name: "a.json", Comment: "c", Extra: []byte{1, 2, 3, 4}})})
		for _, p := range payloads {
			got, err := Gunzip(nil, p.gz, len(data))
			if err != nil {
				t.Errorf("%s, %s: %v", name, p.how, err)
				continue
			}
			if !bytes.Equal(got, data) {
				t.Errorf("%s, %s: decoded data differs", name, p.how)
			}
			// Into lent storage with room, and with garbage in it.
			dst := bytes.Repeat([]byte{0xa5}, len(data)+100)
			got, err = Gunzip(dst[:0], p.gz, len(data))
			if err != nil || !bytes.Equal(got, data) || (len(data) > 0 && &got[0] != &dst[0]) {
				t.Errorf("%s, %s: into dst: err %v, equal %v", name, p.how, err, bytes.Equal(got, data))
			}
		}
	}
}

func TestGunzipRefuses(t *testing.T) {
	data, err := os.ReadFile("testdata/listing20.json")
	if err != nil {
		t.Fatal(err)
	}
	gz := gzipLevel(t, data, gzip.DefaultCompression)
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), gz...)) }
	hcrc := stdGzip(t, data, 6, stdgzip.Header{})
	hcrc[3] |= 2 // FHCRC with a header CRC that is not there
	cases := []struct {
		name string
		gz   []byte
		n    int
		want error
	}{
		{"shorter n", gz, len(data) - 1, nil},
		{"longer n", gz, len(data) + 1, nil},
		{"bad magic", mut(func(b []byte) []byte { b[0] = 0; return b }), len(data), ErrHeader},
		{"not deflate", mut(func(b []byte) []byte { b[2] = 7; return b }), len(data), ErrHeader},
		{"reserved flag", mut(func(b []byte) []byte { b[3] = 0x20; return b }), len(data), ErrHeader},
		{"header CRC wrong", hcrc, len(data), nil},
		{"truncated header", gz[:9], len(data), ErrHeader},
		{"truncated stream", gz[:len(gz)/2], len(data), nil},
		{"no trailer", gz[:len(gz)-8], len(data), nil},
		{"trailer short", gz[:len(gz)-1], len(data), nil},
		{"bytes after the member", append(append([]byte(nil), gz...), 0), len(data), nil},
		{"two members", append(append([]byte(nil), gz...), gz...), len(data), nil},
		{"CRC wrong", mut(func(b []byte) []byte { b[len(b)-8] ^= 1; return b }), len(data), ErrChecksum},
		{"ISIZE wrong", mut(func(b []byte) []byte { b[len(b)-4] ^= 1; return b }), len(data), ErrSize},
		{"block type 3", []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 0x07, 0, 0, 0, 0, 0, 0, 0, 0}, 0, ErrCorrupt},
		{"stored NLEN wrong", []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 0x01, 0x01, 0x00, 0x00, 0x00, 'a', 0, 0, 0, 0, 1, 0, 0, 0}, 1, ErrCorrupt},
		{"distance before the start", rawGzip(fixedBlock(t, "m1:3", "eob")), 3, ErrCorrupt},
		{"distance past the output so far", rawGzip(fixedBlock(t, "a", "m2:3", "eob")), 4, ErrCorrupt},
		{"length code 286", rawGzip(fixedBlock(t, "a", "sym286", "eob")), 1, ErrCorrupt},
		{"distance code 30", rawGzip(fixedBlock(t, "a", "m31:3", "eob")), 4, ErrCorrupt},
		{"match past n", rawGzip(fixedBlock(t, "a", "m1:10", "eob")), 5, ErrCorrupt},
		{"literal past n", rawGzip(fixedBlock(t, "a", "b", "eob")), 1, ErrCorrupt},
		{"no end of block", rawGzip(fixedBlock(t, "a")), 1, nil},
	}
	for _, c := range cases {
		got, err := Gunzip(nil, c.gz, c.n)
		if err == nil {
			t.Errorf("%s: accepted (%d bytes)", c.name, len(got))
			continue
		}
		if c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if _, rerr := reference(c.gz, c.n); rerr == nil {
			t.Errorf("%s: the reference decoder accepts it", c.name)
		}
	}
}

// fixedBlock writes one final block with the fixed code: "eob", "symN"
// (litlen symbol N), "mD:L" (a match of length L, 3..10, at distance code D-1:
// distances 1-4 have codes 0-3, 31 stands for the invalid code 30), or a
// literal.
func fixedBlock(t *testing.T, toks ...string) []byte {
	t.Helper()
	var w fixedWriter
	put, code, sym := w.put, w.code, w.sym
	put(1, 1) // final
	put(1, 2) // fixed code
	for _, tok := range toks {
		var d, l, n int
		switch {
		case tok == "eob":
			sym(256)
		case len(tok) > 3 && tok[:3] == "sym":
			for _, c := range tok[3:] {
				n = n*10 + int(c-'0')
			}
			sym(n)
		case tok[0] == 'm':
			if _, err := fmt.Sscanf(tok, "m%d:%d", &d, &l); err != nil {
				t.Fatal(err)
			}
			sym(257 + l - 3)
			if d == 31 {
				code(30, 5)
			} else {
				code(uint64(d-1), 5)
			}
		default:
			sym(int(tok[0]))
		}
	}
	put(0, 7)
	return w.out
}

// fixedWriter writes a deflate stream with the fixed code, bit by bit.
type fixedWriter struct {
	out  []byte
	acc  uint64
	nacc uint
}

// put writes the n low bits of v, least significant first.
func (w *fixedWriter) put(v uint64, n uint) {
	w.acc |= v << w.nacc
	w.nacc += n
	for w.nacc >= 8 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
		w.nacc -= 8
	}
}

// code writes a Huffman code of n bits, most significant bit first.
func (w *fixedWriter) code(c uint64, n uint) {
	for i := int(n) - 1; i >= 0; i-- {
		w.put(c>>uint(i)&1, 1)
	}
}

// sym writes literal/length symbol s in the fixed code.
func (w *fixedWriter) sym(s int) {
	switch {
	case s < 144:
		w.code(uint64(0x30+s), 8)
	case s < 256:
		w.code(uint64(0x190+s-144), 9)
	case s < 280:
		w.code(uint64(s-256), 7)
	default:
		w.code(uint64(0xc0+s-280), 8)
	}
}

// rawGzip wraps a raw deflate stream in a gzip header and a zero trailer.
func rawGzip(deflate []byte) []byte {
	b := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}
	b = append(b, deflate...)
	return append(b, 0, 0, 0, 0, 0, 0, 0, 0)
}

func TestBuildRefusesBadCodes(t *testing.T) {
	var table [litlenTableSize]uint32
	cases := []struct {
		name string
		lens []uint8
		ok   bool
	}{
		{"complete", []uint8{1, 2, 3, 3}, true},
		{"over-subscribed", []uint8{1, 1, 1}, false},
		{"incomplete", []uint8{1, 2, 0, 0}, false},
		{"one code of length 1", []uint8{0, 1, 0}, true},
		{"one code of length 2", []uint8{0, 2, 0}, false},
		{"no codes", []uint8{0, 0, 0}, true},
		{"long codes", append(bytes.Repeat([]uint8{15}, 2), append([]uint8{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}, 14)...), true},
	}
	for _, c := range cases {
		if got := build(table[:], c.lens, litlenRootBits, litlenSym[:]); got != c.ok {
			t.Errorf("%s: build %v, want %v", c.name, got, c.ok)
		}
	}
}

// FuzzGunzip: on any input Gunzip agrees with klauspost's gzip reader
// (both refuse, or both return the same bytes) and never panics. The seeds
// are valid members of the corpus, so mutations explore every block type.
func FuzzGunzip(f *testing.F) {
	for _, data := range corpus(f) {
		if len(data) > 20000 {
			data = data[:20000]
		}
		f.Add(gzipLevel(f, data, gzip.DefaultCompression), uint16(len(data)))
		f.Add(gzipLevel(f, data, gzip.HuffmanOnly), uint16(len(data)))
		f.Add(stdGzip(f, data, 0, stdgzip.Header{}), uint16(len(data)))
		f.Add(stdGzip(f, data[:min(len(data), 200)], 9, stdgzip.Header{Name: "x"}), uint16(min(len(data), 200)))
	}
	f.Fuzz(func(t *testing.T, gz []byte, n16 uint16) {
		n := int(n16)
		got, err := Gunzip(nil, gz, n)
		want, werr := reference(gz, n)
		if (err == nil) != (werr == nil) {
			// A stream whose trailer is wrong fails both; one that only
			// this package refuses must be one the RFC forbids.
			t.Fatalf("Gunzip err %v, reference err %v", err, werr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("Gunzip and the reference decode different bytes")
		}
	})
}

// FuzzRoundTrip: whatever the data and the compression level, Gunzip gives
// the data back, and so it does for internal/deflate's shared code (with
// its header known, as the cache has it).
func FuzzRoundTrip(f *testing.F) {
	knowShared(f)
	f.Add([]byte("hello, hello, hello"), int8(6))
	f.Add(bytes.Repeat([]byte{0}, 1000), int8(-2))
	f.Fuzz(func(t *testing.T, data []byte, level int8) {
		lv := int(level)%11 - 1 // -1 (default) .. 9, and -2 (Huffman only)
		if lv < -2 {
			lv = -2
		}
		var gz []byte
		if level%2 == 0 {
			gz = gzipLevel(t, data, lv)
		} else {
			var buf bytes.Buffer
			fw, err := flate.NewWriter(&buf, lv)
			if err != nil {
				t.Skip()
			}
			fw.Write(data)
			fw.Close()
			gz = append([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}, buf.Bytes()...)
			gz = binary.LittleEndian.AppendUint32(gz, crc32.ChecksumIEEE(data))
			gz = binary.LittleEndian.AppendUint32(gz, uint32(len(data)))
		}
		got, err := Gunzip(nil, gz, len(data))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("round trip at level %d: err %v", lv, err)
		}
		got, err = Gunzip(nil, deflate.Gzip(nil, data), len(data))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("round trip of the shared code: err %v", err)
		}
	})
}

// BenchmarkGunzip decodes the edge's listing pages as the cache stores
// them (level 6, the default) and a 100-vehicle page at level 1, whose
// blocks are smaller (more tables built per byte). Besides ns/op it
// reports the process's CPU per decode (cpu-ns/op, from getrusage: on a
// shared machine CPU says more than wall time).
func BenchmarkGunzip(b *testing.B) {
	for _, in := range []struct {
		file, name string
		level      int
	}{
		{"listing1.json", "listing1.json", gzip.DefaultCompression},
		{"listing5.json", "listing5.json", gzip.DefaultCompression},
		{"listing20.json", "listing20.json", gzip.DefaultCompression},
		{"listing100.json", "listing100.json", gzip.DefaultCompression},
		{"listing100.json", "listing100.json@1", 1},
	} {
		data, err := os.ReadFile("testdata/" + in.file)
		if err != nil {
			b.Fatal(err)
		}
		gz := gzipLevel(b, data, in.level)
		dst := make([]byte, len(data))
		b.Run(in.name+"/inflate", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			cpu0 := selfCPU()
			for b.Loop() {
				if _, err := Gunzip(dst, gz, len(data)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(selfCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
		b.Run(in.name+"/klauspost", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			r, _ := gzip.NewReader(bytes.NewReader(gz))
			cpu0 := selfCPU()
			for b.Loop() {
				r.Reset(bytes.NewReader(gz))
				r.Multistream(false)
				if _, err := io.ReadFull(r, dst); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(selfCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// selfCPU is this process's user+system CPU time in nanoseconds.
func selfCPU() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// matchStream writes one final fixed-code block: the literals lits, a
// match of length at distance, the literals tail, the end of the block.
func matchStream(lits []byte, distance, length int, tail []byte) []byte {
	var w fixedWriter
	put, code, sym := w.put, w.code, w.sym
	put(1, 1) // final
	put(1, 2) // fixed code
	for _, c := range lits {
		sym(int(c))
	}
	lc := 28 // 258 has a code of its own
	if length < 258 {
		for lc = 27; int(lengthBase[lc]) > length; lc-- {
		}
	}
	sym(257 + lc)
	put(uint64(length-int(lengthBase[lc])), uint(lengthExtra[lc]))
	dc := 29
	for ; int(distBase[dc]) > distance; dc-- {
	}
	code(uint64(dc), 5)
	put(uint64(distance-int(distBase[dc])), uint(distExtra[dc]))
	for _, c := range tail {
		sym(int(c))
	}
	sym(256)
	put(0, 7)
	return w.out
}

// TestGunzipMatchCopies: a match at every distance 1-40 (and a few longer)
// and every length 3-258, followed by 0 to 300 bytes, decodes as the
// reference decoder decodes it: the copies that write words past a
// match's end (with room after it) and the careful ones near the end of
// the output.
func TestGunzipMatchCopies(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	lits := make([]byte, 1100)
	for i := range lits {
		lits[i] = byte(rng.Uint32())
	}
	var distances []int
	for d := 1; d <= 40; d++ {
		distances = append(distances, d)
	}
	distances = append(distances, 63, 64, 65, 255, 256, 257, 1000)
	for _, d := range distances {
		for length := 3; length <= 258; length++ {
			for _, tailLen := range []int{0, 1, 7, 8, 13, 14, 15, 16, 31, 32, 33, 300} {
				prefix := lits[:max(d, 20)]
				tail := lits[len(lits)-tailLen:]
				want := append([]byte(nil), prefix...)
				for i := 0; i < length; i++ {
					want = append(want, want[len(want)-d])
				}
				want = append(want, tail...)
				gz := rawGzip(matchStream(prefix, d, length, tail))
				gz = binary.LittleEndian.AppendUint32(gz[:len(gz)-8], crc32.ChecksumIEEE(want))
				gz = binary.LittleEndian.AppendUint32(gz, uint32(len(want)))
				got, err := Gunzip(nil, gz, len(want))
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("distance %d, length %d, %d bytes after: err %v, equal %v", d, length, tailLen, err, bytes.Equal(got, want))
				}
				if length == 3 || length == 258 || d > 40 {
					if ref, err := reference(gz, len(want)); err != nil || !bytes.Equal(ref, want) {
						t.Fatalf("distance %d, length %d: the reference decoder: err %v", d, length, err)
					}
				}
			}
		}
	}
}

// TestGunzipRefusesDamage: a listing page's member with each byte changed
// (three ways) or cut short there is refused, or decoded to the same bytes,
// by Gunzip and the reference decoder alike.
func TestGunzipRefusesDamage(t *testing.T) {
	data, err := os.ReadFile("testdata/listing20.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, level := range []int{1, gzip.DefaultCompression} {
		gz := gzipLevel(t, data, level)
		for i := range gz {
			cases := [][]byte{gz[:i]}
			for _, x := range []byte{0x01, 0x80, 0xff} {
				b := append([]byte(nil), gz...)
				b[i] ^= x
				cases = append(cases, b)
			}
			for k, b := range cases {
				got, err := Gunzip(nil, b, len(data))
				want, werr := reference(b, len(data))
				if (err == nil) != (werr == nil) || (err == nil && !bytes.Equal(got, want)) {
					t.Fatalf("level %d, byte %d, change %d: Gunzip err %v, reference err %v", level, i, k, err, werr)
				}
			}
		}
	}
}
