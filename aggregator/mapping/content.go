package mapping

import (
	"cmp"
	"slices"
	"strings"

	"github.com/dealer-edge/dealer-edge/publicshape"
	"github.com/dealer-edge/dealer-edge/upstream"
)

// EditorialProvider is the news provenance class of first-party local
// editions: the only news that is discoverable (listings, hub, search).
const EditorialProvider = "dealer_editorial"

// PreviewRunes is the length of body_text_preview in listings.
const PreviewRunes = 240

// Scope says where content is being shown.
type Scope uint8

const (
	// Discovery is a listing, the hub or search: news that is not a
	// first-party edition is left out.
	Discovery Scope = iota
	// BySlug is a detail lookup: every non-hidden item stays readable.
	BySlug
)

// Visible applies the public visibility rules of one content type to a
// dealer's raw content view and returns the visible records in the public
// order (most recently updated first, then by slug):
//
//   - records of another dealer are dropped (defence in depth: the content
//     service already scopes by dealer);
//   - a dealer record with OverrideOf replaces the global record it
//     overrides (FAQ overrides); it keeps the global record's public id
//     (PublicID). Its slug is its own: the content service gives an
//     override the global record's slug (upstream.ContentRecord.OverrideOf),
//     and the edge's detail lookup asks the service by slug;
//   - hidden records are dropped, and so is an override of a hidden global
//     record;
//   - in Discovery scope, news whose source_provider is not
//     dealer_editorial is dropped.
//
// The input is not modified.
func Visible(dealerID int64, contentType string, recs []upstream.ContentRecord, scope Scope) []upstream.ContentRecord {
	idx := VisibleOrder(dealerID, contentType, recs, scope)
	out := make([]upstream.ContentRecord, len(idx))
	for i, j := range idx {
		out[i] = recs[j]
		PublicID(&out[i])
	}
	return out
}

// PublicID gives a visible record its public id: an override keeps the
// global record's id.
func PublicID(r *upstream.ContentRecord) {
	if r.OverrideOf != 0 {
		r.ID = r.OverrideOf
	}
}

// VisibleOrder is Visible without the copies: the indices into recs of
// the visible records, in the public order (the records' ids are still
// to be made public, PublicID). It reads only the fields an
// upstream.Client.ContentPage decodes for its pick (ID, Type, DealerID, Slug, UpdatedAt,
// SourceProvider, OverrideOf, HiddenForDealer).
func VisibleOrder(dealerID int64, contentType string, recs []upstream.ContentRecord, scope Scope) []int32 {
	idx, when := visibleIndices(dealerID, contentType, recs, scope)
	slices.SortFunc(idx, publicOrder(recs, when))
	return idx
}

// VisibleFirst is VisibleOrder for a page cut from a list that is not
// kept: of the visible records that keep accepts (nil accepts all), n is
// the number, and first the indices of the first k of them in the public
// order (all n when k >= n): what VisibleOrder, then keep, then a cut to k
// give (TestVisibleFirstEqualsOrder). The k are chosen with a bounded heap
// and only they are sorted: a hub section (k = 5 of about 100 records)
// compares about n + k log k times instead of n log n. The order is a
// total one (the index decides last), so the selection is exactly the
// sort's, ties included.
func VisibleFirst(dealerID int64, contentType string, recs []upstream.ContentRecord, scope Scope, k int, keep func(*upstream.ContentRecord) bool) (first []int32, n int) {
	idx, when := visibleIndices(dealerID, contentType, recs, scope)
	if keep != nil {
		kept := idx[:0]
		for _, i := range idx {
			if keep(&recs[i]) {
				kept = append(kept, i)
			}
		}
		idx = kept
	}
	n = len(idx)
	order := publicOrder(recs, when)
	if k >= n {
		slices.SortFunc(idx, order)
		return idx, n
	}
	if k <= 0 {
		return idx[:0], n
	}
	// idx[:k] is a heap whose root is the last in the public order of the
	// k kept so far; a later index that comes before it takes its place.
	h := idx[:k]
	for i := k/2 - 1; i >= 0; i-- {
		siftDown(h, i, order)
	}
	for _, c := range idx[k:] {
		if order(c, h[0]) < 0 {
			h[0] = c
			siftDown(h, 0, order)
		}
	}
	slices.SortFunc(h, order)
	return h, n
}

