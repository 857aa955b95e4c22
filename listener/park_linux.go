//go:build linux

package listener

import (
	"errors"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pires/go-proxyproto"
	"golang.org/x/sys/unix"
)

// parkSupported reports whether this platform can park connections.
const parkSupported = true

// parker holds idle keep-alive connections in one epoll set, with no
// goroutine each, and hands a connection back to the server when it has
// something to read. A connection waiting with a goroutine costs that
// goroutine's stack (8 KB while blocked deep in the server's read) and,
// without server.reduce_memory, the server's buffers and request context
// (about 30 KB); parked, it costs its socket and a few hundred bytes.
//
// The set's descriptor is itself waited on through Go's network poller
// (an epoll set is readable while it has events), never in a blocking
// epoll_wait: a goroutine blocked in a system call keeps the process's
// only scheduler slot (GOMAXPROCS=1 on one core) until the runtime's
// monitor takes it back, which it does after up to 10 ms when it has been
// idle, and every request waits that long. Measured on one core at 64
// connections (one hot URL, 4 alternating runs of 3 s each, servers at
// nice -20): p99 10.9-15.5 ms and 44.3-46.6k requests/s with a 250 ms
// blocking epoll_wait in this loop; 3.5-4.8 ms and 47.1-47.8k with this
// loop; 3.5-4.1 ms and 47.2-48.3k with parking off.
// TestParkerWaitsInThePoller holds it.
type parker struct {
	epfd  int
	file  *os.File // epfd, registered with the runtime's poller
	serve atomic.Pointer[func(net.Conn)]

	mu     sync.Mutex
	conns  map[int32]*limitConn // by file descriptor
	closed bool
	count  atomic.Int64
	done   chan struct{}
	// Parked since the last release of memory, and when the last park
	// happened (under mu); lastRelease is the loop's own.
	parkedSince int
	lastPark    time.Time
	lastRelease time.Time
}

// Memory release after a wave of parking: the buffers, request contexts
// and goroutine stacks that the parked connections held are garbage in
// the runtime's pools, and an idle process runs no garbage collection
// that would hand them back to the system. Once at least releaseAfterParks
// connections were parked and parking has been quiet for releaseQuiet,
// the parker collects twice and returns the memory (debug.FreeOSMemory), at most
// once per releaseEvery. releaseQuiet outlasts the server's worker that
// served a parked connection: it is idle from the park and ends at the
// pool's next clean after WorkerIdle (a clean every WorkerIdle), so within
// twice that; a release before that left those workers' stacks and
// buffers resident (3 s measured 57-62 MiB per 10,000 idle connections in
// some runs, 21-26 in others).
const (
	releaseAfterParks = 1000
	releaseQuiet      = 2*WorkerIdle + time.Second
	releaseEvery      = 30 * time.Second
)

// sweepEvery is how often the parker closes the connections whose idle
// deadline passed.
const sweepEvery = 250 * time.Millisecond

func newParker() (*parker, error) {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		return nil, err
	}
	// A non-blocking descriptor: os.NewFile registers it with the poller.
	f := os.NewFile(uintptr(fd), "parked-connections")
	raw, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	p := &parker{epfd: fd, file: f, conns: map[int32]*limitConn{}, done: make(chan struct{})}
	go p.loop(raw)
	return p, nil
}

// fdOf returns the socket of a plain TCP connection (directly, or under
// the PROXY protocol layer). Other connections are not parked.
func fdOf(c net.Conn) (int32, bool) {
	if pc, ok := c.(*proxyproto.Conn); ok {
		tc, ok := pc.TCPConn()
		if !ok {
			return 0, false
		}
		c = tc
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return 0, false
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return 0, false
	}
	fd := int32(-1)
	if raw.Control(func(f uintptr) { fd = int32(f) }) != nil || fd < 0 {
		return 0, false
	}
	return fd, true
}

