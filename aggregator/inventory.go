package aggregator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/valyala/fasthttp"
	"golang.org/x/sync/errgroup"

	"github.com/dealer-edge/dealer-edge/aggregator/mapping"
	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/publicshape"
	"github.com/dealer-edge/dealer-edge/upstream"
)

// pathValue returns the {service} or {content_type} of the request: set
// by a static route, or read from the router's parameters.
func pathValue(ctx *fasthttp.RequestCtx, rs *reqState, name string) string {
	if rs.pathValue != "" {
		return rs.pathValue
	}
	v, _ := ctx.UserValue(name).(string)
	return v
}

func invalidService() *apiError {
	return problemf(codeInvalidService, "service must be one of REWIND, NOS, NLT")
}

// inventoryListing serves 4.1 GET /dealer/{service}/listing.
func (s *Server) inventoryListing(ctx *fasthttp.RequestCtx, rs *reqState) {
	service := pathValue(ctx, rs, "service")
	if !isService(service) {
		s.writeProblem(ctx, rs, invalidService())
		return
	}
	p, ae := parseInventoryListing(&rs.raw, service)
	if ae != nil {
		s.writeProblem(ctx, rs, ae)
		return
	}
	st := s.settings.Load()
	rs.keyBuf = appendKey(rs.keyBuf[:0], RouteInventoryListing, service, &p)
	if s.serveFresh(ctx, rs, st, "", rs.keyBuf) {
		return
	}
	// The fill's copy of the query: a listing sets only listingQuery's
	// fields, few enough that the closure holds them by value (a params,
	// past the compiler's size bound for that, was a heap object of its
	// own on every miss); p itself stays on the stack on the hit path.
	lq := listingQueryOf(&p)
	dealerID, reqID, tp := rs.p.dealerID, string(rs.reqID), rs.traceparent
	// With the route's cache off the body is never stored: the fill encodes
	// into a pooled buffer that the response refers to until fasthttp has
	// written it (respond, fillBodyKey); a miss allocates no body of its own.
	dst := rs.poolFillBody(st)
	s.respond(ctx, rs, st, "", rs.keyBuf, func(c context.Context) ([]byte, error) {
		fp := lq.params()
		// The query's known total (pastend.go), with the route's cache
		// on; its key is made here, in the fill, not for a hit from Redis.
		var tkey []byte
		tpol := cache.Policy{TTL: st.policy(RouteInventoryListing, "").TTL}
		if tpol.TTL > 0 {
			tkey = listingTotalKey(nil, service, &fp)
		}
		if tkey != nil && fp.page > 1 {
			if n, at, ok := s.knownTotalAt(dealerID, tkey, tpol); ok && pastEnd(&fp, n) {
				// The page is no fresher than the total it shows.
				if rv := cache.RevalidationFrom(c); rv != nil {
					rv.AsOf = at
				}
				return emptyListingBody(service, &fp, n)
			}
		}
		c, cancel := fillCtx(c, st, reqID, tp)
		defer cancel()
		var stamp cache.Stamp
		if tkey != nil {
			stamp = s.cache.StampNow(c, dealerID)
		}
		total := -1
		body, err := s.fillInventoryListingTotal(c, dealerID, service, fp, dst, &total)
		if err == nil && tkey != nil && total >= 0 {
			s.keepTotal(dealerID, tkey, tpol, stamp, total)
		}
		return body, err
	})
}

// listingQuery is the part of params that parseInventoryListing sets.
type listingQuery struct {
	page, pageSize        int
	q, catalogType, upfit string
}

// listingQueryOf returns p's listingQuery.
func listingQueryOf(p *params) listingQuery {
	return listingQuery{page: p.page, pageSize: p.pageSize, q: p.q, catalogType: p.catalogType, upfit: p.upfit}
}

// params returns the listing's params: lq's fields, no others set.
func (lq listingQuery) params() params {
	return params{page: lq.page, pageSize: lq.pageSize, q: lq.q, catalogType: lq.catalogType, upfit: lq.upfit}
}

// fillInventoryListing builds the listing's body: into *dst when dst is
// not nil (a pooled buffer, see reqState.poolFillBody), else into a body of
// its own.
func (s *Server) fillInventoryListing(ctx context.Context, dealerID int64, service string, p params, dst *[]byte) ([]byte, error) {
	return s.fillInventoryListingTotal(ctx, dealerID, service, p, dst, nil)
}

