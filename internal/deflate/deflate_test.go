package deflate

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"
)

var update = flag.Bool("update", false, "write lens.go from the corpus")

// corpusShapes are the public bodies the shared lengths are derived from,
// one group per route shape, each weighed by its estimated share of the
// plain bytes a fleet's cache holds (the weights sum to 100; the README's
// "Compression uses one shared Huffman code" argues them). Within a group
// each page counts per byte of it, so a large page does not outweigh the
// group's small ones. The bodies are the edge's answers in --demo mode
// (internal/inflate/testdata: listing*.json, routes/*.json).
var corpusShapes = []struct {
	name   string
	weight float64
	files  []string
}{
	{"vehicle listing", 35, []string{"listing1.json", "listing5.json", "listing20.json", "listing100.json",
		"routes/vlist-nos20.json", "routes/vlist-vcom20.json"}},
	{"vehicle detail", 25, []string{"routes/vdetail-nos.json", "routes/vdetail-rewind-vcom.json"}},
	{"offer listing", 1.5, []string{"routes/olist20.json"}},
	{"offer detail", 1.5, []string{"routes/odetail.json"}},
	{"content listing", 10, []string{"routes/clist-faq.json", "routes/clist-news.json", "routes/clist-glossary.json",
		"routes/clist-guides.json", "routes/clist-videos.json", "routes/clist-podcasts.json"}},
	{"content detail", 13, []string{"routes/cdetail-faq.json", "routes/cdetail-news.json", "routes/cdetail-glossary.json",
		"routes/cdetail-guides.json", "routes/cdetail-videos.json", "routes/cdetail-podcasts.json"}},
	{"content hub", 2, []string{"routes/hub.json"}},
	{"content search", 12, []string{"routes/search.json"}},
}

