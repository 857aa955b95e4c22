package upstream_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
	"github.com/dealer-edge/dealer-edge/upstream/fake/corpus"
)

// reusedSeed is what compareReused's page decodes before the input: its
// records have upfits, prices and strings with escapes, so the input's are
// cut from memory in use before.
const reusedSeed = `{"total":2,"items":[{"id_auto":"s\\u00e8","upfits":[{"code":"A","label":"x\\ny"},{"code":"B"}],"sale_price_eur":1},{"id_auto":"t","upfits":[{"code":"C"}],"sale_price_eur":2.5}]}`

// werrOf is the field reader's error for a vehicle page of body.
func werrOf(body []byte) error {
	_, err := upstream.DecodeFieldReader(body, new(upstream.VehiclePage))
	return err
}

// compareReused decodes body with the inventory scanner into a page with
// ReuseStrings that has decoded reusedSeed before (as the listing fill
// reuses its pooled page), and fails unless it accepts what the field
// reader accepts (werr nil) with the same records as want (an empty
// slice where want's is nil: a page whose items member is absent keeps
// the room of its Items).
func compareReused(t testing.TB, body []byte, want *upstream.VehiclePage, werr error) {
	t.Helper()
	var pg upstream.VehiclePage
	pg.ReuseStrings()
	if _, err := upstream.DecodeFields([]byte(reusedSeed), &pg); err != nil {
		t.Fatal(err)
	}
	clear(pg.Items)
	pg.Total, pg.Items = 0, pg.Items[:0]
	in := append([]byte(nil), body...)
	_, err := upstream.DecodeFields(in, &pg)
	clear(in) // the page's strings are its own
	if (err == nil) != (werr == nil) {
		t.Fatalf("input %q: reused page error %v, field reader error %v", body, err, werr)
	}
	items := pg.Items
	if want.Items == nil && len(items) == 0 {
		items = nil // no items member: the reused page keeps its empty slice
	}
	if err == nil && (pg.Total != want.Total || !reflect.DeepEqual(items, want.Items)) {
		t.Fatalf("input %q: reused page\n%#v\nfield reader\n%#v", body, pg.Items, want.Items)
	}
}

// compareReusedOffers is compareReused for an offer listing's page
// (ListOffersInto).
func compareReusedOffers(t testing.TB, body []byte, want *upstream.OfferListing) {
	t.Helper()
	var pg upstream.OfferPage
	pg.ReuseStrings()
	seed := `{"total":2,"items":[{"id_offerta":1,"slug":"s\\u00e8","make":"a\\nb","quotations":[{"months":36}]},{"id_offerta":2,"model":"m"}]}`
	if _, err := upstream.DecodeFields([]byte(seed), (*upstream.OfferListing)(&pg)); err != nil {
		t.Fatal(err)
	}
	clear(pg.Items)
	pg.Total, pg.Items = 0, pg.Items[:0]
	in := append([]byte(nil), body...)
	_, err := upstream.DecodeFields(in, (*upstream.OfferListing)(&pg))
	clear(in)
	_, werr := upstream.DecodeFieldReader(body, new(upstream.OfferListing))
	if (err == nil) != (werr == nil) {
		t.Fatalf("input %q: reused offer page error %v, field reader error %v", body, err, werr)
	}
	items := pg.Items
	if want.Items == nil && len(items) == 0 {
		items = nil
	}
	if err == nil && (pg.Total != want.Total || !reflect.DeepEqual(items, want.Items)) {
		t.Fatalf("input %q: reused offer page\n%#v\nfield reader\n%#v", body, pg.Items, want.Items)
	}
}

// inventoryKinds make the targets of the inventory scanner.
var inventoryKinds = []func() any{
	func() any { return new(upstream.VehiclePage) },
	func() any { return new(upstream.Vehicle) },
	func() any { return new(upstream.OfferPage) },
	func() any { return new(upstream.Offer) },
	func() any { return new(upstream.OfferListing) },
}

