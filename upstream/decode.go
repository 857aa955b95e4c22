package upstream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The answers a cache miss reads (vehicle and offer pages and records,
// content listings) are decoded field by field below instead of by
// reflection: only fields that can become public are built; every other
// member, internal-only fields included (source ids, lookup cascades,
// technical-data directories, template ids, payloads, rendered markup), is
// skipped by the tokenizer without making a string, map or slice of it.
// Strings are substrings of one copy of the body, so a record costs no
// allocation per field. The result equals what the reflection decoder
// (decodeOptions) makes of the same body with the internal fields cleared;
// TestFieldDecoderEqualsReflection and FuzzFieldDecoder prove it.
//
// Measured in BenchmarkDecode (upstream), see the README's performance
// section.

// fieldReader is one decoding: a tokenizer over the body and a string copy
// of it that unescaped strings are cut from.
type fieldReader struct {
	dec     jsontext.Decoder
	buf     bytes.Buffer
	src     string
	scratch []byte // unquoting buffer of escaped strings
}

var readers = sync.Pool{New: func() any { return new(fieldReader) }}

// readerOptions are decodeOptions' tokenizer options: as lenient as
// encoding/json on duplicate names and invalid UTF-8.
var readerOptions = json.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

// decodeFields decodes body into out when out is one of the types decoded
// field by field; ok is false for any other type. The inventory types go
// to the scanner made for them (pagescan.go), content lists to the field
// reader.
func decodeFields(body []byte, out any) (ok bool, err error) {
	if ok, err := scanInventory(body, out); ok {
		return true, err
	}
	return readFields(body, out)
}

// readFields decodes body into out with the field reader over jsontext
// when out is one of the types it knows; ok is false for any other type.
// It is the decoder of content lists, and the reference the inventory
// scanner is proven equal to.
func readFields(body []byte, out any) (ok bool, err error) {
	switch out.(type) {
	case *VehiclePage, *Vehicle, *OfferPage, *offerListing, *Offer, *contentList:
	default:
		return false, nil
	}
	r := readers.Get().(*fieldReader)
	r.buf = *bytes.NewBuffer(body)
	r.src = string(body)
	r.dec.Reset(&r.buf, readerOptions)
	switch o := out.(type) {
	case *VehiclePage:
		err = r.vehiclePage(o)
	case *Vehicle:
		err = r.vehicle(o)
	case *OfferPage:
		err = r.offerPage(o)
	case *offerListing:
		err = r.offerListing(o)
	case *Offer:
		err = r.offer(o)
	case *contentList:
		err = r.contentList(o)
	}
	if err == nil {
		err = r.end()
	}
	// Keep neither the body nor its copy in the pool.
	r.buf = bytes.Buffer{}
	r.src = ""
	if cap(r.scratch) > 64<<10 {
		r.scratch = nil // do not pool a large buffer
	}
	r.dec.Reset(&r.buf)
	readers.Put(r)
	return true, err
}

// end checks that nothing but white space follows the value.
func (r *fieldReader) end() error {
	if _, err := r.dec.ReadToken(); err != io.EOF {
		if err == nil {
			err = errors.New("data after the top-level value")
		}
		return err
	}
	return nil
}

var errNotObject = errors.New("want a JSON object")

// object reads an object (null leaves the target as it is), calling field
// for every member name; field reads the member's value.
func (r *fieldReader) object(field func(name string) error) error {
	tok, err := r.dec.ReadToken()
	if err != nil {
		return err
	}
	switch tok.Kind() {
	case 'n':
		return nil
	case '{':
	default:
		return errNotObject
	}
	for {
		switch r.dec.PeekKind() {
		case '}':
			_, err := r.dec.ReadToken()
			return err
		case '"':
			name, err := r.str()
			if err != nil {
				return err
			}
			if err := field(name); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		default:
			_, err := r.dec.ReadToken()
			if err == nil {
				err = errNotObject
			}
			return err
		}
	}
}

// array reads an array, calling elem for every element; elem reads the
// element. null reports true and reads no element.
func (r *fieldReader) array(elem func() error) (null bool, err error) {
	tok, err := r.dec.ReadToken()
	if err != nil {
		return false, err
	}
	switch tok.Kind() {
	case 'n':
		return true, nil
	case '[':
	default:
		return false, errors.New("want a JSON array")
	}
	for {
		switch r.dec.PeekKind() {
		case ']':
			_, err := r.dec.ReadToken()
			return false, err
		case 0:
			_, err := r.dec.ReadToken()
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return false, err
		default:
			if err := elem(); err != nil {
				return false, err
			}
		}
	}
}

// list reads an array of T into *dst the way the reflection decoder does:
// null is a nil slice, [] an empty one; elem reads one element into its
// argument.
func list[T any](r *fieldReader, dst *[]T, elem func(*T) error) error {
	s := (*dst)[:0]
	null, err := r.array(func() error {
		var zero T
		s = append(s, zero)
		return elem(&s[len(s)-1])
	})
	if null {
		s = nil
	} else if s == nil {
		s = []T{}
	}
	*dst = s
	return err
}

func (r *fieldReader) skip() error { return r.dec.SkipValue() }

// value reads one scalar and returns its raw bytes and where they start in
// the body.
func (r *fieldReader) value() (jsontext.Value, int, error) {
	v, err := r.dec.ReadValue()
	if err != nil {
		return nil, 0, err
	}
	return v, int(r.dec.InputOffset()) - len(v), nil
}

func kindError(want string, v jsontext.Value) error {
	return fmt.Errorf("want %s, got %s", want, v.Kind())
}

// str reads a string (null is ""). A string without escapes and with valid
// UTF-8 is a substring of the body's copy; any other is unquoted the way
// the reflection decoder does it (invalid UTF-8 and a \u escape of a lone
// surrogate become U+FFFD).
func (r *fieldReader) str() (string, error) {
	s, _, err := r.strOrNull()
	return s, err
}

// strOrNull is str that also says whether the value was null.
func (r *fieldReader) strOrNull() (string, bool, error) {
	v, at, err := r.value()
	if err != nil {
		return "", false, err
	}
	switch v.Kind() {
	case '"':
	case 'n':
		return "", true, nil
	default:
		return "", false, kindError("a string", v)
	}
	s, err := r.unquote(v, at)
	return s, false, err
}

func (r *fieldReader) unquote(v jsontext.Value, at int) (string, error) {
	body := v[1 : len(v)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return r.src[at+1 : at+len(v)-1], nil
	}
	if utf8.Valid(body) {
		var err error
		if r.scratch, err = jsontext.AppendUnquote(r.scratch[:0], v); err == nil {
			return string(r.scratch), nil
		}
		// A lone surrogate (\ud83d), which AppendUnquote refuses: the
		// general path below makes it U+FFFD, as the reflection decoder
		// does.
	}
	return unquoteLenient(v)
}

// unquoteLenient unquotes the JSON string q the way the reflection decoder
// (decodeOptions) does: invalid UTF-8 and a \u escape of a lone surrogate
// become U+FFFD. It is the slow path of the decoders' unquoting: for the
// strings jsontext.AppendUnquote refuses or does not read as the reflection
// decoder does.
func unquoteLenient(q []byte) (string, error) {
	var s string
	err := json.Unmarshal(q, &s, readerOptions)
	return s, err
}

func (r *fieldReader) number(want string) (string, bool, error) {
	v, at, err := r.value()
	if err != nil {
		return "", false, err
	}
	switch v.Kind() {
	case '0':
		return r.src[at : at+len(v)], true, nil
	case 'n':
		return "", false, nil
	default:
		return "", false, kindError(want, v)
	}
}

func (r *fieldReader) int64() (int64, error) {
	s, ok, err := r.number("an integer")
	if !ok || err != nil {
		return 0, err
	}
	return strconv.ParseInt(s, 10, 64)
}

func (r *fieldReader) int() (int, error) {
	n, err := r.int64()
	if err == nil && int64(int(n)) != n {
		return 0, strconv.ErrRange
	}
	return int(n), err
}

func (r *fieldReader) float() (float64, error) {
	s, ok, err := r.number("a number")
	if !ok || err != nil {
		return 0, err
	}
	return strconv.ParseFloat(s, 64)
}

// floatPtr reads a number or null (nil).
func (r *fieldReader) floatPtr() (*float64, error) {
	s, ok, err := r.number("a number")
	if !ok || err != nil {
		return nil, err
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, err
	}
	return &f, nil
}

func (r *fieldReader) bool() (bool, error) {
	v, _, err := r.value()
	if err != nil {
		return false, err
	}
	switch v.Kind() {
	case 't':
		return true, nil
	case 'f', 'n':
		return false, nil
	default:
		return false, kindError("a boolean", v)
	}
}

// time reads an RFC 3339 timestamp (null is the zero time).
func (r *fieldReader) time() (time.Time, error) {
	s, null, err := r.strOrNull()
	if err != nil || null {
		return time.Time{}, err
	}
	t, err := parseTimestamp(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad timestamp %q", s)
	}
	return t, nil
}

// parseTimestamp parses an RFC 3339 timestamp exactly as the reflection
// decoder does: time.Time's UnmarshalText (time.Parse with the RFC 3339
// layout) followed by the checks go-json-experiment's time arshaler adds
// for what time.Parse lets through (https://go.dev/issue/54580): a
// one-digit hour, a comma before the fraction, an offset hour above 23 or
// minute above 59. The order of the checks is the arshaler's (the first
// one guards the index of the second).
func parseTimestamp(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, err
	}
	dec2 := func(s string) byte { return 10*(s[0]-'0') + (s[1] - '0') }
	switch {
	case s[len("2006-01-02T")+1] == ':':
		return time.Time{}, errors.New("one-digit hour")
	case s[len("2006-01-02T15:04:05")] == ',':
		return time.Time{}, errors.New("comma before the fraction of a second")
	case s[len(s)-1] != 'Z':
		if dec2(s[len(s)-len("07:00"):]) >= 24 || dec2(s[len(s)-len("00"):]) >= 60 {
			return time.Time{}, errors.New("time zone offset out of range")
		}
	}
	return t, nil
}

