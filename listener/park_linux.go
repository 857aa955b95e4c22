//go:build linux

package listener

import (
	"errors"
	"net"
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
type parker struct {
	epfd  int
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
// once per releaseEvery.
const (
	releaseAfterParks = 1000
	releaseQuiet      = 3 * time.Second
	releaseEvery      = 30 * time.Second
)

func newParker() (*parker, error) {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	p := &parker{epfd: fd, conns: map[int32]*limitConn{}, done: make(chan struct{})}
	go p.loop()
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
// idle deadline passed.
func (p *parker) loop() {
	defer close(p.done)
	defer unix.Close(p.epfd) // after close: nothing else touches the set then
	events := make([]unix.EpollEvent, 128)
	lastSweep := time.Now()
	for {
		n, err := unix.EpollWait(p.epfd, events, 250)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return // the set was closed
		}
		for i := range max(n, 0) {
			if c := p.take(events[i].Fd); c != nil {
				go p.wake(c)
			}
		}
		if now := time.Now(); now.Sub(lastSweep) >= 250*time.Millisecond {
			lastSweep = now
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
		p.mu.Lock()
		closed := p.closed
		p.mu.Unlock()
		if closed {
			return
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
		if d := c.idleUntil; d != 0 && d <= now.UnixNano() {
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
	// The loop closes the set at its next wake-up (within 250 ms); the
	// listener's Close does not wait for it, since the server's shutdown
	// waits on that Close.
	for _, c := range all {
		c.unpark()
		_ = c.Close()
	}
}
