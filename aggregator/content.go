package aggregator

import (
	"context"
	"errors"

	"github.com/valyala/fasthttp"
	"golang.org/x/sync/errgroup"

	"github.com/dealer-edge/dealer-edge/aggregator/mapping"
	"github.com/dealer-edge/dealer-edge/publicshape"
	"github.com/dealer-edge/dealer-edge/upstream"
)

// ServeStaleOn reports whether a fill error allows serving a stale cached
// response (stale-if-error): the upstream could not answer, or answered
// only in part. Public errors (404, 422, ...) never do.
func ServeStaleOn(err error) bool {
	var pe *partialError
	return errors.Is(err, upstream.ErrUnavailable) || errors.As(err, &pe)
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
	p, ae := parseContentListing(&rs.raw, ct)
	if ae != nil {
		s.writeProblem(ctx, rs, ae)
		return
	}
	st := s.settings.Load()
	setDeprecation(ctx, st, ct)
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
		return encode(l)
	})
}

// listing builds one content listing page, cut from the dealer's visible
// view of the type (see views.go): visibility, order, filters and
// pagination are applied here; a text query is matched by the service.
func (s *Server) listing(ctx context.Context, st *liveSettings, dealerID int64, ct string, p params, echo bool) (publicshape.ContentListing, error) {
	vis, err := s.listingSelection(ctx, st, dealerID, ct, &p)
	if err != nil {
		return publicshape.ContentListing{}, err
	}
	n := vis.len()
	l := publicshape.ContentListing{
		ContentType: ct,
		Page:        p.page,
		PageSize:    p.pageSize,
		Total:       n,
		Deprecation: deprecationFields(st, ct),
	}
	from := int64(p.page-1) * int64(p.pageSize)
	to := min(from+int64(p.pageSize), int64(n))
	l.Items = make([]publicshape.ContentItem, 0, max(to-from, 0))
	for i := from; i < to; i++ {
		l.Items = append(l.Items, vis.item(vis.at(int(i)), ct, mapping.ListingForm))
	}
	l.HasNext = to < int64(n)
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

// contentDetails serves 4.6 GET /dealer/content/{content_type}/details.
func (s *Server) contentDetails(ctx *fasthttp.RequestCtx, rs *reqState) {
	ct := pathValue(ctx, rs, "content_type")
	if !isContentType(ct) {
		s.writeProblem(ctx, rs, invalidContentType())
		return
	}
	p, ae := parseContentDetails(&rs.raw)
	if ae != nil {
		s.writeProblem(ctx, rs, ae)
		return
	}
	st := s.settings.Load()
	setDeprecation(ctx, st, ct)
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
	s.respond(ctx, rs, st, "", rs.keyBuf, func(c context.Context) ([]byte, error) {
		c, cancel := fillCtx(c, st, reqID, tp)
		defer cancel()
		sections := make([]publicshape.ContentListing, len(upstream.ContentTypes))
		errs := make([]error, len(upstream.ContentTypes))
		var g errgroup.Group
		for i, ct := range upstream.ContentTypes {
			g.Go(func() error {
				errs[i] = guard(func() (err error) {
					sc, span := s.startSpan(c, "hub section "+ct, attrSection.String(ct))
					defer func() { endSpan(span, err) }()
					sections[i], err = s.listing(sc, st, pr.dealerID, ct, fp, false)
					return err
				})()
				return nil
			})
		}
		_ = g.Wait()
		hub := publicshape.ContentHub{ContentType: "hub", Meta: mapping.DealerMeta(pr.dealer), Sections: map[string]publicshape.ContentListing{}}
		var failed []error
		for i, ct := range upstream.ContentTypes {
			if errs[i] != nil {
				failed = append(failed, errs[i])
				continue
			}
			hub.Sections[ct] = sections[i]
		}
		if len(failed) == len(upstream.ContentTypes) {
			return nil, errors.Join(failed...)
		}
		body, err := encode(hub)
		if err != nil {
			return nil, err
		}
		if len(failed) > 0 {
			return nil, &partialError{body: body, cause: errors.Join(failed...)}
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
				sc, span := s.startSpan(c, "search section "+ct, attrSection.String(ct))
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
