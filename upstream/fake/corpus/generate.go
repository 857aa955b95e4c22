package corpus

import (
	"cmp"
	"fmt"
	"html"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// Fixed seed and date range: the corpus is the same on every run.
const (
	seedHi uint64 = 0xdea1e7ed9e
	seedLo uint64 = 0x2025c0de
)

var (
	firstUpdate = time.Date(2025, 1, 7, 8, 0, 0, 0, time.UTC)
	lastUpdate  = time.Date(2026, 4, 30, 18, 0, 0, 0, time.UTC)
)

// typePath is the path segment of each content type on a dealer site.
var typePath = map[string]string{
	upstream.ContentFAQ:      "faq",
	upstream.ContentNews:     "news",
	upstream.ContentGlossary: "glossario",
	upstream.ContentGuides:   "guide",
	upstream.ContentVideos:   "video",
	upstream.ContentPodcasts: "podcast",
}

// plan is how much material each dealer gets.
type plan struct {
	faqOverrides, faqHiddenGlobal, faqOwn, faqOwnHidden     int
	newsRewrites, newsCustom, newsCustomHidden, newsArchive int
	glossaryHidden, glossaryOwn                             int
	guidesHidden, guidesOwn                                 int
	videos, videosHidden                                    int
	podcasts, podcastsHidden                                int
}

var plans = map[int64]plan{
	101: {8, 3, 16, 2, 16, 34, 2, 6, 4, 2, 3, 4, 44, 1, 42, 1},
	102: {5, 4, 6, 1, 10, 10, 1, 2, 6, 1, 4, 2, 15, 1, 14, 1},
	103: {4, 3, 6, 1, 9, 10, 1, 2, 5, 1, 3, 2, 15, 1, 14, 1},
}

type rec = upstream.ContentRecord

type builder struct {
	rng    *rand.Rand
	nextID int64
	all    []*rec
	global map[string][]*rec
	own    map[int64]map[string][]*rec
	hidden map[int64]map[int64]bool // dealer -> global record id -> hidden
	slugs  map[string]map[string]bool
}

func build() *store {
	b := &builder{
		rng:    rand.New(rand.NewPCG(seedHi, seedLo)),
		nextID: 10400,
		global: map[string][]*rec{},
		own:    map[int64]map[string][]*rec{},
		hidden: map[int64]map[int64]bool{},
		slugs:  map[string]map[string]bool{},
	}
	for _, d := range dealers {
		b.own[d.id] = map[string][]*rec{}
		b.hidden[d.id] = map[int64]bool{}
	}
	for _, t := range upstream.ContentTypes {
		b.slugs[t] = map[string]bool{}
	}
	b.genFAQ()
	b.genNews()
	b.genGlossary()
	b.genGuides()
	b.genVideos()
	b.genPodcasts()
	b.assignTimes()
	return b.finish()
}

// ---------------------------------------------------------------- helpers

// vars expands the {placeholders} of the text fragments.
type vars struct {
	d     *dealerInfo
	m     *vehicleModel
	short string
	year  string
}

func (v vars) expand(s string) string {
	var pairs []string
	if v.d != nil {
		pairs = append(pairs, "{brand}", v.d.brand, "{city}", v.d.city, "{address}", v.d.address)
	}
	if v.m != nil {
		la, La, della, sulla := "la ", "La ", "della ", "sulla "
		if v.m.commercial {
			la, La, della, sulla = "il ", "Il ", "del ", "sul "
		}
		if strings.ContainsRune("AEIOU", rune(v.m.make[0])) {
			la, La, della, sulla = "l'", "L'", "dell'", "sull'"
		}
		pairs = append(pairs, "{make}", v.m.make, "{model}", v.m.name, "{fuel}", v.m.fuel, "{body}", v.m.body,
			"{la} ", la, "{La} ", La, "{della} ", della, "{sulla} ", sulla)
	}
	if v.short != "" {
		pairs = append(pairs, "{short}", v.short)
	}
	if v.year != "" {
		pairs = append(pairs, "{year}", v.year)
	}
	out := strings.NewReplacer(pairs...).Replace(s)
	if strings.Contains(out, "{") {
		panic("corpus: unexpanded placeholder in " + strconv.Quote(out))
	}
	return out
}

func (b *builder) pick(s []string) string { return s[b.rng.IntN(len(s))] }

// pickN returns n distinct elements of s in random order.
func (b *builder) pickN(s []string, n int) []string {
	out := make([]string, 0, n)
	for _, i := range b.rng.Perm(len(s))[:n] {
		out = append(out, s[i])
	}
	return out
}

// pickModel picks a vehicle model that fits filter ("", "car", "comm", "elec").
func (b *builder) pickModel(filter string) *vehicleModel {
	for {
		m := &vehicleModels[b.rng.IntN(len(vehicleModels))]
		switch filter {
		case "car":
			if m.commercial {
				continue
			}
		case "comm":
			if !m.commercial {
				continue
			}
		case "elec":
			if !strings.Contains(m.fuel, "elettric") && !strings.Contains(m.fuel, "plug-in") {
				continue
			}
		}
		return m
	}
}

var slugFold = strings.NewReplacer("à", "a", "á", "a", "è", "e", "é", "e", "ì", "i", "í", "i", "ò", "o", "ó", "o", "ù", "u", "ú", "u")

// slugify turns a title into lowercase ascii letters and digits separated by
// single hyphens, at most 90 characters, cut at a hyphen.
func slugify(s string) string {
	s = slugFold.Replace(strings.ToLower(s))
	var sb strings.Builder
	hyphen := false
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if hyphen && sb.Len() > 0 {
				sb.WriteByte('-')
			}
			hyphen = false
			sb.WriteRune(r)
		} else {
			hyphen = true
		}
	}
	out := sb.String()
	for len(out) > 90 {
		out = out[:strings.LastIndexByte(out[:90], '-')]
	}
	return out
}

