package reliability

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/contracttests/procs"
)

// Iterations and seed of TestIsolationAcrossDealers:
//
//	go test -run TestIsolation ./contracttests/reliability/ -args -isolation.iters=30 -isolation.seed=42
//	ISOLATION_ITERS=30 ISOLATION_SEED=42 go test -run TestIsolation ./contracttests/reliability/
var (
	isoItersFlag = flag.Int("isolation.iters", 0, "iterations of TestIsolationAcrossDealers (0: $ISOLATION_ITERS, else 6, one per ordered dealer pair)")
	isoSeedFlag  = flag.Int64("isolation.seed", 0, "seed of TestIsolationAcrossDealers (0: $ISOLATION_SEED, else the clock)")
)

// Short cache windows, so that entries go stale within an iteration.
const (
	isoTTL = 500 * time.Millisecond
	isoSWR = 500 * time.Millisecond
)

var (
	isoServices     = []string{"REWIND", "NOS", "NLT"}
	isoContentTypes = []string{"faq", "news", "glossary", "guides", "videos", "podcasts"}
)

// TestIsolationAcrossDealers is the isolation property: for randomly chosen
// ordered pairs (A, B) of distinct demo dealers and every endpoint, nothing
// of dealer B (vehicle ids, offer ids, B-only content slugs and ids, B's
// name, brand, domain and media paths) ever reaches A, on the paths where
// isolation could break:
//
//	(a) cache keys: B requests a URL, then A requests the same URL; A's first
//	    request of a URL is a MISS; B's detail ids/slugs with A's key are 404
//	    byte-for-byte like an id that does not exist;
//	(b) coalescing: A and B fire the same uncached URLs at once, with the
//	    upstream slowed down so their misses overlap;
//	(c) stale serving: the upstream goes down after both filled the cache,
//	    and each gets its own STALE body back (stale-while-revalidate, then
//	    stale-if-error), never the other's;
//	(d) X-Api-Key, Bearer and other keys of the same dealer give the same
//	    body.
//
// Every body any dealer receives is scanned for every other dealer's
// identifiers, and every identifier in it must be the dealer's own.
func TestIsolationAcrossDealers(t *testing.T) {
	iters := 6
	if v := os.Getenv("ISOLATION_ITERS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("ISOLATION_ITERS=%q: want a positive integer", v)
		}
		iters = n
	}
	if *isoItersFlag > 0 {
		iters = *isoItersFlag
	}
	seed := time.Now().UnixNano()
	if v := os.Getenv("ISOLATION_SEED"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("ISOLATION_SEED=%q: want an integer", v)
		}
		seed = n
	}
	if *isoSeedFlag != 0 {
		seed = *isoSeedFlag
	}
	t.Logf("seed %d, %d iterations (rerun: ISOLATION_SEED=%d ISOLATION_ITERS=%d)", seed, iters, seed, iters)

	pol := map[string]any{"ttl": isoTTL.String(), "stale_while_revalidate": isoSWR.String(), "stale_if_error": "1h"}
	unlimited := map[string]any{"rate": 1000000, "burst": 1000000}
	config := map[string]any{
		"cache": map[string]any{"routes": map[string]any{
			"inventory_listing": pol, "inventory_details": pol, "content_hub": pol,
			"content_search": pol, "content_listing": pol, "content_details": pol,
		}},
		// Breakers opened by phase (c) close again quickly.
		"upstream": map[string]any{"breaker_open_for": "300ms"},
		// The demo keys' default plan (50/s) would reject this test's bursts.
		"rate_limit": map[string]any{
			"default": unlimited,
			"plans":   map[string]any{"default": unlimited, "bench": unlimited, "limited": map[string]any{"rate": 10, "burst": 10}},
		},
		"log": map[string]any{"access_sample": 0},
	}
	s := startStack(t, config)
	start := time.Now()
	x := &isoRun{
		t:       t,
		s:       s,
		rng:     rand.New(rand.NewSource(seed)),
		byID:    map[int64]*isoDealer{},
		foreign: map[int64]*isoForeign{},
		used:    map[string]bool{},
		seen:    map[int64]map[string]bool{},
	}
	for i, id := range []int64{101, 102, 103} {
		d := newIsoDealer(id, i)
		x.dealers = append(x.dealers, d)
		x.byID[id] = d
		x.seen[id] = map[string]bool{}
	}
	for i, d := range x.dealers {
		x.walk(d, 100-i) // a page size of its own: the walks share no cache key
	}
	x.computeForeign()
	if t.Failed() {
		t.FailNow()
	}
	t.Logf("walked the dealers in %v", time.Since(start).Round(time.Millisecond))

	// Ordered pairs: a shuffled round of all six, then another, ...
	var pairs [][2]*isoDealer
	for len(pairs) < iters {
		var round [][2]*isoDealer
		for _, a := range x.dealers {
			for _, b := range x.dealers {
				if a != b {
					round = append(round, [2]*isoDealer{a, b})
				}
			}
		}
		x.rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		pairs = append(pairs, round...)
	}
	for i, p := range pairs[:iters] {
		a, b := p[0], p[1]
		x.where = fmt.Sprintf("iteration %d, A=%d B=%d", i, a.id, b.id)
		var took []string
		for _, ph := range []struct {
			name string
			run  func(a, b *isoDealer)
		}{{"cache keys", x.phaseCacheKeys}, {"coalescing", x.phaseCoalescing}, {"stale", x.phaseStale}, {"auth forms", x.phaseAuthForms}} {
			it := time.Now()
			ph.run(a, b)
			took = append(took, fmt.Sprintf("%s %v", ph.name, time.Since(it).Round(time.Millisecond)))
		}
		t.Logf("%s: ok (%s)", x.where, strings.Join(took, ", "))
		if t.Failed() {
			t.FailNow()
		}
	}
	t.Logf("%d requests, %d bodies scanned (%d of them STALE, %d 404s compared with a missing id), %d fills coalesced, in %v",
		x.requests, x.scanned, x.staleChecked, x.notFoundCompared, x.coalesced, time.Since(start).Round(time.Millisecond))
}