// siftDown restores the heap h (each parent after its children in the
// public order) below position i.
func siftDown(h []int32, i int, order func(a, b int32) int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && order(h[c+1], h[c]) > 0 {
			c++
		}
		if order(h[c], h[i]) <= 0 {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// visibleIndices returns the indices into recs of the visible records, in
// the order of recs, and their update times as published (Unix seconds;
// when is indexed as recs, set for the visible records only).
func visibleIndices(dealerID int64, contentType string, recs []upstream.ContentRecord, scope Scope) (idx []int32, when []int64) {
	// Hidden globals and overridden ids are rare: the sets are made only
	// when there is one.
	var hiddenGlobal, overridden map[int64]bool
	for i := range recs {
		r := &recs[i]
		if r.DealerID == 0 && r.HiddenForDealer {
			if hiddenGlobal == nil {
				hiddenGlobal = map[int64]bool{}
			}
			hiddenGlobal[r.ID] = true
		}
		if r.DealerID == dealerID && r.OverrideOf != 0 {
			if overridden == nil {
				overridden = map[int64]bool{}
			}
			overridden[r.OverrideOf] = true
		}
	}
	// Ordered as indices, not as records (a record is a large struct), on
	// the update times (Unix seconds) taken out of the records into one
	// small array.
	idx = make([]int32, 0, len(recs))
	when = make([]int64, len(recs))
	for i := range recs {
		r := &recs[i]
		if r.DealerID != 0 && r.DealerID != dealerID {
			continue
		}
		if r.Type != "" && r.Type != contentType {
			continue
		}
		if r.HiddenForDealer {
			continue
		}
		if r.DealerID == 0 && overridden[r.ID] {
			continue // replaced by the dealer's override
		}
		if r.OverrideOf != 0 && hiddenGlobal[r.OverrideOf] {
			continue
		}
		if scope == Discovery && contentType == upstream.ContentNews && r.SourceProvider != EditorialProvider {
			continue
		}
		idx = append(idx, int32(i))
		when[i] = publishedUnix(r.UpdatedAt) // the order a client sees: ties as published
	}
	return idx, when
}

// publicOrder compares two indices into recs in the public order: most
// recently updated first, then by slug; equal records keep their order
// (the index decides last), as a stable sort would. Update times are
// compared in whole seconds, as updated_at is published (when, from
// visibleIndices): two items a client sees with the same updated_at are
// in slug order (they were not when their times differed below the
// second).
func publicOrder(recs []upstream.ContentRecord, when []int64) func(a, b int32) int {
	return func(a, b int32) int {
		if wa, wb := when[a], when[b]; wa != wb {
			return cmp.Compare(wb, wa)
		}
		if c := strings.Compare(recs[a].Slug, recs[b].Slug); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	}
}

// Match reports whether a visible record passes a listing's category,
// topic and brand filters (an empty filter passes everything): the
// content service's rule, upstream.FieldMatches (case-insensitive, white
// space trimmed and collapsed). Edge listings filter the cached visible
// view with it instead of asking the service again.
func Match(r *upstream.ContentRecord, category, topic, brand string) bool {
	return (category == "" || upstream.FieldMatches(r.Category, category)) &&
		(topic == "" || upstream.FieldMatches(r.Topic, topic)) &&
		(brand == "" || upstream.FieldMatches(r.Brand, brand))
}

// Ranked reorders visible search matches of one type by relevance: records
// whose title contains every word of q first, then the rest, each group in
// the order given (the public order). It moves pointers, not records.
func Ranked(recs []*upstream.ContentRecord, q string) []*upstream.ContentRecord {
	words := strings.Fields(strings.ToLower(q))
	titleHit := func(r *upstream.ContentRecord) bool {
		t := strings.ToLower(r.Title)
		for _, w := range words {
			if !strings.Contains(t, w) {
				return false
			}
		}
		return true
	}
	out := make([]*upstream.ContentRecord, 0, len(recs))
	var rest []*upstream.ContentRecord
	for _, r := range recs {
		if titleHit(r) {
			out = append(out, r)
		} else {
			rest = append(rest, r)
		}
	}
	return append(out, rest...)
}

// ContentForm says which body field a content item carries.
type ContentForm uint8

const (
	// ListingForm carries body_text_preview.
	ListingForm ContentForm = iota
	// DetailForm carries the full body_text.
	DetailForm
	// SearchForm carries body_text_preview and content_type.
	SearchForm
)

// ContentItem maps one visible content record to a public content item.
// source_provider is published for news only.
func ContentItem(r upstream.ContentRecord, contentType string, form ContentForm) publicshape.ContentItem {
	it := publicshape.ContentItem{
		ID:              r.ID,
		Slug:            r.Slug,
		Topic:           r.Topic,
		Category:        r.Category,
		Brand:           r.Brand,
		Title:           r.Title,
		H1:              r.H1,
		MetaDescription: r.MetaDescription,
		Excerpt:         r.Excerpt,
		URL:             publicshape.PublicURL(r.URL),
		MediaURL:        publicshape.PublicURL(r.MediaURL),
		ThumbnailURL:    publicshape.PublicURL(r.ThumbnailURL),
		DurationSeconds: max(r.DurationSeconds, 0), // OpenAPI: minimum 0
		UpdatedAt:       rfc3339(r.UpdatedAt),
	}
	if contentType == upstream.ContentNews {
		it.SourceProvider = r.SourceProvider
	}
	switch form {
	case DetailForm:
		it.BodyText = r.BodyText
		it.Transcript = r.Transcript
	case SearchForm:
		it.ContentType = contentType
		it.BodyTextPreview = publicshape.Preview(r.BodyText, PreviewRunes)
	default:
		it.BodyTextPreview = publicshape.Preview(r.BodyText, PreviewRunes)
	}
	return it
}

// AppendListingItem appends to dst the JSON of the listing item of the
// visible record r (its public id set, PublicID) and returns the extended
// buffer: the bytes publicshape.AppendContentItem writes for
// ContentItem(*r, contentType, ListingForm), or for ViewItem's item when
// previewed (r is a view record, its body the preview already), written
// straight from the record through listingSource, without building the
// item, its preview or its date as strings (TestListingItemOverCorpus,
// FuzzAppendListingItem).
func AppendListingItem(dst []byte, r *upstream.ContentRecord, contentType string, previewed bool) []byte {
	var date [len("2006-01-02T15:04:05Z")]byte
	src := listingSource(r, contentType, previewed)
	if !r.UpdatedAt.IsZero() {
		src.UpdatedAt = appendRFC3339(date[:0], r.UpdatedAt)
	}
	return publicshape.AppendContentItemSource(dst, &src)
}

// listingSource is the allowlist of a content listing item: the fields of
// r that ContentItem publishes in ListingForm, and nothing else (no
// body_text, no transcript, source_provider for news only). Its UpdatedAt
// is left to the caller.
func listingSource(r *upstream.ContentRecord, contentType string, previewed bool) publicshape.ContentItemSource {
	src := publicshape.ContentItemSource{
		ID:              r.ID,
		Slug:            r.Slug,
		Topic:           r.Topic,
		Category:        r.Category,
		Brand:           r.Brand,
		Title:           r.Title,
		H1:              r.H1,
		MetaDescription: r.MetaDescription,
		Excerpt:         r.Excerpt,
		Body:            r.BodyText,
		PreviewRunes:    PreviewRunes,
		URL:             publicshape.PublicURL(r.URL),
		MediaURL:        publicshape.PublicURL(r.MediaURL),
		ThumbnailURL:    publicshape.PublicURL(r.ThumbnailURL),
		DurationSeconds: max(r.DurationSeconds, 0), // OpenAPI: minimum 0
	}
	if previewed {
		src.PreviewRunes = 0
	}
	if contentType == upstream.ContentNews {
		src.SourceProvider = r.SourceProvider
	}
	return src
}