// fillInventoryListingTotal is fillInventoryListing that also sets *total
// (when total is not nil) to the query's total as the service answered it.
func (s *Server) fillInventoryListingTotal(ctx context.Context, dealerID int64, service string, p params, dst *[]byte, total *int) ([]byte, error) {
	out := publicshape.InventoryListing{Service: service, Page: p.page, PageSize: p.pageSize}
	var (
		vehicles []upstream.Vehicle
		offers   []upstream.Offer
	)
	if service == publicshape.ServiceNLT {
		sc := offerScratches.Get().(*offerScratch)
		defer sc.put()
		q := upstream.OfferQuery{Page: p.page, PageSize: p.pageSize, Q: p.q}
		pg := &sc.offers
		var err error
		ctx, done := revalidating(ctx, seedOfferListing)
		if into, ok := s.backend.(offersInto); ok {
			// As for vehicles: the page's strings are cut from the
			// memory of the last fill's, and the body is encoded from
			// them before the scratch goes back.
			pg.ReuseStrings()
			err = into.ListOffersInto(ctx, dealerID, q, pg)
		} else {
			*pg, err = s.backend.ListOffers(ctx, dealerID, q)
		}
		if err = done(err); err != nil {
			return nil, err
		}
		out.Total = pg.Total
		if pg.Total < 0 || len(pg.Items) > p.pageSize {
			return nil, errMalformedListing
		}
		for i := range pg.Items {
			if pg.Items[i].DealerID != dealerID {
				return nil, errStrayOffer
			}
			if pg.Items[i].IDOfferta <= 0 {
				return nil, errMalformedListing
			}
		}
		offers = pg.Items
	} else {
		sc := listingScratches.Get().(*listingScratch)
		defer sc.put()
		q := upstream.VehicleQuery{
			Service: service, Page: p.page, PageSize: p.pageSize, Q: p.q, CatalogType: p.catalogType, Upfit: p.upfit,
		}
		pg := &sc.vehicles
		var err error
		ctx, done := revalidating(ctx, seedVehicleListing)
		if into, ok := s.backend.(vehiclesInto); ok {
			// The page's strings are cut from the memory of the last
			// fill's: nothing keeps one past the fill (the body is
			// encoded from them, a copy, before the scratch goes back;
			// the errors below are constants; the cache keeps the body
			// and the digest is of the upstream answer).
			pg.ReuseStrings()
			err = into.ListVehiclesInto(ctx, dealerID, q, pg)
		} else {
			*pg, err = s.backend.ListVehicles(ctx, dealerID, q)
		}
		if err = done(err); err != nil {
			return nil, err
		}
		out.Total = pg.Total
		if pg.Total < 0 || len(pg.Items) > p.pageSize {
			return nil, errMalformedListing
		}
		for i := range pg.Items {
			if v := &pg.Items[i]; v.DealerID != dealerID || v.Service != service {
				return nil, errStrayVehicle
			} else if !validUUID(unsafe.Slice(unsafe.StringData(v.IDAuto), len(v.IDAuto))) {
				return nil, errMalformedListing
			}
		}
		// The body is encoded straight from the records (the items are
		// never built), before the scratch goes back to the pool.
		vehicles = pg.Items
	}
	out.HasNext = int64(p.page)*int64(p.pageSize) < int64(out.Total)
	if total != nil {
		*total = out.Total
	}
	if dst != nil {
		b, err := appendListing((*dst)[:0], &out, vehicles, offers)
		*dst = b
		return b, err
	}
	buf := listingBufs.Get()
	b, err := appendListing(buf.B, &out, vehicles, offers)
	var body []byte
	if err == nil {
		body = bytes.Clone(b) // not zeroed first, unlike make
	}
	buf.B = b
	_ = buf.Close()
	return body, err
}

// A listing answer holding a record of another dealer or service is the
// inventory service misbehaving, as an undecodable answer is: a failure of
// the service (503, stale-if-error), never an internal error.
var (
	errStrayOffer   = fmt.Errorf("%w: inventory returned an offer of another dealer", upstream.ErrUnavailable)
	errStrayVehicle = fmt.Errorf("%w: inventory returned a vehicle of another dealer or service", upstream.ErrUnavailable)
	// errMalformedListing: a negative total, more items than the page
	// size, an id_auto that is not a uuid or an id_offerta under 1 would
	// publish a page outside the public schema.
	errMalformedListing = fmt.Errorf("%w: inventory returned a listing outside its contract (total, page size or record id)", upstream.ErrUnavailable)
)