// isoDealer is what a walk of a dealer's listings found: its identifiers.
type isoDealer struct {
	id         int64
	keys       []string
	meta       isoMeta
	vehicles   map[string]string   // lower-case id_auto -> service
	bySvc      map[string][]string // service -> id_auto
	makes      map[string][]string // service -> marca of its items, for q
	offers     map[int64]bool
	offerIDs   []int64
	content    map[string]map[string]isoContent // type -> slug -> item
	slugs      map[string][]string              // type -> slugs
	contentIDs map[int64]bool
	walked     [][]byte // the walk's bodies, until computeForeign scanned them
}

type isoContent struct {
	id                     int64
	title                  string
	category, topic, brand string
}

type isoMeta struct {
	ID            int64  `json:"id"`
	Name          string `json:"name"`
	BrandName     string `json:"brand_name"`
	City          string `json:"city"`
	Province      string `json:"province"`
	PrimaryDomain string `json:"primary_domain"`
}

// newIsoDealer returns dealer id with its keys: its demo key and the bench
// keys mapped to it (bench-key-NNN belongs to dealer 101 + NNN mod 3, see
// upstream/fake/keys.go).
func newIsoDealer(id int64, idx int) *isoDealer {
	d := &isoDealer{
		id:         id,
		keys:       []string{map[int64]string{101: "demo-key-alpha", 102: "demo-key-beta", 103: "demo-key-gamma"}[id]},
		vehicles:   map[string]string{},
		bySvc:      map[string][]string{},
		makes:      map[string][]string{},
		offers:     map[int64]bool{},
		content:    map[string]map[string]isoContent{},
		slugs:      map[string][]string{},
		contentIDs: map[int64]bool{},
	}
	for i := idx; i < 50; i += 3 {
		d.keys = append(d.keys, fmt.Sprintf("bench-key-%03d", i))
	}
	return d
}

// owns reports whether the detail request rq is of one of d's items.
func (d *isoDealer) owns(rq isoReq) bool {
	switch rq.kind {
	case isoInvDetails:
		if rq.typ == "NLT" {
			n, _ := strconv.ParseInt(rq.id, 10, 64)
			return d.offers[n]
		}
		return d.vehicles[rq.id] == rq.typ
	case isoContentDetails:
		_, ok := d.content[rq.typ][rq.id]
		return ok
	}
	return true
}

// isoForeign is everything of the other dealers that a dealer must never
// see: their identifiers minus the dealer's own (global content is shared
// legitimately), and their metadata.
type isoForeign struct {
	vehicles   map[string]int64 // lower-case id_auto -> owner
	offers     map[int64]int64
	slugs      map[string]map[string]int64 // type -> slug -> owner
	contentIDs map[int64]int64
	tokens     []isoToken
}

type isoToken struct {
	text, what string
	owner      int64
}

type isoKind int

const (
	isoInvListing isoKind = iota
	isoInvDetails
	isoContentListing
	isoContentDetails
	isoHub
	isoSearch
)

func (k isoKind) content() bool { return k >= isoContentListing }

// isoReq is one URL of the test: path, and what it asks for.
type isoReq struct {
	kind isoKind
	typ  string // service or content type
	path string
	id   string // details: lower-case id_auto, id_offerta, or slug
}

func (rq isoReq) notFoundCode() string {
	switch {
	case rq.kind == isoContentDetails:
		return "content_not_found"
	case rq.typ == "NLT":
		return "offer_not_found"
	}
	return "vehicle_not_found"
}

// isoBody is the union of the response shapes, as far as the test reads
// them.
type isoBody struct {
	Service     string    `json:"service"`
	ContentType string    `json:"content_type"`
	Code        string    `json:"code"`
	HasNext     bool      `json:"has_next"`
	Items       []isoItem `json:"items"`
	Item        *isoItem  `json:"item"`
	Vehicle     *isoItem  `json:"vehicle"`
	Offer       *isoItem  `json:"offer"`
	Sections    map[string]struct {
		Items []isoItem `json:"items"`
	} `json:"sections"`
	Meta *struct {
		Dealer *isoMeta `json:"dealer"`
	} `json:"meta"`
}

type isoItem struct {
	IDAuto      string `json:"id_auto"`
	IDOfferta   int64  `json:"id_offerta"`
	Marca       string `json:"marca"`
	ID          int64  `json:"id"`
	Slug        string `json:"slug"`
	URL         string `json:"url"`
	ContentType string `json:"content_type"`
	Title       string `json:"title"`
	Category    string `json:"category"`
	Topic       string `json:"topic"`
	Brand       string `json:"brand"`
}

type isoRun struct {
	t       *testing.T
	s       *stack
	rng     *rand.Rand // main goroutine only
	dealers []*isoDealer
	byID    map[int64]*isoDealer
	foreign map[int64]*isoForeign
	used    map[string]bool           // paths any dealer requested: the generators avoid them
	seen    map[int64]map[string]bool // paths each dealer requested
	where   string

	mu                                                           sync.Mutex
	requests, scanned, staleChecked, notFoundCompared, coalesced int
	reqSeq                                                       int
	errs                                                         int
}