// compareScanner decodes body into a fresh target of mk with the inventory
// scanner (DecodeFields) and with the field reader over jsontext, and
// fails unless both accept and agree (reflect.DeepEqual: nil and empty
// slices told apart) or both reject.
func compareScanner(t testing.TB, body []byte, mk func() any) (accepted bool) {
	t.Helper()
	got, want := mk(), mk()
	ok, gerr := upstream.DecodeFields(body, got)
	if !ok {
		t.Fatalf("%T: not decoded by the scanner", got)
	}
	if _, werr := upstream.DecodeFieldReader(body, want); (gerr == nil) != (werr == nil) {
		t.Fatalf("input %q (%T):\nscanner error %v\nfield reader error %v", body, got, gerr, werr)
	}
	switch p := want.(type) {
	case *upstream.VehiclePage:
		compareReused(t, body, p, werrOf(body))
	case *upstream.OfferListing:
		compareReusedOffers(t, body, p)
	}
	if gerr != nil {
		return false
	}
	if !reflect.DeepEqual(got, want) {
		g, w, _ := same(t, got, want)
		t.Fatalf("input %q (%T):\nscanner      %s\nfield reader %s\n(%#v\n%#v)", body, got, g, w, got, want)
	}
	return true
}

// TestInventoryScannerEqualsFieldReader: for every inventory answer the
// fake can give (every dealer's vehicle pages of both services in both
// views, its offer pages, the detail of every vehicle and offer on them),
// the scanner gives exactly what the field reader gives.
func TestInventoryScannerEqualsFieldReader(t *testing.T) {
	h := fake.NewServer(fake.Options{}).Handler()
	type answer struct {
		uri string
		mk  func() any
	}
	var answers []answer
	for _, d := range corpus.DealerIDs() {
		for _, view := range []string{"summary", "full"} {
			for _, svc := range []string{"REWIND", "NOS"} {
				for _, ps := range []int{20, 1000} {
					answers = append(answers, answer{fmt.Sprintf("/inventory/v1/dealers/%d/vehicles?service=%s&page_size=%d&view=%s", d, svc, ps, view), inventoryKinds[0]})
				}
			}
		}
		answers = append(answers, answer{fmt.Sprintf("/inventory/v1/dealers/%d/offers?page_size=1000", d), inventoryKinds[2]})
		for _, ps := range []int{1, 20, 100, 1000} {
			answers = append(answers, answer{fmt.Sprintf("/inventory/v1/dealers/%d/offers?page_size=%d", d, ps), inventoryKinds[4]})
		}
	}
	details := 0
	for i := 0; i < len(answers); i++ {
		a := answers[i]
		body := fakeBody(t, h, a.uri)
		if !compareScanner(t, body, a.mk) {
			t.Fatalf("%s: refused", a.uri)
		}
		v := a.mk()
		if _, err := upstream.DecodeFields(body, v); err != nil {
			t.Fatal(err)
		}
		switch p := v.(type) {
		case *upstream.VehiclePage:
			if !strings.Contains(a.uri, "view=full") || !strings.Contains(a.uri, "page_size=1000") {
				break
			}
			for _, v := range p.Items {
				answers = append(answers, answer{fmt.Sprintf("/inventory/v1/dealers/%d/vehicles/%s", v.DealerID, v.IDAuto), inventoryKinds[1]})
				details++
			}
		case *upstream.OfferPage:
			for _, o := range p.Items {
				answers = append(answers, answer{fmt.Sprintf("/inventory/v1/dealers/%d/offers/%d", o.DealerID, o.IDOfferta), inventoryKinds[3]})
				details++
			}
		}
	}
	if details < 100 {
		t.Fatalf("%d answers, %d details: too few to prove anything", len(answers), details)
	}
}

