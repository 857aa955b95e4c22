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
