package fake

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/publicshape"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake/corpus"
)

// Listing limits of the inventory service.
const (
	defaultPageSize = 20
	maxPageSize     = 1000
)

// handle routes one request of the doc.go contract. Every request to a
// known service prefix counts as a call of that service, then faults are
// injected, then it is answered.
func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	if s.control(ctx) {
		return
	}
	seg, ok := segments(ctx.URI().PathOriginal())
	if !ok || len(seg) < 2 || seg[1] != "v1" {
		writeError(ctx, fasthttp.StatusNotFound, "not found")
		return
	}
	f := s.faults[seg[0]]
	if f == nil {
		writeError(ctx, fasthttp.StatusNotFound, "not found")
		return
	}
	f.calls.Add(1)
	if seg[0] == upstream.SvcDealers && len(seg) > 2 && seg[2] == "keys" {
		s.keyLookups.Add(1)
	}
	if !ctx.IsGet() {
		ctx.Response.Header.Set("Allow", "GET")
		writeError(ctx, fasthttp.StatusMethodNotAllowed, "method not allowed")
		return
	}
	if s.inject(ctx, f) {
		return
	}
	if s.dataErr != nil {
		writeError(ctx, fasthttp.StatusInternalServerError, "data generation failed")
		return
	}
	rest := seg[2:]
	switch seg[0] {
	case upstream.SvcDealers:
		s.dealers(ctx, rest)
	case upstream.SvcInventory:
		s.inventory(ctx, rest)
	case upstream.SvcCatalog:
		s.catalog(ctx, rest)
	case upstream.SvcMedia:
		s.media(ctx, rest)
	case upstream.SvcContent:
		s.content(ctx, rest)
	}
}

// segments splits an escaped path into unescaped segments, without the
// leading empty one.
func segments(p []byte) ([]string, bool) {
	if len(p) == 0 || p[0] != '/' {
		return nil, false
	}
	parts := strings.Split(string(p[1:]), "/")
	for i, s := range parts {
		u, err := url.PathUnescape(s)
		if err != nil {
			return nil, false
		}
		parts[i] = u
	}
	return parts, true
}

func notFound(ctx *fasthttp.RequestCtx) { writeError(ctx, fasthttp.StatusNotFound, "not found") }

func badRequest(ctx *fasthttp.RequestCtx, msg string) {
	writeError(ctx, fasthttp.StatusBadRequest, msg)
}

func parseID(s string) (int64, bool) {
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id > 0
}

// dealers: keys/{sha256-hex}, dealers/{id}, key-index, key-index/changes.
func (s *Server) dealers(ctx *fasthttp.RequestCtx, seg []string) {
	switch {
	case len(seg) == 1 && seg[0] == "key-index":
		s.keys.snapshot(ctx)
		return
	case len(seg) == 2 && seg[0] == "key-index" && seg[1] == "changes":
		s.keys.changes(ctx)
		return
	case len(seg) != 2:
		notFound(ctx)
		return
	}
	switch seg[0] {
	case "keys":
		found := s.keys.get(strings.ToLower(seg[1]))
		if found == nil {
			notFound(ctx)
			return
		}
		writeJSON(ctx, found)
	case "dealers":
		id, ok := parseID(seg[1])
		d := s.data.dealers[id]
		if !ok || d == nil {
			notFound(ctx)
			return
		}
		writeJSON(ctx, d.profile)
	default:
		notFound(ctx)
	}
}

// pageParams reads page and page_size (defaults 1 and 20).
func pageParams(args *fasthttp.Args) (page, size int, ok bool) {
	page, size = 1, defaultPageSize
	if v := args.Peek("page"); len(v) > 0 {
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 1 {
			return 0, 0, false
		}
		page = n
	}
	if v := args.Peek("page_size"); len(v) > 0 {
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 1 || n > maxPageSize {
			return 0, 0, false
		}
		size = n
	}
	return page, size, true
}