// TestOfferListingIsOfferPageWithoutQuotations: over every page of
// every page size of every dealer's offers in the fake's corpus, the
// listing's page (ListOffers) is exactly the whole OfferPage with each
// offer's Quotations nil, and the whole pages do carry quotations (so the
// skip is exercised); on the scanner's corner cases it accepts whatever
// the whole page accepts, with the same result but the quotations.
func TestOfferListingIsOfferPageWithoutQuotations(t *testing.T) {
	h := fake.NewServer(fake.Options{}).Handler()
	withoutQuotations := func(p upstream.OfferPage) upstream.OfferPage {
		for i := range p.Items {
			p.Items[i].Quotations = nil
		}
		return p
	}
	pages, quoted := 0, 0
	for _, d := range corpus.DealerIDs() {
		for _, ps := range []int{1, 20, 100, 1000} {
			for page := 1; ; page++ {
				body := fakeBody(t, h, fmt.Sprintf("/inventory/v1/dealers/%d/offers?page=%d&page_size=%d", d, page, ps))
				var whole upstream.OfferPage
				var listed upstream.OfferListing
				if _, err := upstream.DecodeFields(body, &whole); err != nil {
					t.Fatal(err)
				}
				if _, err := upstream.DecodeFields(body, &listed); err != nil {
					t.Fatal(err)
				}
				for _, o := range whole.Items {
					quoted += len(o.Quotations)
				}
				if want := withoutQuotations(whole); !reflect.DeepEqual(upstream.OfferPage(listed), want) {
					t.Fatalf("dealer %d page %d of %d:\nlisted %#v\nwant   %#v", d, page, ps, listed, want)
				}
				pages++
				if len(whole.Items) < ps {
					break
				}
			}
		}
	}
	if pages < 50 || quoted < 100 {
		t.Fatalf("%d pages, %d quotations: too few to prove anything", pages, quoted)
	}
	for _, body := range []string{
		`{"total":1,"items":[{"id_offerta":7,"quotations":[{"months":36,"km_per_year":10000,"monthly_fee_eur":299.9}],"make":"Kia"},{"quotations":null},{"quotations":[]}]}`,
		`{"items":[{"quotations":[{"x":[1,{"y":"\ud800"}]}],"quotations":[{"months":1}]}],"items":[{"slug":"s"}]}`,
		`{"items":null,"total":-0}`,
	} {
		var whole upstream.OfferPage
		var listed upstream.OfferListing
		_, werr := upstream.DecodeFields([]byte(body), &whole)
		_, lerr := upstream.DecodeFields([]byte(body), &listed)
		if werr != nil || lerr != nil {
			t.Fatalf("%s: whole %v, listed %v", body, werr, lerr)
		}
		if want := withoutQuotations(whole); !reflect.DeepEqual(upstream.OfferPage(listed), want) {
			t.Fatalf("%s:\nlisted %#v\nwant   %#v", body, listed, want)
		}
	}
}

