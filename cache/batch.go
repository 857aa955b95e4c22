package cache

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"time"

	"github.com/dealer-edge/dealer-edge/internal/workers"
	"github.com/redis/go-redis/v9"
)

// errBatchFull is the error of a command refused because maxQueuedCommands
// are queued or in flight already: Redis is slow, not gone (see unreachable).
var errBatchFull = errors.New("cache: too many redis commands queued")

// batcher sends the hot-path commands of concurrent requests (entry GET and
// SET, lock SET NX) to Redis together: every command queued while a round
// trip runs goes out in the next one, as one pipeline (one write, one read;
// on a Cluster, one per master), so the system calls per request fall as
// concurrency rises. It replaces go-redis's auto-pipeliner on this path
// because that one coalesces by expecting each answered caller to send its
// next command at once (a closed loop): an HTTP edge's callers do not (each
// answered request waits for its client's next one), and on one CPU its
// flusher, woken first by the first command, sent batches of two or three
// (bench row u: 2.8 commands per Redis read).
//
// The flusher yields the processor once (runtime.Gosched) before it takes
// the queue, so that every request goroutine the network poller has made
// runnable queues its command first, as rueidis's writer does before it
// blocks. It runs only while there is work: the first command queued when
// none is running starts it, and it stops when a yield finds the queue
// empty, so a cache needs no Close for it and works after Close.
//
// One round trip at a time, under a budget of its own; a caller waits at
// most its own budget (see Cache.redisCmd), and a command it abandoned still
// runs in its batch, its result dropped.
type batcher struct {
	rdb    redis.UniversalClient
	max    int           // commands queued or in flight at most
	budget time.Duration // of one round trip

	mu       sync.Mutex
	queue    []*batchCall
	spare    []*batchCall // the previous batch's slice, for the next swap
	inFlight int          // commands in the round trip under way
	running  bool         // a flusher goroutine runs
	// queued and sent count the commands queued and those whose round
	// trip has ended, for drain; sentCond is signalled when sent grows.
	queued, sent uint64
	sentCond     sync.Cond

	// flushers runs flush on a goroutine that keeps the stack it grew in
	// go-redis (package workers): at low concurrency a flusher starts and
	// stops about once a round trip.
	flushers *workers.Pool
}

// batchCall is one queued command. done receives one value when cmd has its
// result; a call whose caller got that value is reused (calls).
type batchCall struct {
	cmd   redis.Cmder
	done  chan struct{}
	timer *time.Timer // the caller's budget; stopped when the call is reused
}

var calls = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &batchCall{done: make(chan struct{}, 1), timer: t}
}}

func newBatcher(rdb redis.UniversalClient, max int, budget time.Duration) *batcher {
	b := &batcher{rdb: rdb, max: max, budget: budget, flushers: workers.New(workerIdle)}
	b.sentCond.L = &b.mu
	return b
}

// drain waits until every command queued before it was called has been
// sent and answered (or failed): commands whose callers stopped waiting
// (a cancelled context, their budget) still go out in their batch, and
// Cache.Close must not return before they have, or they would reach a
// Redis client its caller has closed. Commands queued meanwhile are not
// waited for. Each round trip is bounded by the batcher's budget.
func (b *batcher) drain() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for target := b.queued; b.sent < target; {
		b.sentCond.Wait()
	}
}

// do queues cmd and waits for its result, for ctx, or for the budget,
// whichever comes first. It returns cmd.Err() (redis.Nil for a GET of no
// key), errBatchFull, or the context error that ended the wait.
func (b *batcher) do(ctx context.Context, cmd redis.Cmder, budget time.Duration) error {
	call := calls.Get().(*batchCall)
	call.cmd = cmd
	b.mu.Lock()
	if len(b.queue)+b.inFlight >= b.max {
		b.mu.Unlock()
		call.cmd = nil
		calls.Put(call)
		return errBatchFull
	}
	b.queue = append(b.queue, call)
	b.queued++
	start := !b.running
	b.running = true
	b.mu.Unlock()
	if start {
		b.flushers.Go(b.flush)
	}
	// Since Go 1.23 a stopped timer's channel holds no stale tick, so a
	// pooled call's timer is reset without draining.
	call.timer.Reset(budget)
	select {
	case <-call.done:
		call.timer.Stop()
		call.cmd = nil
		calls.Put(call)
		return cmd.Err()
	case <-ctx.Done():
		call.timer.Stop()
		return ctx.Err()
	case <-call.timer.C:
		return context.DeadlineExceeded
	}
}

// flush runs round trips until the queue stays empty over a yield.
func (b *batcher) flush() {
	for {
		runtime.Gosched() // let runnable request goroutines queue theirs first
		b.mu.Lock()
		batch := b.queue
		if len(batch) == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		b.queue = b.spare[:0]
		b.inFlight = len(batch)
		b.mu.Unlock()

		b.exec(batch)

		// The slots are free before the callers learn their results: a
		// caller that queues its next command at once must not find its
		// previous one still counted. The slice is the next swap's queue;
		// only the flusher, which is this goroutine until the next swap,
		// touches it.
		b.mu.Lock()
		b.inFlight = 0
		b.spare = batch[:0]
		b.sent += uint64(len(batch))
		b.sentCond.Broadcast()
		b.mu.Unlock()
		for _, c := range batch {
			c.done <- struct{}{}
		}
		clear(batch)
	}
}

// exec sends batch as one pipeline; each command holds its result.
func (b *batcher) exec(batch []*batchCall) {
	ctx, cancel := context.WithTimeout(context.Background(), b.budget)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			// A panic in the client must not leave callers to their
			// budget nor kill the process; fail the batch.
			for _, c := range batch {
				if c.cmd.Err() == nil {
					c.cmd.SetErr(errBatchPanic)
				}
			}
		}
	}()
	if len(batch) == 1 {
		_ = b.rdb.Process(ctx, batch[0].cmd)
		return
	}
	p := b.rdb.Pipeline()
	for _, c := range batch {
		_ = p.Process(ctx, c.cmd)
	}
	_, _ = p.Exec(ctx)
}

var errBatchPanic = errors.New("cache: redis client panicked")
