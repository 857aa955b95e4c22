package publicshape

// ContractVersion is the version of the public contract this edge serves.
const ContractVersion = "1.2.0"

// Inventory services (path segment {service}).
const (
	ServiceRewind = "REWIND"
	ServiceNOS    = "NOS"
	ServiceNLT    = "NLT"
)

// Catalog types.
const (
	CatalogAuto = "auto"
	CatalogVcom = "vcom"
	CatalogVind = "vind"
)

// KnownCatalogType is ct when it is one of the catalog types the contract
// lists (auto, vcom, vind), else "": a value outside the enum from the
// inventory service is left out of the optional field, never published.
func KnownCatalogType(ct string) string {
	switch ct {
	case CatalogAuto, CatalogVcom, CatalogVind:
		return ct
	}
	return ""
}

// ProfessionalUpfit is DealerPublicProfessionalUpfit (2.3). No additional
// properties; every field is always present.
type ProfessionalUpfit struct {
	Code         string `json:"code"`
	Slug         string `json:"slug"`
	Label        string `json:"label"`
	DisplayLabel string `json:"display_label"`
	Family       string `json:"family"`
	IsPrimary    bool   `json:"is_primary"`
}

// InventoryItem is DealerPublicInventoryItem (2.2).
type InventoryItem struct {
	IDAuto                   string              `json:"id_auto,omitempty"`
	IDOfferta                int64               `json:"id_offerta,omitempty"`
	Service                  string              `json:"service"`
	NomeCanonico             string              `json:"nome_canonico"`
	Marca                    string              `json:"marca"`
	Modello                  string              `json:"modello"`
	Allestimento             string              `json:"allestimento,omitempty"`
	CatalogType              string              `json:"catalog_type,omitempty"`
	ProfessionalUpfits       []ProfessionalUpfit `json:"professional_upfits,omitempty"`
	PrimaryProfessionalUpfit *ProfessionalUpfit  `json:"primary_professional_upfit,omitempty"`
	PrezzoVendita            *float64            `json:"prezzo_vendita,omitempty"`
	CoverURL                 string              `json:"cover_url,omitempty"`
	HasPodcast               *bool               `json:"has_podcast,omitempty"`
	HasVideo                 *bool               `json:"has_video,omitempty"`
}

// InventoryListing is DealerPublicInventoryListingResponse (2.1).
type InventoryListing struct {
	Service  string          `json:"service"`
	Page     int             `json:"page"`
	PageSize int             `json:"page_size"`
	Total    int             `json:"total"`
	HasNext  bool            `json:"has_next"`
	Items    []InventoryItem `json:"items"`
}

// Equipment is one entry of accessori_serie / accessori_opzionali. The
// contract leaves the inner fields free-form; these are the ones we publish.
type Equipment struct {
	Code     string   `json:"code"`
	Name     string   `json:"name"`
	Category string   `json:"category,omitempty"`
	PriceEUR *float64 `json:"price_eur,omitempty"`
}

// Package is one entry of pacchetti.
type Package struct {
	Code     string   `json:"code"`
	Name     string   `json:"name"`
	PriceEUR *float64 `json:"price_eur,omitempty"`
	Contents []string `json:"contents,omitempty"`
}

// AIContent is the published part of a vehicle's generated editorial copy.
type AIContent struct {
	Headline    string   `json:"headline,omitempty"`
	Description string   `json:"description,omitempty"`
	Highlights  []string `json:"highlights,omitempty"`
}

// Podcast is the published metadata of a vehicle podcast.
type Podcast struct {
	Title           string `json:"title,omitempty"`
	AudioURL        string `json:"audio_url,omitempty"`
	DurationSeconds int    `json:"duration_seconds,omitempty"`
	Transcript      string `json:"transcript,omitempty"`
	PublishedAt     string `json:"published_at,omitempty"` // RFC 3339
}

// Video is the published metadata of a vehicle video.
type Video struct {
	Title           string `json:"title,omitempty"`
	VideoURL        string `json:"video_url,omitempty"`
	ThumbnailURL    string `json:"thumbnail_url,omitempty"`
	DurationSeconds int    `json:"duration_seconds,omitempty"`
	PublishedAt     string `json:"published_at,omitempty"` // RFC 3339
}

// VehicleDetail is DealerPublicVehicleDetail (2.5).
type VehicleDetail struct {
	IDAuto                   string              `json:"id_auto"`
	Marca                    string              `json:"marca"`
	Modello                  string              `json:"modello"`
	Allestimento             string              `json:"allestimento,omitempty"`
	NomeCanonico             string              `json:"nome_canonico,omitempty"`
	CatalogType              string              `json:"catalog_type,omitempty"`
	ProfessionalUpfits       []ProfessionalUpfit `json:"professional_upfits,omitempty"`
	PrimaryProfessionalUpfit *ProfessionalUpfit  `json:"primary_professional_upfit,omitempty"`
	PrezzoVendita            *float64            `json:"prezzo_vendita,omitempty"`
	CoverURL                 string              `json:"cover_url,omitempty"`
	AIContent                *AIContent          `json:"ai_content,omitempty"`
	MediaURLs                []string            `json:"media_urls,omitempty"`
	AccessoriSerie           []Equipment         `json:"accessori_serie,omitzero"`
	AccessoriOpzionali       []Equipment         `json:"accessori_opzionali,omitzero"`
	Pacchetti                []Package           `json:"pacchetti,omitzero"`
	AccessoriSerieJSON       []Equipment         `json:"accessori_serie_json,omitzero"`
	Podcast                  *Podcast            `json:"podcast,omitempty"`
	Video                    *Video              `json:"video,omitempty"`
	HasPodcast               bool                `json:"has_podcast"`
	HasVideo                 bool                `json:"has_video"`
}

