package upstream

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Service names, as used for breakers, timeouts and metrics labels.
const (
	SvcDealers   = "dealers"
	SvcInventory = "inventory"
	SvcCatalog   = "catalog"
	SvcMedia     = "media"
	SvcContent   = "content"
)

// Services lists every internal service the edge calls, in a stable order.
var Services = []string{SvcDealers, SvcInventory, SvcCatalog, SvcMedia, SvcContent}

// KeyRecord is what the dealers service knows about one API key. The edge
// looks keys up by the lowercase hex SHA-256 of the raw key; the raw key
// never leaves the edge.
type KeyRecord struct {
	KeyID     string     `json:"key_id"`
	DealerID  int64      `json:"dealer_id"`
	Status    string     `json:"status"` // "active" or "revoked"
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	Plan      string     `json:"plan"` // rate-limit plan name, e.g. "default", "limited"
}

// Dealer is the dealers service's profile record of one dealer.
type Dealer struct {
	ID            int64  `json:"id"`
	Name          string `json:"name"`
	BrandName     string `json:"brand_name"`
	City          string `json:"city"`
	Province      string `json:"province"`
	PrimaryDomain string `json:"primary_domain"`

	// Internal only: never public.
	CRMSourceID         string `json:"crm_source_id,omitempty"`
	BillingAccount      string `json:"billing_account,omitempty"`
	BrowserWidgetSecret string `json:"browser_widget_secret,omitempty"`
}

// Upfit is one professional upfit (allestimento professionale) of a vcom/vind
// vehicle, as the inventory service stores it from the catalog taxonomy.
type Upfit struct {
	Code        string `json:"code"`
	Slug        string `json:"slug"`                   // taxonomy slug (should be canonical; the edge re-canonicalises)
	Label       string `json:"label"`                  // taxonomy label, e.g. "Furgone isotermico" or "Altro"
	DealerAlias string `json:"dealer_alias,omitempty"` // the dealer's own wording; used for "Altro"
	Family      string `json:"family"`
	Primary     bool   `json:"primary"`

	// Internal only.
	SourceID      string   `json:"source_id,omitempty"`
	LookupCascade []string `json:"lookup_cascade,omitempty"`
}

// AIContent is generated editorial copy for a vehicle.
type AIContent struct {
	Headline    string   `json:"headline"`
	Description string   `json:"description"`
	Highlights  []string `json:"highlights,omitempty"`

	// Internal only: rendering and SEO payloads.
	RenderTemplate string `json:"render_template,omitempty"`
	SEOPayload     Opaque `json:"seo_payload,omitempty"`
	PromptID       string `json:"prompt_id,omitempty"`
}

// EquipmentItem is one piece of equipment of a catalog version.
type EquipmentItem struct {
	Code     string   `json:"code"`
	Name     string   `json:"name"`
	Category string   `json:"category"`
	PriceEUR *float64 `json:"price_eur,omitempty"`

	// Internal only.
	SourceID string `json:"source_id,omitempty"`
	TechRef  string `json:"tech_ref,omitempty"` // path into the raw technical-data directory
}

// EquipmentPackage is a package of equipment of a catalog version.
type EquipmentPackage struct {
	Code     string   `json:"code"`
	Name     string   `json:"name"`
	PriceEUR *float64 `json:"price_eur,omitempty"`
	Contents []string `json:"contents,omitempty"` // names of the items in the package

	// Internal only.
	SourceID string `json:"source_id,omitempty"`
}

