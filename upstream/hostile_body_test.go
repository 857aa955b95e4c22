package upstream_test

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// Answers a misbehaving or compromised internal service may send that are
// valid JSON (or fail only at their end) and cost the decoders far more
// than their size: the edge's decoders must stay linear in the body and
// allocate in proportion to what they keep.

// repeatedItems is a list whose "items" member is repeated n times with an
// empty value (JSON allows repeated names; the last one wins).
func repeatedItems(first, empty, last string, n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"items":[` + first + `]`)
	for range n {
		b.WriteString(`,"items":` + empty)
	}
	b.WriteString(`,"items":[` + last + `]}`)
	return b.Bytes()
}

// TestRepeatedItemsLinear: a body of 2.4 MB that repeats "items" 200,000
// times is decoded in about the field reader's time. Each repetition once
// searched the rest of the body (the record count of countObjects) or
// mapped it again (the content page's stop map): 0.3 to 1.1 s at 430 KB,
// four times that at twice the size, minutes at the 32 MiB body limit. The
// bound is 30 times the field reader plus 300 ms: a linear decoder is
// within it on any machine, the quadratic one was over it by seconds.
func TestRepeatedItemsLinear(t *testing.T) {
	const n = 200_000
	content := repeatedItems(`{"id":1,"slug":"a"}`, `[]`, `{"id":2,"slug":"b"}`, n)
	vehicles := repeatedItems(`{"id_auto":"1"}`, `null`, `{"id_auto":"2"}`, n)
	// The scanners count a list's records only once they have learnt how
	// its records open: teach the pooled one right before each decode.
	teach := func() {
		var l upstream.ContentList
		_, _ = upstream.DecodeFields([]byte(`{"items":[{"id":1},{"id":2}]}`), &l)
		var p upstream.VehiclePage
		_, _ = upstream.DecodeFields([]byte(`{"items":[{"id_auto":"1"},{"id_auto":"2"}]}`), &p)
	}
	timed := func(f func() error) time.Duration {
		t.Helper()
		teach()
		start := time.Now()
		if err := f(); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	ref := timed(func() error {
		var l upstream.ContentList
		_, err := upstream.DecodeFieldReader(content, &l)
		return err
	})
	limit := 30*ref + 300*time.Millisecond
	for _, c := range []struct {
		name string
		f    func() error
	}{
		{"content list", func() error {
			var l upstream.ContentList
			_, err := upstream.DecodeFields(content, &l)
			if err == nil && (len(l.Items) != 1 || l.Items[0].ID != 2) {
				t.Errorf("content list: %d items, want the last list's one", len(l.Items))
			}
			return err
		}},
		{"vehicle page", func() error {
			var p upstream.VehiclePage
			_, err := upstream.DecodeFields(vehicles, &p)
			if err == nil && (len(p.Items) != 1 || p.Items[0].IDAuto != "2") {
				t.Errorf("vehicle page: %d items, want the last list's one", len(p.Items))
			}
			return err
		}},
		{"content page", func() error {
			_, err := upstream.DecodeContentPage(content, func([]upstream.ContentRecord) []int32 { return nil })
			return err
		}},
	} {
		if d := timed(c.f); d > limit {
			t.Errorf("%s: %v for %d KB with %d repeated lists (field reader %v, limit %v): not linear", c.name, d, len(content)>>10, n, ref, limit)
		}
	}
}

// TestMalformedBodyAllocation: a body that repeats a record's opening
// (`{"id":`) and never closes one fails to decode; before it fails, the
// scanner may make the list at the size it counts, but no larger than a
// valid list: it made 500 MiB of records for an 8 MiB body.
func TestMalformedBodyAllocation(t *testing.T) {
	body := []byte(`{"items":[` + strings.Repeat(`{"id":`, 8<<20/6))
	allocated := func(f func()) uint64 {
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		f()
		runtime.ReadMemStats(&b)
		return b.TotalAlloc - a.TotalAlloc
	}
	scan := allocated(func() {
		var warm upstream.ContentList // the memo of the pooled scanner, after the GC above
		_, _ = upstream.DecodeFields([]byte(`{"items":[{"id":1},{"id":2}]}`), &warm)
		var l upstream.ContentList
		if _, err := upstream.DecodeFields(body, &l); err == nil {
			t.Fatal("a malformed body decoded")
		}
	})
	ref := allocated(func() {
		var l upstream.ContentList
		if _, err := upstream.DecodeFieldReader(body, &l); err == nil {
			t.Fatal("a malformed body decoded")
		}
	})
	if scan > 2*ref+8<<20 {
		t.Fatalf("the scanner allocated %d MiB on a malformed %d MiB body (the field reader %d MiB)", scan>>20, len(body)>>20, ref>>20)
	}
}