// newRecord creates a record with a fresh id and a slug unique within its
// type across every dealer view.
func (b *builder) newRecord(typ string, d *dealerInfo, slugSource string) *rec {
	b.nextID += 1 + int64(b.rng.IntN(4))
	r := &rec{ID: b.nextID, Type: typ}
	slug := slugify(slugSource)
	if d != nil {
		r.DealerID = d.id
		if ds := slugify(d.brand); !strings.Contains(slug, ds) {
			slug += "-" + ds
		}
	}
	base := slug
	for n := 2; b.slugs[typ][slug]; n++ {
		slug = base + "-" + strconv.Itoa(n)
	}
	b.slugs[typ][slug] = true
	r.Slug = slug
	b.add(r, d)
	return r
}

func (b *builder) add(r *rec, d *dealerInfo) {
	b.all = append(b.all, r)
	if d == nil {
		b.global[r.Type] = append(b.global[r.Type], r)
	} else {
		b.own[d.id][r.Type] = append(b.own[d.id][r.Type], r)
	}
}

// setText fills the editorial text fields and the rendered HTML.
func (b *builder) setText(r *rec, title, h1, excerpt string, paras []string) {
	r.Title = title
	r.H1 = h1
	r.Excerpt = excerpt
	r.MetaDescription = truncate(excerpt, 155)
	r.BodyText = strings.Join(paras, "\n\n")
	var sb strings.Builder
	fmt.Fprintf(&sb, `<article class="content content-%s" data-id="%d"><h1>%s</h1>`, r.Type, r.ID, html.EscapeString(h1))
	for _, p := range paras {
		sb.WriteString("<p>" + html.EscapeString(p) + "</p>")
	}
	sb.WriteString(`<aside class="cta" data-track="content-cta">Contattaci</aside></article>`)
	r.BodyHTML = upstream.Markup(sb.String())
	r.RenderPayload = map[string]any{
		"layout":      []string{"editorial-v3", "editorial-v4", "compact-v2"}[b.rng.IntN(3)],
		"hero_image":  fmt.Sprintf("https://img.dealeredge-cdn.it/content/%d/hero.jpg", r.ID),
		"blocks":      []any{"heading", "body", "related", "cta"},
		"ab_variant":  string(rune('A' + b.rng.IntN(3))),
		"cache_ttl_s": 300 * (1 + b.rng.IntN(4)),
		"renderer":    "tpl-engine 2.4." + strconv.Itoa(b.rng.IntN(9)),
	}
}

