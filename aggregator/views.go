package aggregator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sync/errgroup"

	"github.com/dealer-edge/dealer-edge/aggregator/mapping"
	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/publicshape"
	"github.com/dealer-edge/dealer-edge/upstream"
)

// Cached visible views.
//
// A dealer's visible view of one content type (mapping.Visible in
// Discovery scope over the content service's summary view: overrides
// applied, hidden and non-editorial records dropped, in the public order)
// is an intermediate cache entry of its own: same cache (L1 and Redis),
// key per dealer and type, coalesced, purged with the dealer, fresh for
// the content listing policy of the type (cache.routes.content_listing and
// its cache.content_types override). Every page of a listing, every hub
// section and every category/topic/brand listing is cut from it while it
// is fresh, without another call; a text query (listings with q, search)
// still goes to the content service, which alone matches text, and the
// view supplies the visibility. Details read whole records and pick the
// slug; a slug not in the view (nor, for news, among the slugs readable by
// slug only) is a 404 without that read (slugNotInView).

// viewKeyPrefix starts the cache key of a view: no route is called so,
// so it cannot meet a response key. The "v1" is the view's cache form
// (mapping.AppendView); a new form takes a new prefix.
const viewKeyPrefix = "content_view\x00v1\x00"

// viewMemoBytes bounds the decoded views kept in process (their cache
// form's size, counted twice for the records that point into it).
const viewMemoBytes = 8 << 20

// viewMemo keeps the decoded form of recently used views, so that a hub or
// listing built from a fresh view does not decode it again: an entry is
// used only while the cache returns the very entry it was decoded from
// (entries are immutable; a refill, a purge or an eviction makes a new
// one).
type viewMemo struct {
	mu    sync.Mutex
	m     map[viewMemoKey]*viewMemoEntry
	bytes int
}

type viewMemoKey struct {
	dealer int64
	ct     string
}

// viewMemoEntry is one decoded view, with the JSON of its records as
// listing items, each encoded the first time a listing or hub shows it
// (the envelope of a page is encoded per page; its items are spliced in,
// see listingPage.appendJSON).
type viewMemoEntry struct {
	e     *cache.Entry
	cost  int // counted against viewMemoBytes (viewMemoCost)
	ct    string
	recs  []upstream.ContentRecord
	items []atomic.Pointer[[]byte]
}

// itemJSON returns the listing item of record i as json.Marshal writes it.
// Two goroutines may encode the same record at once; both get the same
// bytes.
func (m *viewMemoEntry) itemJSON(i int) ([]byte, error) {
	if b := m.items[i].Load(); b != nil {
		return *b, nil
	}
	b := mapping.AppendListingItem(nil, &m.recs[i], m.ct, true) // what json.Marshal gives for ViewItem's item
	m.items[i].Store(&b)
	return b, nil
}

// viewMemoCost is what an entry of n records is counted for against
// viewMemoBytes: its cache form (kept alive by the memo), the copy the
// decoded strings point into, the item JSON (about the size of the cache
// form again, plus its keys), and per record its decoded struct and item
// slot, whatever the size of its strings (a view of many short records
// is mostly structs: counting 3 x the cache form alone let the memo hold
// 8 times its budget, TestViewMemoBoundHoldsForShortRecords).
func viewMemoCost(e *cache.Entry, n int) int {
	const perRecord = int(unsafe.Sizeof(upstream.ContentRecord{})) + int(unsafe.Sizeof(atomic.Pointer[[]byte]{})) + 24 + 128
	return 3*e.Len() + n*perRecord
}

// get returns the decoded view of e, decoding and remembering it when it
// is not known yet.
func (vm *viewMemo) get(dealer int64, ct string, e *cache.Entry) (*viewMemoEntry, error) {
	k := viewMemoKey{dealer, ct}
	vm.mu.Lock()
	if m, ok := vm.m[k]; ok && m.e == e {
		vm.mu.Unlock()
		return m, nil
	}
	vm.mu.Unlock()
	recs, err := mapping.DecodeView(e.Body())
	if err != nil {
		return nil, err
	}
	size := viewMemoCost(e, len(recs))
	me := &viewMemoEntry{e: e, cost: size, ct: ct, recs: recs, items: make([]atomic.Pointer[[]byte], len(recs))}
	if size > viewMemoBytes/8 {
		return me, nil
	}
	vm.mu.Lock()
	defer vm.mu.Unlock()
	if vm.m == nil {
		vm.m = map[viewMemoKey]*viewMemoEntry{}
	}
	if old, ok := vm.m[k]; ok {
		vm.bytes -= old.cost
		delete(vm.m, k)
	}
	for kk, old := range vm.m { // map order: a random victim
		if vm.bytes+size <= viewMemoBytes {
			break
		}
		vm.bytes -= old.cost
		delete(vm.m, kk)
	}
	vm.m[k] = me
	vm.bytes += size
	return me, nil
}

