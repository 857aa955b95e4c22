package cache

import (
	"context"
	"encoding/binary"
	"sync"
	"sync/atomic"

	"github.com/VictoriaMetrics/fastcache"
	"github.com/cespare/xxhash/v2"

	"github.com/dealer-edge/dealer-edge/internal/bufpool"
)

// The in-process cache has two tiers when it is large.
//
// The hot tier is L1 as it always was: entries as Go objects (a node, the
// Entry, its body), TinyLFU-admitted CLOCK, hits served zero-copy with no
// allocation. Its cost is the collector's: every entry is several heap
// objects that each collection marks, and the runtime's memory limit keeps
// collections frequent, so its GC cost grows with its size
// (BenchmarkLargeL1: 45% of the CPU with 1 GiB of it).
//
// The bulk tier sits between the hot tier and Redis: fastcache, which keeps
// the entries in 64 KiB chunks mmap'd outside the Go heap (a ring per
// bucket, 512 buckets) and indexes them with pointer-free maps
// (map[uint64]uint64), so the collector never sees the bytes and marks only
// a few objects per bucket whatever the tier holds. An entry is kept there
// in the Redis wire format: with Redis, the gzip variant the write to Redis
// makes anyway (about five listing pages in the space of one plain page);
// without Redis, as the entry has it (the tier never compresses on its own
// account). A hit costs what a Redis hit costs minus the round trip: a copy
// out of the chunk, decoding, and decompression for a client that wants the
// plain body of a compressed value.
//
// Lookup order: hot tier, bulk tier, Redis, fill. An entry that enters the
// process (a fill, a Redis hit) is offered to both tiers, and an entry the
// hot tier evicts for space is written back to the bulk tier (its hits in
// the hot tier did not refresh its bulk copy); a bulk hit is offered to
// the hot tier. Admission to the ring is TinyLFU against the ring's next
// victim (bulkTier.admit), with the hot tier's sketch; eviction is
// fastcache's ring (the oldest writes go first) with reinsertion: a hit on
// an entry written more than half the ring ago writes it again, so what is
// asked for stays (CLOCK's second chance, approximately).
//
// Keys carry the dealer's purge generation, as Redis keys do: a purge moves
// the generation on, which makes every older entry of the dealer
// unreachable at once; they age out of the ring.

const (
	// bulkMinBytes is the smallest bulk tier: fastcache's minimum (one
	// 64 KiB chunk for each of its 512 buckets).
	bulkMinBytes = 32 << 20
	// autoTierAbove is the L1MaxBytes above which the bulk tier is on by
	// default (Options.L1HotBytes zero).
	autoTierAbove = 256 << 20
	// autoHotBytes is the hot tier's share then. The collector's work per
	// cycle grows with the hot tier's entries, and a smaller hot tier
	// sends more hits to the bulk tier, where each allocates its copy:
	// BenchmarkLargeL1 at 1 GiB gave a GC share of 12% with 64 MiB hot,
	// 7.5-8% with 32, 5.2-6.7% with 16 and 5.9% with 8, the same hit
	// ratio (0.80) and 0.64, 0.59, 0.55 and 0.50 of the requests served by
	// the hot tier. Fixed, not a share: the GC cost must not grow with
	// L1MaxBytes.
	autoHotBytes = 16 << 20
	// bulkChunk is fastcache's chunk: a key and value (with a 4-byte
	// header) must be smaller to be stored by Set.
	bulkChunk = 64 << 10
	// bulkKeyHeader is the dealer and generation in front of the key.
	bulkKeyHeader = 16
	// bulkValHeader is the write position in front of the wire value.
	bulkValHeader = 8
	// bulkBigMeta is the length of fastcache's SetBig metadata (value hash
	// and length), which Get returns for a key stored by SetBig. Wire
	// values are longer (bulkValHeader + at least wireHeader1).
	bulkBigMeta = 16
)

// L1Tiers splits the in-process budget l1MaxBytes into the hot tier (Go
// heap) and the bulk tier (off-heap), given Options.L1HotBytes (see there).
// A bulk tier smaller than 32 MiB is not worth its fixed cost: the whole
// budget then stays hot.
func L1Tiers(l1MaxBytes, l1HotBytes int64) (hot, bulk int64) {
	switch {
	case l1MaxBytes <= 0 || l1HotBytes < 0:
		return l1MaxBytes, 0
	case l1HotBytes == 0 && l1MaxBytes <= autoTierAbove:
		return l1MaxBytes, 0
	case l1HotBytes == 0:
		l1HotBytes = autoHotBytes
	}
	if l1MaxBytes-l1HotBytes < bulkMinBytes {
		return l1MaxBytes, 0
	}
	return l1HotBytes, l1MaxBytes - l1HotBytes
}