// firstSentence returns the first sentence of s, or s cut at a word.
// A sentence shorter than 40 bytes ("Sì.") is joined to the next one.
func firstSentence(s string) string {
	if i := strings.Index(s[min(40, len(s)):], ". "); i >= 0 && 40+i < 240 {
		return s[:40+i+1]
	}
	return truncate(s, 200)
}

// lowerFirst lowercases the first letter of s.
func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[n:]
}

// truncate cuts s to at most n bytes at a word boundary, adding "...".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndexByte(s[:n-3], ' ')
	if cut <= 0 {
		cut = n - 3
	}
	return strings.TrimRight(s[:cut], " ,;:") + "..."
}

// ensureLength appends filler paragraphs until the body reaches 600 bytes.
func (b *builder) ensureLength(paras []string, filler []string) []string {
	for i := 0; len(strings.Join(paras, "\n\n")) < 650 && i < len(filler); i++ {
		if !slices.Contains(paras, filler[i]) {
			paras = append(paras, filler[i])
		}
	}
	return paras
}

// ---------------------------------------------------------------- FAQ

var faqOverrideIntros = []string{
	"Da {brand} a {city} seguiamo questa regola con qualche attenzione in più per i nostri clienti.",
	"È una delle domande che riceviamo più spesso in {address}: ecco come funziona da {brand}.",
	"La risposta di {brand}, aggiornata con le condizioni applicate nella nostra sede di {city}.",
}

var faqOverrideExtras = []string{
	"Da {brand} la prima consulenza è sempre gratuita e senza impegno: puoi prenotarla online o chiamare la sede di {city}.",
	"Per i clienti di {brand} è disponibile un consulente dedicato, che segue la pratica dall'inizio alla fine e risponde anche via WhatsApp.",
	"{brand} invia un riepilogo scritto di ogni accordo, così hai sempre sotto mano condizioni, scadenze e contatti.",
}

func (b *builder) genFAQ() {
	var globals []*rec
	for _, s := range globalFAQ {
		r := b.newRecord(upstream.ContentFAQ, nil, s.question)
		r.Category = s.category
		paras := []string{s.answer, b.pick(faqCategoryParagraphs[s.category]), b.pick(faqClosings)}
		paras = b.ensureLength(paras, faqCategoryParagraphs[s.category])
		b.setText(r, s.question, s.question, firstSentence(s.answer), paras)
		r.TemplateID = "tpl_faq_accordion_v3"
		r.SourceID = fmt.Sprintf("cms:faq:global:%05d", r.ID)
		globals = append(globals, r)
	}
	for i := range dealers {
		d := &dealers[i]
		p := plans[d.id]
		v := vars{d: d}
		perm := b.rng.Perm(len(globals))
		for _, gi := range perm[:p.faqOverrides] {
			g := globals[gi]
			s := globalFAQ[gi]
			b.nextID += 1 + int64(b.rng.IntN(4))
			o := &rec{ID: b.nextID, Type: upstream.ContentFAQ, DealerID: d.id, Slug: g.Slug, OverrideOf: g.ID, Category: g.Category}
			paras := []string{v.expand(b.pick(faqOverrideIntros)), s.answer, v.expand(b.pick(faqOverrideExtras)), v.expand(b.pick(dealerFAQParagraphs))}
			b.setText(o, s.question, s.question+" La risposta di "+d.brand, v.expand("Risponde {brand}: ")+lowerFirst(firstSentence(s.answer)), paras)
			o.TemplateID = "tpl_faq_override_v2"
			o.SourceID = fmt.Sprintf("cms:faq:%d:override:%05d", d.id, g.ID)
			b.add(o, d)
		}
		for _, gi := range perm[p.faqOverrides : p.faqOverrides+p.faqHiddenGlobal] {
			b.hidden[d.id][globals[gi].ID] = true
		}
		own := b.rng.Perm(len(dealerFAQ))[:p.faqOwn]
		for k, si := range own {
			s := dealerFAQ[si]
			q := v.expand(s.question)
			r := b.newRecord(upstream.ContentFAQ, d, q)
			r.Category = s.category
			answer := v.expand(s.answer)
			paras := []string{answer}
			paras = append(paras, b.pickN(dealerFAQParagraphs, 2)...)
			for j := range paras[1:] {
				paras[1+j] = v.expand(paras[1+j])
			}
			paras = b.ensureLength(paras, expandAll(v, dealerFAQParagraphs))
			b.setText(r, q, q, firstSentence(answer), paras)
			r.HiddenForDealer = k >= p.faqOwn-p.faqOwnHidden
			r.TemplateID = "tpl_faq_accordion_v3"
			r.SourceID = fmt.Sprintf("cms:faq:%d:%05d", d.id, r.ID)
		}
	}
}

