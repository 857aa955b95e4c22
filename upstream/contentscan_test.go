package upstream_test

import (
	"fmt"
	"testing"

	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
	"github.com/dealer-edge/dealer-edge/upstream/fake/corpus"
)

func newContentList() any { return new(upstream.ContentList) }

// TestContentScannerEqualsFieldReader: for every content answer the fake
// can give (every dealer, every type, both views), the scanner gives
// exactly what the field reader gives.
func TestContentScannerEqualsFieldReader(t *testing.T) {
	eachFakeContentAnswer(t, func(body []byte) bool { return compareScanner(t, body, newContentList) })
}

// eachFakeContentAnswer hands check every content answer the fake can give
// (every dealer, every type, both views) and fails the test on the first
// one check refuses.
func eachFakeContentAnswer(t *testing.T, check func(body []byte) bool) {
	t.Helper()
	h := fake.NewServer(fake.Options{}).Handler()
	n := 0
	for _, d := range corpus.DealerIDs() {
		for _, ct := range upstream.ContentTypes {
			for _, view := range []string{"summary", "full"} {
				uri := fmt.Sprintf("/content/v1/dealers/%d/%s?view=%s", d, ct, view)
				if !check(fakeBody(t, h, uri)) {
					t.Fatalf("%s: refused", uri)
				}
				n++
			}
		}
	}
	if n < 12 {
		t.Fatalf("%d answers: too few to prove anything", n)
	}
}

// TestContentScannerCases: corner cases of the content shape; the scanner
// accepts and refuses what the field reader does, with the same result.
func TestContentScannerCases(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		ok         bool
	}{
		{"no items member", `{}`, false}, // malformed, not an empty list (errNoItems)
		{"null", `null`, false},
		{"null items", `{"items":null}`, true},
		{"empty items", `{"items":[]}`, true},
		{"a record", `{"items":[{"id":1,"type":"faq","dealer_id":101,"slug":"a","title":"T\u00e8","updated_at":"2026-01-02T03:04:05Z","hidden_for_dealer":false,"override_of":0,"duration_seconds":30}]}`, true},
		{"internal fields skipped", `{"items":[{"id":1,"template_id":"x","source_id":9,"body_html":"<p>","render_payload":{"a":[1,{"b":null}]},"seo_payload":[true]}]}`, true},
		{"null fields", `{"items":[{"id":null,"title":null,"updated_at":null,"hidden_for_dealer":null}]}`, true},
		{"escapes", `{"items":[{"title":"a\"b\\c\/d\n\u2028\ud83d\ude00","body_text":"x"}]}`, true},
		{"duplicate names", `{"items":[{"id":1,"id":2}],"items":[]}`, true},
		{"trailing data", `{"items":[]} x`, false},
		{"not an object", `[1]`, false},
		{"record not an object", `{"items":[1]}`, false},
		{"string for int", `{"items":[{"id":"1"}]}`, false},
		{"fraction for int", `{"items":[{"id":1.5}]}`, false},
		{"bad time", `{"items":[{"updated_at":"yesterday"}]}`, false},
		{"unterminated", `{"items":[{"id":1}`, false},
		{"bad escape", `{"items":[{"title":"\x"}]}`, false},
		{"trailing comma", `{"items":[{"id":1},]}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := compareScanner(t, []byte(tc.body), newContentList); got != tc.ok {
				t.Fatalf("accepted %v, want %v", got, tc.ok)
			}
		})
	}
}

// FuzzContentScanner: on any input the content scanner does not panic,
// accepts exactly what the field reader accepts and gives the same result,
// read byte by byte and through a stop map.
func FuzzContentScanner(f *testing.F) {
	f.Add([]byte(`{"items":[{"id":1,"type":"news","dealer_id":101,"slug":"s","topic":"t","category":"c","brand":"b","title":"T","h1":"H","meta_description":"m","excerpt":"e","body_text":"x","url":"u","updated_at":"2026-01-02T03:04:05Z","source_provider":"p","override_of":3,"hidden_for_dealer":true,"media_url":"m","thumbnail_url":"t","duration_seconds":12,"transcript":"tr","template_id":"x","render_payload":{"k":[1,2]}}]}`))
	f.Add([]byte(`{"items":[{"title":"\ud83d\ude00\u00e8","updated_at":null,"id":-0}],"extra":{"a":null}}`))
	f.Add([]byte("{\"items\":[{\"title\":\"\xe8\\u00e8\"}]}"))
	// Records whose member names the scanner predicts from the one before:
	// the same layout, an optional member shifting the rest, an escaped
	// name where a plain one was learnt, a name that only starts like it.
	f.Add([]byte(`{"items":[{"id":1,"slug":"a","title":"t"},{"id":2,"slug":"b","title":"u"},{"id":3,"hidden_for_dealer":true,"slug":"c","title":"v"},{"\u0069d":4,"slug":"d","titles":"w","title":"x"},{"id":5,"slug" :"e", "title":"y"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		compareScanner(t, body, newContentList)
		// The same after 2 KiB of white space: read through a stop map,
		// as the services' answers are (a fuzzer's inputs are too short
		// for one).
		compareScanner(t, withStopMap(body, len(body)%64), newContentList)
	})
}
