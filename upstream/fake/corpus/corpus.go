package corpus

import (
	"slices"
	"strings"
	"sync"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// Source providers of news records.
const (
	// ProviderDealerEditorial marks first-party local editions (custom news
	// and configured rewrites): the only news the edge lists and searches.
	ProviderDealerEditorial = "dealer_editorial"
	// ProviderGlobalWire marks global wire stories (DealerID 0).
	ProviderGlobalWire = "global_wire"
	// ProviderHistoricalImport marks a dealer's archived editions.
	ProviderHistoricalImport = "historical_import"
)

// store is the immutable generated data set.
type store struct {
	// views[dealerID][contentType] is the dealer's raw view, ordered by id.
	views map[int64]map[string][]upstream.ContentRecord
	// text holds the lowercased searchable text of every record by id.
	text map[int64]searchText
}

type searchText struct {
	title, excerpt, body string // originals, to detect records changed by a caller
	lower                [3]string
}

var data = sync.OnceValue(build)

// DealerIDs returns the ids of the demo dealers that have content, in
// ascending order. The slice is a fresh copy.
func DealerIDs() []int64 {
	ids := make([]int64, len(dealers))
	for i, d := range dealers {
		ids[i] = d.id
	}
	return ids
}

// Records returns the raw content-service view of one dealer for one content
// type: global records (DealerID 0, with HiddenForDealer as this dealer set
// it and URLs on this dealer's domain), the dealer's own records and its
// overrides, hidden and non-editorial records included, ordered by id. It
// returns nil for an unknown dealer or content type.
//
// The slice is a fresh copy that the caller may reorder, append to or
// modify element-wise; the maps the records reference (RenderPayload,
// SEOPayload) are shared with the corpus and must be treated as read-only.
func Records(dealerID int64, contentType string) []upstream.ContentRecord {
	v, ok := data().views[dealerID][contentType]
	if !ok {
		return nil
	}
	return slices.Clone(v)
}

// Filter applies a content filter the way the content service does and
// returns the matching records in their original order:
//
//   - Q: every whitespace-separated word must occur, case-insensitively, as
//     a substring of the title, the excerpt or the body text (each word may
//     match a different field);
//   - Category, Topic, Brand: when non-empty, the record's field must equal
//     the value, case-insensitively.
//
// Filter does not drop hidden, overridden or non-editorial records: the
// visibility rules belong to the edge. With an empty filter it returns recs
// itself (capacity clipped, so an append cannot overwrite the caller's
// backing array); otherwise the result is a new, non-nil slice.
func Filter(recs []upstream.ContentRecord, f upstream.ContentFilter) []upstream.ContentRecord {
	words := strings.Fields(strings.ToLower(f.Q))
	if len(words) == 0 && f.Category == "" && f.Topic == "" && f.Brand == "" {
		return slices.Clip(recs)
	}
	idx := data().text
	out := make([]upstream.ContentRecord, 0, len(recs)/4)
	for i := range recs {
		r := &recs[i]
		if f.Category != "" && !upstream.FieldMatches(r.Category, f.Category) ||
			f.Topic != "" && !upstream.FieldMatches(r.Topic, f.Topic) ||
			f.Brand != "" && !upstream.FieldMatches(r.Brand, f.Brand) {
			continue
		}
		if len(words) > 0 && !matchWords(idx, r, words) {
			continue
		}
		out = append(out, *r)
	}
	return out
}

// matchWords reports whether every word (already lowercased) is a substring
// of the record's lowercased title, excerpt or body.
func matchWords(idx map[int64]searchText, r *upstream.ContentRecord, words []string) bool {
	var fields [3]string
	if t, ok := idx[r.ID]; ok && t.title == r.Title && t.excerpt == r.Excerpt && t.body == r.BodyText {
		fields = t.lower
	} else {
		fields = [3]string{strings.ToLower(r.Title), strings.ToLower(r.Excerpt), strings.ToLower(r.BodyText)}
	}
	for _, w := range words {
		if !strings.Contains(fields[0], w) && !strings.Contains(fields[1], w) && !strings.Contains(fields[2], w) {
			return false
		}
	}
	return true
}