// Vehicle is the inventory service's record of one REWIND or NOS vehicle.
type Vehicle struct {
	IDAuto      string     `json:"id_auto"` // UUID
	DealerID    int64      `json:"dealer_id"`
	Service     string     `json:"service"` // REWIND or NOS
	Make        string     `json:"make"`
	Model       string     `json:"model"`
	Trim        string     `json:"trim,omitempty"`
	CatalogType string     `json:"catalog_type,omitempty"` // auto, vcom, vind
	VersionCode string     `json:"version_code,omitempty"` // exact catalog version, key for the catalog service
	Upfits      []Upfit    `json:"upfits,omitempty"`
	SalePrice   *float64   `json:"sale_price_eur,omitempty"` // VAT included; REWIND only
	CoverURL    string     `json:"cover_url,omitempty"`
	MediaURLs   []string   `json:"media_urls,omitempty"`
	HasPodcast  bool       `json:"has_podcast"`
	HasVideo    bool       `json:"has_video"`
	AIContent   *AIContent `json:"ai_content,omitempty"`
	// Codes of the optionals and packages confirmed for this very vehicle.
	ConfirmedOptionals []string  `json:"confirmed_optionals,omitempty"`
	ConfirmedPackages  []string  `json:"confirmed_packages,omitempty"`
	UpdatedAt          time.Time `json:"updated_at"`

	// Internal only: never public.
	SourceIDs           map[string]string `json:"source_ids,omitempty"`     // e.g. {"dms": "...", "feed": "..."}
	LookupCascade       []string          `json:"lookup_cascade,omitempty"` // catalog lookups tried (jato -> eurotax -> manual)
	TechDataDir         string            `json:"tech_data_dir,omitempty"`  // raw technical-data directory
	RenderPayload       Opaque            `json:"render_payload,omitempty"`
	SEOPayload          Opaque            `json:"seo_payload,omitempty"`
	RawVersionOptionals RawOptionals      `json:"raw_version_optionals,omitempty"` // the version's whole optional catalogue
}

// VehicleSummary is v as the vehicle listing's summary view (view=summary)
// carries it: without the fields only a detail shows (media URLs, generated
// content, the confirmed and the raw optionals) and without the rendering
// and SEO payloads. Identifiers, upfits, prices and the small internal
// fields (source ids, lookup cascade, technical-data directory) stay.
func VehicleSummary(v Vehicle) Vehicle {
	v.MediaURLs = nil
	v.AIContent = nil
	v.ConfirmedOptionals = nil
	v.ConfirmedPackages = nil
	v.RawVersionOptionals = nil
	v.RenderPayload = nil
	v.SEOPayload = nil
	return v
}

// VehiclePage is one page of a vehicle listing.
type VehiclePage struct {
	Total int       `json:"total"`
	Items []Vehicle `json:"items"`

	mem pageMemory // ReuseStrings
}

// pageMemory is what a page decoded with ReuseStrings (a VehiclePage, an
// OfferPage read as a listing) keeps of its last decoding for the next
// (pagescan.go): body is its copy of the body the records' strings are
// views of (those without escapes), arena the memory of the strings
// unquoted, upfits and floats the blocks the records' upfit lists and
// prices were cut from.
type pageMemory struct {
	body   []byte
	arena  []byte
	upfits []Upfit
	floats []float64
	reuse  bool
}

// VehicleQuery is a vehicle listing request; filters and pagination are
// pushed down to the inventory service.
type VehicleQuery struct {
	Service     string // REWIND or NOS
	Page        int    // 1-based
	PageSize    int
	Q           string // text over make, model and trim; case-insensitive substring of every word
	CatalogType string // "", auto, vcom, vind
	Upfit       string // upfit slug, "" for none
}

// Quotation is one monthly-fee quotation of a long-term rental offer.
type Quotation struct {
	Months       int     `json:"months"`
	KmPerYear    int     `json:"km_per_year"`
	MonthlyFee   float64 `json:"monthly_fee_eur"`
	InternalCost float64 `json:"internal_cost_eur,omitempty"` // internal only
	SourceRateID string  `json:"source_rate_id,omitempty"`    // internal only
}

// Offer is the inventory service's record of one NLT (long-term rental) offer.
type Offer struct {
	IDOfferta  int64       `json:"id_offerta"`
	DealerID   int64       `json:"dealer_id"`
	Slug       string      `json:"slug"`
	Make       string      `json:"make"`
	Model      string      `json:"model"`
	Version    string      `json:"version,omitempty"`
	CoverURL   string      `json:"cover_url,omitempty"`
	Quotations []Quotation `json:"quotations,omitempty"`
	UpdatedAt  time.Time   `json:"updated_at"`

	// Internal only.
	SourceIDs     map[string]string `json:"source_ids,omitempty"`
	LookupCascade []string          `json:"lookup_cascade,omitempty"`
	RenderPayload Opaque            `json:"render_payload,omitempty"`
}

// OfferPage is one page of an offer listing.
type OfferPage struct {
	Total int     `json:"total"`
	Items []Offer `json:"items"`

	mem pageMemory // ReuseStrings, for ListOffersInto
}

