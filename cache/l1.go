package cache

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
)

const (
	l1ShardBits = 6
	l1Shards    = 1 << l1ShardBits
	// nodeOverhead approximates the memory of one node beyond its key and
	// body: the node (80 B), the Entry (about 224 B), the map and ring
	// slots and the allocator's rounding; a heap profile of 140,000 small
	// entries measured about 420 B (256 before 2026-11-27 let L1 hold
	// 1.2-1.4x its budget of small entries).
	nodeOverhead = 448
)

// l1node is one entry in L1. Everything but ref and idx is immutable.
type l1node struct {
	dealer int64
	key    string
	gen    uint64
	epoch  uint64 // the purge epoch it was stored under
	entry  *Entry
	size   int64       // key, ETag and overhead; the body's codings are counted by the entry (see cost)
	hash   uint64      // sketch hash of (dealer, key)
	ref    atomic.Bool // CLOCK reference bit, set on a hit under the read lock
	idx    int         // position in the shard's ring; guarded by the write lock
}

// l1shard is one lock domain of L1. The map is keyed by dealer first, so a
// purge touches only that dealer's entries and a lookup needs no composite
// key (and so no allocation).
type l1shard struct {
	mu   sync.RWMutex
	m    map[int64]map[string]*l1node
	ring []*l1node // CLOCK ring
	hand int
	hits atomic.Uint64 // Hit results served from this shard
	_    [40]byte      // keep neighbouring shards' hot words apart
}

// l1 is a sharded in-process cache bounded by an approximate byte budget
// with CLOCK (second chance) eviction and TinyLFU admission: when a new
// entry needs room, it is kept only if it has been asked for more often
// (sketch estimate) than the entry CLOCK would evict for it; otherwise the
// newcomer goes and the resident stays. On skewed traffic this keeps the
// hot set against the stream of one-off requests that plain CLOCK lets
// wash through (TestL1HitRatios has the numbers).
type l1 struct {
	max      int64
	maxEntry int64
	freq     *sketch
	noAdmit  bool           // plain CLOCK (the hit-ratio comparison only)
	onEvict  func(*l1node)  // called, outside the locks, with each entry evicted for space
	epoch    *atomic.Uint64 // the cache's purge epoch; nil: not checked (tests)
	// lastVictim is the density (sketch estimate per byte of cost, float64
	// bits) of the last entry CLOCK weighed against a newcomer: what a
	// newcomer must beat, give or take, to be admitted (see wouldAdmit).
	lastVictim atomic.Uint64
	rejected   atomic.Uint64 // newcomers not admitted
	bytes      atomic.Int64
	entries    atomic.Int64
	evictions  atomic.Uint64
	victim     atomic.Uint32
	shards     [l1Shards]l1shard
}

func newL1(maxBytes int64) *l1 {
	// The sketch has four 8-bit counters per 256 bytes of L1 (1 MiB of
	// counters for the default 64 MiB): the pages of a listing space are
	// small on average, and a sketch much narrower than the number of
	// distinct keys lets cold keys borrow the counts of hot ones
	// (TestL1HitRatios: with one counter per 512 bytes, Zipf(0.8) at 1/50 of
	// the working set reached 89% of the best static hit ratio; 97% with
	// this size).
	c := &l1{max: maxBytes, maxEntry: maxBytes / 8, freq: newSketch(maxBytes / 256)}
	for i := range c.shards {
		c.shards[i].m = make(map[int64]map[string]*l1node)
	}
	return c
}

func shardIndex(dealer int64, h uint64) uint64 {
	return keyHash(dealer, h) >> (64 - l1ShardBits)
}

// keyHash mixes the dealer into the hash of a key.
func keyHash(dealer int64, h uint64) uint64 { return h ^ uint64(dealer)*0x9e3779b97f4a7c15 }