// Bulk admission policies (bulkTier.policy).
const (
	bulkAdmitAll   = iota // every entry that enters the process
	bulkAdmitTwice        // keys the sketch has seen at least twice
	bulkAdmitLFU          // TinyLFU against the entry the ring evicts next
)

// demote writes an entry the hot tier evicted for space back to the bulk
// tier, unless its dealer was purged since it was stored (its generation
// is no longer current) or its copy there is recent: a hot entry's hits
// do not refresh its bulk copy, which the ring may have evicted meanwhile.
func (c *Cache) demote(n *l1node) {
	st := c.gens.lookup(n.dealer)
	if st == nil || st.gen.Load() != n.gen || c.epoch.gen.Load() != n.epoch || c.now().After(n.entry.ErrorUntil) {
		return
	}
	c.bulk.put(n.dealer, n.gen, n.epoch, n.key, n.entry, c.bulkGzip)
}

// bulkRecord is one write to the ring, in the admission log: the key's
// sketch hash, the ring clock after the write and the bytes it took.
type bulkRecord struct {
	h    uint64
	end  int64
	size int64
}

// admit decides whether a write of size bytes for the key hashed to h
// enters the ring (TinyLFU with the ring's next victim, bulkAdmitLFU):
// while the ring is not full, yes; then only when the key is asked for more
// often per byte (sketch estimates) than the oldest entry still in the
// ring, the one the write would evict. A rejected write leaves the ring as
// it is, so the victim stays; the log moves past it, so the next
// candidate is compared with the next oldest entry (CLOCK's spared entry).
func (t *bulkTier) admit(h uint64, size int64) bool {
	switch t.policy {
	case bulkAdmitAll:
		return true
	case bulkAdmitTwice:
		return t.freq.estimate(h) >= 2
	}
	w := t.written.Load()
	if w-t.base.Load()+size <= t.capacity { // not full since New or the last reset
		return true
	}
	l := t.logShard(h)
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.n > 0 && l.recs[l.head].end <= w-t.capacity {
		l.pop()
	}
	if l.n == 0 {
		return true
	}
	v := l.recs[l.head]
	if int64(t.freq.estimate(h))*v.size > int64(t.freq.estimate(v.h))*size {
		return true
	}
	l.pop()
	return false
}

// record appends a write to the admission log (the oldest record goes
// when the log is full: it then looks less far back than the ring).
func (t *bulkTier) record(h uint64, size int64) {
	if t.policy != bulkAdmitLFU {
		return
	}
	l := t.logShard(h)
	l.mu.Lock()
	if l.n == len(l.recs) {
		l.pop()
	}
	l.recs[(l.head+l.n)%len(l.recs)] = bulkRecord{h: h, end: t.written.Load(), size: size}
	l.n++
	l.mu.Unlock()
}

// bulkLogShards splits the admission log by key hash, so that concurrent
// writes do not queue on one lock: each shard's oldest record stands for
// the ring's next victim among its keys (fastcache's buckets are by key
// hash too, and the ring clock is shared).
const bulkLogShards = 16

// bulkLog is one shard of the admission log: a ring of records, oldest at
// head.
type bulkLog struct {
	mu      sync.Mutex
	recs    []bulkRecord
	head, n int
	_       [40]byte // keep neighbouring shards' locks apart
}

func (l *bulkLog) pop() {
	l.head = (l.head + 1) % len(l.recs)
	l.n--
}

func (t *bulkTier) logShard(h uint64) *bulkLog {
	return &t.logs[h%bulkLogShards]
}

// bulkTier is the off-heap tier. It is safe for concurrent use.
type bulkTier struct {
	fc       *fastcache.Cache
	capacity int64        // bytes of ring
	maxBig   int          // larger values are not kept
	written  atomic.Int64 // bytes appended since New: the ring's clock
	base     atomic.Int64 // written at the last reset: the ring is empty from there

	hits, misses, errors, writes, skipped, reinserts, rejected atomic.Uint64

	freq   *sketch // the hot tier's: lookups of both tiers
	policy int     // bulkAdmit*
	logs   [bulkLogShards]bulkLog

	bufs sync.Pool // *[]byte: scratch for a key and value
}

func newBulkTier(maxBytes int64, freq *sketch) *bulkTier {
	// fastcache rounds each of its 512 buckets up to whole 64 KiB chunks,
	// so its ring is maxBytes rounded up to 32 MiB: rounded down instead,
	// the ring stays within the bulk share (1 GiB of L1 made a 1,024 MiB
	// ring of a 1,008 MiB share; TestBulkRingWithinBudget).
	maxBytes = max(maxBytes/bulkMinBytes, 1) * bulkMinBytes
	t := &bulkTier{
		fc:       fastcache.New(int(maxBytes)),
		capacity: maxBytes,
		freq:     freq,
		policy:   bulkAdmitLFU,
		// A value split by SetBig must fit in a fraction of a bucket's
		// ring, or writing it would evict most of the bucket.
		maxBig: int(min(maxBytes/512/4, 8<<20)),
	}
	// A record per 2 KiB of ring (12 MiB of pointer-free heap for 1 GiB),
	// at most 1 Mi records (24 MiB): when the ring holds more entries than
	// the log, the log's oldest record stands in for the ring's next
	// victim (a newer entry than the one evicted).
	recs := min(max(maxBytes/2048, 1<<14), 1<<20) / bulkLogShards
	for i := range t.logs {
		t.logs[i].recs = make([]bulkRecord, recs)
	}
	return t
}

