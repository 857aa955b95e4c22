package cache

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
)

func auditHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestL1TinyEntriesHeap: L1 full of small entries (as a client with a
// valid key makes by walking page=N past the last page) holds at most
// cache.l1_max_bytes plus the eighth MemoryLimitFor allows on the heap.
// Before 2026-11-27 L1 undercharged each entry's overhead and such
// entries held 1.2-1.4x the budget.
func TestL1TinyEntriesHeap(t *testing.T) {
	for _, bodyLen := range []int{100, 200} {
		const budget = 16 << 20
		c, err := New(Options{L1MaxBytes: budget, L1HotBytes: -1})
		if err != nil {
			t.Fatal(err)
		}
		body := make([]byte, bodyLen)
		for i := range body {
			body[i] = 'x'
		}
		pol := Policy{TTL: time.Hour}
		before := auditHeap()
		ctx := context.Background()
		for i := 0; ; i++ {
			key := fmt.Appendf(nil, "inventory_listing\x00rewind\x00p%d\x00s20\x00q\x00c\x00u\x00a\x00o0\x00C\x00T\x00B\x00S", i+2)
			b := append([]byte(nil), body...)
			_, _, err := c.Get(ctx, 7, key, pol, func(context.Context) ([]byte, error) { return b, nil })
			if err != nil {
				t.Fatal(err)
			}
			if c.Stats().L1Bytes > budget-4096 || i > 2_000_000 {
				break
			}
		}
		after := auditHeap()
		st := c.Stats()
		grew := int64(after) - int64(before)
		t.Logf("body %d: L1 accounts %d bytes in %d entries (%.0f B/entry); heap grew %d bytes (%.0f B/entry): %.2fx the budget",
			bodyLen, st.L1Bytes, st.L1Entries, float64(st.L1Bytes)/float64(st.L1Entries), grew, float64(grew)/float64(st.L1Entries), float64(grew)/float64(budget))
		// MemoryLimitFor allows "an eighth more for what the allocator
		// rounds and per-entry bookkeeping the byte count only estimates".
		if grew > budget+budget/8 {
			t.Errorf("body %d: L1 with cache.l1_max_bytes %d holds %d bytes of heap (%.2fx), want at most 1.125x (MemoryLimitFor)", bodyLen, budget, grew, float64(grew)/float64(budget))
		}
		runtime.KeepAlive(c)
		c.Close()
	}
}