// Quotation is one monthly-fee quotation of an offer (2.6).
type Quotation struct {
	Months     int     `json:"months"`
	KmPerYear  int     `json:"km_per_year"`
	MonthlyFee float64 `json:"monthly_fee"`
}

// OfferDetail is DealerPublicOfferDetail (2.6).
type OfferDetail struct {
	IDOfferta  int64       `json:"id_offerta"`
	Slug       string      `json:"slug,omitempty"`
	Marca      string      `json:"marca"`
	Modello    string      `json:"modello"`
	Versione   string      `json:"versione,omitempty"`
	CoverURL   string      `json:"cover_url,omitempty"`
	Quotazioni []Quotation `json:"quotazioni"`
}

// InventoryDetail is DealerPublicInventoryDetailResponse (2.4): exactly one
// of Vehicle and Offer is set.
type InventoryDetail struct {
	Service string         `json:"service"`
	Vehicle *VehicleDetail `json:"vehicle,omitempty"`
	Offer   *OfferDetail   `json:"offer,omitempty"`
}

// ContentItem is DealerPublicContentItem (2.7). Listing items carry
// BodyTextPreview, detail items BodyText, search items ContentType.
type ContentItem struct {
	ID              int64  `json:"id,omitempty"`
	ContentType     string `json:"content_type,omitempty"`
	Slug            string `json:"slug,omitempty"`
	Topic           string `json:"topic,omitempty"`
	Category        string `json:"category,omitempty"`
	Brand           string `json:"brand,omitempty"`
	Title           string `json:"title,omitempty"`
	H1              string `json:"h1,omitempty"`
	MetaDescription string `json:"meta_description,omitempty"`
	Excerpt         string `json:"excerpt,omitempty"`
	BodyTextPreview string `json:"body_text_preview,omitempty"`
	BodyText        string `json:"body_text,omitempty"`
	SourceProvider  string `json:"source_provider,omitempty"`
	URL             string `json:"url,omitempty"`
	MediaURL        string `json:"media_url,omitempty"`
	ThumbnailURL    string `json:"thumbnail_url,omitempty"`
	DurationSeconds int    `json:"duration_seconds,omitempty"`
	Transcript      string `json:"transcript,omitempty"`
	UpdatedAt       string `json:"updated_at,omitempty"` // RFC 3339, UTC
}

// DealerMeta is meta.dealer (2.8).
type DealerMeta struct {
	ID int64 `json:"id"`
	// The strings are left out when empty: the dealers service has no
	// value for them (aggregator/mapping.DealerMeta), and "" is no name,
	// city, province code or domain.
	Name          string `json:"name,omitempty"`
	BrandName     string `json:"brand_name,omitempty"`
	City          string `json:"city,omitempty"`
	Province      string `json:"province,omitempty"` // ProvinceCode
	PrimaryDomain string `json:"primary_domain,omitempty"`
}

// Meta is the meta object of content envelopes.
type Meta struct {
	Dealer *DealerMeta `json:"dealer,omitempty"`
}

// Deprecation holds the deprecation payload fields of guides and glossary
// (section 9); embedded in content envelopes, all empty for other types.
type Deprecation struct {
	Deprecated       bool   `json:"deprecated,omitempty"`
	Deprecation      string `json:"deprecation,omitempty"`       // "@<unix-seconds>" (RFC 9745)
	Sunset           string `json:"sunset,omitempty"`            // HTTP-date (RFC 8594)
	SuccessorVersion string `json:"successor_version,omitempty"` // URI
}

// ContentListing is DealerPublicContentListingResponse (2.9).
type ContentListing struct {
	ContentType string            `json:"content_type"`
	Page        int               `json:"page"`
	PageSize    int               `json:"page_size"`
	Total       int               `json:"total"`
	HasNext     bool              `json:"has_next"`
	Items       []ContentItem     `json:"items"`
	Q           string            `json:"q,omitempty"`
	Filters     map[string]string `json:"filters,omitempty"`
	Meta        *Meta             `json:"meta,omitempty"`
	Deprecation
}

// ContentDetail is DealerPublicContentDetailResponse (2.10).
type ContentDetail struct {
	ContentType string      `json:"content_type"`
	Item        ContentItem `json:"item"`
	Meta        *Meta       `json:"meta,omitempty"`
	Deprecation
}

// ContentHub is DealerPublicContentHubResponse (2.11).
type ContentHub struct {
	ContentType string                    `json:"content_type"` // always "hub"
	Meta        *Meta                     `json:"meta,omitempty"`
	Sections    map[string]ContentListing `json:"sections"`
}

// ContentSearch is DealerPublicContentSearchResponse (2.12).
type ContentSearch struct {
	Q               string         `json:"q"`
	PageSizePerType int            `json:"page_size_per_type"`
	Total           int            `json:"total"`
	ByType          map[string]int `json:"by_type"`
	Items           []ContentItem  `json:"items"`
	Meta            *Meta          `json:"meta,omitempty"`
}

// FieldError is one entry of a validation problem's errors array.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Problem is an application/problem+json body (section 7).
type Problem struct {
	Type      string       `json:"type"`
	Title     string       `json:"title"`
	Status    int          `json:"status"`
	Code      string       `json:"code"`
	Detail    string       `json:"detail,omitempty"`
	RequestID string       `json:"request_id,omitempty"`
	Errors    []FieldError `json:"errors,omitempty"`
}