func expandAll(v vars, s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = v.expand(x)
	}
	return out
}

// ---------------------------------------------------------------- news

var rewriteClosings = []string{
	"Per informazioni, preventivi e prove su strada i consulenti di {brand} sono a disposizione nello showroom di {address}, a {city}, dal lunedì al sabato.",
	"Da {brand} è già possibile richiedere un preventivo personalizzato, con valutazione dell'usato in permuta e simulazione di finanziamento o noleggio a lungo termine.",
	"{brand} organizzerà nelle prossime settimane giornate di prova dedicate: le date saranno pubblicate nelle news e comunicate agli iscritti alla newsletter.",
}

var archiveParagraphs = []string{
	"Questo articolo fa parte dell'archivio delle news di {brand} ed è stato importato dal sito precedente: prezzi, orari e condizioni citati potrebbero non essere più validi.",
	"All'iniziativa hanno partecipato numerosi clienti di {city} e provincia, con prove su strada, valutazioni dell'usato e preventivi dedicati.",
	"Per le offerte e gli eventi in corso consulta la sezione news aggiornata o contatta direttamente lo showroom di {address}.",
	"L'edizione è conservata per memoria storica e non viene più aggiornata dalla redazione di {brand}.",
}

var customNewsClosings = []string{
	"Per informazioni e prenotazioni contatta {brand}: lo showroom di {address} a {city} è aperto dal lunedì al sabato.",
	"Tutti i dettagli sono disponibili presso i consulenti di {brand}, in sede o telefonicamente.",
}