// appendListing appends the listing l's JSON (items: the vehicles, or the
// offers for NLT; an empty page's is [], never null).
func appendListing(dst []byte, l *publicshape.InventoryListing, vehicles []upstream.Vehicle, offers []upstream.Offer) ([]byte, error) {
	if l.Service == publicshape.ServiceNLT {
		return mapping.AppendOfferListing(dst, l, offers), nil
	}
	return mapping.AppendVehicleListing(dst, l, vehicles)
}

// vehiclesInto is implemented by a Backend that decodes a vehicle listing
// into a caller's page (*upstream.Client): the listing fill then reuses a
// pooled page instead of making the slice of records on every miss.
type vehiclesInto interface {
	ListVehiclesInto(ctx context.Context, dealerID int64, q upstream.VehicleQuery, out *upstream.VehiclePage) error
}

// offersInto is vehiclesInto for an NLT offer listing.
type offersInto interface {
	ListOffersInto(ctx context.Context, dealerID int64, q upstream.OfferQuery, out *upstream.OfferPage) error
}

// offerScratch is what an NLT listing fill decodes into: pooled, as
// listingScratch is.
type offerScratch struct {
	offers upstream.OfferPage
}

var offerScratches = sync.Pool{New: func() any { return new(offerScratch) }}

// put is listingScratch.put for an offer page.
func (sc *offerScratch) put() {
	if emptied(&sc.offers.Items, &sc.offers.Total) {
		offerScratches.Put(sc)
	}
}

// emptied clears a pooled page's records (so the pool holds none of their
// strings, only the memory the next fill cuts its own from) and empties
// it; it reports whether the page may go back to its pool: not when it
// grew beyond maxPooledListingItems.
func emptied[T any](items *[]T, total *int) bool {
	clear(*items)
	if cap(*items) > maxPooledListingItems {
		return false
	}
	*total, *items = 0, (*items)[:0]
	return true
}

// listingScratch is what a vehicle listing fill decodes into: pooled,
// since a 100-item page of records is about 40 KB, with the memory its
// strings, upfit lists and prices are cut from
// (upstream.VehiclePage.ReuseStrings: a copy of the body, about 68 KB for
// a 100-item summary page, and small blocks).
type listingScratch struct {
	vehicles upstream.VehiclePage
}

var listingScratches = sync.Pool{New: func() any { return new(listingScratch) }}

// maxPooledListingItems bounds the pages kept in listingScratches (the
// page size's maximum is 100).
const maxPooledListingItems = 100

// put empties the page and gives sc back to the pool, unless it grew
// beyond maxPooledListingItems (emptied).
func (sc *listingScratch) put() {
	if emptied(&sc.vehicles.Items, &sc.vehicles.Total) {
		listingScratches.Put(sc)
	}
}

// inventoryDetails serves 4.2 GET /dealer/{service}/details.
func (s *Server) inventoryDetails(ctx *fasthttp.RequestCtx, rs *reqState) {
	service := pathValue(ctx, rs, "service")
	if !isService(service) {
		s.writeProblem(ctx, rs, invalidService())
		return
	}
	p, ae := parseInventoryDetails(&rs.raw, service)
	if ae != nil {
		s.writeProblem(ctx, rs, ae)
		return
	}
	st := s.settings.Load()
	rs.keyBuf = appendKey(rs.keyBuf[:0], RouteInventoryDetails, service, &p)
	if s.serveFresh(ctx, rs, st, "", rs.keyBuf) {
		return
	}
	code, detail := codeVehicleNotFound, vehicleNotFoundDetail
	if service == publicshape.ServiceNLT {
		code, detail = codeOfferNotFound, offerNotFoundDetail
	}
	nc, done := s.peekNotFound(ctx, rs, st, code, detail)
	if done {
		return
	}
	fp := p // a copy for the fill: p itself stays on the stack on the hit path
	dealerID, reqID, tp := rs.p.dealerID, string(rs.reqID), rs.traceparent
	s.respond(ctx, rs, st, "", rs.keyBuf, func(c context.Context) (body []byte, err error) {
		c, cancel := fillCtx(c, st, reqID, tp)
		defer cancel()
		stamp, err := s.peekInFill(c, dealerID, &nc)
		if err != nil {
			return nil, err
		}
		if service == publicshape.ServiceNLT {
			body, err = s.fillOffer(c, dealerID, fp.idOfferta)
		} else {
			body, err = s.fillVehicle(c, dealerID, service, fp.idAuto)
			s.logPartialPanics(reqID, RouteInventoryDetails, err)
		}
		s.record(c, dealerID, &nc, stamp, err)
		return body, err
	})
}