// lookup returns the node of (dealer, key), or nil, and records the access
// in the frequency sketch. It does not allocate.
func (c *l1) lookup(dealer int64, key []byte) (*l1node, *l1shard) {
	h := keyHash(dealer, xxhash.Sum64(key))
	c.freq.add(h)
	s := &c.shards[h>>(64-l1ShardBits)]
	s.mu.RLock()
	n := s.m[dealer][string(key)]
	if n != nil && n.entry.lending.Load() {
		n = nil // being offered with lent storage (Cache.probeL2)
	}
	if n != nil && !n.ref.Load() {
		n.ref.Store(true)
	}
	s.mu.RUnlock()
	return n, s
}

// lookupString is lookup for a key already held as a string.
func (c *l1) lookupString(dealer int64, key string) *l1node {
	s := &c.shards[shardIndex(dealer, xxhash.Sum64String(key))]
	s.mu.RLock()
	n := s.m[dealer][key]
	if n != nil && n.entry.lending.Load() {
		n = nil // being offered with lent storage (Cache.probeL2)
	}
	if n != nil && !n.ref.Load() {
		n.ref.Store(true)
	}
	s.mu.RUnlock()
	return n
}

// node returns the node of (dealer, key), or nil, whatever its state
// (being lent included), without marking it referenced: for a removal.
func (c *l1) node(dealer int64, key string) *l1node {
	s := &c.shards[shardIndex(dealer, xxhash.Sum64String(key))]
	s.mu.RLock()
	n := s.m[dealer][key]
	s.mu.RUnlock()
	return n
}

// put stores e under (dealer, key) for generation gen and purge epoch ep,
// unless gen is no longer the dealer's current generation or ep the current
// epoch: the check runs under the shard lock, and a purge bumps the
// generation (or the epoch) before it takes the shard locks to drop entries,
// so an entry filled before a purge can never be inserted after it. It
// reports whether e was stored.
func (c *l1) put(dealer int64, key string, gen, ep uint64, cur *atomic.Uint64, e *Entry) bool {
	if !fits(c, key, e) {
		return false
	}
	size := nodeSize(key, e)
	h := keyHash(dealer, xxhash.Sum64String(key))
	n := &l1node{dealer: dealer, key: key, gen: gen, epoch: ep, entry: e, size: size, hash: h}
	s := &c.shards[h>>(64-l1ShardBits)]
	s.mu.Lock()
	if cur.Load() != gen || (c.epoch != nil && c.epoch.Load() != ep) {
		s.mu.Unlock()
		return false
	}
	variants, ok := e.account(c)
	if !ok { // e is, or was, held by a node
		s.mu.Unlock()
		return false
	}
	if old := s.m[dealer][key]; old != nil {
		s.removeLocked(c, old)
	}
	dm := s.m[dealer]
	if dm == nil {
		dm = make(map[string]*l1node)
		s.m[dealer] = dm
	}
	dm[key] = n
	n.idx = len(s.ring)
	s.ring = append(s.ring, n)
	c.bytes.Add(size + variants)
	c.entries.Add(1)
	s.mu.Unlock()
	cand := c.freq.estimate(h)
	if c.noAdmit {
		cand = 0
	}
	for c.bytes.Load() > c.max {
		victim, reject := c.evictOne(n, cand)
		if reject {
			c.rejected.Add(1)
			c.remove(n)
			return false
		}
		if victim == nil {
			break
		}
		if c.onEvict != nil {
			c.onEvict(victim)
		}
	}
	return true
}

// shrink evicts entries while L1 holds more than its budget: after a coding
// of a resident entry was made (see Entry.install).
func (c *l1) shrink() {
	for c.bytes.Load() > c.max {
		victim, _ := c.evictOne(nil, 0)
		if victim == nil {
			return
		}
		if c.onEvict != nil {
			c.onEvict(victim)
		}
	}
}

// wouldAdmit reports whether a newcomer of cost bytes whose key hashed to
// h would likely be admitted now: whether it is asked for more often per
// byte than the last victim CLOCK weighed. A caller that has the entry
// anyway (a bulk-tier hit) asks first, so that entries the admission would
// reject do not take the shard locks to find out.
func (c *l1) wouldAdmit(h uint64, cost int64) bool {
	if c.noAdmit {
		return true
	}
	return float64(c.freq.estimate(h))/float64(cost) > math.Float64frombits(c.lastVictim.Load())
}

