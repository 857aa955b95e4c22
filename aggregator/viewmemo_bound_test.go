package aggregator

import (
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/dealer-edge/dealer-edge/aggregator/mapping"
	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/upstream"
)

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestViewMemoBoundHoldsForShortRecords: README ("Content views"):
// "Decoded views are kept in process (up to 8 MiB)". The memo counts an
// entry as 3 x its cache form (viewMemoCost), but a decoded record is a
// ContentRecord struct (hundreds of bytes) whatever the size of its
// strings, plus its item JSON, plus the entry the memo keeps alive. For a
// dealer whose views hold many short records (a glossary of terms, short
// FAQs), the memory the memo really holds is several times its budget.
func TestViewMemoBoundHoldsForShortRecords(t *testing.T) {
	t.Logf("sizeof(upstream.ContentRecord) = %d", unsafe.Sizeof(upstream.ContentRecord{}))
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	mk := func(d int64, n int) []byte {
		recs := make([]upstream.ContentRecord, n)
		for i := range recs {
			recs[i] = upstream.ContentRecord{ID: int64(i + 1), DealerID: d, Slug: fmt.Sprintf("t%d", i), Title: "T", BodyText: "b", UpdatedAt: at}
		}
		return mapping.AppendView(nil, recs)
	}
	var vm viewMemo
	before := heapInUse()
	for i := range 64 {
		e := cache.NewEntry(mk(int64(i+1), 1500), at, cache.Policy{TTL: time.Hour})
		m, err := vm.get(int64(i+1), "glossary", e)
		if err != nil {
			t.Fatal(err)
		}
		for j := range m.recs { // every page of the listing shown once
			if _, err := m.itemJSON(j); err != nil {
				t.Fatal(err)
			}
		}
	}
	after := heapInUse()
	runtime.KeepAlive(&vm)
	held := int64(after) - int64(before)
	t.Logf("memo: %d views, counted %d bytes (budget %d); heap held %d bytes (%.1fx the budget)",
		len(vm.m), vm.bytes, viewMemoBytes, held, float64(held)/viewMemoBytes)
	if held > 2*viewMemoBytes {
		t.Errorf("the view memo holds %d MiB of heap; README promises decoded views up to %d MiB", held>>20, viewMemoBytes>>20)
	}
}