// appendBulkKey appends the bulk key of (dealer, gen, ep, key): the purge
// epoch ep is part of it, so that nothing stored under an older epoch is
// found again (Cache.PurgeAll).
func appendBulkKey[K string | []byte](b []byte, dealer int64, gen, ep uint64, key K) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(dealer))
	b = binary.BigEndian.AppendUint64(b, gen)
	b = binary.BigEndian.AppendUint64(b, ep)
	return append(b, key...)
}

func (t *bulkTier) buf() *[]byte {
	if p, _ := t.bufs.Get().(*[]byte); p != nil {
		return p
	}
	b := make([]byte, 0, 4<<10)
	return &b
}

func (t *bulkTier) putBuf(p *[]byte) {
	if cap(*p) <= 256<<10 {
		*p = (*p)[:0]
		t.bufs.Put(p)
	}
}

// put writes e under (dealer, gen, ep, key): its gzip variant when e has one
// or compress is set (the caller is about to make it anyway), else the
// plain body. The bulk tier never compresses on its own account.
func (t *bulkTier) put(dealer int64, gen, ep uint64, key string, e *Entry, compress bool) {
	h := keyHash(dealer, xxhash.Sum64String(key))
	p := t.buf()
	b := appendBulkKey((*p)[:0], dealer, gen, ep, key)
	kl := len(b)
	b = append(b, make([]byte, bulkValHeader)...)
	if compress || e.gz.Load() != nil {
		b = appendEntry(b, e)
	} else {
		b = appendPlainEntry(b, e)
	}
	*p = b
	if t.admit(h, int64(len(b)+4)) {
		t.store(b[:kl], b[kl:], h)
	} else {
		t.rejected.Add(1)
	}
	t.putBuf(p)
}

// store writes the value v (its header is filled here) under k.
func (t *bulkTier) store(k, v []byte, h uint64) {
	n := int64(len(k) + len(v) + 4)
	binary.BigEndian.PutUint64(v, uint64(t.written.Load()))
	switch {
	case n < bulkChunk:
		t.fc.Set(k, v)
	case len(v) <= t.maxBig:
		// Split into sub-values of up to 64 KiB, each keyed by the
		// value's hash; the key itself holds the hash and length, and
		// GetBig checks the reassembled value against both.
		t.fc.SetBig(k, v)
		n += int64(len(v)/bulkChunk+1) * 40
	default:
		t.skipped.Add(1)
		return
	}
	t.written.Add(n)
	t.writes.Add(1)
	t.record(h, n)
}

// get returns the entry stored under (dealer, gen, ep, key), or nil. A value
// that does not decode, or that a caller of the plain body cannot use
// (its compressed payload does not inflate to the stored hash), is deleted
// and reported as missing.
//
// With into, the value is copied into into's storage when it fits: into.B
// is then the value (the entry aliases it; see probeBulk), else it stays
// empty.
func (t *bulkTier) get(dealer int64, gen, ep uint64, key []byte, plain bool, into *bufpool.Buf) *Entry {
	p := t.buf()
	k := appendBulkKey((*p)[:0], dealer, gen, ep, key)
	*p = k
	defer t.putBuf(p)
	var dst []byte
	if into != nil {
		dst = into.B[:0]
	}
	v := t.fc.Get(dst, k)
	if len(v) == bulkBigMeta {
		v = t.fc.GetBig(nil, k)
	} else if into != nil && len(v) <= lendMax {
		into.B = v
	}
	if len(v) == 0 {
		t.misses.Add(1)
		return nil
	}
	if len(v) < bulkValHeader {
		t.bad(k)
		return nil
	}
	e, err := decodeEntry(v[bulkValHeader:], false)
	if err != nil {
		t.bad(k)
		return nil
	}
	var ok bool
	if plain && into != nil && len(into.B) > 0 {
		// An identity client's hit of a value copied into lent storage:
		// its plain body is made in lent storage that goes back with into.
		ok = e.inflateLentAlso(into)
	} else {
		ok = usable(e, plain)
	}
	if !ok {
		t.bad(k)
		return nil
	}
	// Second chance: an entry asked for in the older half of the ring is
	// written again at its head. e aliases v's payload, which is not
	// modified (store rewrites only the header).
	if t.written.Load()-int64(binary.BigEndian.Uint64(v)) > t.capacity/2 {
		t.reinserts.Add(1)
		t.store(k, v, keyHash(dealer, xxhash.Sum64(key)))
	}
	return e
}