func (r *fieldReader) strings() ([]string, error) {
	var out []string
	err := list(r, &out, func(s *string) (err error) {
		*s, err = r.str()
		return err
	})
	return out, err
}

func (r *fieldReader) vehiclePage(p *VehiclePage) error {
	return r.object(func(name string) (err error) {
		switch name {
		case "total":
			p.Total, err = r.int()
		case "items":
			err = list(r, &p.Items, r.vehicle)
		default:
			err = r.skip()
		}
		return err
	})
}

func (r *fieldReader) vehicle(v *Vehicle) error {
	return r.object(func(name string) (err error) {
		switch name {
		case "id_auto":
			v.IDAuto, err = r.str()
		case "dealer_id":
			v.DealerID, err = r.int64()
		case "service":
			v.Service, err = r.str()
		case "make":
			v.Make, err = r.str()
		case "model":
			v.Model, err = r.str()
		case "trim":
			v.Trim, err = r.str()
		case "catalog_type":
			v.CatalogType, err = r.str()
		case "version_code":
			v.VersionCode, err = r.str()
		case "upfits":
			err = list(r, &v.Upfits, r.upfit)
		case "sale_price_eur":
			v.SalePrice, err = r.floatPtr()
		case "cover_url":
			v.CoverURL, err = r.str()
		case "media_urls":
			v.MediaURLs, err = r.strings()
		case "has_podcast":
			v.HasPodcast, err = r.bool()
		case "has_video":
			v.HasVideo, err = r.bool()
		case "ai_content":
			if r.dec.PeekKind() == 'n' {
				v.AIContent = nil
				return r.skip()
			}
			// A repeated ai_content merges into the first, as the
			// reflection decoder does (the last value of each field wins).
			if v.AIContent == nil {
				v.AIContent = new(AIContent)
			}
			err = r.aiContent(v.AIContent)
		case "confirmed_optionals":
			v.ConfirmedOptionals, err = r.strings()
		case "confirmed_packages":
			v.ConfirmedPackages, err = r.strings()
		case "updated_at":
			v.UpdatedAt, err = r.time()
		default: // source_ids, lookup_cascade, tech_data_dir, payloads, raw_version_optionals, unknown
			err = r.skip()
		}
		return err
	})
}

