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
}

// New returns a Pool that keeps buffers of at most max bytes.
func New(max int) *Pool {
	p := &Pool{max: max}
	p.p.New = func() any { return &Buf{pool: p} }
	return p
}

// Get returns a Buf with an empty B.
func (p *Pool) Get() *Buf {
	b := p.p.Get().(*Buf)
	b.B = b.B[:0]
	return b
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
	B    []byte
	pool *Pool
	then *Buf // closed with b (Then)
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
	if cap(b.B) <= b.pool.max {
		b.B = b.B[:0]
		b.pool.p.Put(b)
	}
	return nil
}