// errorf reports a failure; past the first 40 it only counts them.
func (x *isoRun) errorf(format string, args ...any) {
	x.t.Helper()
	x.errs++
	switch {
	case x.errs <= 40:
		x.t.Errorf("%s: %s", x.where, fmt.Sprintf(format, args...))
	case x.errs == 41:
		x.t.Errorf("%s: further failures not shown", x.where)
	}
}

// report reports the problems of one answer, at most five of them.
func (x *isoRun) report(prefix string, problems []string) {
	x.t.Helper()
	if len(problems) > 5 {
		problems = append(problems[:5:5], fmt.Sprintf("... and %d more", len(problems)-5))
	}
	if len(problems) > 0 {
		x.errorf("%s:\n\t%s", prefix, strings.Join(problems, "\n\t"))
	}
}

// header returns an auth header with a random key of d, sent as X-Api-Key
// or as Bearer at random.
func (x *isoRun) header(d *isoDealer) string {
	return isoAuth(d.keys[x.rng.Intn(len(d.keys))], x.rng.Intn(2))
}

func isoAuth(key string, style int) string {
	switch style {
	case 1:
		return "Authorization: Bearer " + key
	case 2:
		return "Authorization: bearer " + key
	}
	return "X-Api-Key: " + key
}

// fetch sends one request and checks it like stack.get (checkGET); safe
// for concurrent use.
func (x *isoRun) fetch(path string, headers ...string) (*procs.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := procs.Get(ctx, client, x.s.edge.Base, path, headers...)
	x.mu.Lock()
	x.requests++
	x.mu.Unlock()
	if err == nil {
		checkGET(x.t, path, r) // the contract and internal-field check of stack.get
	}
	return r, err
}

// get sends rq as dealer d and checks the answer (check); it returns nil
// after a transport error.
func (x *isoRun) get(d *isoDealer, rq isoReq, hdr string) *procs.Response {
	x.t.Helper()
	r, err := x.fetch(rq.path, hdr)
	x.seen[d.id][rq.path] = true
	x.used[rq.path] = true
	if err != nil {
		x.errorf("dealer %d GET %s (%s): %v", d.id, rq.path, hdr, err)
		return nil
	}
	x.report(fmt.Sprintf("dealer %d GET %s (%s)", d.id, rq.path, hdr), x.check(d, rq, r))
	return r
}

var isoUUIDRe = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// scan returns what of the other dealers the body r of a request of dealer
// d carries: their names, domains and media paths anywhere in the body and
// their vehicle ids anywhere.
//
// The echo of the request's own q is left out: searching for another
// dealer's brand name is allowed, finding it is not.
func (x *isoRun) scan(d *isoDealer, path string, body []byte) []string {
	var bad []string
	f := x.foreign[d.id]
	s := string(body)
	if u, err := url.Parse(path); err == nil {
		if q := u.Query().Get("q"); q != "" {
			enc, _ := json.Marshal(q)
			s = strings.ReplaceAll(s, `"q":`+string(enc), `"q":""`)
		}
	}
	for _, tk := range f.tokens {
		if strings.Contains(s, tk.text) {
			bad = append(bad, fmt.Sprintf("LEAK: body carries dealer %d's %s %q", tk.owner, tk.what, tk.text))
		}
	}
	found := map[string]bool{}
	for _, u := range isoUUIDRe.FindAllString(strings.ToLower(s), -1) {
		if o, ok := f.vehicles[u]; ok && !found[u] {
			found[u] = true
			bad = append(bad, fmt.Sprintf("LEAK: body carries dealer %d's vehicle %s", o, u))
		}
	}
	x.mu.Lock()
	x.scanned++
	x.mu.Unlock()
	if len(bad) > 0 {
		bad = append([]string{"body: " + isoExcerpt(body)}, bad...)
	}
	return bad
}

func isoExcerpt(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "..."
	}
	return string(b)
}