// OfferQuery is an offer listing request.
type OfferQuery struct {
	Page     int
	PageSize int
	Q        string
}

// Equipment is the catalog service's equipment of one exact catalog version.
type Equipment struct {
	VersionCode string             `json:"version_code"`
	Standard    []EquipmentItem    `json:"standard"`
	Optionals   []EquipmentItem    `json:"optionals"` // the raw optional catalogue of the version
	Packages    []EquipmentPackage `json:"packages"`  // the raw package catalogue of the version

	// Internal only.
	TechDataDir   string   `json:"tech_data_dir,omitempty"`
	LookupCascade []string `json:"lookup_cascade,omitempty"`
}

// Podcast is a generated audio episode about a vehicle.
type Podcast struct {
	EpisodeID       string    `json:"episode_id"`
	Title           string    `json:"title"`
	AudioURL        string    `json:"audio_url"`
	DurationSeconds int       `json:"duration_seconds"`
	Transcript      string    `json:"transcript,omitempty"`
	PublishedAt     time.Time `json:"published_at"`

	// Internal only.
	TTSVoiceID  string `json:"tts_voice_id,omitempty"`
	RenderJobID string `json:"render_job_id,omitempty"`
	SourceID    string `json:"source_id,omitempty"`
}

// Video is a generated video about a vehicle.
type Video struct {
	VideoID         string    `json:"video_id"`
	Title           string    `json:"title"`
	VideoURL        string    `json:"video_url"`
	ThumbnailURL    string    `json:"thumbnail_url,omitempty"`
	DurationSeconds int       `json:"duration_seconds"`
	PublishedAt     time.Time `json:"published_at"`

	// Internal only.
	RenderJobID   string `json:"render_job_id,omitempty"`
	RenderPayload Opaque `json:"render_payload,omitempty"`
	SourceID      string `json:"source_id,omitempty"`
}

// Media is the media service's record of a vehicle's generated media. A nil
// field means the medium does not exist.
type Media struct {
	Podcast *Podcast `json:"podcast,omitempty"`
	Video   *Video   `json:"video,omitempty"`
}

// Content types of the content service (the same names as the public API).
const (
	ContentFAQ      = "faq"
	ContentNews     = "news"
	ContentGlossary = "glossary"
	ContentGuides   = "guides"
	ContentVideos   = "videos"
	ContentPodcasts = "podcasts"
)

// ContentTypes lists the six content types in their canonical order.
var ContentTypes = []string{ContentFAQ, ContentNews, ContentGlossary, ContentGuides, ContentVideos, ContentPodcasts}

// ContentRecord is one raw record of the content service: a global item, a
// dealer's own item, or a dealer override of a global item. The content
// service returns the dealer's raw view; the edge applies the public
// visibility rules (overrides, hidden items, news provenance).
type ContentRecord struct {
	ID       int64  `json:"id"`
	Type     string `json:"type"`      // one of ContentTypes
	DealerID int64  `json:"dealer_id"` // 0 for a global record
	Slug     string `json:"slug"`

	Topic           string    `json:"topic,omitempty"`    // guides
	Category        string    `json:"category,omitempty"` // faq, custom news, glossary
	Brand           string    `json:"brand,omitempty"`    // global news (rewrites)
	Title           string    `json:"title"`
	H1              string    `json:"h1,omitempty"`
	MetaDescription string    `json:"meta_description,omitempty"`
	Excerpt         string    `json:"excerpt,omitempty"`
	BodyText        string    `json:"body_text"`
	URL             string    `json:"url,omitempty"`
	UpdatedAt       time.Time `json:"updated_at"`

	// News provenance: "dealer_editorial" marks first-party local editions
	// (custom news and configured rewrites); other values (e.g.
	// "global_wire", "historical_import") are readable by slug only.
	SourceProvider string `json:"source_provider,omitempty"`

	// FAQ: a dealer record with OverrideOf set replaces the global record
	// with that id for this dealer (same slug; the public id stays the
	// global one).
	OverrideOf int64 `json:"override_of,omitempty"`
	// HiddenForDealer marks a record this dealer chose to hide.
	HiddenForDealer bool `json:"hidden_for_dealer,omitempty"`

	// Media content (videos, podcasts).
	MediaURL        string `json:"media_url,omitempty"`
	ThumbnailURL    string `json:"thumbnail_url,omitempty"`
	DurationSeconds int    `json:"duration_seconds,omitempty"`
	Transcript      string `json:"transcript,omitempty"`

	// Internal only.
	TemplateID    string `json:"template_id,omitempty"`
	SourceID      string `json:"source_id,omitempty"`
	BodyHTML      Markup `json:"body_html,omitempty"` // rendered page fragment
	RenderPayload Opaque `json:"render_payload,omitempty"`
	SEOPayload    Opaque `json:"seo_payload,omitempty"` // structured data, canonical, robots
}

