// Package bufpool pools byte storage for bodies: a Buf taken from a Pool
// holds an empty slice with the capacity earlier users left it, is grown
// by whatever writes into it, and goes back with Close once nothing reads
// what was made in it; a buffer grown beyond the pool's bound goes to the
// garbage collector instead, so a rare huge body is not held between uses.
//
// Close makes a Buf an io.Closer, so that a handler can lend one to
// fasthttp until the response is written: fasthttp closes RequestCtx user
// values that implement io.Closer when it resets the request after the
// write (or drops the connection).
package bufpool

import "sync"

// Pool lends Bufs whose storage is at most Max bytes when given back.
type Pool struct {
	max int
	p   sync.Pool
	// sized holds the Bufs of GetSize by class: class i's storage has a
	// capacity of at least minGrow<<i bytes (and less than twice that).
	sized []sync.Pool
}

// New returns a Pool that keeps buffers of at most max bytes.
func New(max int) *Pool {
	p := &Pool{max: max}
	p.p.New = func() any { return &Buf{pool: p} }
	n := 0
	for c := minGrow; c <= max; c <<= 1 {
		n++
	}
	p.sized = make([]sync.Pool, n)
	return p
}

// Get returns a Buf with an empty B.
func (p *Pool) Get() *Buf {
	b := p.p.Get().(*Buf)
	b.B = b.B[:0]
	return b
}

// GetSize returns a Buf with an empty B of room for at least n bytes, taken
// from the storage given back of n's size class (powers of two from 4 KiB
// to the pool's bound), so that bodies of varied sizes each find storage
// that fits: with Get and Grow, one pool's buffers are grown (each growth an
// allocation, the smaller storage dropped) by every body larger than the
// one before. A Buf of GetSize goes back to its class on Close. Over the
// pool's bound, the storage is exactly n bytes and goes to the collector.
func (p *Pool) GetSize(n int) *Buf {
	i, c := sizeClass(n)
	if c > p.max {
		b := p.p.Get().(*Buf)
		b.B = make([]byte, 0, n)
		return b
	}
	// Its own class, else one of the next two (larger storage fits too:
	// a caller that does not know its size in advance asks for the
	// smallest, and storage grown past it comes back one class up).
	for j := i; j < len(p.sized) && j <= i+2; j++ {
		if v := p.sized[j].Get(); v != nil {
			b := v.(*Buf)
			b.B = b.B[:0]
			return b
		}
	}
	return &Buf{B: make([]byte, 0, c), pool: p, sized: true}
}

// sizeClass is the class of storage for n bytes and its capacity: the
// least power of two times minGrow that holds n.
func sizeClass(n int) (int, int) {
	i, c := 0, minGrow
	for c < n {
		i++
		c <<= 1
	}
	return i, c
}

// minGrow is the least storage Grow makes.
const minGrow = 4 << 10

// Grow makes sure B has room for n bytes, keeping nothing of what B holds.
// New storage is rounded up to a power of two (at least 4 KiB, at most the
// pool's bound; exactly n when n is over it), so that a pool serving bodies of
// varied sizes soon holds buffers that fit most of them: storage of exactly
// n bytes would be too small for the next larger body, and each such miss
// a new allocation (and its zeroing).
func (b *Buf) Grow(n int) {
	if cap(b.B) >= n {
		return
	}
	c := minGrow
	for c < n {
		c <<= 1
	}
	if max := b.pool.max; n > max {
		c = n // the collector takes it back on Close: no more than asked
	} else if c > max {
		c = max
	}
	b.B = make([]byte, 0, c)
}

// Buf is storage lent by a Pool. B may be replaced by a grown slice; the
// Buf keeps whatever B holds when it is closed.
type Buf struct {
	B     []byte
	pool  *Pool
	then  *Buf // closed with b (Then)
	sized bool // from GetSize: goes back to a size class
}

// Then makes n go back when b does: b.Close closes n too. For storage made
// from what b holds and read as long (a body inflated from a lent copy of
// its compressed form). n is then no longer closed on its own.
func (b *Buf) Then(n *Buf) { b.then = n }

// Close gives the storage back to its pool (or to the collector when it
// grew beyond the pool's bound), with the Buf given to Then, if any.
// Nothing made in B may be read afterwards, and b is not used again. It
// never fails.
func (b *Buf) Close() error {
	if n := b.then; n != nil {
		b.then = nil
		_ = n.Close()
	}
	c := cap(b.B)
	if c > b.pool.max {
		return nil
	}
	b.B = b.B[:0]
	if b.sized {
		if c >= minGrow {
			// The class whose least capacity c holds (the one below c's
			// own when c is not a class size).
			i, size := sizeClass(c)
			if size > c {
				i--
			}
			b.pool.sized[i].Put(b)
			return nil
		}
		b.sized = false // storage replaced by a smaller slice: a plain Buf now
	}
	b.pool.p.Put(b)
	return nil
}