func (b *builder) genNews() {
	var wire []*rec
	for i, s := range wireStories {
		m := findModel(s.brand, s.model)
		v := vars{m: m}
		r := b.newRecord(upstream.ContentNews, nil, s.title)
		r.Brand = s.brand
		r.SourceProvider = ProviderGlobalWire
		paras := []string{s.lead}
		paras = append(paras, expandAll(v, b.pickN(wireParagraphs, 3))...)
		b.setText(r, s.title, s.title, s.lead, paras)
		r.TemplateID = "tpl_news_wire_v1"
		r.SourceID = fmt.Sprintf("wire:motorpress:2025-%04d", 1200+i*7)
		wire = append(wire, r)
	}
	for i := range dealers {
		d := &dealers[i]
		p := plans[d.id]
		// Configured rewrites of global news.
		for _, wi := range b.rng.Perm(len(wireStories))[:p.newsRewrites] {
			s := wireStories[wi]
			v := vars{d: d, m: findModel(s.brand, s.model), short: s.short}
			title := v.expand(b.pick(rewriteTitles))
			r := b.newRecord(upstream.ContentNews, d, title)
			r.Brand = s.brand
			r.SourceProvider = ProviderDealerEditorial
			lead := s.lead + v.expand(" Da oggi si può vedere e provare da {brand}, a {city}.")
			paras := []string{lead}
			paras = append(paras, expandAll(v, b.pickN(wireParagraphs, 2))...)
			paras = append(paras, v.expand(b.pick(rewriteClosings)))
			b.setText(r, title, title, truncate(lead, 220), paras)
			r.TemplateID = "tpl_news_rewrite_v2"
			r.SourceID = fmt.Sprintf("rewrite:%d:%s", d.id, wire[wi].SourceID)
		}
		// Custom news.
		seen := map[string]bool{}
		hidden := map[int]bool{}
		for _, k := range b.rng.Perm(p.newsCustom)[:p.newsCustomHidden] {
			hidden[k] = true
		}
		for k := 0; k < p.newsCustom; {
			s := customNewsSeeds[b.rng.IntN(len(customNewsSeeds))]
			v := vars{d: d, m: b.pickModel(s.filter)}
			title := v.expand(s.title)
			if seen[title] {
				continue
			}
			seen[title] = true
			r := b.newRecord(upstream.ContentNews, d, title)
			r.Category = s.category
			r.SourceProvider = ProviderDealerEditorial
			lead := v.expand(s.lead)
			paras := []string{lead}
			paras = append(paras, expandAll(v, b.pickN(customNewsParagraphs[s.category], 2))...)
			paras = append(paras, v.expand(b.pick(customNewsClosings)))
			paras = b.ensureLength(paras, expandAll(v, customNewsParagraphs[s.category]))
			h1 := title
			if b.rng.IntN(3) == 0 {
				h1 = v.expand("{brand} | ") + title
			}
			b.setText(r, title, h1, lead, paras)
			r.HiddenForDealer = hidden[k]
			r.TemplateID = "tpl_news_dealer_v4"
			r.SourceID = fmt.Sprintf("cms:news:%d:%05d", d.id, r.ID)
			k++
		}
		// Archived editions: readable by slug only.
		for k, ti := range b.rng.Perm(len(historicalTitles))[:p.newsArchive] {
			v := vars{d: d, year: strconv.Itoa(2023 + k%2)}
			title := v.expand(historicalTitles[ti])
			r := b.newRecord(upstream.ContentNews, d, title)
			r.SourceProvider = ProviderHistoricalImport
			subject := strings.TrimPrefix(title, v.expand("Archivio {year}: "))
			lead := v.expand("Dall'archivio {year} delle news di {brand}: «") + subject + "»."
			paras := append([]string{lead}, expandAll(v, b.pickN(archiveParagraphs, len(archiveParagraphs)))...)
			b.setText(r, title, title, lead, paras)
			r.TemplateID = "tpl_news_archive_v1"
			r.SourceID = fmt.Sprintf("legacy-cms:%d:news:%d", d.id, 880+k*13)
		}
	}
}

func findModel(make, name string) *vehicleModel {
	for i := range vehicleModels {
		if vehicleModels[i].make == make && vehicleModels[i].name == name {
			return &vehicleModels[i]
		}
	}
	panic("corpus: unknown model " + make + " " + name)
}

// ---------------------------------------------------------------- glossary

var glossaryDealerTerms = []termSeed{
	{"finanza", "Garanzia {brand} Plus", "La Garanzia {brand} Plus è l'estensione di garanzia proposta da {brand} sulle auto usate: porta la copertura fino a trentasei mesi e include l'assistenza stradale in tutta Europa."},
	{"tecnica", "Check-up {brand} 360", "Il Check-up {brand} 360 è il controllo gratuito di quaranta punti che l'officina di {brand} a {city} esegue prima dei viaggi o del cambio di stagione: pneumatici, freni, luci, livelli e batteria."},
}

var glossaryH1 = []string{"%s: cos'è e come funziona", "Che cosa significa %s", "%s, la definizione"}