// bounds returns the slice bounds of a page over total items.
func bounds(page, size, total int) (int, int) {
	if page-1 > total/size {
		return total, total
	}
	start := (page - 1) * size
	if start >= total {
		return total, total
	}
	return start, min(start+size, total)
}

// writePage writes {"total":N,"items":[...]} from pre-encoded items.
func writePage(ctx *fasthttp.RequestCtx, total int, items [][]byte) {
	n := 32
	for _, it := range items {
		n += len(it) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `{"total":`...)
	b = strconv.AppendInt(b, int64(total), 10)
	b = append(b, `,"items":[`...)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	b = append(b, "]}"...)
	writeJSON(ctx, b)
}

func queryWords(args *fasthttp.Args) []string {
	return strings.Fields(strings.ToLower(string(args.Peek("q"))))
}

// inventory: dealers/{id}/vehicles[/{id_auto}], dealers/{id}/offers[/{id}].
func (s *Server) inventory(ctx *fasthttp.RequestCtx, seg []string) {
	if len(seg) < 3 || len(seg) > 4 || seg[0] != "dealers" {
		notFound(ctx)
		return
	}
	id, ok := parseID(seg[1])
	d := s.data.dealers[id]
	if !ok || d == nil {
		notFound(ctx)
		return
	}
	args := ctx.QueryArgs()
	switch {
	case seg[2] == "vehicles" && len(seg) == 3:
		s.listVehicles(ctx, d, args)
	case seg[2] == "vehicles":
		v := d.vehicles[strings.ToLower(seg[3])]
		svc := string(args.Peek("service"))
		if v == nil || svc != "" && svc != v.v.Service {
			notFound(ctx)
			return
		}
		writeJSON(ctx, v.json)
	case seg[2] == "offers" && len(seg) == 3:
		s.listOffers(ctx, d, args)
	case seg[2] == "offers":
		oid, ok := parseID(seg[3])
		o := d.offerByID[oid]
		if !ok || o == nil {
			notFound(ctx)
			return
		}
		writeJSON(ctx, o.json)
	default:
		notFound(ctx)
	}
}

func hasUpfit(v *upstream.Vehicle, slug string) bool {
	for i := range v.Upfits {
		if publicshape.UpfitSlug(v.Upfits[i].Slug, v.Upfits[i].Label) == slug { // upstream/doc.go: the published form
			return true
		}
	}
	return false
}

func (s *Server) listVehicles(ctx *fasthttp.RequestCtx, d *dealerData, args *fasthttp.Args) {
	svc := string(args.Peek("service"))
	list, known := d.bySvc[svc]
	if !known {
		badRequest(ctx, "service must be REWIND or NOS")
		return
	}
	page, size, ok := pageParams(args)
	if !ok {
		badRequest(ctx, "invalid page or page_size")
		return
	}
	words := queryWords(args)
	cat := string(args.Peek("catalog_type"))
	upfit := string(args.Peek("upfit"))
	body := func(e *vehicleEntry) []byte { return e.json }
	switch string(args.Peek("view")) {
	case "", "full":
	case "summary":
		body = func(e *vehicleEntry) []byte { return e.summary }
	default:
		badRequest(ctx, "view must be full or summary")
		return
	}
	start, end := bounds(page, size, len(list))
	total := 0
	var items [][]byte
	if len(words) == 0 && cat == "" && upfit == "" {
		total = len(list)
		for _, e := range list[start:end] {
			items = append(items, body(e))
		}
	} else {
		for _, e := range list {
			if cat != "" && e.v.CatalogType != cat ||
				upfit != "" && !hasUpfit(&e.v, upfit) ||
				!matchWords(words, e.makeL, e.modelL, e.trimL) {
				continue
			}
			if total >= start && len(items) < size {
				items = append(items, body(e))
			}
			total++
		}
	}
	writePage(ctx, total, items)
}

