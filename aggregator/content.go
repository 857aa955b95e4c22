package aggregator

import (
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/errgroup"

	"github.com/dealer-edge/dealer-edge/aggregator/mapping"
	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/publicshape"
	"github.com/dealer-edge/dealer-edge/upstream"
)

// ServeStaleOn reports whether a fill error allows serving a stale cached
// response (stale-if-error): the upstream could not answer (in time: the
// request's deadline passing while it waited counts), or answered only in
// part. Public errors (404, 422, ...) never do.
func ServeStaleOn(err error) bool {
	var pe *partialError
	return errors.Is(err, upstream.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &pe)
}

func invalidContentType() *apiError {
	return problemf(codeInvalidContentType, "content_type must be one of faq, news, glossary, guides, videos, podcasts")
}

// setDeprecation writes the section 9 headers of guides and glossary.
func setDeprecation(ctx *fasthttp.RequestCtx, st *liveSettings, contentType string) {
	if !publicshape.IsDeprecatedType(contentType) {
		return
	}
	h := &ctx.Response.Header
	h.Set("Deprecation", st.depDeprecation)
	h.Set("Sunset", st.depSunset)
	h.Set("Link", st.depLink)
}

// deprecationFields returns the payload fields of a content type.
func deprecationFields(st *liveSettings, contentType string) publicshape.Deprecation {
	if publicshape.IsDeprecatedType(contentType) {
		return st.dep
	}
	return publicshape.Deprecation{}
}

// contentKeyExtra is the part of a cache key that depends on settings baked
// into the body (the deprecation fields of guides and glossary).
func contentKeyExtra(st *liveSettings, contentType string) string {
	if publicshape.IsDeprecatedType(contentType) {
		return st.depKey
	}
	return ""
}

// contentListing serves 4.5 GET /dealer/content/{content_type}/listing.
func (s *Server) contentListing(ctx *fasthttp.RequestCtx, rs *reqState) {
	ct := pathValue(ctx, rs, "content_type")
	if !isContentType(ct) {
		s.writeProblem(ctx, rs, invalidContentType())
		return
	}
	// Every answer of a deprecated type carries the deprecation headers
	// (contract 9), a refused parameter's 422 too.
	st := s.settings.Load()
	setDeprecation(ctx, st, ct)
	p, ae := parseContentListing(&rs.raw, ct)
	if ae != nil {
		s.writeProblem(ctx, rs, ae)
		return
	}
	rs.keyBuf = appendKey(rs.keyBuf[:0], RouteContentListing, ct, &p)
	rs.keyBuf = append(rs.keyBuf, contentKeyExtra(st, ct)...)
	if s.serveFresh(ctx, rs, st, ct, rs.keyBuf) {
		return
	}
	fp := p // a copy for the fill: p itself stays on the stack on the hit path
	pr, reqID, tp := rs.p, string(rs.reqID), rs.traceparent
	s.respond(ctx, rs, st, ct, rs.keyBuf, func(c context.Context) ([]byte, error) {
		c, cancel := fillCtx(c, st, reqID, tp)
		defer cancel()
		l, err := s.listing(c, st, pr.dealerID, ct, fp, true)
		if err != nil {
			return nil, err
		}
		l.Meta = mapping.DealerMeta(pr.dealer)
		return l.appendJSON(nil)
	})
}

// listing builds one content listing page, cut from the dealer's visible
// view of the type (see views.go): visibility, order, filters and
// pagination are applied here; a text query is matched by the service.
func (s *Server) listing(ctx context.Context, st *liveSettings, dealerID int64, ct string, p params, echo bool) (listingPage, error) {
	var vis viewSelection
	var n int
	var err error
	paged := false // vis holds the page's records only
	if cp, ok := s.pager(st, ct, &p); ok {
		vis, n, err = pageSelection(ctx, cp, dealerID, ct, &p)
		paged = true
	} else if vis, err = s.listingSelection(ctx, st, dealerID, ct, &p); err == nil {
		n = vis.len()
	}
	if err != nil {
		return listingPage{}, err
	}
	l := listingPage{ContentListing: publicshape.ContentListing{
		ContentType: ct,
		Page:        p.page,
		PageSize:    p.pageSize,
		Total:       n,
		Deprecation: deprecationFields(st, ct),
	}, vis: vis}
	l.from, l.to = pageBounds(&p, n)
	l.HasNext = l.to < int64(n)
	if paged {
		l.from, l.to = 0, int64(vis.len())
	}
	if echo {
		l.Q = p.q
		filters := map[string]string{}
		for k, v := range map[string]string{"category": p.category, "topic": p.topic, "brand": p.brand} {
			if v != "" {
				filters[k] = v
			}
		}
		if len(filters) > 0 {
			l.Filters = filters
		}
	}
	return l, nil
}

