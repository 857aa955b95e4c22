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

// corpus is the representative JSON the shared lengths are derived from:
// the edge's listing pages of internal/inflate/testdata.
func corpus(t testing.TB) [][]byte {
	files, err := filepath.Glob("../inflate/testdata/listing*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("corpus: %v %v", files, err)
	}
	var out [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// deriveLens counts the matcher's symbols over the corpus, gives every
// symbol one more (each must have a code: the table codes any input) and
// makes a Huffman code of at most 15 bits of them.
func deriveLens(t testing.TB) [numLitlen + numDist]uint8 {
	var c counts
	var tab [1 << hashBits]int32
	for _, b := range corpus(t) {
		tokens(nil, b, &tab, &c)
		c.litlen[256]++
	}
	var lens [numLitlen + numDist]uint8
	lf := make([]int, numLitlen)
	for i, n := range c.litlen {
		lf[i] = n + 1
	}
	df := make([]int, numDist)
	for i, n := range c.dist {
		df[i] = n + 1
	}
	huffmanLengths(lf, lens[:numLitlen], 15)
	huffmanLengths(df, lens[numLitlen:], 15)
	return lens
}

// TestSharedLens: lens.go holds the lengths derived from the corpus, every
// symbol has a code and both codes are complete (Kraft sum exactly 1).
func TestSharedLens(t *testing.T) {
	lens := deriveLens(t)
	if *update {
		var b strings.Builder
		b.WriteString("package deflate\n\n// sharedLens are the code lengths of the shared code: 286 literal/length\n// then 30 distance symbols, every one with a code. Derived from the\n// listing pages in internal/inflate/testdata (TestSharedLens; go test\n// -run TestSharedLens -update writes this file).\nvar sharedLens = [numLitlen + numDist]uint8{")
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
