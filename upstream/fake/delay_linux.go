//go:build linux

package fake

import (
	"container/heap"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// delays wakes waiters at their deadlines to within the kernel's wake-up
// latency, for the fake's injected latency. Go's own timers wake through
// the network poller's epoll timeout, counted in whole milliseconds: a
// timer due less than a millisecond after the poller last woke waits a
// millisecond more, so six answers of a hub's fan-out delayed 5 ms each,
// started within a few hundred microseconds, came back between 5.0 and 6.2
// ms, and a benchmark of "six 5 ms sections" measured the fake's timer. One
// timerfd, armed for the earliest deadline and read through the poller
// (an fd event, not the epoll timeout), wakes at the deadline itself.
type delays struct {
	once  sync.Once
	file  *os.File // the timerfd, nonblocking, read through the poller
	fd    int
	err   error
	mu    sync.Mutex
	queue delayQueue
	armed int64 // the deadline the timerfd is armed for (CLOCK_MONOTONIC ns), 0: none
}

// delayWaiter is one wait: done is closed at or after its deadline.
type delayWaiter struct {
	at   int64 // CLOCK_MONOTONIC ns
	done chan struct{}
}

type delayQueue []delayWaiter

func (q delayQueue) Len() int           { return len(q) }
func (q delayQueue) Less(i, j int) bool { return q[i].at < q[j].at }
func (q delayQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *delayQueue) Push(x any)        { *q = append(*q, x.(delayWaiter)) }
func (q *delayQueue) Pop() any {
	old := *q
	w := old[len(old)-1]
	*q = old[:len(old)-1]
	return w
}

func monotonicNow() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// start makes the timerfd and its reader, once; an error leaves the
// waits to Go's timers.
func (d *delays) start() {
	d.once.Do(func() {
		fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
		if err != nil {
			d.err = err
			return
		}
		d.fd, d.file = fd, os.NewFile(uintptr(fd), "fake-delays")
		go d.run(d.file)
	})
}

// wait returns after dur, or when closing is closed.
func (d *delays) wait(dur time.Duration, closing <-chan struct{}) {
	d.start()
	d.mu.Lock()
	if d.err != nil {
		d.mu.Unlock()
		timerWait(dur, closing)
		return
	}
	w := delayWaiter{at: monotonicNow() + int64(dur), done: make(chan struct{})}
	heap.Push(&d.queue, w)
	if d.armed == 0 || w.at < d.armed {
		d.arm(w.at)
	}
	d.mu.Unlock()
	select {
	case <-w.done:
	case <-closing:
	}
}

// arm sets the timerfd to fire at the absolute deadline at (0 disarms).
// d.mu is held.
func (d *delays) arm(at int64) {
	var spec unix.ItimerSpec
	if at > 0 {
		spec.Value = unix.NsecToTimespec(at)
	}
	if err := unix.TimerfdSettime(d.fd, unix.TFD_TIMER_ABSTIME, &spec, nil); err != nil {
		// Cannot happen with a valid fd and deadline; release the
		// waiters rather than leave them hanging.
		at = 0
		for d.queue.Len() > 0 {
			close(heap.Pop(&d.queue).(delayWaiter).done)
		}
	}
	d.armed = at
}

// close ends the reader and releases the timerfd; waits after it use Go's
// timers.
func (d *delays) close() {
	d.once.Do(func() { d.err = os.ErrClosed }) // never started: nothing to release
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.file != nil {
		_ = d.file.Close()
		d.file = nil
	}
	d.err = os.ErrClosed
	for d.queue.Len() > 0 {
		close(heap.Pop(&d.queue).(delayWaiter).done)
	}
}

// run reads the timerfd (each read returns once it fired) and releases
// every waiter due, then arms it for the next one.
func (d *delays) run(f *os.File) {
	var buf [8]byte
	for {
		if _, err := f.Read(buf[:]); err != nil {
			return
		}
		now := monotonicNow()
		d.mu.Lock()
		if d.file == nil {
			d.mu.Unlock()
			return
		}
		for d.queue.Len() > 0 && d.queue[0].at <= now {
			close(heap.Pop(&d.queue).(delayWaiter).done)
		}
		next := int64(0)
		if d.queue.Len() > 0 {
			next = d.queue[0].at
		}
		d.arm(next)
		d.mu.Unlock()
	}
}