// listingPage is a content listing page whose items are still in their
// view: records from..to of vis.
type listingPage struct {
	publicshape.ContentListing // Items unset
	vis                        viewSelection
	from, to                   int64
}

// appendJSON appends the page to b as json.Marshal writes the
// ContentListing with its items, which it is byte for byte
// (TestListingJSONMatchesMarshal): the envelope is written by hand around
// the items (publicshape.AppendContentListingHead and Tail), and the items,
// encoded once per cached view, are spliced in, so a page or a hub cut
// from a fresh view escapes no item text again.
func (l *listingPage) appendJSON(b []byte) ([]byte, error) {
	if b == nil {
		b = make([]byte, 0, l.sizeHint())
	}
	b = publicshape.AppendContentListingHead(b, &l.ContentListing)
	if l.vis.memo == nil {
		// Records read from the service for this page only: each item
		// written straight from its record (mapping.AppendListingItem,
		// what json.Marshal gives for the mapped item).
		for i := l.from; i < l.to; i++ {
			if i > l.from {
				b = append(b, ',')
			}
			b = mapping.AppendListingItem(b, l.vis.at(int(i)), l.ContentType, false)
		}
	} else {
		for i := l.from; i < l.to; i++ {
			if i > l.from {
				b = append(b, ',')
			}
			var err error
			if b, err = l.vis.appendItemJSON(b, int(i)); err != nil {
				return nil, err
			}
		}
	}
	return publicshape.AppendContentListingTail(b, &l.ContentListing)
}

// sizeHint is about the length of the page's JSON: its items' where the
// view's memo has them, plus room for the envelope.
func (l *listingPage) sizeHint() int {
	n := 512
	if l.vis.memo == nil {
		return n + int(max(l.to-l.from, 0))*1024
	}
	for i := l.from; i < l.to; i++ {
		idx := int(i)
		if !l.vis.all {
			idx = int(l.vis.sel[i])
		}
		if j, err := l.vis.memo.itemJSON(idx); err == nil {
			n += len(j) + 1
		}
	}
	return n
}

// items returns the page's items, as mapping.ContentItem (ViewItem for a
// cached view) builds them: the items whose JSON appendJSON writes.
func (l *listingPage) items() []publicshape.ContentItem {
	out := make([]publicshape.ContentItem, 0, max(l.to-l.from, 0))
	for i := l.from; i < l.to; i++ {
		out = append(out, l.vis.item(l.vis.at(int(i)), l.ContentType, mapping.ListingForm))
	}
	return out
}

// contentDetails serves 4.6 GET /dealer/content/{content_type}/details.
func (s *Server) contentDetails(ctx *fasthttp.RequestCtx, rs *reqState) {
	ct := pathValue(ctx, rs, "content_type")
	if !isContentType(ct) {
		s.writeProblem(ctx, rs, invalidContentType())
		return
	}
	// Every answer of a deprecated type carries the deprecation headers
	// (contract 9), a refused parameter's 422 too.
	st := s.settings.Load()
	setDeprecation(ctx, st, ct)
	p, ae := parseContentDetails(&rs.raw)
	if ae != nil {
		s.writeProblem(ctx, rs, ae)
		return
	}
	rs.keyBuf = appendKey(rs.keyBuf[:0], RouteContentDetails, ct, &p)
	rs.keyBuf = append(rs.keyBuf, contentKeyExtra(st, ct)...)
	if s.serveFresh(ctx, rs, st, ct, rs.keyBuf) {
		return
	}
	fp := p // a copy for the fill: p itself stays on the stack on the hit path
	pr, reqID, tp := rs.p, string(rs.reqID), rs.traceparent
	s.respond(ctx, rs, st, ct, rs.keyBuf, func(c context.Context) ([]byte, error) {
		c, cancel := fillCtx(c, st, reqID, tp)
		defer cancel()
		if s.slugNotInView(c, st, pr.dealerID, ct, fp.slug) {
			return nil, problemf(codeContentNotFound, "no "+ct+" item with this slug")
		}
		recs, err := s.backend.Content(c, pr.dealerID, ct, upstream.ContentFilter{})
		if err != nil {
			return nil, err
		}
		for _, r := range mapping.Visible(pr.dealerID, ct, recs, mapping.BySlug) {
			if r.Slug == fp.slug {
				return encode(publicshape.ContentDetail{
					ContentType: ct,
					Item:        mapping.ContentItem(r, ct, mapping.DetailForm),
					Meta:        mapping.DealerMeta(pr.dealer),
					Deprecation: deprecationFields(st, ct),
				})
			}
		}
		return nil, problemf(codeContentNotFound, "no "+ct+" item with this slug")
	})
}

