package upstream_test

import (
	"bytes"
	"reflect"
	"slices"
	"testing"

	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// contentKeys is r with only the fields ContentPage decodes for pick.
func contentKeys(r upstream.ContentRecord) upstream.ContentRecord {
	return upstream.ContentRecord{
		ID: r.ID, Type: r.Type, DealerID: r.DealerID, Slug: r.Slug,
		Topic: r.Topic, Category: r.Category, Brand: r.Brand, UpdatedAt: r.UpdatedAt,
		SourceProvider: r.SourceProvider, OverrideOf: r.OverrideOf, HiddenForDealer: r.HiddenForDealer,
	}
}

// comparePage decodes body with ContentPage's decoder, picking every
// record in reverse order, and with the content list decoder: both accept
// or both refuse; pick sees the key fields of the list's records and the
// records it picks come back whole, as the list decoder reads them.
func comparePage(t testing.TB, body []byte) (accepted bool) {
	t.Helper()
	var want upstream.ContentList
	_, werr := upstream.DecodeFields(body, &want)
	var keys []upstream.ContentRecord
	picked := false
	got, gerr := upstream.DecodeContentPage(body, func(k []upstream.ContentRecord) []int32 {
		picked = true
		keys = slices.Clone(k)
		idx := make([]int32, len(k))
		for i := range idx {
			idx[i] = int32(len(k) - 1 - i)
		}
		return idx
	})
	if (gerr == nil) != (werr == nil) {
		t.Fatalf("input %q:\npage decoder error %v\nlist decoder error %v", body, gerr, werr)
	}
	if gerr != nil {
		if picked {
			t.Fatalf("input %q: pick called on a refused body", body)
		}
		return false
	}
	wantKeys := make([]upstream.ContentRecord, len(want.Items))
	wantOut := make([]upstream.ContentRecord, len(want.Items))
	for i, r := range want.Items {
		wantKeys[i] = contentKeys(r)
		wantOut[len(want.Items)-1-i] = r
	}
	if !reflect.DeepEqual(keys, wantKeys) && !(len(keys) == 0 && len(wantKeys) == 0) {
		t.Fatalf("input %q: keys\n%#v\nwant\n%#v", body, keys, wantKeys)
	}
	if !reflect.DeepEqual(got, wantOut) && !(len(got) == 0 && len(wantOut) == 0) {
		t.Fatalf("input %q: records\n%#v\nwant\n%#v", body, got, wantOut)
	}
	return true
}

// TestContentPageEqualsContentList: for every content answer the fake can
// give (every dealer, every type, both views), ContentPage's decoder sees
// the list decoder's records' keys and returns its records whole.
func TestContentPageEqualsContentList(t *testing.T) {
	eachFakeContentAnswer(t, func(body []byte) bool { return comparePage(t, body) })
}

// TestContentPageCases: corner cases of the content shape, the non-key
// fields' types above all (the page decoder skips them but must refuse
// what the list decoder refuses).
func TestContentPageCases(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		ok         bool
	}{
		{"no items member", `{}`, false}, // malformed, not an empty list (errNoItems)
		{"null", `null`, false},
		{"null items", `{"items":null}`, true},
		{"empty items", `{"items":[]}`, true},
		{"a record", `{"items":[{"id":1,"type":"faq","dealer_id":101,"slug":"a","title":"T\u00e8","updated_at":"2026-01-02T03:04:05Z","hidden_for_dealer":false,"override_of":0,"duration_seconds":30}]}`, true},
		{"null record", `{"items":[null,{"id":2}]}`, true},
		{"internal fields skipped", `{"items":[{"id":1,"template_id":"x","source_id":9,"body_html":"<p>","render_payload":{"a":[1,{"b":null}]},"seo_payload":[true]}]}`, true},
		{"null fields", `{"items":[{"id":null,"title":null,"body_text":null,"updated_at":null,"hidden_for_dealer":null,"duration_seconds":null}]}`, true},
		{"escapes", `{"items":[{"slug":"s\u00e8","title":"a\"b\\c\/d\n\u2028\ud83d\ude00","body_text":"x"}]}`, true},
		{"invalid UTF-8", "{\"items\":[{\"slug\":\"\xe8\",\"title\":\"\xff\\u00e8\"}]}", true},
		{"duplicate names", `{"items":[{"id":1,"id":2}],"items":[{"id":3}]}`, true},
		{"ids", `{"items":[{"id":0,"dealer_id":0,"override_of":7},{"dealer_id":101,"id":1234567890123456789},{"id":0}]}`, true},
		{"ids before white space", `{"items":[{"id":12 ,"dealer_id":0 }]}`, true},
		{"id of 19 digits", `{"items":[{"id":9223372036854775807}]}`, true},
		{"id out of range", `{"items":[{"id":9223372036854775808}]}`, false},
		{"id with a leading zero", `{"items":[{"id":01}]}`, false},
		{"id with an exponent", `{"items":[{"id":1e3}]}`, false},
		{"number for title", `{"items":[{"title":1}]}`, false},
		{"object for body_text", `{"items":[{"body_text":{}}]}`, false},
		{"string for duration", `{"items":[{"duration_seconds":"30"}]}`, false},
		{"fraction for duration", `{"items":[{"duration_seconds":1.5}]}`, false},
		{"bad escape in excerpt", `{"items":[{"excerpt":"\x"}]}`, false},
		{"short escapes in a skipped text", `{"items":[{"body_text":"a\n\nb\"c\\d\/e\tf\u00e8\n","url":"\\"}]}`, true},
		{"bad escape after short ones", `{"items":[{"body_text":"a\n\nb\x"}]}`, false},
		{"control character after an escape", "{\"items\":[{\"body_text\":\"a\\n\x01\"}]}", false},
		{"escape at the end of the input", `{"items":[{"body_text":"a\n\`, false},
		{"control character in url", "{\"items\":[{\"url\":\"a\x01\"}]}", false},
		{"trailing data", `{"items":[]} x`, false},
		{"not an object", `[1]`, false},
		{"record not an object", `{"items":[1]}`, false},
		{"string for int", `{"items":[{"id":"1"}]}`, false},
		{"bad time", `{"items":[{"updated_at":"yesterday"}]}`, false},
		{"unterminated", `{"items":[{"id":1}`, false},
		{"trailing comma", `{"items":[{"id":1},]}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := comparePage(t, []byte(tc.body)); got != tc.ok {
				t.Fatalf("accepted %v, want %v", got, tc.ok)
			}
			for _, pad := range []int{0, 31} {
				if got := comparePage(t, withStopMap([]byte(tc.body), pad)); got != tc.ok {
					t.Fatalf("with the stop map (pad %d): accepted %v, want %v", pad, got, tc.ok)
				}
			}
		})
	}
}

// FuzzContentPage: on any input ContentPage's decoder does not panic,
// accepts exactly what the content list decoder accepts and gives the
// same keys and records.
func FuzzContentPage(f *testing.F) {
	f.Add([]byte(`{"items":[{"id":1,"type":"news","dealer_id":101,"slug":"s","topic":"t","category":"c","brand":"b","title":"T","h1":"H","meta_description":"m","excerpt":"e","body_text":"x","url":"u","updated_at":"2026-01-02T03:04:05Z","source_provider":"p","override_of":3,"hidden_for_dealer":true,"media_url":"m","thumbnail_url":"t","duration_seconds":12,"transcript":"tr","template_id":"x","render_payload":{"k":[1,2]}}]}`))
	f.Add([]byte(`{"items":[{"title":"\ud83d\ude00\u00e8","updated_at":null,"id":-0}],"extra":{"a":null}}`))
	f.Add([]byte("{\"items\":[{\"title\":\"\xe8\\u00e8\",\"body_text\":\"\\ud800\"}]}"))
	f.Fuzz(func(t *testing.T, body []byte) {
		comparePage(t, body)
		comparePage(t, withStopMap(body, len(body)%64))
	})
}

// withStopMap is body after enough white space (2 KiB and pad bytes) for
// the page decoder to read it through a stop map (stopmap.go), which it
// makes for large bodies only: the fake's answers are, a fuzzer's inputs
// are not. White space before the value changes nothing else.
func withStopMap(body []byte, pad int) []byte {
	return append(bytes.Repeat([]byte{' '}, 2<<10+pad), body...)
}

// BenchmarkContentPage: decoding a content list's summary view (the FAQ
// of dealer 101) whole (the content list decoder, what Content does) and
// for a page of five (what a cold hub section does, ContentPage).
func BenchmarkContentPage(b *testing.B) {
	body := fakeBody(b, fake.NewServer(fake.Options{}).Handler(), "/content/v1/dealers/101/faq?view=summary")
	b.Run("whole", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			var l upstream.ContentList
			if _, err := upstream.DecodeFields(body, &l); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("page_of_5", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		pick := func(keys []upstream.ContentRecord) []int32 { return []int32{0, 1, 2, 3, 4}[:min(5, len(keys))] }
		for b.Loop() {
			if _, err := upstream.DecodeContentPage(body, pick); err != nil {
				b.Fatal(err)
			}
		}
	})
}