// check returns everything wrong with the answer r to rq for dealer d:
// another dealer's data anywhere, a status other than 200 for d's own data
// and 404 for another dealer's detail, any identifier that is not d's own,
// meta.dealer other than d's.
func (x *isoRun) check(d *isoDealer, rq isoReq, r *procs.Response) []string {
	bad := x.scan(d, rq.path, r.Body)
	want, code := 200, ""
	if !d.owns(rq) {
		want, code = 404, rq.notFoundCode()
	}
	if r.Status != want {
		return append(bad, fmt.Sprintf("status %d, want %d: %s", r.Status, want, isoExcerpt(r.Body)))
	}
	var b isoBody
	if err := json.Unmarshal(r.Body, &b); err != nil {
		return append(bad, fmt.Sprintf("body: %v: %s", err, isoExcerpt(r.Body)))
	}
	if want == 404 {
		if b.Code != code {
			bad = append(bad, fmt.Sprintf("code %q, want %q", b.Code, code))
		}
		return bad
	}
	f := x.foreign[d.id]
	inv := func(svc string, it isoItem) {
		if svc == "NLT" {
			if o, ok := f.offers[it.IDOfferta]; ok {
				bad = append(bad, fmt.Sprintf("LEAK: dealer %d's offer %d", o, it.IDOfferta))
			} else if !d.offers[it.IDOfferta] {
				bad = append(bad, fmt.Sprintf("offer %d is not the dealer's", it.IDOfferta))
			}
			return
		}
		id := strings.ToLower(it.IDAuto)
		if o, ok := f.vehicles[id]; ok {
			bad = append(bad, fmt.Sprintf("LEAK: dealer %d's vehicle %s", o, id))
		} else if d.vehicles[id] != svc {
			bad = append(bad, fmt.Sprintf("vehicle %q is not one of the dealer's %s vehicles", it.IDAuto, svc))
		}
	}
	content := func(typ string, it isoItem) {
		if o, ok := f.slugs[typ][it.Slug]; ok {
			bad = append(bad, fmt.Sprintf("LEAK: dealer %d's %s item %q", o, typ, it.Slug))
		} else if c, ok := d.content[typ][it.Slug]; !ok {
			bad = append(bad, fmt.Sprintf("%s item %q is not one of the dealer's", typ, it.Slug))
		} else if c.id != it.ID {
			bad = append(bad, fmt.Sprintf("%s item %q has id %d, the dealer's has %d", typ, it.Slug, it.ID, c.id))
		}
		if o, ok := f.contentIDs[it.ID]; ok {
			bad = append(bad, fmt.Sprintf("LEAK: dealer %d's content id %d", o, it.ID))
		}
		if !strings.HasPrefix(it.URL, "https://"+d.meta.PrimaryDomain+"/") {
			bad = append(bad, fmt.Sprintf("%s item %q url %q is not on the dealer's domain", typ, it.Slug, it.URL))
		}
	}
	switch rq.kind {
	case isoInvListing:
		for _, it := range b.Items {
			inv(rq.typ, it)
		}
	case isoInvDetails:
		switch {
		case rq.typ == "NLT" && b.Offer != nil && strconv.FormatInt(b.Offer.IDOfferta, 10) == rq.id:
			inv(rq.typ, *b.Offer)
		case rq.typ != "NLT" && b.Vehicle != nil && strings.EqualFold(b.Vehicle.IDAuto, rq.id):
			inv(rq.typ, *b.Vehicle)
		default:
			bad = append(bad, "the detail is not of the requested id: "+isoExcerpt(r.Body))
		}
	case isoContentListing:
		for _, it := range b.Items {
			content(rq.typ, it)
		}
	case isoContentDetails:
		if b.Item == nil || b.Item.Slug != rq.id {
			bad = append(bad, "the detail is not of the requested slug: "+isoExcerpt(r.Body))
		} else {
			content(rq.typ, *b.Item)
		}
	case isoHub:
		if len(b.Sections) != len(isoContentTypes) {
			bad = append(bad, fmt.Sprintf("hub has %d sections", len(b.Sections)))
		}
		for typ, sec := range b.Sections {
			for _, it := range sec.Items {
				content(typ, it)
			}
		}
	case isoSearch:
		for _, it := range b.Items {
			content(it.ContentType, it)
		}
	}
	if rq.kind.content() {
		if b.Meta == nil || b.Meta.Dealer == nil {
			bad = append(bad, "no meta.dealer")
		} else if *b.Meta.Dealer != d.meta {
			bad = append(bad, fmt.Sprintf("LEAK: meta.dealer %+v, want %+v", *b.Meta.Dealer, d.meta))
		}
	}
	return bad
}

// walk collects d's identifiers from its own listings.
func (x *isoRun) walk(d *isoDealer, pageSize int) {
	t := x.t
	t.Helper()
	hdr := isoAuth(d.keys[0], 0)
	page := func(path string) (isoBody, []byte, bool) {
		r, err := x.fetch(path, hdr)
		x.seen[d.id][path] = true
		x.used[path] = true
		if err != nil || r.Status != 200 {
			t.Errorf("walk dealer %d: GET %s: %v %v", d.id, path, err, r)
			return isoBody{}, nil, false
		}
		var b isoBody
		if err := json.Unmarshal(r.Body, &b); err != nil {
			t.Errorf("walk dealer %d: GET %s: %v", d.id, path, err)
			return isoBody{}, nil, false
		}
		return b, r.Body, true
	}
	var bodies [][]byte
	for _, svc := range isoServices {
		for p := 1; ; p++ {
			b, raw, ok := page(fmt.Sprintf("/dealer/%s/listing?page=%d&page_size=%d", svc, p, pageSize))
			if !ok {
				return
			}
			bodies = append(bodies, raw)
			for _, it := range b.Items {
				if svc == "NLT" {
					d.offers[it.IDOfferta] = true
					d.offerIDs = append(d.offerIDs, it.IDOfferta)
				} else {
					id := strings.ToLower(it.IDAuto)
					d.vehicles[id] = svc
					d.bySvc[svc] = append(d.bySvc[svc], id)
				}
				if it.Marca != "" {
					d.makes[svc] = append(d.makes[svc], it.Marca)
				}
			}
			if !b.HasNext {
				break
			}
		}
	}
	for _, typ := range isoContentTypes {
		d.content[typ] = map[string]isoContent{}
		for p := 1; ; p++ {
			b, raw, ok := page(fmt.Sprintf("/dealer/content/%s/listing?page=%d&page_size=%d", typ, p, pageSize))
			if !ok {
				return
			}
			bodies = append(bodies, raw)
			switch {
			case b.Meta == nil || b.Meta.Dealer == nil || b.Meta.Dealer.ID != d.id:
				t.Errorf("walk dealer %d: %s page %d: meta %+v", d.id, typ, p, b.Meta)
			case d.meta.ID == 0:
				d.meta = *b.Meta.Dealer
			case *b.Meta.Dealer != d.meta:
				t.Errorf("walk dealer %d: meta.dealer changed: %+v then %+v", d.id, d.meta, *b.Meta.Dealer)
			}
			for _, it := range b.Items {
				if _, dup := d.content[typ][it.Slug]; dup {
					t.Errorf("walk dealer %d: %s slug %q twice", d.id, typ, it.Slug)
				}
				d.content[typ][it.Slug] = isoContent{id: it.ID, title: it.Title, category: it.Category, topic: it.Topic, brand: it.Brand}
				d.slugs[typ] = append(d.slugs[typ], it.Slug)
				d.contentIDs[it.ID] = true
			}
			if !b.HasNext {
				break
			}
		}
	}
	for _, svc := range isoServices {
		if svc == "NLT" && len(d.offerIDs) == 0 || svc != "NLT" && len(d.bySvc[svc]) == 0 {
			t.Errorf("walk dealer %d: no %s items", d.id, svc)
		}
	}
	for _, typ := range isoContentTypes {
		if len(d.slugs[typ]) == 0 {
			t.Errorf("walk dealer %d: no %s items", d.id, typ)
		}
	}
	d.walked = bodies
	t.Logf("dealer %d (%s): %d REWIND, %d NOS, %d NLT, content %d/%d/%d/%d/%d/%d (faq/news/glossary/guides/videos/podcasts)",
		d.id, d.meta.BrandName, len(d.bySvc["REWIND"]), len(d.bySvc["NOS"]), len(d.offerIDs),
		len(d.slugs["faq"]), len(d.slugs["news"]), len(d.slugs["glossary"]), len(d.slugs["guides"]), len(d.slugs["videos"]), len(d.slugs["podcasts"]))
}