func readCorpus(t testing.TB, f string) []byte {
	b, err := os.ReadFile(filepath.Join("../inflate/testdata", f))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// corpus is every body of corpusShapes.
func corpus(t testing.TB) [][]byte {
	var out [][]byte
	for _, g := range corpusShapes {
		for _, f := range g.files {
			out = append(out, readCorpus(t, f))
		}
	}
	return out
}

// jsonByte reports whether c can occur in a UTF-8 JSON text: printable
// ASCII, the whitespace outside strings, and every byte of a UTF-8
// sequence (0x80-0xBF continuation, 0xC2-0xF4 lead). 0x00-0x1F but tab,
// LF and CR, 0xC0, 0xC1 and 0xF5-0xFF cannot.
func jsonByte(c int) bool {
	switch {
	case c == '\t' || c == '\n' || c == '\r':
		return true
	case c < 0x20:
		return false
	case c >= 0x80 && c <= 0xBF:
		return true
	case c >= 0xC2 && c <= 0xF4:
		return true
	case c >= 0x80:
		return false
	}
	return true
}

// jsonMaxLen is the longest code a byte a JSON body can hold gets: text
// outside the corpus (another language's letters, symbols) costs at most
// 10 bits a byte, not the 13-15 an unseen byte would get.
const jsonMaxLen = 10

// deriveLens counts the matcher's symbols over the corpus, each group's
// per byte of it times its weight, gives every symbol one more (each must
// have a code: the table codes any input) and makes a Huffman code of at
// most 15 bits of them; a byte a JSON body can hold gets the least extra
// count (the same for all of them) that makes its code at most jsonMaxLen
// bits.
func deriveLens(t testing.TB) [numLitlen + numDist]uint8 {
	var lf, df [numLitlen + numDist]float64
	var tab [1 << hashBits]int32
	for _, g := range corpusShapes {
		var gc counts
		plain := 0
		for _, f := range g.files {
			b := readCorpus(t, f)
			plain += len(b)
			tokens(nil, b, &tab, &gc)
			gc.litlen[256]++
		}
		// Scaled to a million plain bytes for a weight of 100.
		scale := g.weight * 1e4 / float64(plain)
		for i, n := range gc.litlen {
			lf[i] += float64(n) * scale
		}
		for i, n := range gc.dist {
			df[i] += float64(n) * scale
		}
	}
	var lens [numLitlen + numDist]uint8
	litlen := func(floor int) {
		f := make([]int, numLitlen)
		for i := range f {
			f[i] = int(lf[i]+0.5) + 1
			if i < 256 && jsonByte(i) {
				f[i] += floor
			}
		}
		huffmanLengths(f, lens[:numLitlen], 15)
	}
	ok := func() bool {
		for c := 0; c < 256; c++ {
			if jsonByte(c) && int(lens[c]) > jsonMaxLen {
				return false
			}
		}
		return true
	}
	// The least floor by bisection (a higher floor shortens the JSON
	// bytes' codes); hi always meets the bound.
	lo, hi := 0, 1
	for litlen(hi); !ok(); litlen(hi) {
		lo, hi = hi, hi*2
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if litlen(mid); ok() {
			hi = mid
		} else {
			lo = mid
		}
	}
	litlen(hi)
	dfi := make([]int, numDist)
	for i := range dfi {
		dfi[i] = int(df[i]+0.5) + 1
	}
	huffmanLengths(dfi, lens[numLitlen:], 15)
	return lens
}

// TestSharedLens: lens.go holds the lengths derived from the corpus, every
// symbol has a code and both codes are complete (Kraft sum exactly 1).
func TestSharedLens(t *testing.T) {
	lens := deriveLens(t)
	if *update {
		var b strings.Builder
		b.WriteString("package deflate\n\n// sharedLens are the code lengths of the shared code: 286 literal/length\n// then 30 distance symbols, every one with a code. Derived from the\n// route shapes' bodies in internal/inflate/testdata, weighed by their\n// share of a fleet's cache (TestSharedLens; go test -run TestSharedLens\n// -update writes this file).\nvar sharedLens = [numLitlen + numDist]uint8{")
		for i, l := range lens {
			if i%32 == 0 {
				b.WriteString("\n\t")
			} else {
				b.WriteString(" ")
			}
			fmt.Fprintf(&b, "%d,", l)
		}
		b.WriteString("\n}\n")
		if err := os.WriteFile("lens.go", []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if lens != sharedLens {
		t.Fatal("lens.go is not what the corpus derives: go test -run TestSharedLens -update")
	}
	for _, r := range [][2]int{{0, numLitlen}, {numLitlen, numLitlen + numDist}} {
		sum := 0
		for _, l := range sharedLens[r[0]:r[1]] {
			if l == 0 || l > 15 {
				t.Fatalf("length %d", l)
			}
			sum += 1 << (15 - l)
		}
		if sum != 1<<15 {
			t.Fatalf("code %v: Kraft sum %d/32768", r, sum)
		}
	}
}

// TestSharedLensJSONBytes: every byte a UTF-8 JSON body can hold has a
// code of at most jsonMaxLen bits (inside the inflater's 11-bit root
// table), so text the corpus lacks (accented letters of another language,
// symbols) is not coded in 13-15 bits a byte, worse than the plain bytes.
func TestSharedLensJSONBytes(t *testing.T) {
	for c := 0; c < 256; c++ {
		if jsonByte(c) && sharedLens[c] > jsonMaxLen {
			t.Errorf("byte %#02x: %d bits", c, sharedLens[c])
		}
	}
	for _, s := range []string{"àèéìòù", "ÀÈÉÌÒÙ", "äöüßñç", "€“”’…", "°ª«»"} {
		z := Gzip(nil, []byte(s))
		bitsAbove := 8*(len(z)-8) - headerBits // the end of block and padding included
		if bitsAbove > jsonMaxLen*len(s)+15+7 {
			t.Errorf("%q (%d bytes): %d bits", s, len(s), bitsAbove)
		}
	}
}

// TestRouteShapes: on every route shape's bodies the shared code stores
// about what klauspost's level 6 does (it logs both as a share of the
// plain bytes), and over the shapes weighed as corpusShapes weighs them
// it stores at most 16% more (the lengths derived from vehicle listings
// alone: 18%).
func TestRouteShapes(t *testing.T) {
	var w6, wsh float64
	for _, g := range corpusShapes {
		plain, k6, sh := 0, 0, 0
		for _, f := range g.files {
			b := readCorpus(t, f)
			plain += len(b)
			var buf bytes.Buffer
			w, _ := kgzip.NewWriterLevel(&buf, 6)
			w.Write(b)
			w.Close()
			k6 += buf.Len()
			z := Gzip(nil, b)
			if got := gunzipStd(t, z); !bytes.Equal(got, b) {
				t.Fatalf("%s: round trip differs", f)
			}
			sh += len(z)
		}
		p6, psh := 100*float64(k6)/float64(plain), 100*float64(sh)/float64(plain)
		t.Logf("%-16s weight %4.1f: level 6 %5.1f%%, shared %5.1f%% of %d plain bytes (%.3f)", g.name, g.weight, p6, psh,
			plain, psh/p6)
		w6 += g.weight * p6 / 100
		wsh += g.weight * psh / 100
	}
	t.Logf("weighed: level 6 %.2f%%, shared %.2f%% (%.3f)", w6, wsh, wsh/w6)
	if wsh > 1.16*w6 {
		t.Errorf("weighed: the shared code stores %.3f of level 6's bytes", wsh/w6)
	}
}

// gunzipStd decodes z, which must be exactly one gzip member, with
// compress/gzip (which checks the CRC and length of the trailer).
func gunzipStd(t testing.TB, z []byte) []byte {
	t.Helper()
	br := bytes.NewReader(z)
	r, err := gzip.NewReader(br)
	if err != nil {
		t.Fatal(err)
	}
	r.Multistream(false)
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if br.Len() != 0 {
		t.Fatalf("%d bytes after the member", br.Len())
	}
	return b
}

// inputs are random and JSON bodies of many sizes: empty, one byte,
// incompressible, runs, repeats past the window, the corpus.
func inputs(t testing.TB) [][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	ins := [][]byte{{}, {0}, {'a'}, []byte("aaaa"), bytes.Repeat([]byte{'x'}, 1000), bytes.Repeat([]byte("abc"), 40000)}
	for _, n := range []int{3, 5, 17, 300, 4096, 70000} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		ins = append(ins, b)
		small := make([]byte, n)
		for i := range small {
			small[i] = "ab{}\":,0123"[r.IntN(11)]
		}
		ins = append(ins, small)
	}
	for _, c := range corpus(t) {
		ins = append(ins, c, c[:len(c)/3], bytes.Repeat(c, 3))
	}
	// JSON the table was not derived from.
	var b bytes.Buffer
	b.WriteString(`[`)
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, `{"slug":"news-%d","titolo":"Novità è già qui %d","corpo":"%x","tags":["a","b"]},`, i, r.IntN(1e6), r.Uint64())
	}
	b.WriteString(`{}]`)
	ins = append(ins, b.Bytes())
	return ins
}

