package inflate

import (
	"bytes"
	"compress/flate"
	stdgzip "compress/gzip"
	"io"
	"math/rand"
	"testing"
)

// flateRef decodes the raw deflate stream in with compress/flate: the
// output, the bytes of in the stream took, and whether it is valid.
func flateRef(in []byte) ([]byte, int, bool) {
	br := bytes.NewReader(in)
	r := flate.NewReader(br)
	out, err := io.ReadAll(io.LimitReader(r, 1<<22))
	if err != nil {
		return out, 0, false
	}
	return out, len(in) - br.Len(), true
}

func rawDeflate(t testing.TB, data []byte, level int) []byte {
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, level)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	w.Close()
	return buf.Bytes()
}

// FuzzInflateRaw: the raw deflate decoder against compress/flate,
// without the CRC that makes almost every mutation of a gzip member fail
// both decoders before the deflate stream's edge cases are compared.
func FuzzInflateRaw(f *testing.F) {
	for _, data := range corpus(f) {
		if len(data) > 4000 {
			data = data[:4000]
		}
		for _, lv := range []int{-2, 0, 1, 6, 9} {
			f.Add(rawDeflate(f, data, lv), uint8(0))
		}
	}
	f.Add(rawDeflate(f, bytes.Repeat([]byte("ab"), 600), 9), uint8(1))
	f.Add(rawDeflate(f, bytes.Repeat([]byte{0}, 70000), 9), uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, slack uint8) {
		want, used, ok := flateRef(in)
		d := new(decoder)
		if ok {
			out := make([]byte, len(want), len(want)+int(slack))
			gotUsed, err := d.inflate(out, in)
			if err != nil {
				t.Fatalf("flate decodes %d bytes (%d of input), inflate: %v", len(want), used, err)
			}
			if !bytes.Equal(out, want) {
				t.Fatalf("inflate and flate decode different bytes")
			}
			if gotUsed != used {
				t.Fatalf("inflate took %d bytes of input, flate %d", gotUsed, used)
			}
			// One byte less or more of room must fail.
			if len(want) > 0 {
				if _, err := d.inflate(make([]byte, len(want)-1), in); err == nil {
					t.Fatalf("inflate fills a shorter output")
				}
			}
			if _, err := d.inflate(make([]byte, len(want)+1), in); err == nil {
				t.Fatalf("inflate fills a longer output")
			}
			return
		}
		// flate refuses: inflate must refuse every output length near
		// what flate made before it failed.
		for _, n := range []int{len(want), len(want) + 1, len(want) + int(slack), len(want) + 258} {
			out := make([]byte, n)
			if _, err := d.inflate(out, in); err == nil {
				if !bytes.Equal(out[:len(want)], want) {
					t.Fatalf("flate refuses after %d bytes, inflate accepts %d and differs", len(want), n)
				}
				t.Fatalf("flate refuses after %d bytes, inflate accepts %d", len(want), n)
			}
		}
	})
}

// TestLargeRoundTrip: large outputs (long distances, every match
// length, runs) through the fast loop, at every level of both compressors,
// into a dst full of garbage.
func TestLargeRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for iter := 0; iter < 60; iter++ {
		n := r.Intn(300000) + 1
		data := make([]byte, 0, n)
		for len(data) < n {
			switch r.Intn(5) {
			case 0: // random bytes
				k := r.Intn(100)
				for i := 0; i < k; i++ {
					data = append(data, byte(r.Intn(256)))
				}
			case 1: // a copy from far back
				if len(data) > 0 {
					d := r.Intn(min(len(data), 40000)) + 1
					l := r.Intn(600) + 1
					for i := 0; i < l; i++ {
						data = append(data, data[len(data)-d])
					}
				}
			case 2: // a run
				c := byte(r.Intn(4))
				for i := r.Intn(1000); i > 0; i-- {
					data = append(data, c)
				}
			default: // small alphabet
				for i := r.Intn(200); i > 0; i-- {
					data = append(data, 'a'+byte(r.Intn(3)))
				}
			}
		}
		data = data[:n]
		for _, lv := range []int{-2, 0, 1, 4, 6, 9} {
			gz := gzipLevel(t, data, lv)
			dst := make([]byte, n+r.Intn(100))
			r.Read(dst)
			got, err := Gunzip(dst, gz, n)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("klauspost level %d n %d: err %v", lv, n, err)
			}
			gz = stdGzip(t, data, lv, stdgzip.Header{})
			got, err = Gunzip(dst, gz, n)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("std level %d n %d: err %v", lv, n, err)
			}
		}
	}
}