// computeForeign builds each dealer's foreign set and checks that the data
// can show a leak at all: vehicle and offer ids are disjoint between
// dealers, every pair has B-only content, and no dealer's own walk carries
// another dealer's tokens (so a token in a body is a leak, not a shared
// word).
func (x *isoRun) computeForeign() {
	t := x.t
	for _, d := range x.dealers {
		f := &isoForeign{vehicles: map[string]int64{}, offers: map[int64]int64{}, slugs: map[string]map[string]int64{}, contentIDs: map[int64]int64{}}
		for _, typ := range isoContentTypes {
			f.slugs[typ] = map[string]int64{}
		}
		for _, o := range x.dealers {
			if o == d {
				continue
			}
			for id := range o.vehicles {
				if _, mine := d.vehicles[id]; mine {
					t.Errorf("vehicle %s belongs to dealers %d and %d", id, d.id, o.id)
					continue
				}
				f.vehicles[id] = o.id
			}
			for id := range o.offers {
				if d.offers[id] {
					t.Errorf("offer %d belongs to dealers %d and %d", id, d.id, o.id)
					continue
				}
				f.offers[id] = o.id
			}
			only := 0
			var perType []string
			for _, typ := range isoContentTypes {
				n := 0
				for slug := range o.content[typ] {
					if _, mine := d.content[typ][slug]; !mine {
						f.slugs[typ][slug] = o.id
						n++
					}
				}
				only += n
				perType = append(perType, strconv.Itoa(n))
			}
			for id := range o.contentIDs {
				if !d.contentIDs[id] {
					f.contentIDs[id] = o.id
				}
			}
			if only == 0 {
				t.Errorf("dealer %d has no content that dealer %d has not: the test could not see a leak", o.id, d.id)
			}
			t.Logf("content of dealer %d that dealer %d must never see: %s", o.id, d.id, strings.Join(perType, "/"))
			f.tokens = append(f.tokens,
				isoToken{o.meta.Name, "name", o.id},
				isoToken{o.meta.BrandName, "brand_name", o.id},
				isoToken{o.meta.PrimaryDomain, "primary_domain", o.id},
				isoToken{fmt.Sprintf("/dealers/%d/", o.id), "media path", o.id})
			if o.meta.Name == "" || o.meta.BrandName == "" || o.meta.PrimaryDomain == "" {
				t.Errorf("dealer %d: incomplete meta %+v", o.id, o.meta)
			}
		}
		x.foreign[d.id] = f
	}
	for _, d := range x.dealers {
		for _, body := range d.walked {
			x.report(fmt.Sprintf("walk of dealer %d", d.id), x.scan(d, "", body))
		}
		d.walked = nil
	}
}

// --- URL generators. They pick values from dealer "from" (so that its
// answer is not empty) and avoid paths already requested, so a request is a
// miss unless the cache shares entries.

func (x *isoRun) fresh(gen func() string) string {
	var p string
	for range 100 {
		if p = gen(); !x.used[p] {
			break
		}
	}
	x.used[p] = true
	return p
}

func (x *isoRun) pick(s []string) string { return s[x.rng.Intn(len(s))] }

func (x *isoRun) invListing(svc string, from *isoDealer) isoReq {
	n := len(from.bySvc[svc])
	if svc == "NLT" {
		n = len(from.offerIDs)
	}
	return isoReq{kind: isoInvListing, typ: svc, path: x.fresh(func() string {
		v := url.Values{}
		ps := 1 + x.rng.Intn(100)
		v.Set("page_size", strconv.Itoa(ps))
		v.Set("page", strconv.Itoa(1+x.rng.Intn(max(1, min(3, n/ps)))))
		switch x.rng.Intn(3) {
		case 1:
			v.Set("q", x.pick(from.makes[svc]))
			v.Set("page", "1")
		case 2:
			if svc != "NLT" {
				v.Set("catalog_type", x.pick([]string{"auto", "vcom", "vind"}))
				v.Set("page", "1")
			}
		}
		return "/dealer/" + svc + "/listing?" + v.Encode()
	})}
}