// slugNotInView reports whether the dealer's fresh view of type ct (the
// cached one listings are cut from; filled by one summary call when cold)
// shows that no item has the slug, so that a detail of an unknown slug is a
// 404 without a call: the content service has no read by slug, and the
// detail's full read of the whole type (every record whole, a few hundred
// KB) for a 404 that is not cached let one key make a full download per
// request. For news the view leaves out the editions that are readable by
// slug only (mapping.Discovery): the slugs of every edition readable by
// slug are a small cached entry of their own (slugOnlySlugs). With views off for the type nothing is
// decided here, and a view that cannot be read (the service failing)
// decides nothing: the detail asks the service as before.
func (s *Server) slugNotInView(ctx context.Context, st *liveSettings, dealerID int64, ct, slug string) bool {
	if st.policy(RouteContentListing, ct).TTL <= 0 {
		return false
	}
	// For news the slug-only entry is read at the same time as the view,
	// not after it: one after the other, a cold detail was three content
	// calls in a row (view, slug-only, full read), past request_timeout
	// with the service answering within its own timeout
	// (TestNewsDetailChainWithinBudget).
	var only []byte
	var onlyErr error
	var wg sync.WaitGroup
	if ct == upstream.ContentNews {
		wg.Add(1)
		go func() {
			defer wg.Done()
			onlyErr = guard(func() (err error) {
				only, err = s.slugOnlySlugs(ctx, st, dealerID, ct)
				return err
			})()
		}()
	}
	view, _, err := s.visibleView(ctx, st, dealerID, ct)
	wg.Wait()
	if err != nil {
		return false
	}
	for i := range view {
		if view[i].Slug == slug {
			return false
		}
	}
	if ct != upstream.ContentNews {
		return true
	}
	if onlyErr != nil {
		return false
	}
	for len(only) > 0 {
		n, w := binary.Uvarint(only)
		if w <= 0 || n > uint64(len(only)-w) {
			return false // not this edge's form: decide nothing
		}
		if string(only[w:w+int(n)]) == slug {
			return false
		}
		only = only[w+int(n):]
	}
	return true
}

// slugOnlyKeyPrefix starts the cache key of a type's slug-only slugs (see
// slugOnlySlugs); like viewKeyPrefix, no route is called so.
const slugOnlyKeyPrefix = "content_slug_only\x00v2\x00"

// slugOnlySlugs returns the slugs of the dealer's records of type ct that
// are readable by slug (mapping.BySlug: the listed ones and the news
// editions that are not first-party, which no listing shows), each as a
// uvarint length and its bytes, from a cache entry that lives as long as
// the type's view and is filled by one summary call. The listed ones are
// in it too because it and the view are filled at different times.
func (s *Server) slugOnlySlugs(ctx context.Context, st *liveSettings, dealerID int64, ct string) ([]byte, error) {
	pol := cache.Policy{TTL: st.policy(RouteContentListing, ct).TTL}
	key := append([]byte(slugOnlyKeyPrefix), ct...)
	e, _, err := s.cache.Get(ctx, dealerID, key, pol, func(c context.Context) ([]byte, error) {
		recs, err := s.backend.Content(c, dealerID, ct, upstream.ContentFilter{Summary: true})
		if err != nil {
			return nil, err
		}
		// Every slug readable by slug, the listed ones too: the entry is
		// filled at another time than the view, and an edition promoted
		// from slug-only to listed in between must be in one of the two
		// (it was in neither: a 404 for a readable item;
		// TestReclassifiedNewsStaysReadable).
		b := []byte{}
		for _, r := range mapping.Visible(dealerID, ct, recs, mapping.BySlug) {
			b = binary.AppendUvarint(b, uint64(len(r.Slug)))
			b = append(b, r.Slug...)
		}
		return b, nil
	})
	if err != nil {
		return nil, err
	}
	b := e.Body()
	if b == nil {
		return nil, errors.New("aggregator: unreadable slug-only entry")
	}
	return b, nil
}