func (b *builder) genGlossary() {
	var globals []*rec
	for _, t := range glossaryTerms {
		r := b.newRecord(upstream.ContentGlossary, nil, t.term)
		r.Category = t.category
		v := vars{m: b.pickModel("")}
		var related []string
		for _, o := range glossaryTerms {
			if o.category == t.category && o.term != t.term {
				related = append(related, o.term)
			}
		}
		related = b.pickN(related, 3)
		paras := []string{t.def, b.pick(glossaryCategoryParagraphs[t.category]), v.expand(b.pick(glossaryExamples)),
			"Vedi anche: " + related[0] + ", " + related[1] + " e " + related[2] + "."}
		paras = b.ensureLength(paras, glossaryCategoryParagraphs[t.category])
		b.setText(r, t.term, fmt.Sprintf(b.pick(glossaryH1), t.term), firstSentence(t.def), paras)
		r.TemplateID = "tpl_glossary_term_v2"
		r.SourceID = fmt.Sprintf("cms:glossary:global:%05d", r.ID)
		globals = append(globals, r)
	}
	for i := range dealers {
		d := &dealers[i]
		p := plans[d.id]
		for _, gi := range b.rng.Perm(len(globals))[:p.glossaryHidden] {
			b.hidden[d.id][globals[gi].ID] = true
		}
		for _, t := range glossaryDealerTerms[:p.glossaryOwn] {
			v := vars{d: d, m: b.pickModel("car")}
			term := v.expand(t.term)
			r := b.newRecord(upstream.ContentGlossary, d, term)
			r.Category = t.category
			def := v.expand(t.def)
			paras := []string{def, b.pick(glossaryCategoryParagraphs[t.category]), v.expand(b.pick(glossaryExamples)), v.expand(b.pick(dealerFAQParagraphs))}
			b.setText(r, term, fmt.Sprintf(glossaryH1[0], term), firstSentence(def), paras)
			r.TemplateID = "tpl_glossary_term_v2"
			r.SourceID = fmt.Sprintf("cms:glossary:%d:%05d", d.id, r.ID)
		}
	}
}

// ---------------------------------------------------------------- guides

var guideConclusions = []string{
	"In sintesi: informarsi prima, confrontare le offerte sul costo complessivo e provare il veicolo su strada sono i tre passi che evitano la maggior parte degli errori.",
	"Per qualsiasi dubbio conviene chiedere il parere di un consulente e farsi consegnare tutto per iscritto: preventivi, condizioni contrattuali e tempi di consegna.",
	"Le indicazioni di questa guida valgono in generale; condizioni commerciali e norme possono cambiare, quindi è sempre bene verificarle al momento della scelta.",
}

const guideModelParagraph = "{La} {make} {model} è {body} con motorizzazione {fuel}. Sul mercato dell'usato si trovano esemplari di diverse annate e allestimenti: conviene privilegiare quelli con tagliandi documentati e verificare che gli aggiornamenti software e gli eventuali richiami siano stati eseguiti."

func (b *builder) genGuide(d *dealerInfo, topic, title, lead string, extra []string) *rec {
	r := b.newRecord(upstream.ContentGuides, d, title)
	r.Topic = topic
	paras := []string{lead}
	paras = append(paras, extra...)
	paras = append(paras, guideTopicParagraphs[topic]...)
	paras = append(paras, b.pick(guideConclusions))
	h1 := title
	if b.rng.IntN(2) == 0 {
		h1 = "Guida pratica: " + title
	}
	b.setText(r, title, h1, lead, paras)
	r.TemplateID = "tpl_guide_longform_v5"
	return r
}

func (b *builder) genGuides() {
	var globals []*rec
	for _, s := range guideSeeds {
		r := b.genGuide(nil, s.topic, s.title, s.lead, nil)
		r.SourceID = fmt.Sprintf("cms:guides:global:%05d", r.ID)
		globals = append(globals, r)
	}
	used := map[*vehicleModel]bool{}
	for len(used) < 8 {
		m := b.pickModel("car")
		if used[m] {
			continue
		}
		used[m] = true
		v := vars{m: m}
		title := v.expand(b.pick(guideModelTitles))
		lead := v.expand("Tutto quello che serve sapere su {make} {model}: versioni, motori, punti di forza e controlli da fare prima di sceglierla.")
		r := b.genGuide(nil, "acquisto", title, lead, []string{v.expand(guideModelParagraph)})
		r.SourceID = fmt.Sprintf("cms:guides:global:%05d", r.ID)
		globals = append(globals, r)
	}
	for i := range dealers {
		d := &dealers[i]
		p := plans[d.id]
		for _, gi := range b.rng.Perm(len(globals))[:p.guidesHidden] {
			b.hidden[d.id][globals[gi].ID] = true
		}
		v := vars{d: d}
		for _, si := range b.rng.Perm(len(guideDealerSeeds))[:p.guidesOwn] {
			s := guideDealerSeeds[si]
			r := b.genGuide(d, s.topic, v.expand(s.title), v.expand(s.lead), []string{v.expand(b.pick(dealerFAQParagraphs))})
			r.SourceID = fmt.Sprintf("cms:guides:%d:%05d", d.id, r.ID)
		}
	}
}

