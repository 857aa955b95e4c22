// Package workers runs short jobs on goroutines that outlive one job.
//
// A new goroutine starts with a small stack that grows by copying as the
// job goes deep (a content section's decoder, a cache refresh through the
// aggregator, the upstream client and the cache's Redis calls): about 4% of
// a cold hub's CPU and 6% of a refresh-heavy edge's went to that copying. A
// worker keeps the stack it grew for the next job (until a garbage
// collection finds it idle and shrinks it). A worker that finds no work for
// its idle time exits, so an idle process holds none.
package workers

import (
	"sync/atomic"
	"time"
)

// Pool hands jobs to idle workers, starting one when none is idle. The
// zero value is not usable; see New.
type Pool struct {
	idle    chan func() // unbuffered: a send succeeds only into an idle worker
	idleFor time.Duration
	live    atomic.Int64
}

// New returns an empty pool whose workers exit after idling for idleFor;
// workers start on demand.
func New(idleFor time.Duration) *Pool {
	return &Pool{idle: make(chan func()), idleFor: idleFor}
}

// Go runs f on an idle worker, or on a new one when none is idle. It never
// waits for a worker. f must not panic: a panic ends the process as one in
// any goroutine does.
func (p *Pool) Go(f func()) {
	select {
	case p.idle <- f:
	default:
		go p.run(f)
	}
}

// Live is the number of workers running, idle ones included.
func (p *Pool) Live() int64 { return p.live.Load() }

// run is a worker: job, then whatever is handed to it until it has been
// idle for p.idleFor.
func (p *Pool) run(job func()) {
	p.live.Add(1)
	defer p.live.Add(-1)
	t := time.NewTimer(p.idleFor)
	defer t.Stop()
	for {
		job()
		job = nil // an idle worker keeps nothing of the job it ran
		t.Reset(p.idleFor)
		select {
		case job = <-p.idle:
		case <-t.C:
			return
		}
	}
}
