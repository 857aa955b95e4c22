package upstream_test

import (
	stdjson "encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
	"github.com/dealer-edge/dealer-edge/upstream/fake/corpus"
)

// clearInternal zeroes the internal-only fields of a decoded answer: what
// the field decoder never builds.
func clearInternal(v any) {
	switch o := v.(type) {
	case *upstream.VehiclePage:
		for i := range o.Items {
			clearInternal(&o.Items[i])
		}
	case *upstream.Vehicle:
		o.SourceIDs, o.LookupCascade, o.TechDataDir = nil, nil, ""
		o.RenderPayload, o.SEOPayload, o.RawVersionOptionals = nil, nil, nil
		for i := range o.Upfits {
			o.Upfits[i].SourceID, o.Upfits[i].LookupCascade = "", nil
		}
		if a := o.AIContent; a != nil {
			a.RenderTemplate, a.SEOPayload, a.PromptID = "", nil, ""
		}
	case *upstream.OfferPage:
		for i := range o.Items {
			clearInternal(&o.Items[i])
		}
	case *upstream.Offer:
		o.SourceIDs, o.LookupCascade, o.RenderPayload = nil, nil, nil
		for i := range o.Quotations {
			o.Quotations[i].InternalCost, o.Quotations[i].SourceRateID = 0, ""
		}
	case *upstream.ContentList:
		for i := range o.Items {
			r := &o.Items[i]
			r.TemplateID, r.SourceID, r.BodyHTML, r.RenderPayload, r.SEOPayload = "", "", "", nil, nil
		}
	}
}

// same reports whether two decoded answers are equal, through their
// encoding/json form (stable for times and nil/empty slices alike).
func same(t testing.TB, a, b any) (string, string, bool) {
	ja, err := stdjson.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := stdjson.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(ja), string(jb), string(ja) == string(jb)
}

// fakeBody asks the in-process fake for uri.
func fakeBody(t testing.TB, h fasthttp.RequestHandler, uri string) []byte {
	t.Helper()
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI(uri)
	h(&ctx)
	if sc := ctx.Response.StatusCode(); sc != 200 {
		t.Fatalf("GET %s: %d", uri, sc)
	}
	return append([]byte(nil), ctx.Response.Body()...)
}

// TestFieldDecoderEqualsReflection: for every answer of the miss path the
// fake can give (every dealer's vehicle and offer pages in both views, a
// detail of every vehicle and offer on them, every content type in both
// views), the field decoder gives what the reflection decoder gives with
// the internal-only fields cleared, and builds none of those fields.
func TestFieldDecoderEqualsReflection(t *testing.T) {
	h := fake.NewServer(fake.Options{}).Handler()
	type answer struct {
		uri string
		new func() any
	}
	var answers []answer
	for _, d := range corpus.DealerIDs() {
		for _, view := range []string{"summary", "full"} {
			for _, svc := range []string{"REWIND", "NOS"} {
				answers = append(answers, answer{fmt.Sprintf("/inventory/v1/dealers/%d/vehicles?service=%s&page_size=1000&view=%s", d, svc, view), func() any { return new(upstream.VehiclePage) }})
			}
			for _, ct := range upstream.ContentTypes {
				answers = append(answers, answer{fmt.Sprintf("/content/v1/dealers/%d/%s?view=%s", d, ct, view), func() any { return new(upstream.ContentList) }})
			}
		}
		answers = append(answers, answer{fmt.Sprintf("/inventory/v1/dealers/%d/offers?page_size=1000", d), func() any { return new(upstream.OfferPage) }})
	}
	details, withInternal := 0, 0
	for i := 0; i < len(answers); i++ {
		a := answers[i]
		body := fakeBody(t, h, a.uri)
		got, want := a.new(), a.new()
		ok, err := upstream.DecodeFields(body, got)
		if !ok || err != nil {
			t.Fatalf("%s: field decoder: ok %v, %v", a.uri, ok, err)
		}
		if err := upstream.DecodeReflect(body, want); err != nil {
			t.Fatalf("%s: reflection decoder: %v", a.uri, err)
		}
		noisy, _, _ := same(t, want, want)
		clearInternal(want)
		g, w, eq := same(t, got, want)
		if !eq {
			t.Fatalf("%s: field decoder\n%.2000s\nwant\n%.2000s", a.uri, g, w)
		}
		if noisy != w {
			withInternal++
		}
		// Details of the records on the full pages.
		switch p := got.(type) {
		case *upstream.VehiclePage:
			if !strings.Contains(a.uri, "view=full") {
				break
			}
			for _, v := range p.Items {
				answers = append(answers, answer{fmt.Sprintf("/inventory/v1/dealers/%d/vehicles/%s", v.DealerID, v.IDAuto), func() any { return new(upstream.Vehicle) }})
				details++
			}
		case *upstream.OfferPage:
			for _, o := range p.Items {
				answers = append(answers, answer{fmt.Sprintf("/inventory/v1/dealers/%d/offers/%d", o.DealerID, o.IDOfferta), func() any { return new(upstream.Offer) }})
				details++
			}
		}
	}
	if details < 100 || withInternal < len(answers)/2 {
		t.Fatalf("%d answers, %d details, %d with internal-only fields: too few to prove anything", len(answers), details, withInternal)
	}
}