// TestInventoryScannerCases: corner cases of JSON, one by one, for every
// inventory type: the scanner accepts what the field reader accepts and
// gives the same result, and refuses what it refuses.
func TestInventoryScannerCases(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	cases := []struct {
		name string
		body string
		ok   bool // for a *Vehicle target; -1 cases are checked for agreement only
	}{
		{"empty object", `{}`, true},
		{"null", `null`, true},
		{"white space", " \t\r\n{ \"make\" : \"a\" , \"model\" :\n\"b\" } \n", true},
		{"null fields", `{"id_auto":null,"dealer_id":null,"upfits":null,"sale_price_eur":null,"ai_content":null,"updated_at":null,"has_video":null,"media_urls":null}`, true},
		{"empty lists", `{"upfits":[],"media_urls":[],"confirmed_optionals":[ ],"items":[],"quotations":[]}`, true},
		{"null elements", `{"upfits":[null,{"code":"a"}],"media_urls":[null,"x"],"items":[null],"quotations":[null]}`, true},
		{"escapes", `{"make":"Fiat \"500\"\n\u00e8\ud83d\ude00","model":"a\/b"}`, true},
		{"escaped names", `{"m\u0061ke":"a","\u006dodel":"b"}`, true},
		{"non-ASCII", `{"make":"Citroën","model":"ë-C4 ✓"}`, true},
		{"invalid utf-8", "{\"make\":\"a\xffb\",\"model\":\"\xe8\\n\",\"x\xff\":1}", true},
		{"invalid utf-8 in a skipped value", "{\"tech_data_dir\":\"\xff\\ud800\"}", true},
		{"lone surrogate kept", `{"make":"\ud800"}`, true}, // U+FFFD, as the reflection decoder makes it
		{"lone low surrogate kept", `{"make":"a\udc00\ud800\u0041"}`, true},
		{"lone surrogate skipped", `{"tech_data_dir":"\ud800x"}`, true},
		{"lone surrogate in a name", `{"x\ud800":1,"mak\u0065\udc00":"a"}`, true},
		{"lone surrogate in a skipped name", `{"source_ids":{"\ud800":1}}`, true},
		{"DEL", "{\"make\":\"a\x7fb\"}", true},
		{"control character", "{\"make\":\"a\x01b\"}", false},
		{"control character skipped", "{\"x\":\"a\tb\"}", false},
		{"bad escape", `{"make":"\x"}`, false},
		{"short unicode escape", `{"x":"\u12"}`, false},
		{"internal fields of any shape", `{"source_ids":[1,{"a":null}],"lookup_cascade":"x","tech_data_dir":{"x":[]},"upfits":[{"source_id":7,"lookup_cascade":{}}]}`, true},
		{"unknown members", `{"new_field":{"deep":[1,2,{"x":true}]},"id_auto":"x"}`, true},
		{"numbers skipped", `{"x":[-0,0.5,1e3,-1.25E-7,12]}`, true},
		{"bad numbers skipped", `{"x":01}`, false},
		{"bad number minus", `{"x":-}`, false},
		{"bad number dot", `{"x":1.}`, false},
		{"bad number exponent", `{"x":1e}`, false},
		{"duplicate names, last wins", `{"make":"a","make":"b","upfits":[{"code":"x"},{"code":"y"}],"upfits":[{"code":"z"}]}`, true},
		{"duplicate items", `{"items":[{"make":"a"},{"make":"b"}],"items":[{"model":"c"}]}`, true},
		{"fractional seconds and offset", `{"updated_at":"2026-01-02T03:04:05.123456789+01:00"}`, true},
		{"price", `{"sale_price_eur":12345.67}`, true},
		{"price exponent", `{"sale_price_eur":1.5e3}`, true},
		{"whole price", `{"sale_price_eur":15390}`, true},
		{"zero price", `{"sale_price_eur":0}`, true},
		{"negative price", `{"sale_price_eur":-15390}`, true},
		{"whole price of 15 digits", `{"sale_price_eur":999999999999999}`, true},
		{"whole price of 16 digits", `{"sale_price_eur":9007199254740993}`, true},
		{"whole price of 20 digits", `{"sale_price_eur":12345678901234567890}`, true},
		{"whole price then a fraction", `{"sale_price_eur":15390.0}`, true},
		{"whole price then an exponent", `{"sale_price_eur":15390E-2}`, true},
		{"price with a leading zero", `{"sale_price_eur":015390}`, false},
		{"price at the end of the input", `{"sale_price_eur":15390`, false},
		{"skipped object with escaped names", `{"source_ids":{"d\u006ds":"x","feed\"":1,"":null}}`, true},
		{"skipped object with a bad name", "{\"source_ids\":{\"a\x01\":1}}", false},
		{"price out of range", `{"sale_price_eur":1e400}`, false},
		{"negative zero", `{"dealer_id":-0}`, true},
		{"integer out of range", `{"dealer_id":9223372036854775808}`, false},
		{"wrong type", `{"dealer_id":"101"}`, false},
		{"fraction in an integer", `{"dealer_id":1.5}`, false},
		{"exponent in an integer", `{"dealer_id":1e2}`, false},
		{"bad time", `{"updated_at":"yesterday"}`, false},
		{"empty time", `{"updated_at":""}`, false},
		{"time not a string", `{"updated_at":1}`, false},
		{"bad literal", `{"has_video":tru}`, false},
		{"bad null", `{"make":nul}`, false},
		{"literal run on", `{"has_video":truex}`, false},
		{"ai content", `{"ai_content":{"headline":"h","highlights":["a",null],"seo_payload":{"x":[1]}}}`, true},
		{"ai content not an object", `{"ai_content":[]}`, false},
		{"trailing data", `{} {}`, false},
		{"trailing comma", `{"make":"a",}`, false},
		{"trailing comma in an array", `{"upfits":[{},]}`, false},
		{"trailing comma skipped", `{"x":[1,]}`, false},
		{"leading comma", `{,"make":"a"}`, false},
		{"missing comma", `{"make":"a" "model":"b"}`, false},
		{"missing colon", `{"make" "a"}`, false},
		{"non-string name", `{1:2}`, false},
		{"non-string name skipped", `{"x":{1:2}}`, false},
		{"mismatched brackets", `{"x":[}`, false},
		{"truncated", `{"make":"a"`, false},
		{"truncated string", `{"make":"a`, false},
		{"truncated escape", `{"make":"a\`, false},
		{"empty", ``, false},
		{"only white space", "  ", false},
		{"not an object", `[]`, false},
		{"string at the top", `"x"`, false},
		{"bad array", `{"upfits":{}}`, false},
		{"nested 9997 deep", `{"x":` + deep(9997) + `}`, true},
		{"nested 9999 deep", `{"x":` + deep(9999) + `}`, true},
		{"nested 10000 deep", `{"x":` + deep(10000) + `}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := compareScanner(t, []byte(c.body), inventoryKinds[1]); got != c.ok {
				t.Fatalf("accepted %v, want %v", got, c.ok)
			}
			for _, mk := range inventoryKinds {
				compareScanner(t, []byte(c.body), mk)
			}
		})
	}
}