// ---------------------------------------------------------------- media

func (b *builder) genVideos() {
	for _, s := range globalVideoSeeds {
		v := vars{m: b.pickModel("")}
		r := b.newRecord(upstream.ContentVideos, nil, s.title)
		paras := append([]string{s.lead}, expandAll(v, b.pickN(globalMediaParagraphs, len(globalMediaParagraphs)))...)
		b.setText(r, s.title, s.title, s.lead, paras)
		b.videoFields(r)
		r.SourceID = fmt.Sprintf("media:video:global:%05d", r.ID)
	}
	for i := range dealers {
		d := &dealers[i]
		p := plans[d.id]
		b.ownMedia(d, upstream.ContentVideos, p.videos, p.videosHidden, videoTitles, func(r *rec, v vars) {
			lead := v.expand("{make} {model} {fuel} nel video di {brand}: esterni, interni, tecnologia e prova su strada.")
			b.setText(r, r.Title, r.Title, lead, append([]string{lead}, expandAll(v, videoParagraphs)...))
			b.videoFields(r)
			r.SourceID = fmt.Sprintf("media:video:%d:%05d", d.id, r.ID)
		})
	}
}

func (b *builder) videoFields(r *rec) {
	r.MediaURL = fmt.Sprintf("https://media.dealeredge-cdn.it/v/%d/%s.mp4", r.ID, r.Slug)
	r.ThumbnailURL = fmt.Sprintf("https://media.dealeredge-cdn.it/v/%d/poster.jpg", r.ID)
	r.DurationSeconds = 60 + b.rng.IntN(360)
	r.TemplateID = "tpl_video_vehicle_v3"
}

// ownMedia generates n dealer videos or podcasts about distinct
// (template, model) pairs, the last ones hidden.
func (b *builder) ownMedia(d *dealerInfo, typ string, n, nHidden int, titles []string, fill func(*rec, vars)) {
	seen := map[string]bool{}
	hidden := map[int]bool{}
	for _, k := range b.rng.Perm(n)[:nHidden] {
		hidden[k] = true
	}
	for k := 0; k < n; {
		v := vars{d: d, m: b.pickModel("")}
		title := v.expand(b.pick(titles))
		if seen[title] {
			continue
		}
		seen[title] = true
		r := b.newRecord(typ, d, title)
		r.Title = title
		fill(r, v)
		r.HiddenForDealer = hidden[k]
		k++
	}
}

func (b *builder) genPodcasts() {
	for _, s := range globalPodcastSeeds {
		v := vars{m: b.pickModel("")}
		r := b.newRecord(upstream.ContentPodcasts, nil, s.title)
		extra := expandAll(v, b.pickN(globalMediaParagraphs, len(globalMediaParagraphs)))
		b.setText(r, s.title, s.title, s.lead, append([]string{s.lead}, extra...))
		lines := []string{
			"Conduttore: Benvenuti, il tema di oggi è " + strings.ToLower(s.title[:1]) + s.title[1:] + ".",
			"Esperto: " + s.lead,
			"Conduttore: Entriamo nel dettaglio.",
		}
		for _, x := range extra {
			lines = append(lines, "Esperto: "+x)
		}
		lines = append(lines, "Conduttore: Grazie per l'ascolto, alla prossima puntata.")
		r.Transcript = strings.Join(lines, "\n")
		b.podcastFields(r)
		r.SourceID = fmt.Sprintf("media:podcast:global:%05d", r.ID)
	}
	for i := range dealers {
		d := &dealers[i]
		p := plans[d.id]
		b.ownMedia(d, upstream.ContentPodcasts, p.podcasts, p.podcastsHidden, podcastTitles, func(r *rec, v vars) {
			paras := expandAll(v, podcastParagraphs)
			b.setText(r, r.Title, r.Title, paras[0], paras)
			r.Transcript = strings.Join(expandAll(v, podcastTranscriptLines), "\n")
			b.podcastFields(r)
			r.SourceID = fmt.Sprintf("media:podcast:%d:%05d", d.id, r.ID)
		})
	}
}

