package aggregator

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSectionWorkers: every job runs once and Wait sees it done; jobs
// handed out one after another reuse a worker instead of a goroutine each;
// concurrent jobs get workers of their own; idle workers exit.
func TestSectionWorkers(t *testing.T) {
	w := newSectionWorkers(200 * time.Millisecond)
	var ran atomic.Int64
	for range 50 {
		var wg sync.WaitGroup
		w.Go(&wg, func() { ran.Add(1) })
		wg.Wait()
		time.Sleep(time.Millisecond) // the worker is back to waiting
	}
	if got := ran.Load(); got != 50 {
		t.Fatalf("ran %d jobs, want 50", got)
	}
	// One worker, unless the machine is so slow that it had not gone back
	// to waiting by the next job; never a goroutine per job.
	if n := w.live.Load(); n < 1 || n > 3 {
		t.Errorf("%d workers for 50 jobs in turn, want 1", n)
	}

	// Six at once (a hub): each blocks until all have started, so they
	// cannot share a worker.
	var wg sync.WaitGroup
	var started sync.WaitGroup
	started.Add(6)
	for range 6 {
		w.Go(&wg, func() { started.Done(); started.Wait(); ran.Add(1) })
	}
	wg.Wait()
	if got := ran.Load(); got != 56 {
		t.Fatalf("ran %d jobs, want 56", got)
	}
	if n := w.live.Load(); n < 6 {
		t.Errorf("%d workers after six concurrent jobs, want at least 6", n)
	}

	deadline := time.Now().Add(5 * time.Second)
	for w.live.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := w.live.Load(); n > 0 {
		t.Errorf("%d workers left after idling", n)
	}
}