func (x *isoRun) invDetails(svc, id string) isoReq {
	param := "id_auto"
	if svc == "NLT" {
		param = "id_offerta"
	}
	return isoReq{kind: isoInvDetails, typ: svc, id: id, path: "/dealer/" + svc + "/details?" + param + "=" + id}
}

// ownDetails returns a detail request of a random item of dealer d, one of
// no other dealer, unused when possible.
func (x *isoRun) ownDetails(svc string, d *isoDealer) isoReq {
	var rq isoReq
	for range 100 {
		if svc == "NLT" {
			rq = x.invDetails(svc, strconv.FormatInt(d.offerIDs[x.rng.Intn(len(d.offerIDs))], 10))
		} else {
			rq = x.invDetails(svc, x.pick(d.bySvc[svc]))
		}
		if !x.used[rq.path] {
			break
		}
	}
	x.used[rq.path] = true
	return rq
}

// missingDetails is a detail request of an id or slug nobody has.
func (x *isoRun) missingDetails(rq isoReq) isoReq {
	if rq.kind == isoContentDetails {
		return x.contentDetails(rq.typ, fmt.Sprintf("no-such-item-%08x", x.rng.Uint32()))
	}
	if rq.typ == "NLT" {
		return x.invDetails("NLT", strconv.Itoa(900000000+x.rng.Intn(99999999)))
	}
	b := make([]byte, 16)
	x.rng.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return x.invDetails(rq.typ, fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:]))
}