// park takes c over until it is readable, its idle deadline passes or the
// parker closes. It reports false when c cannot be parked (the caller then
// closes it).
func (p *parker) park(c *limitConn) bool {
	if p.serve.Load() == nil {
		return false
	}
	fd, ok := fdOf(c.Conn)
	if !ok {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLONESHOT, Fd: fd}
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, int(fd), &ev); err != nil {
		return false
	}
	p.conns[fd] = c
	p.count.Add(1)
	p.parkedSince++
	p.lastPark = time.Now()
	return true
}

// take removes the connection of fd from the set; nil if it is not there.
func (p *parker) take(fd int32) *limitConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.conns[fd]
	if c == nil {
		return nil
	}
	delete(p.conns, fd)
	p.count.Add(-1)
	_ = unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, int(fd), nil)
	return c
}

// loop wakes the connections that became readable and closes those whose
// idle deadline passed. It waits for the set in the runtime's poller, with
// a read deadline for the sweep, and ends when close closes the set.
func (p *parker) loop(raw interface {
	Read(func(fd uintptr) bool) error
}) {
	defer close(p.done)
	events := make([]unix.EpollEvent, 128)
	lastSweep := time.Now()
	_ = p.file.SetReadDeadline(lastSweep.Add(sweepEvery))
	for {
		n := 0
		err := raw.Read(func(fd uintptr) bool {
			var werr error
			n, werr = unix.EpollWait(int(fd), events, 0)
			if werr != nil && !errors.Is(werr, unix.EINTR) {
				n = -1
				return true
			}
			return n > 0 // nothing ready: wait in the poller
		})
		if n < 0 || (err != nil && !errors.Is(err, os.ErrDeadlineExceeded)) {
			return // the set was closed
		}
		for i := range max(n, 0) {
			if c := p.take(events[i].Fd); c != nil {
				go p.wake(c)
			}
		}
		if now := time.Now(); now.Sub(lastSweep) >= sweepEvery {
			lastSweep = now
			_ = p.file.SetReadDeadline(now.Add(sweepEvery))
			p.sweep(now)
			p.mu.Lock()
			release := p.parkedSince >= releaseAfterParks && now.Sub(p.lastPark) >= releaseQuiet && now.Sub(p.lastRelease) >= releaseEvery
			if release {
				p.parkedSince, p.lastRelease = 0, now
			}
			p.mu.Unlock()
			if release {
				go func() {
					// Two collections: the first moves the pools' objects
					// to their victim caches, the second frees them.
					runtime.GC()
					debug.FreeOSMemory()
				}()
			}
		}
	}
}

// wake hands a readable connection back to the server.
func (p *parker) wake(c *limitConn) {
	c.unpark()
	if serve := p.serve.Load(); serve != nil {
		(*serve)(c)
		return
	}
	_ = c.Close()
}

// sweep closes the parked connections whose idle deadline passed.
func (p *parker) sweep(now time.Time) {
	var expired []*limitConn
	p.mu.Lock()
	for fd, c := range p.conns {
		if d := c.idleUntil.Load(); d != 0 && d <= now.UnixNano() {
			delete(p.conns, fd)
			p.count.Add(-1)
			_ = unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, int(fd), nil)
			expired = append(expired, c)
		}
	}
	p.mu.Unlock()
	for _, c := range expired {
		c.unpark()
		_ = c.Close()
	}
}

// close closes every parked connection and stops parking.
func (p *parker) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	all := make([]*limitConn, 0, len(p.conns))
	for fd, c := range p.conns {
		_ = unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, int(fd), nil)
		all = append(all, c)
	}
	clear(p.conns)
	p.count.Store(0)
	p.mu.Unlock()
	// Closing the set ends the loop's wait in the poller (every EpollCtl
	// is made under mu and checks closed or the set's map first, so none
	// runs on the closed descriptor).
	_ = p.file.Close()
	for _, c := range all {
		c.unpark()
		_ = c.Close()
	}
}
