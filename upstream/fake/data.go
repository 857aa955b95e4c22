package fake

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// dataset is everything the fake services serve. It is generated once by
// NewServer from the seed and never changes afterwards, so handlers read it
// without locks. Records are kept together with their JSON encoding, so a
// request costs a filter and a copy, not an encode.
type dataset struct {
	dealers  map[int64]*dealerData
	versions map[string]*version
}

type version struct {
	code  string
	eq    upstream.Equipment
	json  []byte
	model *modelSpec
	trim  string
}

type vehicleEntry struct {
	v                    upstream.Vehicle
	makeL, modelL, trimL string // lower-case, for q
	json                 []byte
	summary              []byte // the record in the listing's view=summary
	media                []byte // the Media record
}

type offerEntry struct {
	o                       upstream.Offer
	makeL, modelL, versionL string
	json                    []byte
}

type dealerData struct {
	profile   []byte                   // the Dealer record
	vehicles  map[string]*vehicleEntry // by lower-case id_auto, both services
	bySvc     map[string][]*vehicleEntry
	offers    []*offerEntry
	offerByID map[int64]*offerEntry
}

const (
	cdn = "https://cdn.example-dealer-media.it"
	// baseTime anchors every generated date: fixed, never time.Now.
	hoursBack = 24 * 240
)

var baseTime = time.Date(2025, 6, 30, 18, 0, 0, 0, time.UTC)

// stream returns the random stream of one part of the data: each part has
// its own, so adding data to one part does not change the others.
func stream(seed uint64, part uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, part))
}

func generate(seed uint64, fleet int) (*dataset, error) {
	ds := &dataset{dealers: map[int64]*dealerData{}, versions: map[string]*version{}}

	// Catalog versions, in table order.
	byModel := make([][]*version, len(models))
	cr := stream(seed, 0xCA7A_1060)
	for mi := range models {
		m := &models[mi]
		for ti, trim := range m.trims {
			v := genVersion(cr, m, mi, ti, trim)
			b, err := json.Marshal(v.eq)
			if err != nil {
				return nil, err
			}
			v.json = b
			ds.versions[v.code] = v
			byModel[mi] = append(byModel[mi], v)
		}
	}

	seen := map[string]bool{}
	for _, d := range append(dealerSpecs[:len(dealerSpecs):len(dealerSpecs)], fleetSpecs(fleet)...) {
		dd, err := genDealer(seed, d, byModel, seen)
		if err != nil {
			return nil, err
		}
		ds.dealers[d.id] = dd
	}
	return ds, nil
}

func code3(s string) string {
	var b []byte
	for i := 0; i < len(s) && len(b) < 3; i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z':
			b = append(b, c-'a'+'A')
		case 'A' <= c && c <= 'Z' || '0' <= c && c <= '9':
			b = append(b, c)
		}
	}
	return string(b)
}

func catInitial(cat string) string { return strings.ToUpper(cat[:1]) }

func hexID(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return hex.EncodeToString(b)
}

func price(p int) *float64 {
	f := float64(p)
	return &f
}

// subset picks between lo and hi (inclusive) items of n, keeping their
// order.
func subset(r *rand.Rand, n, lo, hi int) []int {
	hi = min(hi, n)
	lo = min(lo, hi)
	k := lo + r.IntN(hi-lo+1)
	idx := r.Perm(n)[:k]
	sort.Ints(idx)
	return idx
}