func (x *isoRun) titleWord(c isoContent) string {
	var words []string
	for _, w := range strings.FieldsFunc(strings.ToLower(c.title), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		if len(w) >= 4 {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return "auto"
	}
	return x.pick(words)
}

func (x *isoRun) contentListing(typ string, from *isoDealer) isoReq {
	n := len(from.slugs[typ])
	return isoReq{kind: isoContentListing, typ: typ, path: x.fresh(func() string {
		v := url.Values{}
		ps := 1 + x.rng.Intn(100)
		v.Set("page_size", strconv.Itoa(ps))
		v.Set("page", strconv.Itoa(1+x.rng.Intn(max(1, min(3, n/ps)))))
		c := from.content[typ][x.pick(from.slugs[typ])]
		switch x.rng.Intn(3) {
		case 1:
			v.Set("q", x.titleWord(c))
			v.Set("page", "1")
		case 2:
			switch {
			case typ == "guides" && c.topic != "":
				v.Set("topic", c.topic)
			case typ == "news" && c.brand != "":
				v.Set("brand", c.brand)
			case (typ == "faq" || typ == "news" || typ == "glossary") && c.category != "":
				v.Set("category", c.category)
			}
			v.Set("page", "1")
		}
		return "/dealer/content/" + typ + "/listing?" + v.Encode()
	})}
}

func (x *isoRun) contentDetails(typ, slug string) isoReq {
	return isoReq{kind: isoContentDetails, typ: typ, id: slug, path: "/dealer/content/" + typ + "/details?slug=" + url.QueryEscape(slug)}
}

// slugOf returns a random slug of type typ that dealer has and other has
// (shared: true) or has not (shared: false), or "".
func (x *isoRun) slugOf(typ string, dealer, other *isoDealer, shared bool) string {
	var c []string
	for _, s := range dealer.slugs[typ] {
		if _, ok := other.content[typ][s]; ok == shared {
			c = append(c, s)
		}
	}
	if len(c) == 0 {
		return ""
	}
	for range 20 {
		s := x.pick(c)
		if !x.used[x.contentDetails(typ, s).path] {
			return s
		}
	}
	return x.pick(c)
}

func (x *isoRun) hub() isoReq {
	return isoReq{kind: isoHub, path: x.fresh(func() string { return fmt.Sprintf("/dealer/content/hub?page_size=%d", 1+x.rng.Intn(20)) })}
}

// search asks for something dealer from has: its brand name (which no other
// dealer's content mentions) or a word of one of its titles.
func (x *isoRun) search(from *isoDealer) isoReq {
	return isoReq{kind: isoSearch, path: x.fresh(func() string {
		q := from.meta.BrandName
		if x.rng.Intn(2) == 1 {
			typ := x.pick(isoContentTypes)
			q = x.titleWord(from.content[typ][x.pick(from.slugs[typ])])
		}
		// In the edge's canonical form (lowercase, words sorted), so that
		// two fresh URLs are never one cache entry ("Beta Car" and
		// "car beta" are).
		words := strings.Fields(strings.ToLower(q))
		slices.Sort(words)
		q = strings.Join(slices.Compact(words), " ")
		return "/dealer/content/search?" + url.Values{"q": {q}, "page_size": {strconv.Itoa(1 + x.rng.Intn(20))}}.Encode()
	})}
}

// endpointSet is one fresh URL of every endpoint and every path value, the
// details of items of B only, of A only and, for content, shared.
func (x *isoRun) endpointSet(a, b *isoDealer) []isoReq {
	var rs []isoReq
	for _, svc := range isoServices {
		rs = append(rs, x.invListing(svc, b), x.ownDetails(svc, b), x.ownDetails(svc, a))
	}
	for _, typ := range isoContentTypes {
		rs = append(rs, x.contentListing(typ, b))
		if s := x.slugOf(typ, b, a, false); s != "" {
			rs = append(rs, x.contentDetails(typ, s))
		}
		if s := x.slugOf(typ, b, a, true); s != "" {
			rs = append(rs, x.contentDetails(typ, s))
		}
	}
	return append(rs, x.hub(), x.search(b))
}

// compareMissing checks that r, dealer d's 404 for rq (sent with header
// hdr and request id rid), is byte-for-byte the answer to an id nobody has.
func (x *isoRun) compareMissing(d *isoDealer, rq isoReq, r *procs.Response, hdr, rid string) {
	x.t.Helper()
	ghost := x.missingDetails(rq)
	g, err := x.fetch(ghost.path, hdr, "X-Request-ID: "+rid)
	if err != nil {
		x.errorf("dealer %d GET %s: %v", d.id, ghost.path, err)
		return
	}
	x.mu.Lock()
	x.notFoundCompared++
	x.mu.Unlock()
	if g.Status != r.Status || string(g.Body) != string(r.Body) {
		x.errorf("dealer %d: another dealer's item %s answers %d %s\nbut a missing one %s answers %d %s",
			d.id, rq.path, r.Status, r.Body, ghost.path, g.Status, g.Body)
	}
	names := map[string]bool{}
	for k := range r.Header {
		names[k] = true
	}
	for k := range g.Header {
		names[k] = true
	}
	for k := range names {
		switch k {
		case "Date", "Ratelimit": // the clock and the remaining quota
			continue
		}
		if a, b := strings.Join(r.Header[k], ", "), strings.Join(g.Header[k], ", "); a != b {
			x.errorf("dealer %d: header %s is %q for another dealer's item %s, %q for a missing one", d.id, k, a, rq.path, b)
		}
	}
}

func (x *isoRun) nextRequestID() string {
	x.reqSeq++
	return fmt.Sprintf("iso-%d", x.reqSeq)
}

// phaseCacheKeys is (a): B requests every URL first, then A the same URL.
func (x *isoRun) phaseCacheKeys(a, b *isoDealer) {
	for _, rq := range x.endpointSet(a, b) {
		for _, d := range []*isoDealer{b, a} {
			first := !x.seen[d.id][rq.path]
			hdr := x.header(d)
			rid := x.nextRequestID()
			r, err := x.fetch(rq.path, hdr, "X-Request-ID: "+rid)
			x.seen[d.id][rq.path] = true
			if err != nil {
				x.errorf("dealer %d GET %s: %v", d.id, rq.path, err)
				continue
			}
			x.report(fmt.Sprintf("(a) dealer %d GET %s (%s, X-Cache %s)", d.id, rq.path, hdr, r.Header.Get("X-Cache")), x.check(d, rq, r))
			if r.Status == 200 && first && r.Header.Get("X-Cache") != "MISS" {
				x.errorf("(a) dealer %d GET %s: X-Cache %q on the dealer's first request of this URL, want MISS (the other dealer's entry?)",
					d.id, rq.path, r.Header.Get("X-Cache"))
			}
			if r.Status == 404 {
				x.compareMissing(d, rq, r, hdr, rid)
			}
		}
	}
}

// phaseCoalescing is (b): A and B request the same uncached URLs at the
// same time, three requests each, while every upstream call takes 100 ms.
func (x *isoRun) phaseCoalescing(a, b *isoDealer) {
	before, _ := x.s.edge.Metric("edge_cache_coalesced_total")
	x.s.fake.Faults("latency=100ms")
	defer x.s.fake.Faults("clear=true")
	rqs := x.endpointSet(a, b)
	type result struct {
		d   *isoDealer
		rq  isoReq
		hdr string
		r   *procs.Response
		err error
	}
	var (
		jobs []*result
		wg   sync.WaitGroup
	)
	startGate := make(chan struct{})
	for _, rq := range rqs {
		for range 3 {
			for _, d := range []*isoDealer{a, b} {
				j := &result{d: d, rq: rq, hdr: x.header(d)}
				jobs = append(jobs, j)
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-startGate
					j.r, j.err = x.fetch(j.rq.path, j.hdr)
				}()
			}
		}
	}
	close(startGate)
	wg.Wait()
	bodies := map[string]string{} // dealer + path -> the 200 body
	for _, j := range jobs {
		x.seen[j.d.id][j.rq.path] = true
		if j.err != nil {
			x.errorf("(b) dealer %d GET %s: %v", j.d.id, j.rq.path, j.err)
			continue
		}
		x.report(fmt.Sprintf("(b) dealer %d GET %s (%s, X-Cache %s)", j.d.id, j.rq.path, j.hdr, j.r.Header.Get("X-Cache")), x.check(j.d, j.rq, j.r))
		if j.r.Status == 200 {
			k := strconv.FormatInt(j.d.id, 10) + j.rq.path
			if prev, ok := bodies[k]; ok && prev != string(j.r.Body) {
				x.errorf("(b) dealer %d GET %s: concurrent requests of one dealer got different bodies", j.d.id, j.rq.path)
			}
			bodies[k] = string(j.r.Body)
		}
	}
	after, _ := x.s.edge.Metric("edge_cache_coalesced_total")
	if after <= before {
		x.errorf("(b) edge_cache_coalesced_total %v -> %v: no request shared a fill, the misses did not overlap", before, after)
	}
	x.mu.Lock()
	x.coalesced += int(after - before)
	x.mu.Unlock()
}

