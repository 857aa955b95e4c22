package upstream

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// DecodeBody is decodeBody, for the benchmarks of package upstream_test.
var DecodeBody = decodeBody

// ContentList is the body type of the content endpoint, for tests.
type ContentList = contentList

// DecodeFields is the field-by-field decoder alone; ok is false for a type
// it does not decode.
var DecodeFields = decodeFields

// DecodeFieldReader is the field reader over jsontext alone, for every
// type it knows (the inventory ones included): the reference the
// inventory scanner is compared with.
var DecodeFieldReader = readFields

// DecodeReflect is the reflection decoder alone (decodeOptions), with
// the field decoders' one rule beyond it: a content list must have its
// items member (errNoItems; null is an empty list).
func DecodeReflect(body []byte, out any) error {
	if err := json.Unmarshal(body, out, decodeOptions); err != nil {
		return err
	}
	if _, ok := out.(*contentList); ok {
		var has struct {
			Items jsontext.Value `json:"items"`
		}
		if err := json.Unmarshal(body, &has, decodeOptions); err != nil {
			return err
		}
		if has.Items == nil {
			return errNoItems
		}
	}
	return nil
}

// UnquoteFast runs the scanner's one-pass unquoting on the JSON string q
// (quotes included): the value and true, or false where the scanner
// falls back to the general path.
func UnquoteFast(q []byte) (string, bool) {
	var s invScanner
	s.b = q
	if !s.unquoteFast(0, safeRun(q, 1)) {
		return "", false
	}
	return string(s.scratch), s.i == len(q)
}

// DecodeContentPage runs ContentPage's decoder (contentPageSink) on body.
func DecodeContentPage(body []byte, pick func(keys []ContentRecord) []int32) ([]ContentRecord, error) {
	sink := contentPageSink{pick: pick}
	err := sink.decodeBody(body)
	return sink.out, err
}

// SkipStringFast runs the scanner's copy-free skip of the JSON string at
// the start of b: the position after it and true, or false where the
// scanner falls back to unquoteFast and the general path.
func SkipStringFast(b []byte) (int, bool) {
	var s invScanner
	s.b = b
	if !s.skipStringFast() {
		return 0, false
	}
	return s.i, true
}

// SkipStringGeneral runs skipString's paths after the copy-free skip
// (unquoteFast, then stringView) on the JSON string at the start of b: the
// position after it, or the error that refuses it.
func SkipStringGeneral(b []byte) (int, error) {
	var s invScanner
	s.b = b
	if s.unquoteFast(0, safeRun(b, 1)) {
		return s.i, nil
	}
	if _, _, err := s.stringView(); err != nil {
		return 0, err
	}
	return s.i, nil
}

// ConsumeStringEnd runs consumeString (skip's check of a string value) on
// the JSON string at the start of b.
func ConsumeStringEnd(b []byte) (int, error) {
	var s invScanner
	s.b = b
	return s.consumeString()
}

// UnquoteFastEnd runs unquoteFast on the JSON string at the start of b:
// the position after it and true, or false where it falls back.
func UnquoteFastEnd(b []byte) (int, bool) {
	var s invScanner
	s.b = b
	if !s.unquoteFast(0, safeRun(b, 1)) {
		return 0, false
	}
	return s.i, true
}

// TimestampCases are timestamps and whether the reflection decoder accepts
// them (stopmap_test.go).
var TimestampCases = timestampCases

// OfferListing is the offer listing's page (offerListing): an OfferPage
// decoded without its offers' quotations.
type OfferListing = offerListing

// ArenaCap is the capacity of the arena p keeps for its next decoding
// (ReuseStrings).
func ArenaCap(p *VehiclePage) int { return cap(p.mem.arena) }

// BodyCap is the capacity of the copy of the body p keeps for its next
// decoding (ReuseStrings), UpfitsCap that of its block of upfits.
func BodyCap(p *VehiclePage) int { return cap(p.mem.body) }

// UpfitsCap: see BodyCap.
func UpfitsCap(p *VehiclePage) int { return cap(p.mem.upfits) }

// OfferBodyCap is BodyCap for an offer page (ListOffersInto).
func OfferBodyCap(p *OfferPage) int { return cap(p.mem.body) }