func (r *fieldReader) upfit(u *Upfit) error {
	return r.object(func(name string) (err error) {
		switch name {
		case "code":
			u.Code, err = r.str()
		case "slug":
			u.Slug, err = r.str()
		case "label":
			u.Label, err = r.str()
		case "dealer_alias":
			u.DealerAlias, err = r.str()
		case "family":
			u.Family, err = r.str()
		case "primary":
			u.Primary, err = r.bool()
		default: // source_id, lookup_cascade, unknown
			err = r.skip()
		}
		return err
	})
}

func (r *fieldReader) aiContent(a *AIContent) error {
	return r.object(func(name string) (err error) {
		switch name {
		case "headline":
			a.Headline, err = r.str()
		case "description":
			a.Description, err = r.str()
		case "highlights":
			a.Highlights, err = r.strings()
		default: // render_template, seo_payload, prompt_id, unknown
			err = r.skip()
		}
		return err
	})
}

func (r *fieldReader) offerPage(p *OfferPage) error {
	return r.object(func(name string) (err error) {
		switch name {
		case "total":
			p.Total, err = r.int()
		case "items":
			err = list(r, &p.Items, r.offer)
		default:
			err = r.skip()
		}
		return err
	})
}

// offerListing is offerPage with every offer's quotations skipped (see
// the scanner's offerListing).
func (r *fieldReader) offerListing(p *offerListing) error {
	return r.object(func(name string) (err error) {
		switch name {
		case "total":
			p.Total, err = r.int()
		case "items":
			err = list(r, &p.Items, r.listedOffer)
		default:
			err = r.skip()
		}
		return err
	})
}

