package aggregator

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// totalFeed is a key feed whose one snapshot page holds one active key
// and reports total keys in the snapshot (revoked ones included, as the
// dealers service counts them: only active keys enter the index).
type totalFeed struct {
	total   int
	revoked int // revoked entries listed on the first page, before the active key (0: one page, one key)
}

func (f totalFeed) KeySnapshotEach(ctx context.Context, after string, limit int, each func(*upstream.KeyIndexEntry) error) (upstream.KeySnapshotPage, error) {
	if after != "" { // the second and last page: empty
		return upstream.KeySnapshotPage{Cursor: "c1", Total: f.total}, nil
	}
	for i := range f.revoked {
		h := fmt.Sprintf("%064x", i+1)
		if err := each(&upstream.KeyIndexEntry{KeySHA256: h, DealerID: 1, Status: upstream.KeyRevoked, Plan: "basic"}); err != nil {
			return upstream.KeySnapshotPage{}, err
		}
	}
	e := upstream.KeyIndexEntry{KeySHA256: "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", DealerID: 1, Status: upstream.KeyActive, Plan: "basic"}
	if err := each(&e); err != nil {
		return upstream.KeySnapshotPage{}, err
	}
	next := ""
	if f.revoked > 0 {
		next = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	}
	return upstream.KeySnapshotPage{Next: next, Cursor: "c1", Total: f.total}, nil
}

func (f totalFeed) KeyChanges(ctx context.Context, cursor string, limit int) (upstream.KeyChangesPage, error) {
	return upstream.KeyChangesPage{Cursor: cursor}, nil
}

// TestKeyIndexSizedByKeptKeysNotTotal: the snapshot's total is a hint the
// dealers service gives (it counts revoked keys, which the index does not
// keep). A snapshot of one active key in a total of 2,000,000 must not
// make the edge hold a table sized for two million keys.
func TestKeyIndexSizedByKeptKeysNotTotal(t *testing.T) {
	t.Run("one page, total says 2M", func(t *testing.T) { indexHeapFor(t, totalFeed{total: 2_000_000}) })
	t.Run("9,999 revoked and 1 active on the first page of 2M", func(t *testing.T) {
		indexHeapFor(t, totalFeed{total: 2_000_000, revoked: upstream.MaxKeyPageSize - 1})
	})
}

func indexHeapFor(t *testing.T, feed totalFeed) {
	ix := newKeyIndex(feed, slog.New(slog.DiscardHandler), time.Now)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := ix.loadSnapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if n := ix.tab.Load().len(); n != 1 {
		t.Fatalf("index holds %d keys, want 1", n)
	}
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("heap held by an index of 1 key (snapshot total 2,000,000): %.1f MiB", float64(grew)/(1<<20))
	if grew > 8<<20 {
		t.Fatalf("an index of 1 key holds %.1f MiB of heap: sized by the snapshot's total, an upstream hint", float64(grew)/(1<<20))
	}
	runtime.KeepAlive(ix)
}

// planFeed is a key feed whose snapshot has n active keys, each of a plan
// of its own (a dealers service with per-dealer contract plans), in pages
// of upstream.MaxKeyPageSize.
type planFeed struct{ n int }

func (f planFeed) KeySnapshotEach(ctx context.Context, after string, limit int, each func(*upstream.KeyIndexEntry) error) (upstream.KeySnapshotPage, error) {
	from := 0
	if after != "" {
		fmt.Sscanf(after, "%x", &from)
	}
	to := min(from+limit, f.n)
	for i := from; i < to; i++ {
		e := upstream.KeyIndexEntry{KeySHA256: fmt.Sprintf("%064x", i+1), DealerID: int64(i + 1), Status: upstream.KeyActive, Plan: fmt.Sprintf("contract-%d", i)}
		if err := each(&e); err != nil {
			return upstream.KeySnapshotPage{}, err
		}
	}
	next := ""
	if to < f.n {
		next = fmt.Sprintf("%064x", to)
	}
	return upstream.KeySnapshotPage{Next: next, Cursor: "c1", Total: f.n}, nil
}

func (f planFeed) KeyChanges(ctx context.Context, cursor string, limit int) (upstream.KeyChangesPage, error) {
	return upstream.KeyChangesPage{Cursor: cursor}, nil
}

// TestKeyIndexPlansLinear: interning a snapshot's plan names must cost
// memory linear in their number. Each new plan copied the whole plan list
// (copy on write of a slice), so n distinct plans allocated n²/2 strings'
// headers: 20,000 plans, 3.2 GB.
func TestKeyIndexPlansLinear(t *testing.T) {
	const n = 20_000
	ix := newKeyIndex(planFeed{n: n}, slog.New(slog.DiscardHandler), time.Now)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	if err := ix.loadSnapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d keys of %d plans: %d MiB allocated, %v", ix.tab.Load().len(), len(*ix.plans.Load()), alloc>>20, time.Since(start))
	if alloc > 256<<20 {
		t.Fatalf("loading %d keys of distinct plans allocated %d MiB: quadratic in the plans", n, alloc>>20)
	}
}
