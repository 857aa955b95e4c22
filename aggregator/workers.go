package aggregator

import (
	"sync"
	"time"

	"github.com/dealer-edge/dealer-edge/internal/workers"
)

// workerIdle is how long a section worker waits for more work before it
// exits.
const workerIdle = 10 * time.Second

// sectionWorkers runs the per-type calls of hubs and searches on workers
// that keep the stacks they grew decoding content lists (see package
// workers: about 4% of a cold hub's CPU went to growing new goroutines'
// stacks, in the serial part after the answers arrive).
type sectionWorkers struct{ pool *workers.Pool }

// newSectionWorkers returns an empty pool whose workers exit after idling
// for idleFor; workers start on demand.
func newSectionWorkers(idleFor time.Duration) *sectionWorkers {
	return &sectionWorkers{pool: workers.New(idleFor)}
}

// Go runs f on an idle worker, or on a new one when none is idle, and
// marks wg done when f returns. f must not panic (the sections run under
// guard).
func (w *sectionWorkers) Go(wg *sync.WaitGroup, f func()) {
	wg.Add(1)
	w.pool.Go(func() { defer wg.Done(); f() })
}
