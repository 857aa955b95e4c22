package aggregator

import (
	"strconv"
	"time"

	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/publicshape"
)

// Inventory listing pages past the end, answered from a known total.
//
// Every page number (up to 2^31-1) and page size of a listing query is a
// response of its own, and a page past the last one is a 200 with no items
// that the inventory service answers like any other page: a client (or a
// crawler, or a hostile key within its rate) that walks page numbers made
// one inventory call per page. A listing fill now keeps the query's total
// (the service's "total" for the dealer, service, q, catalog_type and upfit,
// whatever the page) as a fact of its own: an entry under totalKeyPrefix +
// the query's key without page and page size, fresh for the route's ttl
// (no stale windows), in L1 alone under the dealer's generation, so a
// purge drops it. A miss for a page that the fact shows is past the end is
// filled from it, without a call: the body a fill of that page makes from
// the service's empty answer, byte for byte (TestPagesPastTheEndFromTotal).
// The fact is looked for in L1 only (no Redis read on a listing miss, so no
// Redis write either) and written when a fill finds no fresh one with the
// same total: once per query per ttl per instance, or when the total moves.

// totalKeyPrefix starts the cache key of a listing query's known total: no
// route is called so (see notFoundKeyPrefix).
const totalKeyPrefix = "total\x00v1\x00"

// listingTotalKey appends the key of the listing query p's total to dst:
// the query's response key with page and page size 0.
func listingTotalKey(dst []byte, service string, p *params) []byte {
	q := *p
	q.page, q.pageSize = 0, 0
	return appendKey(append(dst, totalKeyPrefix...), RouteInventoryListing, service, &q)
}

// knownTotal returns the total the fact under key holds, when L1 holds it
// fresh under pol.
func (s *Server) knownTotal(dealerID int64, key []byte, pol cache.Policy) (int, bool) {
	n, _, ok := s.knownTotalAt(dealerID, key, pol)
	return n, ok
}

// knownTotalAt is knownTotal that also returns when the fact was learnt.
func (s *Server) knownTotalAt(dealerID int64, key []byte, pol cache.Policy) (int, time.Time, bool) {
	e, ok := s.cache.Fresh(dealerID, key, pol)
	if !ok {
		return 0, time.Time{}, false
	}
	n, err := strconv.Atoi(string(e.Body()))
	if err != nil || n < 0 {
		return 0, time.Time{}, false
	}
	return n, e.StoredAt, true
}

// keepTotal records total as the fact under key, under st (a StampNow
// taken before the fill's call), unless L1 holds it fresh already.
func (s *Server) keepTotal(dealerID int64, key []byte, pol cache.Policy, st cache.Stamp, total int) {
	if n, at, ok := s.knownTotalAt(dealerID, key, pol); ok && (n == total || at.After(st.At())) {
		// A fact learnt after this fill's call began is newer.
		return
	}
	s.cache.PutL1(dealerID, key, pol, st, strconv.AppendInt(nil, int64(total), 10))
}

// pastEnd reports whether page p of a query with total items has none.
func pastEnd(p *params, total int) bool {
	return p.page > 1 && int64(p.page-1)*int64(p.pageSize) >= int64(total)
}

// emptyListingBody is the body of page p past the end of a query with
// total items: what fillInventoryListing makes of the service's answer for
// it (no items, has_next false).
func emptyListingBody(service string, p *params, total int) ([]byte, error) {
	out := publicshape.InventoryListing{Service: service, Page: p.page, PageSize: p.pageSize, Total: total}
	return appendListing(nil, &out, nil, nil)
}
