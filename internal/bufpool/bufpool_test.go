package bufpool

import (
	"io"
	"testing"
)

var _ io.Closer = (*Buf)(nil)

func TestPoolKeepsBoundedStorage(t *testing.T) {
	p := New(1 << 10)
	b := p.Get()
	if len(b.B) != 0 {
		t.Fatalf("new buffer holds %d bytes", len(b.B))
	}
	b.B = append(b.B, make([]byte, 512)...)
	storage := &b.B[:1][0]
	_ = b.Close()
	// sync.Pool may drop anything at a collection; try a few times for the
	// kept buffer to come back, and check what comes back.
	found := false
	for i := 0; i < 100 && !found; i++ {
		g := p.Get()
		if len(g.B) != 0 {
			t.Fatalf("a reused buffer holds %d bytes", len(g.B))
		}
		if cap(g.B) >= 512 && &g.B[:1][0] == storage {
			found = true
		}
		_ = g.Close()
	}
	if !found {
		t.Log("the kept buffer did not come back (a collection emptied the pool)")
	}

	big := p.Get()
	big.B = make([]byte, 2<<10)
	bigStorage := &big.B[0]
	_ = big.Close()
	for i := 0; i < 100; i++ {
		g := p.Get()
		if cap(g.B) > 0 && &g.B[:1][0] == bigStorage {
			t.Fatal("a buffer over the bound came back")
		}
		if cap(g.B) > 1<<10 {
			t.Fatalf("a buffer of %d bytes came back from a pool bounded at 1 KiB", cap(g.B))
		}
		_ = g.Close()
	}
}

func TestPoolGetAllocatesNothingOnceWarm(t *testing.T) {
	p := New(1 << 10)
	b := p.Get()
	b.B = append(b.B, "warm"...)
	_ = b.Close()
	allocs := testing.AllocsPerRun(100, func() {
		b := p.Get()
		b.B = append(b.B, "body"...)
		_ = b.Close()
	})
	if allocs > 0 {
		t.Errorf("%v allocations per Get/Close of a warm pool", allocs)
	}
}

// TestThenClosesBoth: a Buf given to Then goes back with the one it was
// given to, once; the first is clean for its next user.
func TestThenClosesBoth(t *testing.T) {
	p := New(1 << 10)
	a, b := p.Get(), p.Get()
	a.B = append(a.B, "compressed"...)
	b.B = append(b.B, "plain"...)
	a.Then(b)
	_ = a.Close()
	if len(b.B) != 0 || a.then != nil {
		t.Fatalf("after Close: the chained buffer holds %q, then %v", b.B, a.then)
	}
	// Closing a again (as a reused Buf would be) must not close b a second time.
	c := p.Get()
	if c.then != nil {
		t.Fatal("a reused Buf still chains another")
	}
	_ = c.Close()
}

func TestGrowRoundsUpUnderTheBound(t *testing.T) {
	p := New(256 << 10)
	for _, tc := range []struct {
		have, n, wantCap int
	}{
		{0, 0, 0},
		{0, 1, 4 << 10},
		{0, 4 << 10, 4 << 10},
		{0, 4<<10 + 1, 8 << 10},
		{0, 40_000, 64 << 10},
		{0, 200 << 10, 256 << 10}, // 256 KiB: the bound, not 256 KiB rounded past it
		{0, 256 << 10, 256 << 10},
		{0, 256<<10 + 1, 256<<10 + 1}, // over the bound: exactly n, the collector takes it back
		{16 << 10, 10_000, 16 << 10},  // room already: kept
	} {
		b := p.Get()
		b.B = make([]byte, 0, tc.have)
		b.Grow(tc.n)
		if cap(b.B) != tc.wantCap || len(b.B) != 0 {
			t.Errorf("Grow(%d) from cap %d: len %d cap %d, want len 0 cap %d", tc.n, tc.have, len(b.B), cap(b.B), tc.wantCap)
		}
	}
}
