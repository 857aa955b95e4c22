package mapping

import (
	"reflect"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake/corpus"
)

// TestViewRoundTrip: for every dealer and content type of the demo corpus,
// a view read back from its cache form gives the same listing and search
// items, in the same order, and the same filter answers, as the records it
// was made from; and the cache form holds no internal-only field.
func TestViewRoundTrip(t *testing.T) {
	views := 0
	for _, d := range corpus.DealerIDs() {
		for _, ct := range upstream.ContentTypes {
			raw := corpus.Records(d, ct)
			for i := range raw {
				raw[i] = upstream.ContentSummary(raw[i])
				raw[i].TemplateID, raw[i].SourceID = "tpl-internal-"+ct, "src-internal-"+ct
			}
			vis := Visible(d, ct, raw, Discovery)
			b := AppendView(nil, ViewRecords(Visible(d, ct, raw, Discovery)))
			for _, secret := range []string{"tpl-internal-", "src-internal-"} {
				if bytesContain(b, secret) {
					t.Fatalf("dealer %d %s: the view's cache form holds %q", d, ct, secret)
				}
			}
			got, err := DecodeView(b)
			if err != nil {
				t.Fatalf("dealer %d %s: %v", d, ct, err)
			}
			if len(got) != len(vis) || len(vis) == 0 {
				t.Fatalf("dealer %d %s: %d records back, %d in", d, ct, len(got), len(vis))
			}
			for i := range vis {
				for _, form := range []ContentForm{ListingForm, SearchForm} {
					if g, w := ViewItem(&got[i], ct, form), ContentItem(vis[i], ct, form); g != w {
						t.Fatalf("dealer %d %s record %d: %+v, want %+v", d, ct, i, g, w)
					}
				}
				if got[i].DealerID != vis[i].DealerID || !got[i].UpdatedAt.Equal(vis[i].UpdatedAt) {
					t.Fatalf("dealer %d %s record %d: dealer/time differ", d, ct, i)
				}
				for _, f := range [][3]string{{vis[i].Category, "", ""}, {"", vis[i].Topic, ""}, {"", "", vis[i].Brand}, {"nope", "", ""}} {
					if Match(&got[i], f[0], f[1], f[2]) != Match(&vis[i], f[0], f[1], f[2]) {
						t.Fatalf("dealer %d %s record %d: Match differs for %q", d, ct, i, f)
					}
				}
			}
			views++
		}
	}
	if views < 12 {
		t.Fatalf("only %d views", views)
	}
}

func bytesContain(b []byte, s string) bool {
	for i := 0; i+len(s) <= len(b); i++ {
		if string(b[i:i+len(s)]) == s {
			return true
		}
	}
	return false
}

// TestViewEdges: the values at the ends of their ranges survive the cache
// form; malformed forms are errors.
func TestViewEdges(t *testing.T) {
	in := []upstream.ContentRecord{
		{},
		{ID: -1 << 63, DealerID: 1<<63 - 1, DurationSeconds: -5, UpdatedAt: time.Date(2026, 3, 1, 2, 3, 4, 999999999, time.FixedZone("x", 3600)), Slug: "è\xff", BodyText: string(make([]byte, 300))},
	}
	b := AppendView(nil, in)
	got, err := DecodeView(b)
	if err != nil {
		t.Fatal(err)
	}
	if !got[0].UpdatedAt.IsZero() || !reflect.DeepEqual(got[0], upstream.ContentRecord{}) {
		t.Errorf("zero record: %+v", got[0])
	}
	if g, w := got[1], in[1]; g.ID != w.ID || g.DealerID != w.DealerID || g.DurationSeconds != w.DurationSeconds || !g.UpdatedAt.Equal(w.UpdatedAt) || g.Slug != w.Slug || g.BodyText != w.BodyText {
		t.Errorf("edge record: %+v", g)
	}
	for name, bad := range map[string][]byte{
		"empty":            nil,
		"wrong magic":      []byte("v2\x00"),
		"count too large":  append([]byte("v1"), 0xff, 0xff, 0xff, 0xff, 0x0f),
		"truncated":        b[:len(b)-1],
		"trailing bytes":   append(append([]byte(nil), b...), 0),
		"overlong varint":  append([]byte("v1"), 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01),
		"string past end":  append([]byte("v1\x01\x00\x00\x00\x00\x00"), 0x7f),
		"nanoseconds 1e9+": append([]byte("v1\x01\x00\x00\x00"), 0x80, 0x94, 0xeb, 0xdc, 0x03, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
	} {
		if _, err := DecodeView(bad); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// FuzzDecodeView: any bytes (Redis could hold anything under a view's key)
// decode without a panic, and what decodes survives another round trip.
func FuzzDecodeView(f *testing.F) {
	f.Add(AppendView(nil, []upstream.ContentRecord{{ID: 7, Slug: "s", Title: "T", UpdatedAt: time.Unix(1e9, 5)}}))
	f.Add([]byte("v1\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeView(b)
		if err != nil {
			return
		}
		again, err := DecodeView(AppendView(nil, v))
		if err != nil || !reflect.DeepEqual(again, v) {
			t.Fatalf("round trip of %q: %v", b, err)
		}
	})
}
