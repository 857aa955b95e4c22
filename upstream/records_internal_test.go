package upstream

import (
	"reflect"
	"strings"
	"testing"
)

// TestRecordBufferZeroWhenPooled: a scanner's record buffer is zero up to
// its capacity after a content list is read through it (contentKeys
// extends it without zeroing), also when the list outgrew it: the buffer
// it replaced, written, is dropped, whether or not the grown one is kept.
func TestRecordBufferZeroWhenPooled(t *testing.T) {
	for _, tc := range []struct {
		name    string
		records int
	}{
		{"grown, kept", 10},
		{"grown past the pooled bound", maxPooledRecords + 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"items":[` + strings.Repeat(`{"id":1,"slug":"a","title":"t"},`, tc.records-1) + `{"id":2}]}`
			s := &invScanner{}
			s.records = make([]ContentRecord, 0, 4)
			s.b = []byte(body)
			var l contentList
			if err := s.contentList(&l); err != nil {
				t.Fatal(err)
			}
			if len(l.Items) != tc.records {
				t.Fatalf("%d records, want %d", len(l.Items), tc.records)
			}
			for i, r := range s.records[:cap(s.records)] {
				if !reflect.DeepEqual(r, ContentRecord{}) {
					t.Fatalf("record %d of the buffer (cap %d) not zero: %+v", i, cap(s.records), r)
				}
			}
		})
	}
}