func (t *bulkTier) bad(k []byte) {
	t.errors.Add(1)
	t.fc.Del(k)
}

// del forgets the entry under (dealer, gen, ep, key).
func (t *bulkTier) del(dealer int64, gen, ep uint64, key []byte) {
	p := t.buf()
	*p = appendBulkKey((*p)[:0], dealer, gen, ep, key)
	t.fc.Del(*p)
	t.putBuf(p)
}

// bulkStats are the tier's gauges, read from fastcache (which takes every
// bucket's lock: for Stats, not for the request path).
func (t *bulkTier) stats() (entries, bytes int64) {
	var s fastcache.Stats
	t.fc.UpdateStats(&s)
	return int64(s.EntriesCount), min(t.written.Load()-t.base.Load(), t.capacity)
}

// reset empties the tier: the ring, the admission log, whose records
// stood for entries the reset dropped (each new write was compared with one
// and mostly refused: 19 of 1,000 pages kept after a purge of everything,
// TestBulkAfterPurgeAll), and the ring's fill level.
func (t *bulkTier) reset() {
	t.fc.Reset()
	for i := range t.logs {
		l := &t.logs[i]
		l.mu.Lock()
		l.head, l.n = 0, 0
		l.mu.Unlock()
	}
	t.base.Store(t.written.Load())
}

// probeBulk looks the key up in the bulk tier after a hot-tier miss. It
// reports true with the outcome when the entry can be served (fresh, or
// stale within stale-while-revalidate, which starts one refresh); an entry
// only within its stale-if-error window becomes the fallback. A usable
// entry is offered to the hot tier, through its admission, as a Redis hit
// is, unless the admission would likely refuse it (l1.wouldAdmit: asking
// takes the shard locks).
func (c *Cache) probeBulk(ctx context.Context, dealer int64, key []byte, pol Policy, fill FillFunc, fallback **Entry, plain bool) (outcome, bool) {
	ep := c.currentEpoch(ctx)
	gen, cur := c.generation(ctx, dealer)
	// The value is copied out of the tier into storage lent from a pool:
	// an entry the hot tier does not take is served once and the storage
	// comes back after the response is written (Entry.Lent), as for the L2
	// hits L1 does not keep; one the hot tier takes keeps it.
	// Storage of the smallest size class (4 KiB) holds most values (a
	// compressed listing page is about 2 KB); fastcache grows it for
	// larger ones.
	l := lentBodies.GetSize(0)
	e := c.bulk.get(dealer, gen, ep, key, plain, l)
	if e == nil {
		_ = l.Close()
		return outcome{}, false
	}
	st := pol.state(e, c.now())
	if st == stateExpired {
		_ = l.Close()
		c.bulk.del(dealer, gen, ep, key)
		return outcome{}, false
	}
	// The cost the hot tier will charge: a kept hit is rehomed to storage
	// of its bodies' lengths, so the pooled buffer's slack is not part of
	// it; an entry not kept holds the buffer whole (held, below).
	cost := nodeSize(key, e) + e.codingsSize()
	if len(l.B) > 0 {
		cost -= e.held // an identity client's body inflated into pooled storage: rehomed too
	}
	// Only an entry never offered to the hot tier is lent: put makes a
	// node visible to lookups before its admission may take it out again.
	kept := false
	if fits(c.l1, key, e) && c.l1.wouldAdmit(keyHash(dealer, xxhash.Sum64(key)), cost) {
		if len(l.B) > 0 {
			// The hot tier keeps the bodies in storage of their own
			// lengths, and the pooled buffers go back (Entry.rehome).
			e.rehome()
		}
		_ = l.Close()
		l = nil
		c.l1.put(dealer, string(key), gen, ep, &cur.gen, e)
		kept = true
	}
	if !kept && len(l.B) > 0 {
		e.held += int64(cap(l.B) - len(l.B)) // the value's pooled buffer, kept whole
	}
	switch {
	case kept:
	case (st == stateFresh || st == stateStale) && len(l.B) > 0:
		e.lent.Store(l)
	case len(l.B) == 0:
		_ = l.Close() // nothing was copied into it
	} // else the entry keeps the storage (as the flight's fallback)
	switch st {
	case stateFresh:
		c.bulk.hits.Add(1)
		return outcome{e, Hit}, true
	case stateStale: // counted as stale served, as an L1 or Redis stale answer is
		c.refresh(ctx, dealer, string(key), pol, fill)
		return outcome{e, Stale}, true
	}
	*fallback = newer(*fallback, e)
	return outcome{}, false
}
