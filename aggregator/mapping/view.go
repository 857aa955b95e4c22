package mapping

import (
	"encoding/binary"
	"errors"
	"slices"
	"time"

	"github.com/dealer-edge/dealer-edge/publicshape"
	"github.com/dealer-edge/dealer-edge/upstream"
)

// A view is a dealer's visible records of one content type in the public
// order: Visible in Discovery scope over the content service's summary
// view. The edge caches it (a cache entry per dealer and type) and cuts
// listings, hub sections and filtered listings from it; AppendView and
// DecodeView are its cache form.
//
// The form keeps what a listing, hub or search item shows, what the
// filters compare (category, topic, brand) and what relates a record to
// the content service's answers (dealer id and slug), nothing else: no
// internal-only field is ever written, and the visibility fields are not
// needed once the rules have been applied. A view record's BodyText is
// already the listing preview (ViewRecords): a page or hub made from a
// view does not compute previews again; map view records with ViewItem.
//
// Layout: "v1" then the record count (uvarint), then per record: id,
// dealer id, updated_at as Unix seconds (varints) and nanoseconds,
// duration_seconds (varint), then the strings of viewStrings, each as a
// uvarint length and its bytes.

const viewMagic = "v1"

// viewStrings lists the string fields of a record in the view, in order.
func viewStrings(r *upstream.ContentRecord) [13]*string {
	return [13]*string{&r.Slug, &r.Topic, &r.Category, &r.Brand, &r.Title, &r.H1, &r.MetaDescription,
		&r.Excerpt, &r.BodyText, &r.URL, &r.SourceProvider, &r.MediaURL, &r.ThumbnailURL}
}

// ViewRecords turns visible records (as Visible returns them) into view
// records, in place: BodyText becomes the listing preview.
func ViewRecords(vis []upstream.ContentRecord) []upstream.ContentRecord {
	for i := range vis {
		vis[i].BodyText = publicshape.Preview(vis[i].BodyText, PreviewRunes)
	}
	return vis
}

// ViewItem maps a view record (see ViewRecords) to a public listing item
// (ListingForm) or search item (SearchForm): ContentItem without
// computing the preview again.
func ViewItem(r *upstream.ContentRecord, contentType string, form ContentForm) publicshape.ContentItem {
	body := r.BodyText
	rr := *r
	rr.BodyText = ""
	it := ContentItem(rr, contentType, form)
	it.BodyTextPreview = body
	return it
}

// AppendView appends the cache form of a view (view records, see
// ViewRecords) to dst.
func AppendView(dst []byte, view []upstream.ContentRecord) []byte {
	n := len(viewMagic) + binary.MaxVarintLen64
	for i := range view {
		n += 5 * binary.MaxVarintLen64
		for _, s := range viewStrings(&view[i]) {
			n += binary.MaxVarintLen64 + len(*s)
		}
	}
	dst = slices.Grow(dst, n)
	dst = append(dst, viewMagic...)
	dst = binary.AppendUvarint(dst, uint64(len(view)))
	for i := range view {
		r := &view[i]
		dst = binary.AppendVarint(dst, r.ID)
		dst = binary.AppendVarint(dst, r.DealerID)
		dst = binary.AppendVarint(dst, r.UpdatedAt.Unix())
		dst = binary.AppendUvarint(dst, uint64(r.UpdatedAt.Nanosecond()))
		dst = binary.AppendVarint(dst, int64(r.DurationSeconds))
		for _, s := range viewStrings(r) {
			dst = binary.AppendUvarint(dst, uint64(len(*s)))
			dst = append(dst, *s...)
		}
	}
	return dst
}

var errBadView = errors.New("mapping: malformed view")

// DecodeView decodes the cache form of a view. Timestamps come back in UTC.
// The strings share one copy of b, which the caller may reuse afterwards.
func DecodeView(b []byte) ([]upstream.ContentRecord, error) {
	if len(b) < len(viewMagic) || string(b[:len(viewMagic)]) != viewMagic {
		return nil, errBadView
	}
	src := string(b) // one copy; every string below is a substring of it
	d := viewDecoder{src: src, at: len(viewMagic)}
	n := d.uvarint()
	// Each record takes at least 5+13 bytes: a count beyond that is corrupt
	// (and must not size an allocation).
	if d.err != nil || n > uint64(len(src)-d.at)/18 {
		return nil, errBadView
	}
	out := make([]upstream.ContentRecord, n)
	for i := range out {
		r := &out[i]
		r.ID = d.varint()
		r.DealerID = d.varint()
		sec := d.varint()
		nsec := d.uvarint()
		if nsec >= 1e9 {
			return nil, errBadView
		}
		r.UpdatedAt = time.Unix(sec, int64(nsec)).UTC()
		dur := d.varint()
		r.DurationSeconds = int(dur)
		if int64(r.DurationSeconds) != dur {
			return nil, errBadView
		}
		for _, s := range viewStrings(r) {
			*s = d.str()
		}
		if d.err != nil {
			return nil, d.err
		}
	}
	if d.at != len(src) {
		return nil, errBadView
	}
	return out, nil
}

type viewDecoder struct {
	src string
	at  int
	err error
}

func (d *viewDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	var x uint64
	var s uint
	for i := 0; i < binary.MaxVarintLen64; i++ {
		if d.at >= len(d.src) {
			break
		}
		c := d.src[d.at]
		d.at++
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				break
			}
			return x | uint64(c)<<s
		}
		x |= uint64(c&0x7f) << s
		s += 7
	}
	d.err = errBadView
	return 0
}

func (d *viewDecoder) varint() int64 {
	ux := d.uvarint()
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x
}

func (d *viewDecoder) str() string {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.src)-d.at) {
		d.err = errBadView
		return ""
	}
	s := d.src[d.at : d.at+int(n)]
	d.at += int(n)
	return s
}