// TestRoundTrip: compress/gzip decodes every member to its input, and
// every member starts with the shared header.
func TestRoundTrip(t *testing.T) {
	for i, in := range inputs(t) {
		z := Gzip(nil, in)
		if got := gunzipStd(t, z); !bytes.Equal(got, in) {
			t.Fatalf("input %d (%d bytes): round trip differs", i, len(in))
		}
		full := headerBits / 8
		if !bytes.Equal(z[:full], header[:full]) || (z[full]^header[full])&(1<<(headerBits%8)-1) != 0 {
			t.Fatalf("input %d: not the shared header", i)
		}
	}
}

// TestRoundTripRandom: random inputs of random sizes and alphabets.
func TestRoundTripRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for k := 0; k < 300; k++ {
		n := r.IntN(20000)
		alpha := 1 + r.IntN(256)
		b := make([]byte, n)
		for i := range b {
			if i > 10 && r.IntN(4) == 0 {
				// copy from back to make matches, overlapping ones too
				d := 1 + r.IntN(min(i, 40000))
				b[i] = b[i-d]
				continue
			}
			b[i] = byte(r.IntN(alpha))
		}
		if got := gunzipStd(t, Gzip([]byte("prefix"), b)[6:]); !bytes.Equal(got, b) {
			t.Fatalf("round %d: %d bytes over %d symbols differ", k, n, alpha)
		}
	}
}

// TestGzipTool: gzip -t accepts a member.
func TestGzipTool(t *testing.T) {
	p, err := exec.LookPath("gzip")
	if err != nil {
		t.Skip("no gzip")
	}
	f := filepath.Join(t.TempDir(), "x.gz")
	if err := os.WriteFile(f, Gzip(nil, corpus(t)[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(p, "-t", f).CombinedOutput(); err != nil {
		t.Fatalf("gzip -t: %v %s", err, out)
	}
}

// BenchmarkCompress compresses the listing pages with klauspost's gzip at
// level 6 (the cache's default) and with Gzip, in one run; it reports the
// compressed size (zbytes) and the CPU per body.
func BenchmarkCompress(b *testing.B) {
	for _, f := range []string{"listing1.json", "listing20.json", "listing100.json"} {
		data, err := os.ReadFile("../inflate/testdata/" + f)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(f+"/klauspost6", func(b *testing.B) {
			w, _ := kgzip.NewWriterLevel(nil, 6)
			var buf bytes.Buffer
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			cpu0 := selfCPU()
			for b.Loop() {
				buf.Reset()
				w.Reset(&buf)
				w.Write(data)
				w.Close()
			}
			b.ReportMetric(float64(selfCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(buf.Len()), "zbytes")
		})
		b.Run(f+"/shared", func(b *testing.B) {
			var z []byte
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			cpu0 := selfCPU()
			for b.Loop() {
				z = Gzip(z[:0], data)
			}
			b.ReportMetric(float64(selfCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(len(z)), "zbytes")
		})
	}
}

// selfCPU is this process's user+system CPU time in nanoseconds.
func selfCPU() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
