package upstream

import (
	"errors"
	"io"
	"runtime"
	"testing"

	"github.com/valyala/fasthttp"
)

// trickle yields n bytes, then err.
type trickle struct {
	n   int
	err error
}

func (t *trickle) Read(p []byte) (int, error) {
	if t.n == 0 {
		return 0, t.err
	}
	k := min(len(p), t.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	t.n -= k
	return k, nil
}

// TestReadBodyReservesBounded: readBody does not reserve a body's
// declared Content-Length in full before the bytes arrive. Before
// 2026-11-29 a service declaring 30 MB that sent 100 bytes (then stalled
// or cut the connection) made each call allocate 30 MB at once, so a few
// hundred concurrent calls to a misbehaving service held gigabytes.
func TestReadBodyReservesBounded(t *testing.T) {
	var resp fasthttp.Response
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	resp.SetBodyStream(&trickle{n: 100, err: io.ErrUnexpectedEOF}, 30_000_000)
	buf, err := readBody(&resp)
	runtime.ReadMemStats(&after)
	if buf != nil {
		_ = buf.Close()
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err %v, want the stream's", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
		t.Errorf("reading 100 bytes of a body declared 30 MB allocated %d bytes, want at most 4 MiB", got)
	}

	// A body as long as it says is still read whole, past the reservation.
	const n = 5 << 20
	resp.Reset()
	resp.SetBodyStream(&trickle{n: n, err: io.EOF}, n)
	buf, err = readBody(&resp)
	if err != nil {
		t.Fatal(err)
	}
	if len(buf.B) != n {
		t.Errorf("read %d bytes, want %d", len(buf.B), n)
	}
	_ = buf.Close()
}