func genVersion(r *rand.Rand, m *modelSpec, mi, ti int, trim string) *version {
	code := fmt.Sprintf("%s-%s-%02d%02d", code3(m.make), code3(m.model), mi, ti)
	dir := fmt.Sprintf("/mnt/techdata/jato/2024/%s/%s/%s", code3(m.make), strings.ToUpper(strings.ReplaceAll(m.model, " ", "_")), code)
	eq := upstream.Equipment{
		VersionCode:   code,
		Standard:      []upstream.EquipmentItem{},
		Optionals:     []upstream.EquipmentItem{},
		Packages:      []upstream.EquipmentPackage{},
		TechDataDir:   dir,
		LookupCascade: []string{"jato", "eurotax"},
	}
	ci := catInitial(m.catalog)
	std := standardPool[m.catalog]
	for _, i := range subset(r, len(std), 6, len(std)) {
		c := fmt.Sprintf("STD-%s%02d", ci, i+1)
		eq.Standard = append(eq.Standard, upstream.EquipmentItem{
			Code: c, Name: std[i].name, Category: std[i].category,
			SourceID: "jato:" + code + ":" + c, TechRef: fmt.Sprintf("%s/equipment/std/%s.xml", dir, c),
		})
	}
	opt := optionalPool[m.catalog]
	for _, i := range subset(r, len(opt), 4, len(opt)) {
		c := fmt.Sprintf("OPT-%s%02d", ci, i+1)
		eq.Optionals = append(eq.Optionals, upstream.EquipmentItem{
			Code: c, Name: opt[i].name, Category: opt[i].category, PriceEUR: price(opt[i].price + 10*r.IntN(6)),
			SourceID: "jato:" + code + ":" + c, TechRef: fmt.Sprintf("%s/equipment/opt/%s.xml", dir, c),
		})
	}
	pk := packagePool[m.catalog]
	for _, i := range subset(r, len(pk), 1, 3) {
		c := fmt.Sprintf("PKG-%s%02d", ci, i+1)
		var contents []string
		for _, j := range subset(r, len(eq.Optionals), 2, 3) {
			contents = append(contents, eq.Optionals[j].Name)
		}
		eq.Packages = append(eq.Packages, upstream.EquipmentPackage{
			Code: c, Name: pk[i], PriceEUR: price(400 + 50*r.IntN(30)), Contents: contents,
			SourceID: "eurotax:" + code + ":" + c,
		})
	}
	return &version{code: code, eq: eq, model: m, trim: trim}
}

func genDealer(seed uint64, d dealerSpec, byModel [][]*version, seen map[string]bool) (*dealerData, error) {
	r := stream(seed, uint64(d.id)<<16)
	prof := upstream.Dealer{
		ID: d.id, Name: d.name, BrandName: d.brand, City: d.city, Province: d.province, PrimaryDomain: d.domain,
		CRMSourceID:         fmt.Sprintf("crm-sf-%05d", d.id),
		BillingAccount:      fmt.Sprintf("IT-BILL-%d-%s", d.id, hexID(r, 3)),
		BrowserWidgetSecret: "browser_widget_sk_" + hexID(r, 16),
	}
	pb, err := json.Marshal(prof)
	if err != nil {
		return nil, err
	}
	dd := &dealerData{
		profile:   pb,
		vehicles:  map[string]*vehicleEntry{},
		bySvc:     map[string][]*vehicleEntry{},
		offerByID: map[int64]*offerEntry{},
	}
	for si, svc := range []string{"REWIND", "NOS"} {
		n := d.rewind
		if svc == "NOS" {
			n = d.nos
		}
		vr := stream(seed, uint64(d.id)<<16|uint64(si+1))
		list := make([]*vehicleEntry, 0, n)
		for i := 0; i < n; i++ {
			e, err := genVehicle(vr, d, svc, i, byModel, seen)
			if err != nil {
				return nil, err
			}
			dd.vehicles[e.v.IDAuto] = e
			list = append(list, e)
		}
		sort.Slice(list, func(a, b int) bool {
			va, vb := &list[a].v, &list[b].v
			if !va.UpdatedAt.Equal(vb.UpdatedAt) {
				return va.UpdatedAt.After(vb.UpdatedAt)
			}
			return va.IDAuto < vb.IDAuto
		})
		dd.bySvc[svc] = list
	}
	or := stream(seed, uint64(d.id)<<16|0xFF)
	for i := 0; i < d.nlt; i++ {
		e, err := genOffer(or, d, i)
		if err != nil {
			return nil, err
		}
		dd.offers = append(dd.offers, e)
		dd.offerByID[e.o.IDOfferta] = e
	}
	sort.Slice(dd.offers, func(a, b int) bool {
		oa, ob := &dd.offers[a].o, &dd.offers[b].o
		if !oa.UpdatedAt.Equal(ob.UpdatedAt) {
			return oa.UpdatedAt.After(ob.UpdatedAt)
		}
		return oa.IDOfferta < ob.IDOfferta
	})
	return dd, nil
}