func (r *fieldReader) offer(o *Offer) error { return r.offerOf(o, true) }

func (r *fieldReader) listedOffer(o *Offer) error { return r.offerOf(o, false) }

// offerOf reads an offer, its quotations only when quotations is true.
func (r *fieldReader) offerOf(o *Offer, quotations bool) error {
	return r.object(func(name string) (err error) {
		if name == "quotations" && !quotations {
			return r.skip()
		}
		switch name {
		case "id_offerta":
			o.IDOfferta, err = r.int64()
		case "dealer_id":
			o.DealerID, err = r.int64()
		case "slug":
			o.Slug, err = r.str()
		case "make":
			o.Make, err = r.str()
		case "model":
			o.Model, err = r.str()
		case "version":
			o.Version, err = r.str()
		case "cover_url":
			o.CoverURL, err = r.str()
		case "quotations":
			err = list(r, &o.Quotations, r.quotation)
		case "updated_at":
			o.UpdatedAt, err = r.time()
		default: // source_ids, lookup_cascade, render_payload, unknown
			err = r.skip()
		}
		return err
	})
}

func (r *fieldReader) quotation(q *Quotation) error {
	return r.object(func(name string) (err error) {
		switch name {
		case "months":
			q.Months, err = r.int()
		case "km_per_year":
			q.KmPerYear, err = r.int()
		case "monthly_fee_eur":
			q.MonthlyFee, err = r.float()
		default: // internal_cost_eur, source_rate_id, unknown
			err = r.skip()
		}
		return err
	})
}

func (r *fieldReader) contentList(l *contentList) error {
	seen := false
	err := r.object(func(name string) (err error) {
		switch name {
		case "items":
			seen = true
			err = list(r, &l.Items, r.content)
		default:
			err = r.skip()
		}
		return err
	})
	if err == nil && !seen {
		err = errNoItems
	}
	return err
}

func (r *fieldReader) content(c *ContentRecord) error {
	return r.object(func(name string) (err error) {
		switch name {
		case "id":
			c.ID, err = r.int64()
		case "type":
			c.Type, err = r.str()
		case "dealer_id":
			c.DealerID, err = r.int64()
		case "slug":
			c.Slug, err = r.str()
		case "topic":
			c.Topic, err = r.str()
		case "category":
			c.Category, err = r.str()
		case "brand":
			c.Brand, err = r.str()
		case "title":
			c.Title, err = r.str()
		case "h1":
			c.H1, err = r.str()
		case "meta_description":
			c.MetaDescription, err = r.str()
		case "excerpt":
			c.Excerpt, err = r.str()
		case "body_text":
			c.BodyText, err = r.str()
		case "url":
			c.URL, err = r.str()
		case "updated_at":
			c.UpdatedAt, err = r.time()
		case "source_provider":
			c.SourceProvider, err = r.str()
		case "override_of":
			c.OverrideOf, err = r.int64()
		case "hidden_for_dealer":
			c.HiddenForDealer, err = r.bool()
		case "media_url":
			c.MediaURL, err = r.str()
		case "thumbnail_url":
			c.ThumbnailURL, err = r.str()
		case "duration_seconds":
			c.DurationSeconds, err = r.int()
		case "transcript":
			c.Transcript, err = r.str()
		default: // template_id, source_id, body_html, render_payload, seo_payload, unknown
			err = r.skip()
		}
		return err
	})
}