func (s *Server) listOffers(ctx *fasthttp.RequestCtx, d *dealerData, args *fasthttp.Args) {
	page, size, ok := pageParams(args)
	if !ok {
		badRequest(ctx, "invalid page or page_size")
		return
	}
	words := queryWords(args)
	skip, _ := bounds(page, size, len(d.offers))
	total := 0
	var items [][]byte
	for _, e := range d.offers {
		if !matchWords(words, e.makeL, e.modelL, e.versionL) {
			continue
		}
		if total >= skip && len(items) < size {
			items = append(items, e.json)
		}
		total++
	}
	writePage(ctx, total, items)
}

// catalog: versions/{code}/equipment.
func (s *Server) catalog(ctx *fasthttp.RequestCtx, seg []string) {
	if len(seg) != 3 || seg[0] != "versions" || seg[2] != "equipment" {
		notFound(ctx)
		return
	}
	v := s.data.versions[seg[1]]
	if v == nil {
		notFound(ctx)
		return
	}
	writeJSON(ctx, v.json)
}

// media: dealers/{id}/vehicles/{id_auto}.
func (s *Server) media(ctx *fasthttp.RequestCtx, seg []string) {
	if len(seg) != 4 || seg[0] != "dealers" || seg[2] != "vehicles" {
		notFound(ctx)
		return
	}
	id, ok := parseID(seg[1])
	d := s.data.dealers[id]
	if !ok || d == nil {
		notFound(ctx)
		return
	}
	v := d.vehicles[strings.ToLower(seg[3])]
	if v == nil {
		notFound(ctx)
		return
	}
	writeJSON(ctx, v.media)
}

func isContentType(ct string) bool {
	for _, t := range upstream.ContentTypes {
		if t == ct {
			return true
		}
	}
	return false
}

// content: dealers/{id}/{type}?q=&category=&topic=&brand=&view=.
func (s *Server) content(ctx *fasthttp.RequestCtx, seg []string) {
	if len(seg) != 3 || seg[0] != "dealers" {
		notFound(ctx)
		return
	}
	id, ok := parseID(seg[1])
	if !ok || s.data.dealers[id] == nil || !isContentType(seg[2]) {
		notFound(ctx)
		return
	}
	args := ctx.QueryArgs()
	f := upstream.ContentFilter{
		Q:        string(args.Peek("q")),
		Category: string(args.Peek("category")),
		Topic:    string(args.Peek("topic")),
		Brand:    string(args.Peek("brand")),
	}
	switch string(args.Peek("view")) {
	case "", "full":
	case "summary":
		f.Summary = true
	default:
		badRequest(ctx, "view must be full or summary")
		return
	}
	key := contentKey{id, seg[2], f}
	if b, ok := s.contentBodies.Load(key); ok {
		writeJSON(ctx, b.([]byte))
		return
	}
	recs := corpus.Filter(corpus.Records(id, seg[2]), f)
	if recs == nil {
		recs = []upstream.ContentRecord{}
	}
	if f.Summary {
		sum := make([]upstream.ContentRecord, len(recs))
		for i := range recs {
			sum[i] = upstream.ContentSummary(recs[i])
		}
		recs = sum
	}
	b, err := json.Marshal(struct {
		Items []upstream.ContentRecord `json:"items"`
	}{recs})
	if err != nil {
		writeError(ctx, fasthttp.StatusInternalServerError, "encode")
		return
	}
	// The data never changes: keep the encoded answer (a bounded number of
	// them), so that a load test measures the edge, not the fake's encoder.
	if s.contentStored.Add(1) <= maxContentBodies {
		s.contentBodies.Store(key, b)
	}
	writeJSON(ctx, b)
}

// contentKey identifies one content answer of the fake.
type contentKey struct {
	dealer int64
	typ    string
	filter upstream.ContentFilter
}

// maxContentBodies bounds the encoded content answers a Server keeps.
const maxContentBodies = 4096
