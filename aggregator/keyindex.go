package aggregator

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// KeyFeed is what the key index needs of the dealers service: the paged
// snapshot and the change feed of upstream's contract (*upstream.Client
// implements it).
type KeyFeed interface {
	KeySnapshotEach(ctx context.Context, after string, limit int, each func(*upstream.KeyIndexEntry) error) (upstream.KeySnapshotPage, error)
	KeyChanges(ctx context.Context, cursor string, limit int) (upstream.KeyChangesPage, error)
}

// Index states, as logged and exposed by AuthStats.
const (
	IndexLoading = "loading" // no snapshot yet: every unknown key is looked up, under the budget
	IndexFresh   = "fresh"   // last good sync within auth.index_stale_after: the index decides alone
	IndexStale   = "stale"   // older: hits still served (up to auth.stale more), misses looked up under the budget
	IndexGone    = "expired" // older than index_stale_after + auth.stale: lookups as if there were no index
)

// indexPageSize is the page size the index asks the feed for.
const indexPageSize = upstream.MaxKeyPageSize

// ixEntry is one valid (active) key of the index. Revoked and deleted keys
// are not kept: absent and revoked answer the same. 16 bytes: with the
// 32-byte map key, 48 bytes a slot.
type ixEntry struct {
	dealerID int64
	// meta packs the expiry (Unix seconds, 0: never; bits 24-63) and the
	// plan (index into keyIndex.plans; bits 0-23).
	meta uint64
}

const planBits = 24

func (e ixEntry) plan() uint32 { return uint32(e.meta & (1<<planBits - 1)) }

// expires returns the expiry, zero when the key never expires.
func (e ixEntry) expires() time.Time {
	if sec := int64(e.meta >> planBits); sec != 0 {
		return time.Unix(sec, 0)
	}
	return time.Time{}
}

const ixShards = 64

// ixTable is one generation of the index: sharded maps from the raw
// SHA-256 of a key to its entry.
type ixTable struct {
	shards [ixShards]struct {
		sync.RWMutex
		m map[[32]byte]ixEntry
	}
}

func newIXTable(hint int) *ixTable {
	t := &ixTable{}
	for i := range t.shards {
		t.shards[i].m = make(map[[32]byte]ixEntry, hint/ixShards)
	}
	return t
}

func (t *ixTable) get(h *[32]byte) (ixEntry, bool) {
	sh := &t.shards[h[0]%ixShards]
	sh.RLock()
	e, ok := sh.m[*h]
	sh.RUnlock()
	return e, ok
}

func (t *ixTable) len() int {
	n := 0
	for i := range t.shards {
		sh := &t.shards[i]
		sh.RLock()
		n += len(sh.m)
		sh.RUnlock()
	}
	return n
}

// keyIndex is the local set of valid keys, synchronised from a KeyFeed.
// Only the sync goroutine writes; requests read.
type keyIndex struct {
	feed KeyFeed
	log  *slog.Logger
	now  func() time.Time

	tab      atomic.Pointer[ixTable]
	plans    atomic.Pointer[[]string] // copy on write; ixEntry.plan indexes it
	planIdx  map[string]uint32        // sync goroutine only
	version  atomic.Uint64            // bumped whenever a key's state may have changed
	lastGood atomic.Int64             // Unix ns of the last good sync; 0: never
	size     atomic.Int64

	syncs, syncErrors, resyncs atomic.Uint64

	cursor string       // sync goroutine only
	state  string       // last logged state; sync goroutine only
	fail   syncFailures // sync goroutine only

	// wake tells the sync loop that the settings changed (a reload): a
	// new auth.index_interval applies to the wait under way.
	wake chan struct{}
}

// settingsChanged wakes the sync loop to apply new settings to its wait.
func (ix *keyIndex) settingsChanged() {
	select {
	case ix.wake <- struct{}{}:
	default:
	}
}

func newKeyIndex(feed KeyFeed, log *slog.Logger, now func() time.Time) *keyIndex {
	ix := &keyIndex{feed: feed, log: log, now: now, planIdx: map[string]uint32{}, state: IndexLoading, wake: make(chan struct{}, 1)}
	ix.plans.Store(&[]string{})
	return ix
}

// planOf returns the plan name of e.
func (ix *keyIndex) planOf(e ixEntry) string {
	ps := *ix.plans.Load()
	if i := int(e.plan()); i < len(ps) {
		return ps[i]
	}
	return ""
}