// hubSectionSpanNames and searchSectionSpanNames are the span names of
// the hub's and of a search's sections, by index into
// upstream.ContentTypes: made once, not per request (a name is needed only
// when the request is traced).
var hubSectionSpanNames, searchSectionSpanNames = sectionSpanNames("hub section "), sectionSpanNames("search section ")

func sectionSpanNames(prefix string) []string {
	n := make([]string, len(upstream.ContentTypes))
	for i, ct := range upstream.ContentTypes {
		n[i] = prefix + ct
	}
	return n
}

// contentHub serves 4.3 GET /dealer/content/hub: the six sections are
// fetched concurrently, so the hub takes as long as its slowest section.
// A section whose backend fails is left out and the hub is marked partial
// (X-Edge-Partial: true, not cached; a stale complete hub is preferred);
// when every section fails the hub fails.
func (s *Server) contentHub(ctx *fasthttp.RequestCtx, rs *reqState) {
	p, ae := parseHub(&rs.raw)
	if ae != nil {
		s.writeProblem(ctx, rs, ae)
		return
	}
	p.page = 1
	st := s.settings.Load()
	rs.keyBuf = appendKey(rs.keyBuf[:0], RouteContentHub, "", &p)
	rs.keyBuf = append(rs.keyBuf, st.depKey...)
	if s.serveFresh(ctx, rs, st, "", rs.keyBuf) {
		return
	}
	fp := p // a copy for the fill: p itself stays on the stack on the hit path
	pr, reqID, tp := rs.p, string(rs.reqID), rs.traceparent
	// With the hub's cache off the body goes into a pooled buffer, as an
	// inventory listing's does (poolFillBody).
	dst := rs.poolFillBody(st)
	s.respond(ctx, rs, st, "", rs.keyBuf, func(c context.Context) ([]byte, error) {
		c, cancel := fillCtx(c, st, reqID, tp)
		defer cancel()
		sections := make([]listingPage, len(upstream.ContentTypes))
		errs := make([]error, len(upstream.ContentTypes))
		section := func(i int) {
			ct := upstream.ContentTypes[i]
			errs[i] = guard(func() (err error) {
				// The span's name and attribute are made only for a
				// traced request: this runs before the section's call is
				// written, and the six calls are written one after the
				// other.
				sc, span := c, trace.Span(nil)
				if s.spanning(c) {
					sc, span = s.startSpan(c, hubSectionSpanNames[i], attrSection.String(ct))
				}
				defer func() { endSpan(span, err) }()
				sections[i], err = s.listing(sc, st, pr.dealerID, ct, fp, false)
				return err
			})()
		}
		// The other sections run on section workers and the last on this
		// goroutine, stacks that have grown already: a new goroutine's
		// stack grows by copying while it decodes.
		var wg sync.WaitGroup
		last := len(upstream.ContentTypes) - 1
		for i := range last {
			s.sections.Go(&wg, func() { section(i) })
		}
		section(last)
		wg.Wait()
		var failed []error
		var shown []int
		for i := range upstream.ContentTypes {
			if errs[i] != nil {
				failed = append(failed, errs[i])
				continue
			}
			shown = append(shown, i)
		}
		if len(failed) == len(upstream.ContentTypes) {
			return nil, errors.Join(failed...)
		}
		var b []byte
		if dst != nil {
			b = (*dst)[:0]
		}
		body, err := appendHubJSON(b, mapping.DealerMeta(pr.dealer), sections, shown)
		if err != nil {
			return nil, err
		}
		if dst != nil {
			*dst = body
		}
		if len(failed) > 0 {
			pe := &partialError{body: body, cause: errors.Join(failed...)}
			s.logPartialPanics(reqID, RouteContentHub, pe)
			return nil, pe
		}
		return body, nil
	})
}