// The details of the detail routes' 404 problems.
const (
	vehicleNotFoundDetail = "no vehicle with this id_auto"
	offerNotFoundDetail   = "no offer with this id_offerta"
)

func (s *Server) fillOffer(ctx context.Context, dealerID, id int64) ([]byte, error) {
	ctx, done := revalidating(ctx, seedOfferDetail)
	o, err := s.backend.Offer(ctx, dealerID, id)
	err = done(err)
	if errors.Is(err, upstream.ErrNotFound) {
		return nil, notFound(codeOfferNotFound, offerNotFoundDetail)
	}
	if err == nil && (o.DealerID != dealerID || o.IDOfferta != id) {
		return nil, problemf(codeOfferNotFound, offerNotFoundDetail)
	}
	if err != nil {
		return nil, err
	}
	d := mapping.OfferDetail(o)
	return encode(publicshape.InventoryDetail{Service: publicshape.ServiceNLT, Offer: &d})
}

// fillVehicle fans out to inventory and media at once, then to the
// catalog for the vehicle's exact version. Inventory and catalog are
// required; media is optional: without it the detail is served without
// podcast/video objects, marked partial and not cached.
func (s *Server) fillVehicle(ctx context.Context, dealerID int64, service, idAuto string) ([]byte, error) {
	var (
		v        upstream.Vehicle
		media    upstream.Media
		mediaErr error
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(guard(func() error {
		var err error
		v, err = s.backend.Vehicle(gctx, dealerID, service, idAuto)
		return err
	}))
	mediaDone := make(chan struct{})
	go func() {
		defer close(mediaDone)
		defer recoverInto(&mediaErr)
		media, mediaErr = s.backend.VehicleMedia(ctx, dealerID, idAuto)
	}()
	err := g.Wait()
	if errors.Is(err, upstream.ErrNotFound) {
		<-mediaDone
		return nil, notFound(codeVehicleNotFound, vehicleNotFoundDetail)
	}
	if err == nil && (v.DealerID != dealerID || v.Service != service || !strings.EqualFold(v.IDAuto, idAuto)) {
		<-mediaDone
		return nil, problemf(codeVehicleNotFound, vehicleNotFoundDetail)
	}
	if err != nil {
		<-mediaDone
		return nil, err
	}
	var eq upstream.Equipment
	catalogKnown := false // the catalog answered for the vehicle's version
	if v.VersionCode != "" {
		eq, err = s.backend.Equipment(ctx, dealerID, v.VersionCode)
		if err != nil && !errors.Is(err, upstream.ErrNotFound) {
			<-mediaDone
			return nil, err
		}
		catalogKnown = err == nil
	}
	<-mediaDone
	var mp *upstream.Media
	if mediaErr == nil {
		mp = &media
	} else if errors.Is(mediaErr, upstream.ErrNotFound) {
		mediaErr = nil
	}
	d := mapping.VehicleDetail(v, eq, mp)
	if !catalogKnown {
		// No catalog entry for the version: its standard equipment is
		// unknown, and so are the confirmed codes' entries. Absent, not
		// empty: an empty list says "none" (contract 2.5).
		d.AccessoriSerie, d.AccessoriSerieJSON = nil, nil
		if len(v.ConfirmedOptionals) > 0 {
			d.AccessoriOpzionali = nil
		}
		if len(v.ConfirmedPackages) > 0 {
			d.Pacchetti = nil
		}
	}
	// confirmed codes of which the catalog's entry resolves
	// none are unknown too, not "none selected".
	if len(v.ConfirmedOptionals) > 0 && len(d.AccessoriOpzionali) == 0 {
		d.AccessoriOpzionali = nil
	}
	if len(v.ConfirmedPackages) > 0 && len(d.Pacchetti) == 0 {
		d.Pacchetti = nil
	}
	body, err := encode(publicshape.InventoryDetail{Service: service, Vehicle: &d})
	if err != nil {
		return nil, err
	}
	if mediaErr != nil {
		return nil, &partialError{body: body, cause: mediaErr}
	}
	return body, nil
}
