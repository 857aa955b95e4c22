package upstream

import (
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestReadBodyLargeDeclaredBody: since 2026-11-29 readBody
// reserves at most 2 MiB on the word of a Content-Length and doubles from
// there, blind to the length it was told: a legitimate 20 MiB body, sent
// as declared, now allocates 2+4+8+16+32 MiB (the last one capped at the
// 32 MiB limit) where it allocated 20 MiB before, and the buffer it keeps
// for the decode is 32 MiB. Once the bytes arrive, growth can stop at the
// declared length.
func TestReadBodyLargeDeclaredBody(t *testing.T) {
	const n = 20 << 20
	var resp fasthttp.Response
	resp.SetBodyStream(&trickle{n: n, err: io.EOF}, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	buf, err := readBody(&resp)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Close()
	got := after.TotalAlloc - before.TotalAlloc
	if got > 2*n || cap(buf.B) > n+(1<<20) {
		t.Errorf("a %d-byte body read as declared allocated %d bytes (%.1fx) into a buffer of cap %d", n, got, float64(got)/n, cap(buf.B))
	}
}

// TestReadBodyGrowsAsBytesArrive: past the 2 MiB reservation, readBody
// grows with the bytes that arrived, not to the declared length at once.
// Before 2026-11-29 a service that declared 32 MiB and sent 3 MiB (then
// stalled or cut the connection) made each call hold 34 MiB while it
// dribbled: at the 256 connections of a service's pool, about 9 GB for
// 768 MiB received. Now a call holds at most about 4 times what arrived.
func TestReadBodyGrowsAsBytesArrive(t *testing.T) {
	var resp fasthttp.Response
	resp.SetBodyStream(&trickle{n: 3 << 20, err: io.ErrUnexpectedEOF}, maxResponseBytes)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	buf, err := readBody(&resp)
	runtime.ReadMemStats(&after)
	if buf != nil {
		_ = buf.Close()
	}
	if err != io.ErrUnexpectedEOF {
		t.Fatalf("err %v, want the stream's", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Errorf("reading 3 MiB of a body declared %d bytes allocated %d bytes, want at most 16 MiB", maxResponseBytes, got)
	}
}

// BenchmarkReadBody: readBody of a declared body within the reservation
// (the common answer: one buffer, no copy) and of a large one (grown).
func BenchmarkReadBody(b *testing.B) {
	for _, n := range []int{100 << 10, 5 << 20, 20 << 20} {
		b.Run(fmt.Sprint(n>>10, "KiB"), func(b *testing.B) {
			var resp fasthttp.Response
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				resp.SetBodyStream(&trickle{n: n, err: io.EOF}, n)
				buf, err := readBody(&resp)
				if err != nil {
					b.Fatal(err)
				}
				_ = buf.Close()
			}
		})
	}
}

// emptyReadGuard fails a read into an empty buffer (a caller that would
// loop on it for ever) with errEmptyRead.
type emptyReadGuard struct{ r io.Reader }

var errEmptyRead = fmt.Errorf("read into an empty buffer")

func (g emptyReadGuard) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, errEmptyRead
	}
	return g.r.Read(p)
}

// TestReadBodyLongerThanDeclared: a stream that gives more bytes than its
// Content-Length declared (fasthttp's own stream stops at the length; a
// wrapped or future one may not) is read on past the declared length, by
// doubling, as before 2026-11-29's growth rule: with that rule alone the
// buffer, full at the declared length plus one, was "grown" to the same
// size and read with an empty slice for ever (a spin), and a pooled
// buffer larger than a small declared length was cut below its length
// (make panicked).
func TestReadBodyLongerThanDeclared(t *testing.T) {
	for _, c := range []struct{ declared, sent int }{
		{100, 2 << 20},                    // within the pooled buffer's capacity
		{maxReserveBytes + 1000, 3 << 20}, // past the reservation
	} {
		var resp fasthttp.Response
		resp.SetBodyStream(emptyReadGuard{&trickle{n: c.sent, err: io.EOF}}, c.declared)
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("declared %d, sent %d: panic %v", c.declared, c.sent, p)
				}
			}()
			buf, err := readBody(&resp)
			if err != nil {
				t.Fatalf("declared %d, sent %d: %v", c.declared, c.sent, err)
			}
			if len(buf.B) != c.sent {
				t.Errorf("declared %d, sent %d: read %d", c.declared, c.sent, len(buf.B))
			}
			_ = buf.Close()
		}()
	}
}
