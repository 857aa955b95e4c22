package aggregator

import (
	"sync"
	"sync/atomic"
	"time"
)

// workerIdle is how long a section worker waits for more work before it
// exits.
const workerIdle = 10 * time.Second

// sectionWorkers runs the per-type calls of hubs and searches on goroutines
// that outlive one request. A new goroutine starts with a small stack that
// grows by copying as a section decodes its content list (about 4% of a
// cold hub's CPU went to it, in the serial part after the answers arrive);
// a worker keeps the stack it grew for the next section (until a garbage
// collection finds it idle and shrinks it). A worker that finds no work
// for its idle time exits, so an idle edge holds none.
type sectionWorkers struct {
	idle    chan func() // unbuffered: a send succeeds only into an idle worker
	idleFor time.Duration
	live    atomic.Int64 // workers running (TestSectionWorkers)
}

// newSectionWorkers returns an empty pool whose workers exit after idling
// for idleFor; workers start on demand.
func newSectionWorkers(idleFor time.Duration) *sectionWorkers {
	return &sectionWorkers{idle: make(chan func()), idleFor: idleFor}
}

// Go runs f on an idle worker, or on a new one when none is idle, and
// marks wg done when f returns. f must not panic (the sections run under
// guard).
func (w *sectionWorkers) Go(wg *sync.WaitGroup, f func()) {
	wg.Add(1)
	job := func() { defer wg.Done(); f() }
	select {
	case w.idle <- job:
	default:
		go w.run(job)
	}
}

// run is a worker: job, then whatever is handed to it until it has been
// idle for w.idleFor.
func (w *sectionWorkers) run(job func()) {
	w.live.Add(1)
	defer w.live.Add(-1)
	t := time.NewTimer(w.idleFor)
	defer t.Stop()
	for {
		job()
		job = nil // an idle worker keeps nothing of the request it ran
		t.Reset(w.idleFor)
		select {
		case job = <-w.idle:
		case <-t.C:
			return
		}
	}
}