// catalogFor spreads the catalog types over a service's vehicles with a
// fixed pattern, so every dealer has all three.
func catalogFor(svc string, i int) string {
	k := i % 20
	auto, vcom := 12, 17
	if svc == "NOS" {
		auto, vcom = 8, 14
	}
	switch {
	case k < auto:
		return "auto"
	case k < vcom:
		return "vcom"
	}
	return "vind"
}

func modelsOf(cat string, needFee bool) []int {
	var out []int
	for i := range models {
		if models[i].catalog == cat && (!needFee || models[i].fee > 0) {
			out = append(out, i)
		}
	}
	return out
}

func uuid4(r *rand.Rand) string {
	var b [16]byte
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func taxonomy(slug string) upfitSpec {
	for _, u := range upfitTaxonomy {
		if u.slug == slug {
			return u
		}
	}
	return upfitSpec{"UPF-ALT", "altro", "Altro", "Altro"}
}

var cascades = [][]string{{"jato", "eurotax", "manual"}, {"jato"}, {"eurotax", "manual"}, {"jato", "eurotax"}}

var highlightPool = []string{
	"Unico proprietario", "Tagliandi certificati", "Garanzia 12 mesi", "Pronta consegna",
	"Finanziamento personalizzato", "Permuta valutata sul posto", "IVA esposta", "Km certificati",
}

func genVehicle(r *rand.Rand, d dealerSpec, svc string, i int, byModel [][]*version, seen map[string]bool) (*vehicleEntry, error) {
	cat := catalogFor(svc, i)
	cands := modelsOf(cat, false)
	mi := cands[r.IntN(len(cands))]
	m := &models[mi]
	ti := r.IntN(len(m.trims))
	ver := byModel[mi][ti]
	id := uuid4(r)
	for seen[id] {
		id = uuid4(r)
	}
	seen[id] = true
	updated := baseTime.Add(-time.Duration(r.IntN(hoursBack)) * time.Hour)
	base := fmt.Sprintf("%s/dealers/%d/vehicles/%s", cdn, d.id, id)

	v := upstream.Vehicle{
		IDAuto: id, DealerID: d.id, Service: svc,
		Make: m.make, Model: m.model, Trim: m.trims[ti], CatalogType: cat, VersionCode: ver.code,
		CoverURL:  base + "/cover.jpg",
		UpdatedAt: updated,
	}

	// Upfits: every vind vehicle, most vcom vehicles; one primary.
	if cat == "vind" || cat == "vcom" && r.Float64() < 0.75 {
		k := 1
		switch f := r.Float64(); {
		case f < 0.1:
			k = 3
		case f < 0.4:
			k = 2
		}
		k = min(k, len(m.upfits))
		perm := r.Perm(len(m.upfits))[:k]
		primary := r.IntN(k)
		for j, pi := range perm {
			t := taxonomy(m.upfits[pi])
			u := upstream.Upfit{
				Code: t.code, Slug: t.slug, Label: t.label, Family: t.family, Primary: j == primary,
				SourceID:      fmt.Sprintf("tax:%s:%s", t.code, hexID(r, 4)),
				LookupCascade: []string{"catalog-taxonomy", "dealer-mapping"},
			}
			if t.slug == "altro" && r.Float64() < 0.8 {
				u.DealerAlias = altroAliases[r.IntN(len(altroAliases))]
			}
			v.Upfits = append(v.Upfits, u)
		}
	}

	if svc == "REWIND" || r.Float64() < 0.1 {
		steps := (m.price[1] - m.price[0]) / 100
		v.SalePrice = price(m.price[0] + 100*r.IntN(steps+1) - 10)
	}
	for j, n := 0, 3+r.IntN(6); j < n; j++ {
		v.MediaURLs = append(v.MediaURLs, fmt.Sprintf("%s/gallery/%02d.jpg", base, j+1))
	}
	v.HasPodcast = r.Float64() < 0.25
	v.HasVideo = r.Float64() < 0.3
	if v.HasVideo {
		v.MediaURLs = append(v.MediaURLs, base+"/video/preview.mp4")
	}
	name := m.make + " " + m.model + " " + m.trims[ti]
	if r.Float64() < 0.9 {
		var hl []string
		for _, j := range subset(r, len(highlightPool), 2, 4) {
			hl = append(hl, highlightPool[j])
		}
		v.AIContent = &upstream.AIContent{
			Headline:    fmt.Sprintf("%s, disponibile da %s a %s", name, d.brand, d.city),
			Description: fmt.Sprintf("%s in ottime condizioni, con controlli tecnici superati presso %s. Vieni a trovarci a %s per vederla dal vivo.", name, d.brand, d.city),
			Highlights:  hl,

			RenderTemplate: "tpl-vehicle-card-v3",
			SEOPayload: map[string]any{
				"canonical": fmt.Sprintf("https://%s/veicoli/%s", d.domain, id),
				"robots":    "index,follow",
			},
			PromptID: "prm-vehicle-it-" + hexID(r, 3),
		}
	}
	if r.Float64() >= 0.35 {
		// Never the whole catalogue: the edge must not be able to pass
		// the raw catalogue off as the confirmed list unnoticed.
		for _, j := range subset(r, len(ver.eq.Optionals), 1, min(4, len(ver.eq.Optionals)-1)) {
			v.ConfirmedOptionals = append(v.ConfirmedOptionals, ver.eq.Optionals[j].Code)
		}
	}
	if r.Float64() >= 0.5 {
		for _, j := range subset(r, len(ver.eq.Packages), 1, 2) {
			v.ConfirmedPackages = append(v.ConfirmedPackages, ver.eq.Packages[j].Code)
		}
	}

	// Internal noise.
	v.SourceIDs = map[string]string{
		"dms":  fmt.Sprintf("DMS-%d-%06d", d.id, r.IntN(1000000)),
		"feed": "autoscout24:" + hexID(r, 6),
	}
	v.LookupCascade = cascades[r.IntN(len(cascades))]
	v.TechDataDir = ver.eq.TechDataDir
	v.RenderPayload = map[string]any{"layout": "card-v2", "render_job": "rj-" + hexID(r, 5), "hero_crop": []int{0, 120, 1600, 900}}
	v.SEOPayload = map[string]any{"title": name + " | " + d.brand, "json_ld": map[string]any{"@type": "Car", "brand": m.make, "model": m.model}}
	v.RawVersionOptionals = ver.eq.Optionals

	var media upstream.Media
	if v.HasPodcast {
		media.Podcast = &upstream.Podcast{
			EpisodeID:       "ep-" + id[:8],
			Title:           "In prova: " + name,
			AudioURL:        fmt.Sprintf("%s/dealers/%d/podcasts/%s.mp3", cdn, d.id, id),
			DurationSeconds: 90 + r.IntN(330),
			Transcript:      fmt.Sprintf("Benvenuti nel podcast di %s. Oggi parliamo di %s: motore, dotazioni e costi di gestione.", d.brand, name),
			PublishedAt:     updated.Add(-time.Duration(r.IntN(72)) * time.Hour),
			TTSVoiceID:      "tts-voice-it-giulia-v2",
			RenderJobID:     "render_job:pod:" + hexID(r, 5),
			SourceID:        "media-gen:" + hexID(r, 4),
		}
	}
	if v.HasVideo {
		media.Video = &upstream.Video{
			VideoID:         "vid-" + id[:8],
			Title:           name + " - video presentazione",
			VideoURL:        base + "/video/full.mp4",
			ThumbnailURL:    base + "/video/thumb.jpg",
			DurationSeconds: 30 + r.IntN(150),
			PublishedAt:     updated.Add(-time.Duration(r.IntN(72)) * time.Hour),
			RenderJobID:     "render_job:vid:" + hexID(r, 5),
			RenderPayload:   map[string]any{"template": "walkaround-v1", "music": "upbeat-02"},
			SourceID:        "media-gen:" + hexID(r, 4),
		}
	}

	e := &vehicleEntry{v: v, makeL: strings.ToLower(v.Make), modelL: strings.ToLower(v.Model), trimL: strings.ToLower(v.Trim)}
	var err error
	if e.json, err = json.Marshal(v); err != nil {
		return nil, err
	}
	if e.summary, err = json.Marshal(upstream.VehicleSummary(v)); err != nil {
		return nil, err
	}
	if e.media, err = json.Marshal(media); err != nil {
		return nil, err
	}
	return e, nil
}

var (
	quoteMonths = []int{24, 36, 48, 60}
	quoteKm     = []int{10000, 15000, 20000, 25000, 30000}
)

func genOffer(r *rand.Rand, d dealerSpec, i int) (*offerEntry, error) {
	cands := append(modelsOf("auto", true), modelsOf("vcom", true)...)
	m := &models[cands[r.IntN(len(cands))]]
	trim := m.trims[r.IntN(len(m.trims))]
	id := d.id*1000 + int64(i) + 1 // below 1e6: friendly to float64 JSON readers
	o := upstream.Offer{
		IDOfferta: id, DealerID: d.id,
		Slug: slugify(m.make+" "+m.model+" "+trim) + fmt.Sprintf("-%d", id),
		Make: m.make, Model: m.model, Version: trim,
		CoverURL:  fmt.Sprintf("%s/dealers/%d/offers/%d/cover.jpg", cdn, d.id, id),
		UpdatedAt: baseTime.Add(-time.Duration(r.IntN(hoursBack)) * time.Hour),
	}
	discount := 0.9 + 0.2*r.Float64()
	for _, mi := range subset(r, len(quoteMonths), 2, 3) {
		for _, ki := range subset(r, len(quoteKm), 2, 3) {
			months, km := quoteMonths[mi], quoteKm[ki]
			fee := float64(m.fee) * discount * (1 + float64(36-months)*0.008) * (1 + float64(km-15000)/100000)
			fee = math.Floor(fee) + 0.9
			o.Quotations = append(o.Quotations, upstream.Quotation{
				Months: months, KmPerYear: km, MonthlyFee: fee,
				InternalCost: math.Round(fee*78) / 100,
				SourceRateID: fmt.Sprintf("ald:RT-%d-%d-%s", months, km, hexID(r, 3)),
			})
		}
	}
	o.SourceIDs = map[string]string{"leasing_partner": "ALD-" + hexID(r, 4), "crm": fmt.Sprintf("crm-offer-%d", id)}
	o.LookupCascade = cascades[r.IntN(len(cascades))]
	o.RenderPayload = map[string]any{"layout": "offer-hero-v1", "render_job": "rj-" + hexID(r, 5)}
	e := &offerEntry{o: o, makeL: strings.ToLower(o.Make), modelL: strings.ToLower(o.Model), versionL: strings.ToLower(o.Version)}
	var err error
	if e.json, err = json.Marshal(o); err != nil {
		return nil, err
	}
	return e, nil
}

// slugify lower-cases s and joins its ASCII letter/digit groups with
// single hyphens.
func slugify(s string) string {
	var b strings.Builder
	pending := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
			fallthrough
		case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
			if pending && b.Len() > 0 {
				b.WriteByte('-')
			}
			pending = false
			b.WriteByte(c)
		default:
			pending = true
		}
	}
	return b.String()
}

// matchWords reports whether every whitespace-separated word of q (already
// lower-case) is a substring of one of the fields.
func matchWords(words []string, fields ...string) bool {
	for _, w := range words {
		ok := false
		for _, f := range fields {
			if strings.Contains(f, w) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
