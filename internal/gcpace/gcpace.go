// Package gcpace keeps the Go garbage collector from collecting a small
// heap many times a second.
//
// The runtime's default pacing (GOGC=100) lets the heap grow, between
// collections, by the live heap plus the stacks and globals it scans, and
// never aims below 4 MiB. An edge whose live heap is small (a small L1, or
// a large one kept in the off-heap bulk tier) but which allocates a reply
// and an entry for every hit it reads from Redis therefore collects
// constantly: with a 64 KiB L1 and every hit from Redis, a 2 MB live heap
// was collected about 20 times a second, each collection marking the
// stacks of every connection, 5.7% of the edge's CPU. A Pacer lets the heap
// grow by at least a fixed room instead:
//
//	goal = live + max(live + roots, room)
//
// set as GOGC after every collection (live is the heap the collection
// marked, roots the stacks and globals it scanned). It never collects more
// often than the default (GOGC is at least the one found at start), so a
// heap larger than the room is paced as before; it never aims past half-way
// from the live heap to the soft memory limit (GOMEMLIMIT, or the one the
// edge sets from its L1), which still bounds the heap as before.
package gcpace

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// DefaultPercent is the runtime's GOGC when the environment sets none.
const DefaultPercent = 100

// heapMinimum is the runtime's least heap goal at GOGC=100 (4 MiB, scaled
// by GOGC/100: runtime.gcControllerState.heapMinimum).
const heapMinimum = 4 << 20

// maxPercent bounds the GOGC a Pacer sets.
const maxPercent = 10000

// Percent is the GOGC that aims the next collection at
// live + max((live + roots) x base/100, room), the runtime's goal being
// live + (live + roots) x GOGC/100 (roots: the stacks and globals the last
// collection scanned) but never below 4 MiB x GOGC/100. With a memory
// limit (limit above live and below math.MaxInt64) the room is at most
// half of limit - live. The result is clamped to [base, maxPercent]; it
// is base when the live heap is unknown (0) or room is 0.
func Percent(live, roots, room, limit uint64, base int) int {
	if base <= 0 {
		base = DefaultPercent
	}
	if live == 0 || room == 0 {
		return base
	}
	if limit < math.MaxInt64 {
		if limit <= live {
			return base
		}
		room = min(room, (limit-live)/2)
	}
	p := float64(room) / float64(live+roots) * 100
	// The runtime's goal is never below its minimum heap, 4 MiB x
	// GOGC/100: with a heap of a few hundred KB that, not the formula,
	// would set the goal (at GOGC 10000, 400 MiB).
	p = min(p, float64(live+room)/heapMinimum*100)
	switch {
	case p <= float64(base):
		return base
	case p >= maxPercent:
		return maxPercent
	}
	return int(p)
}

// Current is the GOGC in effect, whoever set it (a Pacer, the environment,
// debug.SetGCPercent): for a gauge. 0 when the runtime does not report it.
func Current() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int(s[0].Value.Uint64())
}

// Pacer sets GOGC after each garbage collection (see the package doc). The
// zero value is not usable; see Start.
type Pacer struct {
	room uint64
	base int // the GOGC found at start, restored by Stop

	mu      sync.Mutex // serialises adjust with Stop
	stopped bool
	samples []metrics.Sample

	percent atomic.Int64 // the GOGC last set
	adjusts atomic.Int64 // collections seen
}

// sentinel is an object that only a finalizer reaches: it becomes
// unreachable at once, so the collection after the one that found it so
// runs its finalizer, which arms a new one. It holds a pointer so that the
// allocator's tiny blocks, whose finalizers run late, never hold it.
type sentinel struct{ p *Pacer }

// Start paces the collector so that the heap may grow by at least room
// bytes between collections, adjusting GOGC once now and after every
// collection, and returns the pacer; Stop ends it. The GOGC in effect at
// Start (normally the default 100) is the least it sets. A room of 0, or
// GOGC off, returns nil (the runtime's own pacing stays); a nil *Pacer's
// methods do nothing.
func Start(room uint64) *Pacer {
	if room == 0 {
		return nil
	}
	base := debug.SetGCPercent(DefaultPercent)
	debug.SetGCPercent(base)
	if base <= 0 {
		return nil // GOGC=off: the operator's choice
	}
	p := &Pacer{
		room: room,
		base: base,
		samples: []metrics.Sample{
			{Name: "/gc/heap/live:bytes"},
			{Name: "/gc/scan/stack:bytes"},
			{Name: "/gc/scan/globals:bytes"},
		},
	}
	p.percent.Store(int64(base))
	p.adjust()
	runtime.SetFinalizer(&sentinel{p: p}, onCollection)
	return p
}

// onCollection runs after a collection found its sentinel unreachable:
// it adjusts GOGC and arms the next sentinel unless the pacer stopped.
func onCollection(s *sentinel) {
	if s.p.adjust() {
		runtime.SetFinalizer(&sentinel{p: s.p}, onCollection)
	}
}

// adjust sets GOGC from the live heap and roots the last collection
// marked and the memory limit in effect now (the operator's GOMEMLIMIT, or
// what the edge set); it reports false once the pacer stopped.
func (p *Pacer) adjust() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return false
	}
	metrics.Read(p.samples)
	var v [3]uint64 // live, stacks, globals
	for i, s := range p.samples {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = s.Value.Uint64()
		}
	}
	limit := uint64(math.MaxInt64)
	if l := debug.SetMemoryLimit(-1); l > 0 {
		limit = uint64(l)
	}
	pct := Percent(v[0], v[1]+v[2], p.room, limit, p.base)
	if int64(pct) != p.percent.Load() {
		debug.SetGCPercent(pct)
		p.percent.Store(int64(pct))
	}
	p.adjusts.Add(1)
	return true
}

// Stop ends the pacing and restores the GOGC found at Start.
func (p *Pacer) Stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	p.stopped = true
	debug.SetGCPercent(p.base)
	p.percent.Store(int64(p.base))
}

// Percent is the GOGC the pacer set last (for a gauge); 0 for a nil pacer.
func (p *Pacer) Percent() int {
	if p == nil {
		return 0
	}
	return int(p.percent.Load())
}

// Adjustments is how many times the pacer has set GOGC from a collection's
// live heap (once at Start, then once per collection).
func (p *Pacer) Adjustments() int64 {
	if p == nil {
		return 0
	}
	return p.adjusts.Load()
}
