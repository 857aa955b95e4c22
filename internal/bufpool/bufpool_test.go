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

func TestGetSizeClasses(t *testing.T) {
	p := New(64 << 10)
	for _, tc := range []struct {
		n, wantCap int
	}{
		{0, 4 << 10},
		{1, 4 << 10},
		{4 << 10, 4 << 10},
		{4<<10 + 1, 8 << 10},
		{9 << 10, 16 << 10},
		{64 << 10, 64 << 10},
		{64<<10 + 1, 64<<10 + 1}, // over the bound: exactly n, not kept
	} {
		b := p.GetSize(tc.n)
		if len(b.B) != 0 || cap(b.B) < tc.n {
			t.Errorf("GetSize(%d): len %d cap %d", tc.n, len(b.B), cap(b.B))
		}
		if cap(b.B) != tc.wantCap {
			t.Errorf("GetSize(%d): cap %d, want %d", tc.n, cap(b.B), tc.wantCap)
		}
		_ = b.Close()
		// The next request of a class may take storage of a larger one:
		// drain the pool so each case sees the capacity it makes.
		for p.sized[0].Get() != nil || p.sized[1].Get() != nil || p.sized[2].Get() != nil || p.sized[3].Get() != nil || p.sized[4].Get() != nil {
		}
	}
}

// TestGetSizeReusesItsClass: storage given back comes back for a request
// of its class or a smaller one, and never for a larger one (where it
// would not fit).
func TestGetSizeReusesItsClass(t *testing.T) {
	p := New(64 << 10)
	b := p.GetSize(9 << 10)
	storage := &b.B[:1][0]
	_ = b.Close()
	for i := 0; i < 100; i++ {
		g := p.GetSize(17 << 10)
		if &g.B[:1][0] == storage {
			t.Fatal("16 KiB storage came back for 17 KiB")
		}
		if cap(g.B) < 17<<10 {
			t.Fatalf("cap %d for 17 KiB", cap(g.B))
		}
		_ = g.Close()
	}
	found := false
	for i := 0; i < 100 && !found; i++ {
		g := p.GetSize(12 << 10)
		found = &g.B[:1][0] == storage
		_ = g.Close()
	}
	if !found {
		t.Log("the kept storage did not come back (a collection emptied the pool)")
	}
	// A sized Buf whose storage was replaced by a smaller slice goes back
	// as a plain Buf, not to a class it does not fit.
	s := p.GetSize(30 << 10)
	s.B = make([]byte, 0, 100)
	_ = s.Close()
	for i := 0; i < 100; i++ {
		g := p.GetSize(1)
		if cap(g.B) < 4<<10 {
			t.Fatalf("a class-0 Buf of cap %d", cap(g.B))
		}
		_ = g.Close()
	}
}

// TestGetSizeAllocatesNothingOnceWarm: bodies of varied sizes, each served
// from storage of its class, allocate nothing once every class was used
// (with Get and Grow, each larger body grew a buffer: an allocation).
func TestGetSizeAllocatesNothingOnceWarm(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops a share of what is put back")
	}
	p := New(64 << 10)
	sizes := []int{600, 17 << 10, 3 << 10, 9 << 10, 40 << 10, 5 << 10}
	for _, n := range sizes {
		b := p.GetSize(n)
		_ = b.Close()
	}
	i := 0
	allocs := testing.AllocsPerRun(100, func() {
		n := sizes[i%len(sizes)]
		i++
		b := p.GetSize(n)
		b.B = append(b.B, make([]byte, n)...)
		_ = b.Close()
	})
	if allocs > 0 {
		t.Errorf("%v allocations per GetSize/Close of a warm pool", allocs)
	}
}