// TestFieldDecoderCases: the corner cases of JSON the reflection decoder
// accepts or rejects, one by one.
func TestFieldDecoderCases(t *testing.T) {
	cases := []struct {
		name string
		body string
		ok   bool
	}{
		{"empty object", `{}`, true},
		{"null", `null`, true},
		{"null fields", `{"id_auto":null,"dealer_id":null,"upfits":null,"sale_price_eur":null,"ai_content":null,"updated_at":null,"has_video":null}`, true},
		{"escapes", `{"make":"Fiat \"500\"\n\u00e8\ud83d\ude00","model":"a\/b"}`, true},
		{"invalid utf-8", "{\"make\":\"a\xffb\",\"model\":\"\xe8\\n\"}", true},
		{"internal fields of any shape", `{"source_ids":[1,{"a":null}],"lookup_cascade":"x","tech_data_dir":{"x":[]},"upfits":[{"source_id":7,"lookup_cascade":{}}]}`, true},
		{"unknown members", `{"new_field":{"deep":[1,2,{"x":true}]},"id_auto":"x"}`, true},
		{"duplicate names, last wins", `{"make":"a","make":"b"}`, true},
		{"fractional seconds and offset", `{"updated_at":"2026-01-02T03:04:05.123456789+01:00"}`, true},
		{"price", `{"sale_price_eur":12345.67}`, true},
		{"wrong type", `{"dealer_id":"101"}`, false},
		{"fraction in an integer", `{"dealer_id":1.5}`, false},
		{"bad time", `{"updated_at":"yesterday"}`, false},
		{"empty time", `{"updated_at":""}`, false},
		{"trailing data", `{} {}`, false},
		{"truncated", `{"make":"a"`, false},
		{"not an object", `[]`, false},
		{"bad array", `{"upfits":{}}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got, want upstream.Vehicle
			_, err := upstream.DecodeFields([]byte(c.body), &got)
			if (err == nil) != c.ok {
				t.Fatalf("error %v, want ok %v", err, c.ok)
			}
			if !c.ok {
				return
			}
			if err := upstream.DecodeReflect([]byte(c.body), &want); err != nil {
				if c.name == "internal fields of any shape" {
					return // the reflection decoder type-checks them; the field decoder skips them
				}
				t.Fatalf("reflection decoder: %v", err)
			}
			clearInternal(&want)
			if g, w, eq := same(t, &got, &want); !eq {
				t.Fatalf("got %s\nwant %s", g, w)
			}
		})
	}
}

// FuzzFieldDecoder: on any input, the field decoder does not panic, and
// whenever the reflection decoder accepts an input without duplicate names
// the field decoder accepts it too and agrees (it may accept more: it never
// looks at the internal-only fields the reflection decoder type-checks).
func FuzzFieldDecoder(f *testing.F) {
	// Seeds in the fake's shapes, internal fields included (the fake
	// itself is too slow to build in every fuzzing worker).
	f.Add([]byte(`{"total":1,"items":[{"id_auto":"0b7e","dealer_id":101,"service":"REWIND","make":"Fiat","model":"Panda","catalog_type":"vcom","upfits":[{"code":"U1","slug":"furgone","label":"Furgone","family":"t","primary":true,"source_id":"s","lookup_cascade":["jato"]}],"sale_price_eur":9900.5,"has_podcast":true,"has_video":false,"ai_content":{"headline":"h","highlights":["a"],"seo_payload":{"x":1}},"updated_at":"2026-01-02T03:04:05Z","source_ids":{"dms":"D"},"lookup_cascade":["jato"],"tech_data_dir":"/mnt/x"}]}`), uint8(0))
	f.Add([]byte(`{"total":1,"items":[{"id_offerta":7,"dealer_id":101,"slug":"s","make":"Kia","quotations":[{"months":36,"km_per_year":10000,"monthly_fee_eur":299.9,"internal_cost_eur":1,"source_rate_id":"r"}],"updated_at":"2026-01-02T03:04:05Z","render_payload":{}}]}`), uint8(2))
	f.Add([]byte(`{"items":[{"id":1,"type":"faq","dealer_id":0,"slug":"s","category":"permuta","title":"T","body_text":"a\nb","updated_at":"2026-01-02T03:04:05+01:00","override_of":3,"hidden_for_dealer":true,"template_id":"t","body_html":"<p>","seo_payload":{"a":[1]}}]}`), uint8(4))
	f.Add([]byte(`{"items":[{"make":"\u00e8","upfits":[{"primary":true}]}],"total":1}`), uint8(0))
	// Lone surrogate escapes (U+FFFD), loose timestamps (refused).
	f.Add([]byte(`{"make":"Fiat\ud83d","x\udc00":1,"ai_content":{"headline":"\ud800\u0041"},"updated_at":"2026-01-02T03:04:05+01:00"}`), uint8(1))
	f.Add([]byte(`{"items":[{"id":1,"title":"Offerta \ud83d","category":"\udc00","updated_at":"2026-01-02T3:04:05Z"}]}`), uint8(4))
	f.Add([]byte(`{"total":1,"items":[{"version":"\ude00\ud83d","updated_at":"2026-01-02T03:04:05,5+23:60"}]}`), uint8(2))
	strict := jsontext.AllowDuplicateNames(false)
	f.Fuzz(func(t *testing.T, body []byte, kind uint8) {
		mk := []func() any{
			func() any { return new(upstream.VehiclePage) },
			func() any { return new(upstream.Vehicle) },
			func() any { return new(upstream.OfferPage) },
			func() any { return new(upstream.Offer) },
			func() any { return new(upstream.ContentList) },
		}[int(kind)%5]
		got, want := mk(), mk()
		_, gerr := upstream.DecodeFields(body, got)
		if err := json.Unmarshal(body, want, strict, jsontext.AllowInvalidUTF8(true)); err != nil {
			return
		}
		if err := upstream.DecodeReflect(body, want); err != nil {
			return
		}
		if gerr != nil {
			t.Fatalf("the reflection decoder accepts %q, the field decoder: %v", body, gerr)
		}
		clearInternal(want)
		if g, w, eq := same(t, got, want); !eq {
			t.Fatalf("input %q:\ngot  %s\nwant %s", body, g, w)
		}
	})
}

// checkDecodersMatchReflection decodes body into fresh targets of mk with
// every field-by-field decoder (DecodeFields: the inventory scanner or the
// content list's; DecodeFieldReader, the field reader over jsontext; for a
// content list also ContentPage's decoder, every record picked) and fails
// unless each accepts exactly when the reflection decoder does and then
// gives what it gives (internal-only fields cleared). It returns the
// reflection decoder's result, nil when it refuses body.
func checkDecodersMatchReflection(t *testing.T, body string, mk func() any) any {
	t.Helper()
	want := mk()
	rerr := upstream.DecodeReflect([]byte(body), want)
	clearInternal(want)
	check := func(decoder string, got any, err error) {
		t.Helper()
		if (err == nil) != (rerr == nil) {
			t.Fatalf("%s %T %s: error %v, reflection decoder error %v", decoder, got, body, err, rerr)
		}
		if err != nil {
			return
		}
		if g, w, eq := same(t, got, want); !eq {
			t.Fatalf("%s %T %s:\ngot  %s\nwant %s", decoder, got, body, g, w)
		}
	}
	got := mk()
	if ok, err := upstream.DecodeFields([]byte(body), got); !ok {
		t.Fatalf("%T: not decoded field by field", got)
	} else {
		check("DecodeFields", got, err)
	}
	got = mk()
	_, err := upstream.DecodeFieldReader([]byte(body), got)
	check("the field reader", got, err)
	if _, ok := got.(*upstream.ContentList); ok {
		recs, err := upstream.DecodeContentPage([]byte(body), func(keys []upstream.ContentRecord) []int32 {
			idx := make([]int32, len(keys))
			for i := range idx {
				idx[i] = int32(i)
			}
			return idx
		})
		check("ContentPage's decoder", &upstream.ContentList{Items: recs}, err)
	}
	if rerr != nil {
		return nil
	}
	return want
}

// TestLoneSurrogateEscapesBecomeReplacementChar: a \u escape of a lone
// UTF-16 surrogate (unpaired high or low half), in a kept string, a
// skipped one or a member name, is U+FFFD for every decoder, as for the
// reflection decoder and encoding/json: not an error that refuses the
// whole body. jsontext.AppendUnquote, which the decoders' unquoting used,
// refuses it.
func TestLoneSurrogateEscapesBecomeReplacementChar(t *testing.T) {
	vehicle := func() any { return new(upstream.Vehicle) }
	vehiclePage := func() any { return new(upstream.VehiclePage) }
	offer := func() any { return new(upstream.Offer) }
	content := func() any { return new(upstream.ContentList) }
	cases := []struct {
		name  string
		body  string
		mk    func() any
		nFFFD int // U+FFFD in the result
	}{
		{"lone high surrogate kept", `{"make":"Fiat\ud83d"}`, vehicle, 1},
		{"lone low surrogate kept", `{"make":"\udc00"}`, vehicle, 1},
		{"low then high", `{"make":"\ude00\ud83d"}`, vehicle, 2},
		{"high then not low", `{"make":"\ud800\u0041"}`, vehicle, 1},
		{"high then a pair", `{"model":"\ud83d\ud83d\ude00"}`, vehicle, 1},
		{"after text beyond ASCII", `{"model":"caffè \ud83d!"}`, vehicle, 1},
		{"with invalid UTF-8", "{\"model\":\"\xff\\ud83d\"}", vehicle, 2},
		{"in a list", `{"media_urls":["a","\udfff"],"ai_content":{"highlights":["\ud800"]}}`, vehicle, 2},
		{"in an upfit", `{"upfits":[{"label":"\udbff","code":"c"}]}`, vehicle, 1},
		{"in an unknown member's name", `{"x\udc00":1,"make":"a"}`, vehicle, 0},
		{"in a known name, escaped", `{"mak\u0065\ud800":"a","make":"b"}`, vehicle, 0},
		{"in a skipped value", `{"tech_data_dir":"\ud800","make":"a"}`, vehicle, 0},
		{"in a skipped object's name", `{"source_ids":{"a\ud800":"x"},"make":"a"}`, vehicle, 0},
		{"in a record of a page", `{"total":1,"items":[{"make":"a","x\udc00":1},{"make":"\ud83d"}]}`, vehiclePage, 1},
		{"in an offer", `{"version":"\ud83d","quotations":[{"months":36,"x\ud800":1}]}`, offer, 1},
		{"content title", `{"items":[{"id":1,"title":"Offerta \ud83d","body_text":"ok"}]}`, content, 1},
		{"content body text", `{"items":[{"id":1,"body_text":"abc \ud83d"}]}`, content, 1},
		{"content key field", `{"items":[{"id":1,"category":"\ud83d","slug":"s\udc00"}]}`, content, 2},
		{"content unknown name", `{"items":[{"x\udc00":"a","id":2}]}`, content, 0},
		{"content skipped value", `{"items":[{"body_html":"\ud83d","id":2}]}`, content, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := checkDecodersMatchReflection(t, c.body, c.mk)
			if want == nil {
				t.Fatal("the reflection decoder refuses it")
			}
			if err := stdjson.Unmarshal([]byte(c.body), c.mk()); err != nil {
				t.Fatalf("encoding/json refuses it: %v", err)
			}
			if j, _, _ := same(t, want, want); strings.Count(j, "\uFFFD") != c.nFFFD {
				t.Fatalf("%s: want %d U+FFFD", j, c.nFFFD)
			}
		})
	}
}

// TestRepeatedAIContentMerges: a repeated ai_content member merges into
// the object the first one made (the last value of each field wins), as
// the reflection decoder and encoding/json do; null in between drops it.
func TestRepeatedAIContentMerges(t *testing.T) {
	cases := []struct {
		name, body string
		mk         func() any
		want       *upstream.AIContent // of the (first) vehicle
	}{
		{"two halves", `{"ai_content":{"headline":"a"},"ai_content":{"description":"b"}}`, nil,
			&upstream.AIContent{Headline: "a", Description: "b"}},
		{"the second overrides a field", `{"ai_content":{"headline":"a","highlights":["x"]},"ai_content":{"headline":"c"}}`, nil,
			&upstream.AIContent{Headline: "c", Highlights: []string{"x"}}},
		{"null in between", `{"ai_content":{"headline":"a"},"ai_content":null,"ai_content":{"description":"b"}}`, nil,
			&upstream.AIContent{Description: "b"}},
		{"empty second", `{"ai_content":{"headline":"a"},"ai_content":{}}`, nil,
			&upstream.AIContent{Headline: "a"}},
		{"in a page", `{"items":[{"ai_content":{"headline":"a"},"make":"m","ai_content":{"description":"b"}}]}`,
			func() any { return new(upstream.VehiclePage) }, &upstream.AIContent{Headline: "a", Description: "b"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mk := c.mk
			if mk == nil {
				mk = func() any { return new(upstream.Vehicle) }
			}
			want := checkDecodersMatchReflection(t, c.body, mk)
			var v *upstream.Vehicle
			switch w := want.(type) {
			case *upstream.Vehicle:
				v = w
			case *upstream.VehiclePage:
				v = &w.Items[0]
			default:
				t.Fatalf("the reflection decoder refuses it")
			}
			if g, w, eq := same(t, v.AIContent, c.want); !eq {
				t.Fatalf("ai_content %s, want %s", g, w)
			}
		})
	}
}

// TestTimestampsFollowTheReflectionDecoder: every decoder reads a
// timestamp as the reflection decoder does (time.Time's UnmarshalText and
// the RFC 3339 checks it adds): time.Parse alone also takes a one-digit
// hour, a comma before the fraction and an offset of hour 24 or minute 60
// (which then cannot even be encoded again).
func TestTimestampsFollowTheReflectionDecoder(t *testing.T) {
	kinds := []func(ts string) (string, func() any){
		func(ts string) (string, func() any) {
			return `{"updated_at":` + ts + `}`, func() any { return new(upstream.Vehicle) }
		},
		func(ts string) (string, func() any) {
			return `{"total":1,"items":[{"id_offerta":1,"updated_at":` + ts + `}]}`, func() any { return new(upstream.OfferPage) }
		},
		func(ts string) (string, func() any) {
			return `{"items":[{"id":1,"updated_at":` + ts + `}]}`, func() any { return new(upstream.ContentList) }
		},
	}
	for _, c := range upstream.TimestampCases {
		t.Run(c.TS, func(t *testing.T) {
			for _, kind := range kinds {
				body, mk := kind(`"` + c.TS + `"`)
				if got := checkDecodersMatchReflection(t, body, mk) != nil; got != c.OK {
					t.Fatalf("%s: accepted %v, want %v", body, got, c.OK)
				}
			}
		})
	}
}