// fits reports whether an entry e under key is small enough for put.
func fits[K string | []byte](c *l1, key K, e *Entry) bool {
	return nodeSize(key, e)+int64(e.plainLen) <= c.maxEntry
}

// nodeSize is what an L1 node of e under key holds besides the body's
// codings: the key (in the node and the map), the ETag and the overhead.
func nodeSize[K string | []byte](key K, e *Entry) int64 {
	return int64(len(key)+len(e.ETag)) + nodeOverhead // the map's key shares the node's string
}

// cost is what n holds in L1's budget now: its own size and the codings of
// the body made so far.
func (n *l1node) cost() int64 {
	return n.size + n.entry.codingsSize()
}

// remove drops n if it is still the node stored for its key.
func (c *l1) remove(n *l1node) {
	s := &c.shards[shardIndex(n.dealer, xxhash.Sum64String(n.key))]
	s.mu.Lock()
	if s.m[n.dealer][n.key] == n {
		s.removeLocked(c, n)
	}
	s.mu.Unlock()
}

func (s *l1shard) removeLocked(c *l1, n *l1node) {
	if dm := s.m[n.dealer]; dm != nil {
		delete(dm, n.key)
		if len(dm) == 0 {
			delete(s.m, n.dealer)
		}
	}
	last := len(s.ring) - 1
	s.ring[n.idx] = s.ring[last]
	s.ring[n.idx].idx = n.idx
	s.ring[last] = nil
	s.ring = s.ring[:last]
	if s.hand >= len(s.ring) {
		s.hand = 0
	}
	c.bytes.Add(-n.size - n.entry.retire())
	c.entries.Add(-1)
}

// evictOne evicts one entry from the next non-empty shard, giving entries
// hit since the hand last passed a second chance. It reports false when L1
// is empty. With a candidate cand (the entry being inserted, its estimated
// frequency candFreq > 0), a victim asked for at least as often as the
// candidate is kept and evictOne reports reject instead: the candidate is
// the one to go.
func (c *l1) evictOne(cand *l1node, candFreq uint32) (victim *l1node, reject bool) {
	start := c.victim.Add(1)
	for i := uint32(0); i < l1Shards; i++ {
		s := &c.shards[(start+i)%l1Shards]
		s.mu.Lock()
		if len(s.ring) == 0 {
			s.mu.Unlock()
			continue
		}
		for {
			if s.hand >= len(s.ring) {
				s.hand = 0
			}
			n := s.ring[s.hand]
			if n.ref.Load() {
				n.ref.Store(false)
				s.hand++
				continue
			}
			// Requests per byte, as the best static content is chosen: a
			// large newcomer must be asked for proportionally more often.
			if candFreq > 0 && n != cand {
				vf := c.freq.estimate(n.hash)
				c.lastVictim.Store(math.Float64bits(float64(vf) / float64(n.cost())))
				if int64(vf)*cand.cost() < int64(candFreq)*n.cost() {
					s.removeLocked(c, n)
					victim = n
					break
				}
				s.hand++ // spare it; next time the hand starts past it
				s.mu.Unlock()
				return nil, true
			}
			s.removeLocked(c, n)
			victim = n
			break
		}
		s.mu.Unlock()
		c.evictions.Add(1)
		return victim, false
	}
	return nil, false
}

// dropDealer removes every entry of dealer.
func (c *l1) dropDealer(dealer int64) {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		for _, n := range s.m[dealer] {
			s.removeLocked(c, n)
		}
		s.mu.Unlock()
	}
}

// dropAll removes every entry (a purge of everything, Cache.PurgeAll).
func (c *l1) dropAll() {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		for len(s.ring) > 0 {
			s.removeLocked(c, s.ring[len(s.ring)-1])
		}
		s.mu.Unlock()
	}
}

func (c *l1) hits() uint64 {
	var n uint64
	for i := range c.shards {
		n += c.shards[i].hits.Load()
	}
	return n
}