// contentSearch serves 4.4 GET /dealer/content/search: the six types are
// searched concurrently; each contributes at most page_size matches,
// ranked (title matches first, then most recent); items are interleaved
// round-robin across types in the canonical type order; by_type counts
// every match and total is their sum. Search is all-or-nothing: a failing
// type fails the search (a partial result would silently under-report
// by_type and total).
func (s *Server) contentSearch(ctx *fasthttp.RequestCtx, rs *reqState) {
	p, ae := parseSearch(&rs.raw)
	if ae != nil {
		s.writeProblem(ctx, rs, ae)
		return
	}
	st := s.settings.Load()
	rs.keyBuf = appendKey(rs.keyBuf[:0], RouteContentSearch, "", &p)
	if s.serveFresh(ctx, rs, st, "", rs.keyBuf) {
		return
	}
	fp := p // a copy for the fill: p itself stays on the stack on the hit path
	pr, reqID, tp := rs.p, string(rs.reqID), rs.traceparent
	s.respond(ctx, rs, st, "", rs.keyBuf, func(c context.Context) ([]byte, error) {
		c, cancel := fillCtx(c, st, reqID, tp)
		defer cancel()
		matches := make([][]*upstream.ContentRecord, len(upstream.ContentTypes))
		sels := make([]viewSelection, len(upstream.ContentTypes))
		// Not errgroup.WithContext: cancelling the other types at the first
		// failure would leave their calls out of the content breaker's
		// accounting (cancellations are excluded), so one failing type
		// would reach the consecutive-failure threshold alone and open the
		// breaker for every type (hub, listings) after a few searches.
		var g errgroup.Group
		for i, ct := range upstream.ContentTypes {
			g.Go(guard(func() (err error) {
				sc, span := s.startSpan(c, searchSectionSpanNames[i], attrSection.String(ct))
				defer func() { endSpan(span, err) }()
				vis, err := s.listingSelection(sc, st, pr.dealerID, ct, &params{q: fp.q})
				if err != nil {
					return err
				}
				ptrs := make([]*upstream.ContentRecord, vis.len())
				for j := range ptrs {
					ptrs[j] = vis.at(j)
				}
				matches[i], sels[i] = mapping.Ranked(ptrs, fp.q), vis
				return nil
			}))
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
		res := publicshape.ContentSearch{Q: fp.q, PageSizePerType: fp.pageSize, ByType: map[string]int{}, Items: []publicshape.ContentItem{}, Meta: mapping.DealerMeta(pr.dealer)}
		for i, ct := range upstream.ContentTypes {
			res.ByType[ct] = len(matches[i])
			res.Total += len(matches[i])
		}
		for rank := 0; rank < fp.pageSize; rank++ {
			for i, ct := range upstream.ContentTypes {
				if rank < len(matches[i]) {
					res.Items = append(res.Items, sels[i].item(matches[i][rank], ct, mapping.SearchForm))
				}
			}
		}
		return encode(res)
	})
}

// appendHubJSON appends the hub of the sections whose indices are in shown
// (into upstream.ContentTypes) as json.Marshal writes a ContentHub, which
// it is byte for byte (TestListingJSONMatchesMarshal): the envelope
// (publicshape.AppendContentHubHead), then each section spliced in, in
// the order of its name (encoding/json sorts map keys).
func appendHubJSON(b []byte, meta *publicshape.Meta, sections []listingPage, shown []int) ([]byte, error) {
	n := 512 // the envelope and the dealer meta
	for _, i := range shown {
		n += len(upstream.ContentTypes[i]) + 3 + sections[i].sizeHint()
	}
	b = slices.Grow(b, n)
	b, err := publicshape.AppendContentHubHead(b, meta)
	if err != nil {
		return nil, err
	}
	order := slices.Clone(shown)
	slices.SortFunc(order, func(x, y int) int { return strings.Compare(upstream.ContentTypes[x], upstream.ContentTypes[y]) })
	for n, i := range order {
		if n > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, upstream.ContentTypes[i])
		b = append(b, ':')
		if b, err = sections[i].appendJSON(b); err != nil {
			return nil, err
		}
	}
	return append(b, "}}"...), nil
}