func (b *builder) podcastFields(r *rec) {
	r.MediaURL = fmt.Sprintf("https://media.dealeredge-cdn.it/p/%d/episode.mp3", r.ID)
	r.DurationSeconds = 480 + b.rng.IntN(1320)
	r.TemplateID = "tpl_podcast_episode_v2"
}

// ---------------------------------------------------------------- finish

// assignTimes gives every record a distinct update time between
// firstUpdate and lastUpdate, in an order unrelated to creation.
func (b *builder) assignTimes() {
	n := len(b.all)
	stride := lastUpdate.Sub(firstUpdate) / time.Duration(n)
	for i, slot := range b.rng.Perm(n) {
		jitter := time.Duration(b.rng.Int64N(int64(stride / 2))).Truncate(time.Second)
		b.all[i].UpdatedAt = firstUpdate.Add(time.Duration(slot)*stride + jitter).Truncate(time.Second)
	}
}

var schemaType = map[string]string{
	upstream.ContentFAQ:      "FAQPage",
	upstream.ContentNews:     "NewsArticle",
	upstream.ContentGlossary: "DefinedTerm",
	upstream.ContentGuides:   "HowTo",
	upstream.ContentVideos:   "VideoObject",
	upstream.ContentPodcasts: "PodcastEpisode",
}

// localize makes a record of a dealer's view: URL and SEO payload on the
// dealer's domain, hidden flag of global records as the dealer set it.
func (b *builder) localize(r *rec, d *dealerInfo) {
	if r.DealerID == 0 {
		r.HiddenForDealer = b.hidden[d.id][r.ID]
	}
	r.URL = "https://" + d.domain + "/" + typePath[r.Type] + "/" + r.Slug
	robots := "index,follow"
	if r.HiddenForDealer {
		robots = "noindex,nofollow"
	} else if r.Type == upstream.ContentNews && r.SourceProvider != ProviderDealerEditorial {
		robots = "noindex,follow"
	}
	ld := map[string]any{
		"@context":     "https://schema.org",
		"@type":        schemaType[r.Type],
		"headline":     r.Title,
		"inLanguage":   "it-IT",
		"dateModified": r.UpdatedAt.Format(time.RFC3339),
		"publisher":    map[string]any{"@type": "AutoDealer", "name": d.brand, "url": "https://" + d.domain},
	}
	if r.Type == upstream.ContentFAQ {
		ld["mainEntity"] = []any{map[string]any{"@type": "Question", "name": r.Title}}
	}
	r.SEOPayload = map[string]any{
		"canonical": r.URL,
		"robots":    robots,
		"json_ld":   ld,
		"og_image":  fmt.Sprintf("https://img.dealeredge-cdn.it/content/%d/og.jpg", r.ID),
	}
}

func (b *builder) finish() *store {
	s := &store{views: map[int64]map[string][]upstream.ContentRecord{}, text: map[int64]searchText{}}
	for _, r := range b.all {
		s.text[r.ID] = searchText{
			title: r.Title, excerpt: r.Excerpt, body: r.BodyText,
			lower: [3]string{strings.ToLower(r.Title), strings.ToLower(r.Excerpt), strings.ToLower(r.BodyText)},
		}
	}
	for i := range dealers {
		d := &dealers[i]
		s.views[d.id] = map[string][]upstream.ContentRecord{}
		for _, t := range upstream.ContentTypes {
			var view []upstream.ContentRecord
			for _, r := range append(slices.Clone(b.global[t]), b.own[d.id][t]...) {
				c := *r
				b.localize(&c, d)
				view = append(view, c)
			}
			slices.SortFunc(view, func(x, y upstream.ContentRecord) int { return cmp.Compare(x.ID, y.ID) })
			s.views[d.id][t] = view
		}
	}
	return s
}