func (ix *keyIndex) internPlan(p string) uint32 {
	if i, ok := ix.planIdx[p]; ok {
		return i
	}
	if len(ix.planIdx) >= 1<<planBits-1 {
		return 1<<planBits - 1 // no such plan: the default limit
	}
	p = strings.Clone(p) // p may point into a response body
	old := *ix.plans.Load()
	// Appended in place while there is room (amortised doubling, not a
	// copy of the whole list per new plan, which made n plans cost n²/2
	// string headers): a reader holds an older header whose length
	// excludes the slot written, and only this goroutine writes.
	ps := append(old, p)
	i := uint32(len(old))
	ix.planIdx[p] = i
	ix.plans.Store(&ps)
	return i
}

// stateAt returns the index state at now under the given bounds.
func (ix *keyIndex) stateAt(now time.Time, staleAfter, grace time.Duration) string {
	last := ix.lastGood.Load()
	if last == 0 || ix.tab.Load() == nil {
		return IndexLoading
	}
	age := now.Sub(time.Unix(0, last))
	switch {
	case age <= staleAfter:
		return IndexFresh
	case age <= staleAfter+grace:
		return IndexStale
	default:
		return IndexGone
	}
}

// entry converts a feed entry; ok is false when the entry does not make a
// valid key (revoked, deleted, malformed hash).
func (ix *keyIndex) entry(u *upstream.KeyIndexEntry) (h [32]byte, e ixEntry, valid, wellFormed bool) {
	if !decodeHash(&h, u.KeySHA256) {
		return h, e, false, false
	}
	if u.Status != upstream.KeyActive {
		return h, e, false, true
	}
	e = ixEntry{dealerID: u.DealerID, meta: uint64(ix.internPlan(u.Plan))}
	if u.ExpiresAt != nil {
		// Whole seconds, rounded down (a key expires up to 1s early, never
		// late); before 1970 counts as 1970.
		sec := max(u.ExpiresAt.Unix(), 1)
		e.meta |= uint64(min(sec, 1<<(64-planBits)-1)) << planBits
	}
	return h, e, true, true
}

// loadSnapshot pages the whole snapshot into a new table and installs it,
// then catches up with the changes since the snapshot's first cursor.
func (ix *keyIndex) loadSnapshot(ctx context.Context) error {
	hint := 0
	if t := ix.tab.Load(); t != nil {
		hint = int(ix.size.Load())
	}
	// The next page is fetched and decoded (into fixed-size records, no
	// allocation per key) while this one is inserted; the pages' buffers
	// go round between the two goroutines.
	ctx, cancel := context.WithCancel(ctx)
	var fetching sync.WaitGroup
	defer fetching.Wait() // the fetcher interns plans: it is done before the next sync
	defer cancel()
	const buffers = 3
	pages := make(chan *snapshotPage, buffers)
	free := make(chan *snapshotPage, buffers)
	for range buffers {
		free <- &snapshotPage{}
	}
	fetching.Add(1)
	go func() {
		defer fetching.Done()
		ix.fetchPages(ctx, pages, free)
	}()
	var t *ixTable
	cursor := ""
	for first := true; ; first = false {
		pg, ok := <-pages
		if !ok {
			return errors.New("key index snapshot: ended without a last page")
		}
		if pg.err != nil {
			return pg.err
		}
		if first {
			cursor = pg.cursor
			// Sized once for the whole snapshot and some growth: a map
			// that grows by doubling holds up to twice the memory.
			t = newIXTable(max(hint, indexHint(pg)))
		}
		for i := range pg.recs {
			r := &pg.recs[i]
			t.shards[r.h[0]%ixShards].m[r.h] = r.e // not yet shared: no lock
		}
		last := pg.next == ""
		free <- pg
		if last {
			break
		}
	}
	ix.tab.Store(t)
	ix.size.Store(int64(t.len()))
	ix.cursor = cursor
	ix.version.Add(1)
	return ix.applyChanges(ctx)
}

// maxIndexHint bounds the keys a snapshot's table is pre-sized for from
// the dealers service's word (its total): past it the maps grow as keys
// arrive.
const maxIndexHint = 1 << 22

// indexHint is the number of keys to size a snapshot's table for, from
// its first page: the snapshot's total (which counts revoked and deleted
// keys, never kept) scaled by the share of the page's entries that are
// kept, with some growth, at most maxIndexHint; a snapshot of one page
// holds what that page holds.
func indexHint(pg *snapshotPage) int {
	if pg.next == "" { // the only page: nothing to guess
		return len(pg.recs)
	}
	if pg.total <= 0 || pg.seen == 0 {
		return 0
	}
	n := int64(pg.total) * int64(len(pg.recs)) / int64(pg.seen)
	return int(min(n+n/16, maxIndexHint))
}