// FuzzInventoryScanner: on any input and for every inventory type, the
// scanner does not panic, accepts exactly what the field reader over
// jsontext accepts, and gives the same result (reflect.DeepEqual).
func FuzzInventoryScanner(f *testing.F) {
	f.Add([]byte(`{"total":1,"items":[{"id_auto":"0b7e","dealer_id":101,"service":"REWIND","make":"Fiat","model":"Panda","catalog_type":"vcom","upfits":[{"code":"U1","slug":"furgone","label":"Furgone","family":"t","primary":true,"source_id":"s","lookup_cascade":["jato"]}],"sale_price_eur":9900.5,"has_podcast":true,"has_video":false,"ai_content":{"headline":"h","highlights":["a"],"seo_payload":{"x":1}},"updated_at":"2026-01-02T03:04:05Z","source_ids":{"dms":"D"},"lookup_cascade":["jato"],"tech_data_dir":"/mnt/x"}]}`), uint8(0))
	f.Add([]byte(`{"id_auto":"0b7e","dealer_id":101,"media_urls":["a","b\u00e8"],"confirmed_optionals":["x"],"confirmed_packages":[],"raw_version_optionals":[{"a":[1,2.5e-3,true,false,null]}]}`), uint8(1))
	f.Add([]byte(`{"total":1,"items":[{"id_offerta":7,"dealer_id":101,"slug":"s","make":"Kia","quotations":[{"months":36,"km_per_year":10000,"monthly_fee_eur":299.9,"internal_cost_eur":1,"source_rate_id":"r"}],"updated_at":"2026-01-02T03:04:05Z","render_payload":{}}]}`), uint8(2))
	f.Add([]byte(`{"id_offerta":-0,"quotations":null,"version":"\ud83d\ude00\n","updated_at":null}`), uint8(3))
	f.Add([]byte("{\"items\":[{\"make\":\"\xe8\\u00e8\",\"upfits\":[{\"primary\":true}]}],\"total\":1}"), uint8(0))
	// Records whose member names are predicted from the one before (nameMemo).
	f.Add([]byte(`{"total":3,"items":[{"id_auto":"a","make":"Fiat","upfits":[{"code":"U1","primary":true},{"code":"U2","primary":false}]},{"id_auto":"b","make":"Kia","upfits":[{"primary":true,"code":"U3"}]},{"id_auto":"c","mak\u0065":"VW","make":"Audi","upfits":null}]}`), uint8(0))
	f.Fuzz(func(t *testing.T, body []byte, kind uint8) {
		newOut := inventoryKinds[int(kind)%len(inventoryKinds)]
		compareScanner(t, body, newOut)
		// The same after 2 KiB of white space: read through a stop map,
		// as a listing's answer is (a fuzzer's inputs are too short for
		// one).
		compareScanner(t, withStopMap(body, len(body)%64), newOut)
	})
}
