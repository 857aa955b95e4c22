package cache

import (
	"math/bits"
	"sync/atomic"
)

// sketch is a count-min sketch of 4-bit-saturating access counts (the
// frequency filter of TinyLFU): four counters per key, the estimate is the
// smallest. Every sampleSize recorded increments all counters are halved,
// so old popularity fades. Counters are atomics: a lost update under a race
// only makes the estimate a little lower, and a key whose counters are
// saturated costs four loads and no write (hot keys do not bounce cache
// lines between cores).
type sketch struct {
	counters   []atomic.Uint32
	mask       uint64
	sampleSize int64
	added      atomic.Int64
}

const sketchMax = 15

func newSketch(entries int64) *sketch {
	w := uint64(1) << bits.Len64(uint64(max(entries*4, 1024))-1)
	return &sketch{counters: make([]atomic.Uint32, w), mask: w - 1, sampleSize: int64(w) * 10 / 4}
}

func (s *sketch) index(h uint64, i int) uint64 {
	h2 := h>>32 | h<<32
	return (h + uint64(i)*(h2|1)) & s.mask
}

// add records one access of the key hashed to h.
func (s *sketch) add(h uint64) {
	grew := false
	for i := 0; i < 4; i++ {
		c := &s.counters[s.index(h, i)]
		if c.Load() < sketchMax {
			c.Add(1)
			grew = true
		}
	}
	if grew && s.added.Add(1) == s.sampleSize {
		s.halve()
	}
}

// estimate is the key's access count since the last halvings, at most 15.
func (s *sketch) estimate(h uint64) uint32 {
	m := uint32(sketchMax)
	for i := 0; i < 4; i++ {
		m = min(m, s.counters[s.index(h, i)].Load())
	}
	return m
}

func (s *sketch) halve() {
	for i := range s.counters {
		c := &s.counters[i]
		c.Store(c.Load() / 2)
	}
	s.added.Store(0)
}
