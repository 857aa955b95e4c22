package inflate

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/dealer-edge/dealer-edge/internal/deflate"
	"github.com/dealer-edge/dealer-edge/internal/testcorpus"
)

// knowShared makes the shared code of internal/deflate the known header,
// as the cache does.
func knowShared(t testing.TB) {
	h, n := deflate.Header()
	if !Know(h[10:], n-80) {
		t.Fatal("Know refuses the shared header")
	}
}

// TestKnownHeaderUsed: a member of the shared code decodes with the known
// tables (swapped for wrong ones, the decode changes), and one of another
// encoder decodes as before.
func TestKnownHeaderUsed(t *testing.T) {
	knowShared(t)
	data, err := os.ReadFile("testdata/listing20.json")
	if err != nil {
		t.Fatal(err)
	}
	z := deflate.Gzip(nil, data)
	if got, err := Gunzip(nil, z, len(data)); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("shared member: %v", err)
	}
	if got, err := Gunzip(nil, gzipLevel(t, data, 6), len(data)); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("klauspost member: %v", err)
	}
	dst := make([]byte, len(data))
	if n := testing.AllocsPerRun(50, func() {
		if _, err := Gunzip(dst, z, len(data)); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("%v allocations a decode", n)
	}
	// Tamper with the known tables: the shared member must now fail or
	// decode wrong, which shows the known tables are the ones used.
	k := known.Load()
	bad := *k
	fixedOnce.Do(buildFixed)
	bad.codes = fixed
	known.Store(&bad)
	defer known.Store(k)
	if got, err := Gunzip(nil, z, len(data)); err == nil && bytes.Equal(got, data) {
		t.Fatal("shared member decoded without the known tables")
	}
	if got, err := Gunzip(nil, gzipLevel(t, data, 6), len(data)); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("klauspost member with tampered known tables: %v", err)
	}
}

// TestKnowRefuses: Know takes only a dynamic header of exactly its length.
func TestKnowRefuses(t *testing.T) {
	h, n := deflate.Header()
	for _, c := range []struct {
		hdr  []byte
		bits int
	}{
		{h[10:], n - 80 - 1}, {h[10:], n - 80 + 1}, {nil, 0}, {[]byte{3, 0}, 10}, {h[10:20], 80},
	} {
		if Know(c.hdr, c.bits) {
			t.Fatalf("Know(%x, %d) accepted", c.hdr, c.bits)
		}
	}
}