// visibleView returns the dealer's visible records of one content type,
// in the public order, from the cache while the view is fresh. Cached
// views hold view records (mapping.ViewRecords: BodyText is the preview,
// made once per view); with views off for the type (TTL 0) the records
// keep their summary body and previews are made for the shown items only
// (previewed false). A view is used fresh only (its entry has no stale
// windows): a response made from it is cached for its own TTL, so a stale
// view would make stale data look fresh; the responses keep their own
// stale-while-revalidate and stale-if-error windows, as before. The
// records are shared: callers must not modify them.
func (s *Server) visibleView(ctx context.Context, st *liveSettings, dealerID int64, ct string) (recs []upstream.ContentRecord, memo *viewMemoEntry, err error) {
	build := func(c context.Context) ([]upstream.ContentRecord, error) {
		recs, err := s.backend.Content(c, dealerID, ct, upstream.ContentFilter{Summary: true})
		if err != nil {
			return nil, err
		}
		return mapping.Visible(dealerID, ct, recs, mapping.Discovery), nil
	}
	pol := cache.Policy{TTL: st.policy(RouteContentListing, ct).TTL}
	if pol.TTL <= 0 {
		recs, err := build(ctx) // views are not cached for this type
		return recs, nil, err
	}
	key := make([]byte, 0, len(viewKeyPrefix)+len(ct))
	key = append(append(key, viewKeyPrefix...), ct...)
	e, _, err := s.cache.Get(ctx, dealerID, key, pol, func(c context.Context) ([]byte, error) {
		// One upstream answer, and a view that depends on it and the key
		// alone: the refill of an expired view L1 still holds revalidates
		// when the answer is the same.
		c, done := revalidating(c, seedContentView)
		vis, err := build(c) // an unchanged answer: upstream.ErrUnchanged, untouched
		if err = done(err); err != nil {
			return nil, err
		}
		return mapping.AppendView(nil, mapping.ViewRecords(vis)), nil
	})
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, upstream.ErrUnavailable) {
			// The request's budget ran out waiting for the view's flight:
			// unavailability, as an upstream call cut by the same deadline
			// is (503, or a stale page), never a 500
			// (TestSlowViewBuildIsNotInternalError).
			err = fmt.Errorf("content view: %w: %w", upstream.ErrUnavailable, err)
		}
		return nil, nil, err
	}
	if memo, err = s.views.get(dealerID, ct, e); err != nil {
		// A view the edge cannot read (a damaged Redis value): build it
		// from the service instead of failing the request.
		s.log.Warn("content view unreadable; read from the content service", "dealer_id", dealerID, "content_type", ct, "err", err)
		recs, err = build(ctx)
		return recs, nil, err
	}
	return memo.recs, memo, nil
}

// viewSelection is the part of a view a listing shows: the records whose
// indices are in sel, or every record when all is set.
type viewSelection struct {
	view []upstream.ContentRecord
	// memo is the cached view the records are (their BodyText is the
	// preview, see visibleView); nil when they were read from the service.
	memo *viewMemoEntry
	sel  []int32
	all  bool
}

// item maps one record of the selection to a public listing or search
// item.
func (v viewSelection) item(r *upstream.ContentRecord, ct string, form mapping.ContentForm) publicshape.ContentItem {
	if v.memo != nil {
		return mapping.ViewItem(r, ct, form)
	}
	return mapping.ContentItem(*r, ct, form)
}

// appendItemJSON appends the listing item of the selection's i-th record
// from the memo; the view must be cached (memo not nil).
func (v viewSelection) appendItemJSON(b []byte, i int) ([]byte, error) {
	idx := i
	if !v.all {
		idx = int(v.sel[i])
	}
	j, err := v.memo.itemJSON(idx)
	return append(b, j...), err
}

func (v viewSelection) len() int {
	if v.all {
		return len(v.view)
	}
	return len(v.sel)
}

func (v viewSelection) at(i int) *upstream.ContentRecord {
	if v.all {
		return &v.view[i]
	}
	return &v.view[v.sel[i]]
}