// keyRec is one valid key of a snapshot page, ready to insert.
type keyRec struct {
	h [32]byte
	e ixEntry
}

// snapshotPage is one fetched snapshot page (its valid keys and its
// paging fields), or the error that ended the fetching.
type snapshotPage struct {
	recs         []keyRec
	seen         int // entries the page listed, valid or not
	next, cursor string
	total        int
	err          error
}

// fetchPages pages the snapshot into out, in order, until the last page,
// an error (sent as the last element) or the end of ctx; it closes out.
// Each page is decoded into a buffer taken from free.
func (ix *keyIndex) fetchPages(ctx context.Context, out, free chan *snapshotPage) {
	defer close(out)
	after := ""
	for {
		var pg *snapshotPage
		select {
		case pg = <-free:
		case <-ctx.Done():
			return
		}
		pg.recs, pg.seen = pg.recs[:0], 0
		p, err := ix.feed.KeySnapshotEach(ctx, after, indexPageSize, func(u *upstream.KeyIndexEntry) error {
			pg.seen++
			if h, e, valid, _ := ix.entry(u); valid {
				pg.recs = append(pg.recs, keyRec{h, e})
			}
			return nil
		})
		if err == nil && p.Next != "" && p.Next <= after {
			err = errors.New("key index snapshot: next page does not advance")
		}
		pg.next, pg.cursor, pg.total, pg.err = p.Next, p.Cursor, p.Total, err
		select {
		case out <- pg:
		case <-ctx.Done():
			return
		}
		if err != nil || p.Next == "" {
			return
		}
		after = p.Next
	}
}

// applyChanges reads the change feed from the cursor until it has no more.
func (ix *keyIndex) applyChanges(ctx context.Context) error {
	t := ix.tab.Load()
	for range 1000 { // bound one sync; the rest waits for the next interval
		p, err := ix.feed.KeyChanges(ctx, ix.cursor, indexPageSize)
		if err != nil {
			return err
		}
		if len(p.Items) > 0 {
			for i := range p.Items {
				h, e, valid, ok := ix.entry(&p.Items[i])
				if !ok {
					continue
				}
				sh := &t.shards[h[0]%ixShards]
				sh.Lock()
				if valid {
					sh.m[h] = e
				} else {
					delete(sh.m, h)
				}
				sh.Unlock()
			}
			ix.version.Add(1)
			ix.size.Store(int64(t.len()))
		}
		if p.Cursor != "" {
			ix.cursor = p.Cursor
		}
		if !p.More {
			break
		}
	}
	return nil
}

// syncOnce brings the index up to date: a snapshot when there is none or
// the cursor expired, else the changes since the cursor.
func (ix *keyIndex) syncOnce(ctx context.Context) error {
	var err error
	if ix.tab.Load() == nil || ix.cursor == "" {
		err = ix.loadSnapshot(ctx)
	} else {
		err = ix.applyChanges(ctx)
		if errors.Is(err, upstream.ErrCursorExpired) {
			ix.resyncs.Add(1)
			ix.log.Warn("key index: change cursor expired, loading a full snapshot")
			err = ix.loadSnapshot(ctx)
		}
	}
	ix.syncs.Add(1)
	if err != nil {
		ix.syncErrors.Add(1)
		return err
	}
	ix.lastGood.Store(ix.now().UnixNano())
	return nil
}

// run syncs every interval until ctx ends, logging each state change once
// and failing syncs under syncErrorLogEvery (report).
// settings gives the bounds in force (they may be reloaded).
func (ix *keyIndex) run(ctx context.Context, settings func() *Settings) {
	for {
		st := settings()
		sctx, cancel := context.WithTimeout(ctx, max(st.IndexInterval, 30*time.Second))
		begun := time.Now() // the wait is timed on the real clock (ix.now may be a test's)
		start := ix.now()
		err := ix.syncOnce(sctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		ix.report(err, start, st)
		t := time.NewTimer(time.Until(begun.Add(st.IndexInterval)))
	wait:
		for {
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
				break wait
			case <-ix.wake: // a reload: the interval in force now times this wait
				left := time.Until(begun.Add(settings().IndexInterval))
				if left <= 0 {
					t.Stop()
					break wait
				}
				t.Reset(left)
			}
		}
	}
}