// ContentFilter narrows a content request; the content service applies it
// and returns every matching record (no pagination: the edge owns the
// visibility rules, so it also owns pagination and totals).
type ContentFilter struct {
	Q        string // every whitespace-separated word, case-insensitively, a substring of the title, excerpt or body
	Category string
	Topic    string
	Brand    string
	// Summary asks for the summary view (view=summary, see
	// ContentSummary) instead of whole records. It does not narrow.
	Summary bool
}

// FieldMatches is the content service's rule for the category, topic and
// brand filters: the record's field equals the value under Unicode simple
// folding (strings.EqualFold) once both are trimmed and every run of white
// space in them (unicode.IsSpace, a no-break space too) is one space, so
// that every value the edge publishes filters (the edge trims and
// collapses a filter value before it asks). It allocates only for a field
// or value with such irregular space.
func FieldMatches(field, value string) bool {
	if strings.EqualFold(field, value) {
		return true
	}
	if !irregularSpace(field) && !irregularSpace(value) {
		return false
	}
	return strings.EqualFold(strings.Join(strings.Fields(field), " "), strings.Join(strings.Fields(value), " "))
}

// irregularSpace reports white space other than single ASCII spaces
// between words: leading, trailing, repeated or of another kind.
func irregularSpace(s string) bool {
	prev := true // a space at the start counts
	for _, r := range s {
		sp := unicode.IsSpace(r)
		if sp && (prev || r != ' ') {
			return true
		}
		prev = sp
	}
	return prev && s != ""
}

// SummaryBodyNonSpace is how much of body_text the content summary view
// keeps: the text up to and including its SummaryBodyNonSpace-th character
// that is not white space (unicode.IsSpace; an invalid UTF-8 byte counts as
// one character). A preview of at most SummaryBodyNonSpace-1 characters
// made from the cut text is the same as one made from the whole text.
const SummaryBodyNonSpace = 256

// ContentSummary is r as a content listing's summary view (view=summary)
// carries it: without what only a detail shows (the transcript and the
// rendered body), without the rendering and SEO payloads, and with
// body_text cut after its first SummaryBodyNonSpace non-space characters.
// Identifiers, the visibility fields (dealer, override, hidden,
// provenance), titles, excerpt, metadata and the small internal fields
// (source and template ids) stay. A news record of the demo corpus is about
// a third of its full size.
func ContentSummary(r ContentRecord) ContentRecord {
	r.BodyText = cutAfterNonSpace(r.BodyText, SummaryBodyNonSpace)
	r.Transcript = ""
	r.BodyHTML = ""
	r.RenderPayload = nil
	r.SEOPayload = nil
	return r
}

// cutAfterNonSpace returns s up to and including its n-th character that
// is not white space, or all of s when it has fewer.
func cutAfterNonSpace(s string, n int) string {
	for i, r := range s {
		if unicode.IsSpace(r) {
			continue
		}
		if n--; n == 0 {
			_, w := utf8.DecodeRuneInString(s[i:])
			return s[:i+w]
		}
	}
	return s
}

// Opaque is an internal-only structured payload of a record (rendering and
// SEO data). The fakes fill it; the Client never decodes it: it skips its
// bytes, so the edge neither spends time on it nor holds any of it, and no
// mapping can let it out by mistake.
type Opaque map[string]any

// RawOptionals is a catalog version's whole optional catalogue as the
// inventory service attaches it to a vehicle: internal only (the public
// detail lists only the optionals confirmed for the vehicle, from the
// catalog service). The Client skips it like Opaque.
type RawOptionals []EquipmentItem

// Markup is an internal-only rendered fragment (the content service's
// body_html). The Client skips it like Opaque: it is the largest field of a
// content record and the edge publishes plain text only.
type Markup string