// phaseStale is (c): both dealers fill the cache, the upstream goes down,
// and past the TTL (stale-while-revalidate) and past TTL + SWR
// (stale-if-error) each gets exactly the body it filled, marked STALE; a
// URL that was a 404 for a dealer is a 503 now, never the other dealer's
// entry.
func (x *isoRun) phaseStale(a, b *isoDealer) {
	rqs := x.endpointSet(a, b)
	hdrs := map[int64]string{a.id: x.header(a), b.id: x.header(b)}
	filled := map[string][]byte{}
	fkey := func(d *isoDealer, rq isoReq) string { return strconv.FormatInt(d.id, 10) + rq.path }
	for _, rq := range rqs {
		for _, d := range []*isoDealer{b, a} {
			if r := x.get(d, rq, hdrs[d.id]); r != nil && r.Status == 200 {
				if r.Header.Get("X-Edge-Partial") != "" {
					x.errorf("(c) dealer %d GET %s: partial answer while filling", d.id, rq.path)
				}
				filled[fkey(d, rq)] = r.Body
			}
		}
	}
	lastFill := time.Now()
	x.s.fake.Faults("down=true")
	for _, ph := range []struct {
		name string
		at   time.Duration
	}{{"stale-while-revalidate", isoTTL + 100*time.Millisecond}, {"stale-if-error", isoTTL + isoSWR + 100*time.Millisecond}} {
		time.Sleep(time.Until(lastFill.Add(ph.at)))
		for _, rq := range rqs {
			for _, d := range []*isoDealer{a, b} {
				r, err := x.fetch(rq.path, hdrs[d.id])
				if err != nil {
					x.errorf("(c) %s: dealer %d GET %s: %v", ph.name, d.id, rq.path, err)
					continue
				}
				x.report(fmt.Sprintf("(c) %s: dealer %d GET %s (X-Cache %s)", ph.name, d.id, rq.path, r.Header.Get("X-Cache")), x.scan(d, rq.path, r.Body))
				want, ok := filled[fkey(d, rq)]
				switch {
				case ok && (r.Status != 200 || r.Header.Get("X-Cache") != "STALE"):
					x.errorf("(c) %s: dealer %d GET %s: %d X-Cache %q, want 200 STALE: %s", ph.name, d.id, rq.path, r.Status, r.Header.Get("X-Cache"), isoExcerpt(r.Body))
				case ok && string(r.Body) != string(want):
					x.errorf("(c) %s: dealer %d GET %s: the STALE body is not the one the dealer filled:\n%s\nwant\n%s", ph.name, d.id, rq.path, isoExcerpt(r.Body), isoExcerpt(want))
				case !ok && r.Status != 503:
					x.errorf("(c) %s: dealer %d GET %s: %d X-Cache %q, want 503 (the dealer has no entry; the other's must not be served): %s",
						ph.name, d.id, rq.path, r.Status, r.Header.Get("X-Cache"), isoExcerpt(r.Body))
				}
				if ok {
					x.mu.Lock()
					x.staleChecked++
					x.mu.Unlock()
				}
			}
		}
	}
	x.s.fake.Faults("clear=true")
	x.waitRecovered(a)
}

// waitRecovered waits until the edge fills again after the outage (its breakers
// closed): fresh requests of every kind succeed, unmarked partial. Every
// content type is asked for: each has a breaker of its own, which closes on
// its own trial call.
func (x *isoRun) waitRecovered(d *isoDealer) {
	deadline := time.Now().Add(15 * time.Second)
	for n := 0; ; n++ {
		ok := true
		paths := []string{
			fmt.Sprintf("/dealer/NOS/listing?page=%d&page_size=%d", 100000+x.rng.Intn(1000000), 1+x.rng.Intn(100)),
			x.ownDetails("REWIND", d).path,
		}
		for _, typ := range isoContentTypes {
			paths = append(paths, fmt.Sprintf("/dealer/content/%s/listing?page=%d&page_size=%d", typ, 100000+x.rng.Intn(1000000), 1+x.rng.Intn(100)))
		}
		for _, path := range paths {
			r, err := x.fetch(path, isoAuth(d.keys[0], 0))
			if err != nil || r.Status != 200 || r.Header.Get("X-Edge-Partial") != "" {
				ok = false
			}
			x.seen[d.id][path] = true
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("%s: the edge did not recover within 15s after the upstream came back", x.where)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// phaseAuthForms is (d): for each dealer, X-Api-Key, Bearer, lower-case
// bearer and another key of the same dealer give the same body.
func (x *isoRun) phaseAuthForms(a, b *isoDealer) {
	for _, d := range []*isoDealer{a, b} {
		o := a
		if d == a {
			o = b
		}
		typ := x.pick(isoContentTypes)
		rqs := []isoReq{
			x.invListing(x.pick(isoServices), d), x.ownDetails("NOS", d), x.ownDetails("NLT", d),
			x.contentListing(typ, d), x.contentDetails(typ, x.pick(d.slugs[typ])), x.hub(), x.search(o),
		}
		k1 := x.rng.Intn(len(d.keys))
		k2 := (k1 + 1 + x.rng.Intn(len(d.keys)-1)) % len(d.keys)
		forms := []string{isoAuth(d.keys[k1], 0), isoAuth(d.keys[k1], 1), isoAuth(d.keys[k1], 2), isoAuth(d.keys[k2], 0), isoAuth(d.keys[k2], 1)}
		for _, rq := range rqs {
			var (
				first    *procs.Response
				firstHdr string
			)
			for _, h := range forms {
				r := x.get(d, rq, h)
				if r == nil || r.Status != 200 {
					continue
				}
				if first == nil {
					first, firstHdr = r, h
				} else if string(r.Body) != string(first.Body) || r.Header.Get("ETag") != first.Header.Get("ETag") {
					x.errorf("(d) dealer %d GET %s: %q and %q give different bodies:\n%s\n%s", d.id, rq.path, firstHdr, h, isoExcerpt(first.Body), isoExcerpt(r.Body))
				}
			}
		}
	}
}