// syncErrorLogEvery is how often at most a run of failing syncs of one
// kind is logged: the first failure is, a change of kind is, and then one
// line per this long, so a long outage (a sync every auth.index_interval,
// 5 s by default) does not flood the event log.
const syncErrorLogEvery = time.Minute

// syncFailures is the current run of failed syncs.
type syncFailures struct {
	n        int       // failed syncs in a row; 0: the last one succeeded
	since    time.Time // the first of them
	kind     string    // error kind of the last line logged
	lastLine time.Time // when that line was logged
	unlogged int       // failures since that line that were not logged
}

// report logs what the sync that began at start and ended with err
// changed: the index state, once per change (with the error); a failing
// sync when the state line did not carry it, rate-limited (the first of a
// run, a new error kind, then once per syncErrorLogEvery); and the first
// good sync after failures. Before 2026-11-27 only state changes were
// logged, so a start with the dealers service down (the index stuck
// "loading", every keyed request 503) logged nothing about it.
func (ix *keyIndex) report(err error, start time.Time, st *Settings) {
	now := ix.now()
	state := ix.stateAt(now, st.IndexStaleAfter, st.AuthStale)
	stateLogged := false
	if state != ix.state {
		attrs := []any{"from", ix.state, "to", state, "keys", ix.size.Load()}
		if err != nil {
			attrs = append(attrs, "error_kind", syncErrorKind(err), "error", err.Error())
		}
		if state == IndexFresh {
			attrs = append(attrs, "sync_ms", now.Sub(start).Milliseconds())
			ix.log.Info("key index state", attrs...)
		} else {
			ix.log.Warn("key index state", attrs...)
		}
		ix.state = state
		stateLogged = true
	}
	f := &ix.fail
	if err == nil {
		if f.n > 0 {
			ix.log.Info("key index sync recovered", "state", state, "failures", f.n,
				"failing_for_s", now.Sub(f.since).Seconds(), "keys", ix.size.Load())
		}
		*f = syncFailures{}
		return
	}
	kind := syncErrorKind(err)
	f.n++
	if f.n == 1 {
		f.since = now
	}
	if !stateLogged && f.n > 1 && kind == f.kind && now.Sub(f.lastLine) < syncErrorLogEvery {
		f.unlogged++
		return
	}
	if !stateLogged {
		ix.log.Warn("key index sync failing", "state", state, "error_kind", kind, "failures", f.n,
			"failing_for_s", now.Sub(f.since).Seconds(), "not_logged", f.unlogged, "keys", ix.size.Load(),
			"error", err.Error())
	}
	f.kind, f.lastLine, f.unlogged = kind, now, 0
}

// syncErrorKind names the kind of a failed sync for the event line:
// "timeout", "connection_refused", "breaker_open", "status_5xx" (or
// another class of HTTP status), "cursor_expired", "malformed" (a page
// the edge cannot read), "canceled" or "error".
func syncErrorKind(err error) string {
	msg := err.Error()
	switch {
	case errors.Is(err, upstream.ErrCircuitOpen):
		return "breaker_open"
	case errors.Is(err, upstream.ErrCursorExpired):
		return "cursor_expired"
	case errors.Is(err, context.DeadlineExceeded), strings.Contains(msg, "timeout"), strings.Contains(msg, "timed out"):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case strings.Contains(msg, "connection refused"):
		return "connection_refused"
	}
	if _, rest, ok := strings.Cut(msg, "unavailable: status "); ok && rest != "" && rest[0] >= '1' && rest[0] <= '5' {
		return "status_" + rest[:1] + "xx"
	}
	if strings.Contains(msg, "decode body") || strings.Contains(msg, "key index snapshot") || strings.Contains(msg, "malformed") {
		return "malformed"
	}
	return "error"
}

// decodeHash decodes 64 hex digits (either case) into h, without the
// allocation of converting s to bytes.
func decodeHash(h *[32]byte, s string) bool {
	if len(s) != 64 {
		return false
	}
	bad := byte(0)
	for i := range h {
		hi, lo := hexVal[s[2*i]], hexVal[s[2*i+1]]
		bad |= hi | lo
		h[i] = hi<<4 | lo&0x0f
	}
	return bad&0xf0 == 0
}

// hexVal maps a hex digit to its value and every other byte to 0xff.
var hexVal = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c - 'a' + 10)
		t[c-'a'+'A'] = byte(c - 'a' + 10)
	}
	return t
}()