// FuzzKnownHeader: with the shared header known, Gunzip agrees with
// klauspost's reader on any input (mutations of shared-code members hit
// the recognition of the header's bytes and the bits after it).
func FuzzKnownHeader(f *testing.F) {
	knowShared(f)
	for _, data := range corpus(f) {
		if len(data) > 20000 {
			data = data[:20000]
		}
		f.Add(deflate.Gzip(nil, data), uint16(len(data)))
	}
	f.Add(deflate.Gzip(nil, nil), uint16(0))
	f.Add(deflate.Gzip(nil, []byte("a")), uint16(1))
	f.Fuzz(func(t *testing.T, gz []byte, n16 uint16) {
		n := int(n16)
		got, err := Gunzip(nil, gz, n)
		want, werr := reference(gz, n)
		if (err == nil) != (werr == nil) {
			t.Fatalf("Gunzip err %v, reference err %v", err, werr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("Gunzip and the reference decode different bytes")
		}
	})
}

// TestKnownRoundTripRandom: shared-code members of random data decode with
// the known tables to the data.
func TestKnownRoundTripRandom(t *testing.T) {
	knowShared(t)
	r := rand.New(rand.NewPCG(5, 6))
	for k := 0; k < 300; k++ {
		b := make([]byte, r.IntN(30000))
		alpha := 1 + r.IntN(256)
		for i := range b {
			if i > 4 && r.IntN(3) == 0 {
				b[i] = b[i-1-r.IntN(min(i, 33000))]
			} else {
				b[i] = byte(r.IntN(alpha))
			}
		}
		z := deflate.Gzip(nil, b)
		if got, err := Gunzip(nil, z, len(b)); err != nil || !bytes.Equal(got, b) {
			t.Fatalf("round %d (%d bytes): %v", k, len(b), err)
		}
	}
}

// BenchmarkGunzipShared decodes the listing pages as klauspost stores them
// at level 6 (tables built per body) and as internal/deflate codes them
// (the known tables), in one run: compare within it.
func BenchmarkGunzipShared(b *testing.B) {
	knowShared(b)
	for _, f := range []string{"listing1.json", "listing20.json", "listing100.json"} {
		data, err := os.ReadFile("testdata/" + f)
		if err != nil {
			b.Fatal(err)
		}
		dst := make([]byte, len(data))
		for _, enc := range []struct {
			name string
			z    []byte
		}{{"klauspost6", gzipLevel(b, data, gzip.DefaultCompression)}, {"shared", deflate.Gzip(nil, data)}} {
			b.Run(f+"/"+enc.name, func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				b.ReportMetric(float64(len(enc.z)), "zbytes")
				cpu0 := selfCPU()
				for b.Loop() {
					if _, err := Gunzip(dst, enc.z, len(data)); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(selfCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// mixPages are 256 listing pages as the scale mix asks them
// (testcorpus.MixPages).
func mixPages(t testing.TB) [][]byte {
	pages, err := testcorpus.MixPages("testdata/listing100.json", 256)
	if err != nil {
		t.Fatal(err)
	}
	return pages
}

// BenchmarkGunzipMix decodes the mix's pages stored as klauspost codes them
// at level 6 and as internal/deflate does; it reports the CPU a page and
// the stored bytes as a share of the plain ones.
func BenchmarkGunzipMix(b *testing.B) {
	knowShared(b)
	pages := mixPages(b)
	plain := 0
	var k6, sh [][]byte
	for _, p := range pages {
		plain += len(p)
		k6 = append(k6, gzipLevel(b, p, 6))
		sh = append(sh, deflate.Gzip(nil, p))
	}
	dst := make([]byte, 1<<20)
	for _, enc := range []struct {
		name string
		zs   [][]byte
	}{{"klauspost6", k6}, {"shared", sh}} {
		b.Run(enc.name, func(b *testing.B) {
			zb := 0
			for _, z := range enc.zs {
				zb += len(z)
			}
			b.ReportAllocs()
			cpu0 := selfCPU()
			i := 0
			for b.Loop() {
				i = (i + 1) % len(pages)
				if _, err := Gunzip(dst, enc.zs[i], len(pages[i])); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(selfCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(100*float64(zb)/float64(plain), "z%")
			b.ReportMetric(float64(plain)/float64(len(pages)), "plainB/page")
		})
	}
}

// BenchmarkCompressMix compresses the mix's pages as a fill does: with a
// reused klauspost writer at level 6, and with internal/deflate.
func BenchmarkCompressMix(b *testing.B) {
	pages := mixPages(b)
	b.Run("klauspost6", func(b *testing.B) {
		w, _ := gzip.NewWriterLevel(nil, 6)
		b.ReportAllocs()
		cpu0 := selfCPU()
		i := 0
		for b.Loop() {
			i = (i + 1) % len(pages)
			var buf bytes.Buffer
			buf.Grow(len(pages[i])/4 + 64)
			w.Reset(&buf)
			w.Write(pages[i])
			w.Close()
		}
		b.ReportMetric(float64(selfCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	})
	b.Run("shared", func(b *testing.B) {
		b.ReportAllocs()
		cpu0 := selfCPU()
		i := 0
		for b.Loop() {
			i = (i + 1) % len(pages)
			deflate.Gzip(make([]byte, 0, len(pages[i])/4+64), pages[i])
		}
		b.ReportMetric(float64(selfCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	})
}

// BenchmarkGunzipRoutes decodes the bodies of every route shape
// (testdata/routes, the edge's answers in --demo mode: vehicle and offer
// details and listings, every content type's listing and detail, hub,
// search) stored as klauspost codes them at level 6 and as
// internal/deflate does, each body equally often; it reports the CPU a
// body and the stored bytes as a share of the plain ones.
func BenchmarkGunzipRoutes(b *testing.B) {
	knowShared(b)
	files, err := filepath.Glob("testdata/routes/*.json")
	if err != nil || len(files) == 0 {
		b.Fatalf("routes: %v %v", files, err)
	}
	var pages [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		pages = append(pages, data)
	}
	plain := 0
	var k6, sh [][]byte
	for _, p := range pages {
		plain += len(p)
		k6 = append(k6, gzipLevel(b, p, 6))
		sh = append(sh, deflate.Gzip(nil, p))
	}
	dst := make([]byte, 1<<20)
	for _, enc := range []struct {
		name string
		zs   [][]byte
	}{{"klauspost6", k6}, {"shared", sh}} {
		b.Run(enc.name, func(b *testing.B) {
			zb := 0
			for _, z := range enc.zs {
				zb += len(z)
			}
			b.ReportAllocs()
			cpu0 := selfCPU()
			i := 0
			for b.Loop() {
				i = (i + 1) % len(pages)
				if _, err := Gunzip(dst, enc.zs[i], len(pages[i])); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(selfCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(100*float64(zb)/float64(plain), "z%")
		})
	}
}