// listingSelection returns the visible records of a listing (filters and
// text query of p) in the public order. Without q it is cut from the view.
// With q the content service matches the text (with the filters), at the
// same time as the view is read, and of the view's records those it
// matched are kept. The visibility rules relate records to each other (an
// override replaces a global record and keeps its id and slug; a hidden
// global record hides the dealer's override of it) while the service
// matches every record on its own text, so its answer alone could bring a
// replaced global answer back; the view cannot. A record is its dealer id
// and slug: slugs are unique within a type, and an override shares its
// slug only with the global record it replaces, which the view no longer
// has.
func (s *Server) listingSelection(ctx context.Context, st *liveSettings, dealerID int64, ct string, p *params) (viewSelection, error) {
	if p.q == "" {
		view, memo, err := s.visibleView(ctx, st, dealerID, ct)
		if err != nil {
			return viewSelection{}, err
		}
		if p.category == "" && p.topic == "" && p.brand == "" {
			return viewSelection{view: view, memo: memo, all: true}, nil
		}
		out := viewSelection{view: view, memo: memo, sel: []int32{}}
		for i := range view {
			if mapping.Match(&view[i], p.category, p.topic, p.brand) {
				out.sel = append(out.sel, int32(i))
			}
		}
		return out, nil
	}
	var view, matched []upstream.ContentRecord
	var memo *viewMemoEntry
	var g errgroup.Group // no shared cancellation: see contentSearch
	g.Go(guard(func() (err error) {
		view, memo, err = s.visibleView(ctx, st, dealerID, ct)
		return err
	}))
	g.Go(guard(func() (err error) {
		// Only q goes to the service: category, topic and brand (up to
		// 1,024 characters each) are matched on the view below, as
		// without q (a long filter made the call's URL too
		// large for the service and opened the type's breaker).
		matched, err = s.backend.Content(ctx, dealerID, ct, upstream.ContentFilter{Q: p.q, Summary: true})
		return err
	}))
	if err := g.Wait(); err != nil {
		return viewSelection{}, err
	}
	type recKey struct {
		dealerID int64
		slug     string
	}
	hit := make(map[recKey]bool, len(matched))
	for i := range matched {
		hit[recKey{matched[i].DealerID, matched[i].Slug}] = true
	}
	out := viewSelection{view: view, memo: memo, sel: []int32{}}
	filtered := p.category != "" || p.topic != "" || p.brand != ""
	for i := range view {
		if hit[recKey{view[i].DealerID, view[i].Slug}] && (!filtered || mapping.Match(&view[i], p.category, p.topic, p.brand)) {
			out.sel = append(out.sel, int32(i))
		}
	}
	return out, nil
}

// contentPager is a backend that can read a content list for one page
// (*upstream.Client can, ContentPage): only the fields that decide
// visibility, order and the filters are decoded of every record, and the
// page's records whole.
type contentPager interface {
	ContentPage(ctx context.Context, dealerID int64, contentType string, f upstream.ContentFilter, pick func(keys []upstream.ContentRecord) []int32) ([]upstream.ContentRecord, error)
}

// pager returns the backend's contentPager when a listing without q of
// the type can be read page by page: views are not cached for the type
// (a cold hub section, a listing with content_listing's cache off).
func (s *Server) pager(st *liveSettings, ct string, p *params) (contentPager, bool) {
	if p.q != "" || st.policy(RouteContentListing, ct).TTL > 0 {
		return nil, false
	}
	cp, ok := s.backend.(contentPager)
	return cp, ok
}

// pageSelection is listingSelection and the page cut for a listing
// without q when views are not cached: the same visible records in the
// same order (mapping.VisibleFirst over the keys, mapping.Match for the
// filters: only the records up to the page's end are ordered), but only
// the page's records are decoded whole, not the type's
// corpus (TestPageSelectionEqualsView). It returns the page's records as
// a selection of their own and n, the number of visible records.
func pageSelection(ctx context.Context, cp contentPager, dealerID int64, ct string, p *params) (vis viewSelection, n int, err error) {
	var keep func(*upstream.ContentRecord) bool
	if p.category != "" || p.topic != "" || p.brand != "" {
		keep = func(r *upstream.ContentRecord) bool { return mapping.Match(r, p.category, p.topic, p.brand) }
	}
	recs, err := cp.ContentPage(ctx, dealerID, ct, upstream.ContentFilter{Summary: true}, func(keys []upstream.ContentRecord) []int32 {
		// The order is cut, not kept: only the records up to the page's
		// end are ordered (mapping.VisibleFirst).
		k := int64(p.page) * int64(p.pageSize)
		var first []int32
		first, n = mapping.VisibleFirst(dealerID, ct, keys, mapping.Discovery, int(min(k, int64(len(keys)))), keep)
		from, to := pageBounds(p, n)
		if to <= from {
			return nil
		}
		return first[from:to]
	})
	if err != nil {
		return viewSelection{}, 0, err
	}
	for i := range recs {
		mapping.PublicID(&recs[i])
	}
	return viewSelection{view: recs, all: true}, n, nil
}

// pageBounds is the range [from, to) of the records of page p of n
// records (to < from past the last page).
func pageBounds(p *params, n int) (from, to int64) {
	from = int64(p.page-1) * int64(p.pageSize)
	return from, min(from+int64(p.pageSize), int64(n))
}
