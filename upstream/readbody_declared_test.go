package upstream

import (
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
