package listener

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	proxyproto "github.com/pires/go-proxyproto"
)

// WorkerIdle is how long the server's worker that served a connection
// stays after the connection goes idle or is parked (the server's
// MaxIdleWorkerDuration): short, so a wave of idle connections gives its
// workers' stacks back soon. The parker's memory release waits for them.
const WorkerIdle = 2 * time.Second

// ErrTooManyConns is the first Read's error on a connection over the
// per-address limit: the server closes it.
var ErrTooManyConns = errors.New("listener: too many connections from this client address")

// ErrOverloaded is the first Read's error on a connection accepted while
// LimitOptions.MaxConns connections were open: Close answers it
// OverloadResponse.
var ErrOverloaded = errors.New("listener: too many open connections")

// ErrRequestTooLarge is a Read's error on a connection that sent more than
// LimitOptions.MaxUnansweredBytes since the server last wrote to it. Its
// RequestTooLarge method (true) lets a server's error handler, which need
// not import this package, answer it as a request too large.
var ErrRequestTooLarge error = requestTooLarge{}

type requestTooLarge struct{}

func (requestTooLarge) Error() string         { return "listener: too many bytes sent without an answer" }
func (requestTooLarge) RequestTooLarge() bool { return true }

// IsRefusal reports whether err is a listener layer's refusal of a
// connection (over the per-client cap, or a PROXY header missing or
// malformed) surfacing as its first Read's error: the client was answered,
// or closed on, by the layer, so a server's error handler must not answer,
// log or count it as a malformed request.
func IsRefusal(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e == ErrTooManyConns || e == ErrOverloaded || strings.HasPrefix(e.Error(), "proxyproto: ") {
			return true
		}
	}
	return false
}

// LimitOptions configure Limit.
type LimitOptions struct {
	// MaxConnsPerIP caps the open connections of one client address (an
	// IPv6 client by its /64); 0 means no cap. The address is the
	// connection's RemoteAddr: the client's when the PROXY protocol layer
	// is below, else the TCP peer (behind a load balancer without the
	// PROXY protocol, the balancer's).
	MaxConnsPerIP int
	// MaxConns caps the open connections, parked ones included (a parked
	// connection has left the server's own count of its connections): a
	// connection accepted beyond it is answered OverloadResponse (closed
	// unanswered when that is nil) and counted as a "concurrency"
	// refusal. 0 means no cap. The edge sets server.concurrency.
	MaxConns int
	// BusyConns is the number of open connections from which the edge is
	// under pressure; 0 means never.
	BusyConns int
	// BusyIdleTimeout, when the edge is under pressure, caps every read
	// deadline the server sets (the keep-alive idle timeout among them) to
	// this long from now, so idle connections are closed sooner (those
	// already idle when the pressure begins too, parked ones included).
	BusyIdleTimeout time.Duration
	// MaxUnansweredBytes caps the bytes a connection may send the server
	// between two of the server's writes (a request's header block and
	// body, or pipelined requests whose answers are not written yet): a
	// read past it fails with ErrRequestTooLarge, and the server answers
	// and closes the connection. 0 means no cap. It bounds what no server
	// limit does: fasthttp reads a chunked body's chunk-size line,
	// extensions and whitespace included, without a bound, so one
	// request's "3;aaaa..." ran for the whole read timeout at line rate.
	MaxUnansweredBytes int64
	// ReadBufferSize is the server's read buffer (fasthttp.Server's
	// ReadBufferSize, the edge's server.max_header_bytes; 0: fasthttp's
	// default, 4096): a connection whose last ReadBufferSize bytes handed
	// to the server hold no LF tells the server's error handler that the
	// request line is what did not fit (RequestLineOpen: 414, not 431).
	ReadBufferSize int
	// OnReject, when set, is called with "per_ip" for every connection
	// refused by MaxConnsPerIP, and with "concurrency" for every one
	// answered OverloadResponse.
	OnReject func(reason string)
	// RejectResponse, when set, is written to a refused connection before
	// it is closed (a plain HTTP answer; leave it nil under TLS).
	RejectResponse []byte
	// OverloadResponse, when set, replaces the answer a server writes to a
	// connection before reading anything from it, when that answer is a
	// 503 (fasthttp's fast answer to a connection beyond its Concurrency:
	// a text/plain body), and OnReject is called with "concurrency". A
	// plain HTTP answer; leave it nil under TLS.
	OverloadResponse []byte
	// ParkAfter, when positive, parks a keep-alive connection that has
	// waited that long for its next request while more than ParkAbove
	// connections are open: it leaves the server (which closes nothing)
	// and waits in one epoll set with no goroutine of its own until it is
	// readable, when it is served again (ServeParked), or until its idle
	// deadline, when it is closed. Linux only, and not under TLS (New
	// turns it off there): the TLS layer may hold read-ahead the socket
	// does not show.
	ParkAfter time.Duration
	ParkAbove int
}

// LimitListener counts open connections, in total and per client
// address. The per-address check runs on a connection's first Read, in
// the goroutine serving it, because with the PROXY protocol the client's
// address is known only once its header is read: the accept loop never
// waits on a client.
type LimitListener struct {
	net.Listener
	o     LimitOptions
	open  atomic.Int64
	mu    sync.Mutex
	perIP map[netip.Addr]int
	// answering counts the connections waiting in answer.
	answering atomic.Int64
	// lingers counts the connections in a lingering close (LingerOnClose).
	lingers atomic.Int64
	// conns are the open connections, for the sweep that shortens the
	// deadlines of idle ones when pressure begins (only kept when
	// BusyConns is set).
	connsMu   sync.Mutex
	conns     map[*limitConn]struct{}
	lastSweep time.Time
	parker    *parker // nil: no parking
}

// Limit wraps ln.
func Limit(ln net.Listener, o LimitOptions) *LimitListener {
	l := &LimitListener{Listener: ln, o: o, perIP: map[netip.Addr]int{}, conns: map[*limitConn]struct{}{}}
	if o.ParkAfter > 0 && parkSupported {
		if p, err := newParker(); err == nil {
			l.parker = p
		}
	}
	return l
}

// ServeParked sets how a parked connection that became readable is served
// again (the server's ServeConn). Until it is set nothing is parked.
func (l *LimitListener) ServeParked(serve func(net.Conn)) {
	if l.parker != nil {
		l.parker.serve.Store(&serve)
	}
}

// Parked returns the number of parked connections (counted in Open too).
func (l *LimitListener) Parked() int64 {
	if l.parker == nil {
		return 0
	}
	return l.parker.count.Load()
}

// Close closes the listener and every parked connection.
func (l *LimitListener) Close() error {
	if l.parker != nil {
		l.parker.close()
	}
	return l.Listener.Close()
}

// CloseSilent closes the open connections that have not sent a byte, for a
// graceful shutdown: the server counts a new connection idle only 5 s after
// it was accepted (as net/http does), so one that a client opened and left
// silent held a shutdown that long, past a shorter grace period (and the
// edge then exited 1 with no request in flight). A connection that has
// sent anything, or has been answered, is left to the server. It returns
// how many it closed.
func (l *LimitListener) CloseSilent() int {
	l.connsMu.Lock()
	var silent []*limitConn
	for c := range l.conns {
		if c.silent() {
			silent = append(silent, c)
		}
	}
	l.connsMu.Unlock()
	n := 0
	for _, c := range silent {
		// A request already in the socket, not yet read by
		// the server's goroutine, is in flight: leave it to the server.
		if bytesWaiting(c.Conn) {
			continue
		}
		_ = c.Conn.Close() // the server's goroutine reads an error and closes c
		n++
	}
	return n
}

// bytesWaiting reports whether c's socket holds bytes not yet read (a
// peek that does not wait); false when it cannot tell.
func bytesWaiting(c net.Conn) bool {
	tc := tcpConn(c)
	if tc == nil {
		return false
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return false
	}
	waiting := false
	// Control, not Read: the server's goroutine may hold the read lock
	// while it waits in the poller.
	_ = raw.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		waiting = err == nil && n > 0
	})
	return waiting
}

// Open returns the number of open connections, those in a lingering close
// (LingerOnClose) included.
func (l *LimitListener) Open() int64 { return l.open.Load() }

// Lingering returns the number of connections in a lingering close: closed
// by the server (no request of theirs is in flight), counted in Open until
// their socket is closed.
func (l *LimitListener) Lingering() int64 { return l.lingers.Load() }

// Busy reports whether the open connections reach LimitOptions.BusyConns.
func (l *LimitListener) Busy() bool {
	return l.o.BusyConns > 0 && l.open.Load() >= int64(l.o.BusyConns)
}

// Accept returns the next connection, counted until it is closed.
func (l *LimitListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	lc := &limitConn{Conn: c, l: l}
	if n := l.open.Add(1); l.o.MaxConns > 0 && n > int64(l.o.MaxConns) {
		lc.overCap = true
		if l.o.OnReject != nil {
			l.o.OnReject("concurrency")
		}
	}
	// Every open connection is kept, for CloseSilent at shutdown (before
	// 2026-11-29 only with the busy cap on: with server.idle_timeout_busy
	// 0s a silent connection held a shutdown 5 s); the sweep below needs
	// the cap.
	{
		l.connsMu.Lock()
		l.conns[lc] = struct{}{}
		if l.o.BusyConns > 0 && l.o.BusyIdleTimeout > 0 && l.Busy() && time.Since(l.lastSweep) >= l.o.BusyIdleTimeout/2 {
			// Connections that went idle before the pressure began
			// still wait out the long idle timeout: cut it short.
			l.lastSweep = time.Now()
			limit := l.lastSweep.Add(l.o.BusyIdleTimeout)
			for oc := range l.conns {
				// By the deadline in force (idleUntil), not the one the
				// server asked for: a sweep that followed the asked one
				// moved an idle connection's cut deadline out again at
				// every sweep, so under a steady stream of new
				// connections it waited out the long idle timeout after
				// all. A parked connection is closed by its idleUntil,
				// not by its socket's read deadline (and one armed for
				// parking must not be parked past the cap): it is lowered
				// in both cases.
				// idleUntil first: a read that sets its deadline after
				// it takes the lower one (armRead).
				if u := oc.idleUntil.Load(); u != 0 && u > limit.UnixNano() {
					oc.cutIdle(limit)
				}
			}
		}
		l.connsMu.Unlock()
	}
	return lc, nil
}

// clientKey is the address a client is counted under: an IPv4 address,
// or an IPv6 address's /64.
func clientKey(a net.Addr) (netip.Addr, bool) {
	var ip netip.Addr
	switch v := a.(type) {
	case *net.TCPAddr:
		ip, _ = netip.AddrFromSlice(v.IP)
	default:
		ap, err := netip.ParseAddrPort(a.String())
		if err != nil {
			return netip.Addr{}, false
		}
		ip = ap.Addr()
	}
	ip = ip.Unmap()
	if !ip.IsValid() {
		return netip.Addr{}, false
	}
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		ip = p.Addr()
	}
	return ip, true
}

// clientKey is the address c is counted under: its client's (the PROXY
// header's source when that layer is below). A PROXY header whose source
// is not an IP address (v2 AF_UNIX: the balancer's own local clients)
// counts the connection under the balancer's address, the TCP peer, as a
// connection without the PROXY protocol is: it used to be counted under
// none, so those clients had no cap at all.
func (c *limitConn) clientKey() (netip.Addr, bool) {
	if pc := c.unlisted(); pc != nil {
		// Not a listed balancer: its client is its TCP peer whatever it
		// sends (a PROXY header is refused), known now. RemoteAddr would
		// first wait for its first bytes (up to the header timeout), and
		// its silent connections went uncounted meanwhile.
		return clientKey(pc.Raw().RemoteAddr())
	}
	if key, ok := clientKey(c.Conn.RemoteAddr()); ok {
		return key, true
	}
	if r, ok := c.Conn.(interface{ Raw() net.Conn }); ok {
		return clientKey(r.Raw().RemoteAddr())
	}
	return netip.Addr{}, false
}

// unlisted returns c's PROXY protocol connection when c comes from a
// source that may not send a header (not in server.proxy_protocol_from),
// nil otherwise.
func (c *limitConn) unlisted() *proxyproto.Conn {
	if pc, ok := c.Conn.(*proxyproto.Conn); ok && pc.ProxyHeaderPolicy == proxyproto.REJECT {
		return pc
	}
	return nil
}

// RemoteAddr and LocalAddr of a connection from an unlisted source are
// its socket's, as the PROXY layer's would be, without that layer's wait
// for the first bytes: the server's worker asks for both (to log the
// error) before it closes a refused connection.
func (c *limitConn) RemoteAddr() net.Addr {
	if pc := c.unlisted(); pc != nil {
		return pc.Raw().RemoteAddr()
	}
	return c.Conn.RemoteAddr()
}

func (c *limitConn) LocalAddr() net.Addr {
	if pc := c.unlisted(); pc != nil {
		return pc.Raw().LocalAddr()
	}
	return c.Conn.LocalAddr()
}

// register counts c as one connection of key; it reports false (and
// counts nothing) when that passes the cap. A connection already closed
// is not counted (it reports true: nothing is refused, the read that
// follows fails): with the PROXY protocol the key is known only once the
// header is read, and a shutdown may close the connection from another
// goroutine while its first Read waits for it. c's registration is
// guarded by l.mu, which Close takes too, so a count is never left behind.
func (l *LimitListener) register(c *limitConn, key netip.Addr) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.closed {
		return true
	}
	n := l.perIP[key]
	if l.o.MaxConnsPerIP > 0 && n >= l.o.MaxConnsPerIP {
		return false
	}
	l.perIP[key] = n + 1
	c.key, c.registered = key, true
	return true
}

// unregister marks c closed and takes back its count, if it has one.
func (l *LimitListener) unregister(c *limitConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c.closed = true
	if !c.registered {
		return
	}
	c.registered = false
	if n := l.perIP[c.key]; n <= 1 {
		delete(l.perIP, c.key)
	} else {
		l.perIP[c.key] = n - 1
	}
}

// limitConn is a counted connection.
type limitConn struct {
	net.Conn
	l       *LimitListener
	checked bool // only the serving goroutine reads
	// overRead: the bytes read since the last write passed
	// MaxUnansweredBytes; the next Read fails (owner goroutine only).
	overRead bool
	// registered, key and closed are guarded by l.mu (see register).
	registered bool
	// linger is lingerMarked once the server answered an error and will
	// close the connection (LingerOnClose): Close lingers; lingerOn once
	// it does. Atomic, not guarded by l.mu: here it takes the padding
	// before key, and the connection is no larger for it.
	linger   atomic.Uint32
	key      netip.Addr
	closed   bool
	rejected atomic.Bool // over the per-address cap; Close answers it
	overCap  bool        // accepted beyond MaxConns: refused (see ErrOverloaded)
	// overloaded: the server answered before reading (OverloadResponse
	// was sent instead); its further writes are dropped.
	overloaded atomic.Bool
	answered   atomic.Bool // Close sent the refusal (once)
	closeOnce  sync.Once
	// The parking state. parkArmed is used by the goroutine that owns the
	// connection (the serving one, or the parker's while parked) only; the
	// three flags below are atomics because a server shutdown closes idle
	// connections from another goroutine, and a TLS connection's Close
	// writes its close_notify alert through Write. idleUntil is set by the
	// owner and read by the parker's sweep, and the accept loop's sweep
	// lowers it to the busy cap when pressure begins (lowerIdleUntil).
	// unanswered counts the bytes read since the last write
	// (MaxUnansweredBytes).
	unanswered atomic.Int64
	wrote      atomic.Bool // an answer was written: the connection is keep-alive
	readSince  atomic.Bool // bytes were read since the last write
	everRead   atomic.Bool // a byte was read, ever (CloseSilent)
	// Under TLS (set by the TLS layer, see tlsConn) the bytes above are the
	// handshake's too; CloseSilent goes by these instead: the handshake is
	// done, no byte was read since, the TLS layer handed the server no
	// byte and it wrote none, and the connection waits in a socket read.
	tlsUnder    atomic.Bool
	tlsDone     atomic.Bool // the handshake completed
	tlsAppBytes atomic.Bool // a byte was read from the socket after it
	tlsAppIO    atomic.Bool // the server read or wrote application data
	sockReading atomic.Bool // a socket read is waiting (TLS only)
	// The TLS records read from the socket, so that a connection whose
	// handshake read took part of the next record (a request sent with
	// the Finished) is not silent while the TLS layer waits for the rest
	// of it (TestCloseSilentKeepsTLSRequestInFlight).
	recHdr      [5]byte
	recHdrN     int
	recLeft     int
	midRecord   atomic.Bool
	parkPending atomic.Bool // the parking deadline passed with nothing read: Close parks
	parkArmed   bool        // the read deadline in force is the parking one
	// tail is the last four bytes handed to the server (the first in the
	// high byte; fewer after a shorter history), for atBoundary. Only the
	// goroutine that reads touches it.
	tail      uint32
	line      requestLine  // of the plain bytes (under TLS, tlsConn's)
	idleUntil atomic.Int64 // the idle deadline in force (after the busy cap), Unix ns; 0: none
	// The deadlines in force on the socket (see SetWriteDeadline and
	// armRead), and the read deadline the server asked for last (capped,
	// or the parking one; zero: none), which the next read that may wait
	// sets. Only the goroutine that reads touches readWant.
	writeSet deadline
	readSet  deadline
	readWant time.Time
	// stash holds what a one-byte read took from the socket beyond that
	// byte (see Read); stashBuf is its pooled buffer, nil when empty. Only
	// the goroutine that reads touches them.
	stash    []byte
	stashBuf *[stashSize]byte
	raw      syscall.RawConn // of a plain TCP connection, for readStashed
	rawTried bool
	// readFn is readOnce as a function value, made once per connection
	// (a closure made per read would be an allocation per request), and
	// rsBuf, rsN, rsErr are what it read.
	readFn func(fd uintptr) bool
	rsBuf  *[stashSize]byte
	rsN    int
	rsErr  error
}

// stashSize is the most a one-byte read takes from the socket: a request
// line and headers usually fit.
const stashSize = 4 << 10

var stashPool = sync.Pool{New: func() any { return new([stashSize]byte) }}

func (c *limitConn) Read(b []byte) (int, error) {
	if !c.checked {
		c.checked = true
		if c.l.o.MaxConnsPerIP > 0 {
			// RemoteAddr reads the PROXY header when that layer is below.
			if key, ok := c.clientKey(); ok {
				if !c.l.register(c, key) {
					c.rejected.Store(true)
					// Counted before the answer leaves (Close sends it): a
					// client that reads its 429 and then the metrics finds
					// it counted.
					if c.l.o.OnReject != nil {
						c.l.o.OnReject("per_ip")
					}
				}
			}
		}
	}
	if c.rejected.Load() {
		return 0, ErrTooManyConns
	}
	if c.overCap {
		return 0, ErrOverloaded
	}
	if c.overRead {
		if c.unanswered.Load() > c.l.o.MaxUnansweredBytes {
			return 0, ErrRequestTooLarge
		}
		c.overRead = false // written since
	}
	if len(c.stash) > 0 {
		n := copy(b, c.stash)
		c.stash = c.stash[n:]
		if len(c.stash) == 0 {
			stashPool.Put(c.stashBuf)
			c.stash, c.stashBuf = nil, nil
		}
		c.readSince.Store(true)
		c.noteTail(b[:n])
		return n, nil
	}
	if err := c.armRead(); err != nil {
		c.noteReadError(err)
		return 0, err
	}
	if len(b) == 1 && c.rawConn() != nil {
		return c.readStashed(b)
	}
	if c.tlsUnder.Load() {
		return c.readUnderTLS(b)
	}
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.readSince.Store(true)
		c.noteTail(b[:n])
	} else {
		c.noteReadError(err)
	}
	return n, err
}

// readUnderTLS is Read's socket read below the TLS layer, which notes for
// CloseSilent when it waits and what it read after the handshake.
func (c *limitConn) readUnderTLS(b []byte) (int, error) {
	c.sockReading.Store(true)
	n, err := c.Conn.Read(b)
	c.sockReading.Store(false)
	if n > 0 {
		c.scanRecords(b[:n])
		if c.tlsDone.Load() {
			c.tlsAppBytes.Store(true)
		}
		c.readSince.Store(true)
		c.noteTail(b[:n])
	} else {
		c.noteReadError(err)
	}
	return n, err
}

// scanRecords follows the TLS record framing of the bytes read.
func (c *limitConn) scanRecords(b []byte) {
	for len(b) > 0 {
		if c.recLeft > 0 {
			k := min(c.recLeft, len(b))
			c.recLeft -= k
			b = b[k:]
			continue
		}
		k := copy(c.recHdr[c.recHdrN:], b)
		c.recHdrN += k
		b = b[k:]
		if c.recHdrN == len(c.recHdr) {
			c.recLeft = int(c.recHdr[3])<<8 | int(c.recHdr[4])
			c.recHdrN = 0
		}
	}
	c.midRecord.Store(c.recHdrN > 0 || c.recLeft > 0)
}

// silent reports whether c has sent the server nothing (CloseSilent).
func (c *limitConn) silent() bool {
	if c.tlsUnder.Load() {
		if !c.everRead.Load() && !c.wrote.Load() {
			return true // not one byte, not even of a handshake
		}
		return c.tlsDone.Load() && !c.tlsAppBytes.Load() && !c.tlsAppIO.Load() && c.sockReading.Load() && !c.midRecord.Load()
	}
	return !c.wrote.Load() && !c.readSince.Load() && !c.everRead.Load()
}

// rawConn returns the raw connection of a plain TCP connection, nil for
// others (a PROXY protocol connection buffers above its socket already).
func (c *limitConn) rawConn() syscall.RawConn {
	if !c.rawTried {
		c.rawTried = true
		if tc, ok := c.Conn.(*net.TCPConn); ok {
			if raw, err := tc.SyscallConn(); err == nil {
				c.raw = raw
			}
		}
	}
	return c.raw
}

// readStashed serves a one-byte read. fasthttp with ReduceMemoryUsage
// (server.reduce_memory) waits for the next request of a keep-alive
// connection with a one-byte read, so that the connection holds no buffer
// while it waits, then reads the rest into a fresh buffer: two system
// calls per request. readStashed waits for the socket in the poller with
// no buffer either, then reads what is there into a pooled buffer and
// hands out the rest from memory; the buffer returns to the pool once
// drained. Measured on the bench's scale mix (64 connections, edge on one
// core): 33.3-34.1 -> 28.0-29.2 µs of edge CPU per request, what
// reduce_memory false gives (27.3-28.6), without its buffers per
// connection.
func (c *limitConn) readStashed(b []byte) (int, error) {
	if c.readFn == nil {
		c.readFn = c.readOnce
	}
	err := c.raw.Read(c.readFn)
	buf, n, rerr := c.rsBuf, c.rsN, c.rsErr
	c.rsBuf, c.rsN, c.rsErr = nil, 0, nil // empty for the next read
	switch {
	case err != nil: // a deadline, or the connection closed
	case rerr != nil:
		err = &net.OpError{Op: "read", Net: "tcp", Source: c.Conn.LocalAddr(), Addr: c.Conn.RemoteAddr(), Err: os.NewSyscallError("read", rerr)}
	case n <= 0:
		err = io.EOF
	}
	if err != nil {
		if buf != nil {
			stashPool.Put(buf)
		}
		c.noteReadError(err)
		return 0, err
	}
	c.readSince.Store(true)
	b[0] = buf[0]
	c.noteTail(b[:1])
	if n > 1 {
		c.stash, c.stashBuf = buf[1:n], buf
	} else {
		stashPool.Put(buf)
	}
	return 1, nil
}

// readOnce is readStashed's read of the socket (syscall.RawConn.Read's
// function): what is there into a pooled buffer, or false to wait for the
// socket in the poller.
func (c *limitConn) readOnce(fd uintptr) bool {
	buf := stashPool.Get().(*[stashSize]byte)
	var (
		n    int
		rerr error
	)
	for {
		n, rerr = syscall.Read(int(fd), buf[:])
		if rerr != syscall.EINTR {
			break
		}
	}
	if rerr == syscall.EAGAIN {
		stashPool.Put(buf)
		return false // wait for the socket in the poller
	}
	c.rsBuf, c.rsN, c.rsErr = buf, n, rerr
	return true
}

// noteReadError marks the connection for parking when a read that got
// nothing failed on the parking deadline, not the idle one: nothing of a
// next request has arrived, so nothing is buffered above this layer (nor
// in the stash, which a read empties before it reads the socket). The
// server closes the connection on this error; Close parks it.
func (c *limitConn) noteReadError(err error) {
	if err != nil && c.parkArmed && !c.readSince.Load() && errors.Is(err, os.ErrDeadlineExceeded) {
		if u := c.idleUntil.Load(); u == 0 || time.Now().UnixNano() < u {
			c.parkPending.Store(true)
		}
	}
}

// cutIdle is the accept loop's sweep of one connection under pressure: its
// idle deadline in force comes down to limit, on the socket at once. The
// deadline its reader last set (readSet) is forgotten, so that the reader's
// next read that waits sets the one it asks for: kept, it could stand for a
// later one (deadline.covers) while the socket holds limit, and a
// connection that was cut when pressure began would be closed at limit
// after it ended. Safe from any goroutine.
func (c *limitConn) cutIdle(limit time.Time) {
	c.lowerIdleUntil(limit.UnixNano())
	_ = c.Conn.SetReadDeadline(limit)
	c.readSet.forget()
}

// lowerIdleUntil brings the idle deadline in force down to limit (Unix
// ns) when it is later; no deadline (0) stays none, as the busy cap
// leaves it. Safe from any goroutine.
func (c *limitConn) lowerIdleUntil(limit int64) {
	for {
		u := c.idleUntil.Load()
		if u == 0 || u <= limit || c.idleUntil.CompareAndSwap(u, limit) {
			return
		}
	}
}

func (c *limitConn) Write(b []byte) (int, error) {
	if c.refusal() != nil {
		return len(b), nil // the server's own answer: Close sends ours
	}
	if r := c.l.o.OverloadResponse; r != nil && !c.wrote.Load() && !c.readSince.Load() && bytes.HasPrefix(b, status503) {
		c.overloaded.Store(true)
		if c.l.o.OnReject != nil {
			c.l.o.OnReject("concurrency")
		}
		return len(b), nil // Close sends r
	}
	n, err := c.Conn.Write(b)
	if n > 0 {
		c.wrote.Store(true)
		c.readSince.Store(false)
		if c.l.o.MaxUnansweredBytes > 0 && !c.tlsUnder.Load() {
			// Under TLS the TLS layer's own records (a KeyUpdate a
			// client asked for, session tickets) are no answer: the
			// count starts again at the server's writes (tlsConn.Write).
			c.unanswered.Store(0)
		}
	}
	return n, err
}

// resetUnanswered starts the MaxUnansweredBytes count again: the server wrote
// application data (tlsConn.Write) or the TLS handshake completed.
func (c *limitConn) resetUnanswered() {
	if c.l.o.MaxUnansweredBytes > 0 {
		c.unanswered.Store(0)
	}
}

// RequestTooLarge reports that c's last Read failed with
// ErrRequestTooLarge and nothing was written since: a server's error
// handler asks its connection (fasthttp wraps the read error of a chunked
// body in an error that does not unwrap). Called by the serving goroutine.
func (c *limitConn) RequestTooLarge() bool {
	return c.overRead && c.unanswered.Load() > c.l.o.MaxUnansweredBytes
}

// RequestLineOpen reports that no LF was among the last
// LimitOptions.ReadBufferSize bytes handed to the server: a server whose
// read buffer filled before the head's end was reading a request line
// longer than its buffer (414, not 431). Called by the serving goroutine.
func (c *limitConn) RequestLineOpen() bool { return c.line.open(c.l.o.ReadBufferSize) }

// noteTail records the end of the bytes handed to the server (tail), and
// counts them toward MaxUnansweredBytes.
func (c *limitConn) noteTail(b []byte) {
	if !c.tlsUnder.Load() {
		c.line.note(b)
	}
	if max := c.l.o.MaxUnansweredBytes; max > 0 && c.unanswered.Add(int64(len(b))) > max {
		c.overRead = true
	}
	if c.tail == 0 && !c.everRead.Load() {
		c.everRead.Store(true)
	}
	if len(b) >= 4 {
		c.tail = uint32(b[len(b)-4])<<24 | uint32(b[len(b)-3])<<16 | uint32(b[len(b)-2])<<8 | uint32(b[len(b)-1])
		return
	}
	for _, x := range b {
		c.tail = c.tail<<8 | uint32(x)
	}
}

// atBoundary reports whether the bytes handed to the server end a request
// head ("\r\n\r\n"; the edge serves GET and HEAD, whose requests end
// there), so that nothing of a next request can wait in the server's own
// buffer. A read that brought a request and the start of the next one
// (pipelining) leaves that start in the server's buffer after it answered
// the first: nothing is read since that answer, yet the connection is not
// idle, and parked it timed out the rest of that request at the parking
// deadline (a 408 long before server.read_timeout) and then served the
// rest as a request of its own. A connection that is not at a boundary
// waits under the server's own deadline, unparked.
func (c *limitConn) atBoundary() bool { return c.tail == 0x0d0a0d0a }

// SetReadDeadline caps the deadline under pressure, and asks for the
// parking deadline instead when the connection waits for its next request.
// It records the deadline; the next read that may wait sets it on the
// socket (armRead).
func (c *limitConn) SetReadDeadline(t time.Time) error {
	t = c.cap(t)
	c.parkArmed = false
	if p := c.l.parker; p != nil && c.wrote.Load() && !c.readSince.Load() && c.atBoundary() && c.l.open.Load() > int64(c.l.o.ParkAbove) {
		if pt := time.Now().Add(c.l.o.ParkAfter); t.IsZero() || pt.Before(t) {
			c.parkArmed = true
			t = pt
		}
	}
	c.readWant = t
	return nil
}

// armRead sets the read deadline the server asked for on the socket
// before a read that may wait under it. The server asks for one twice a
// request (the keep-alive idle timeout before it waits for the next
// request, the read timeout once the first byte is in), and each setting
// is a runtime timer change with two clock reads, about 0.2 µs of a 15-20
// µs cache hit. Set lazily, the read timeout of a request that the
// one-byte read brought in whole (the stash) is never set, since no read
// waits under it; and the idle deadline is left as it is while the one in
// force covers the one asked for (deadline.covers: earlier by less than a
// sixteenth of the time it has left), so a keep-alive connection's idle deadline
// moves on about every sixteenth of the idle timeout instead of every
// request. A read waits under a deadline no later than the one asked for
// (a wait for a connection's next request may end up to a sixteenth of
// server.idle_timeout early), and the accept loop's sweep under pressure
// (idleUntil) lowers it as before.
func (c *limitConn) armRead() error {
	want := unixNanos(c.readWant)
	if u := c.idleUntil.Load(); u != 0 && (want == 0 || u < want) {
		want = u // lowered by the sweep since it was asked for
	}
	if c.readSet.covers(want) {
		return nil
	}
	var t time.Time
	if want != 0 {
		if t = c.readWant; unixNanos(t) != want {
			t = time.Unix(0, want)
		}
	}
	if err := c.Conn.SetReadDeadline(t); err != nil {
		return err
	}
	c.readSet.set(t)
	// A sweep that lowered idleUntil after it was read above has set its
	// limit on the socket before this call or will after it; before, this
	// call undid it: set the lower one again.
	if u := c.idleUntil.Load(); u != 0 && (want == 0 || u < want) {
		t = time.Unix(0, u)
		if err := c.Conn.SetReadDeadline(t); err != nil {
			return err
		}
		c.readSet.set(t)
	}
	return nil
}

// deadline is a deadline in force on a socket, kept so that one asked for
// a little later need not be set (a runtime timer change with two clock
// reads): at as Unix ns (0: none), ends as monotonic ns (monoNow).
type deadline struct {
	at, ends atomic.Int64
}

// covers reports whether the deadline in force may stand for want (Unix
// ns, 0: none): it is the same, or earlier than want by less than a
// sixteenth of the time it has left. So a deadline is never later than
// asked, and at most about a sixteenth early; none, zero and an earlier
// want are always set.
func (d *deadline) covers(want int64) bool {
	cur := d.at.Load()
	if cur < 0 {
		return false // forgotten
	}
	return want == cur || want != 0 && cur != 0 && want > cur && want-cur < (d.ends.Load()-monoNow())/16
}

// forget makes the next covers false: the socket's deadline was set by
// someone else.
func (d *deadline) forget() { d.at.Store(-1) }

// set records t as the deadline in force.
func (d *deadline) set(t time.Time) {
	d.at.Store(unixNanos(t))
	if !t.IsZero() {
		d.ends.Store(int64(time.Until(t)) + monoNow())
	}
}

// monoBase is the origin of monoNow.
var monoBase = time.Now()

// monoNow is the monotonic clock in ns since monoBase: one clock read,
// where time.Now takes two.
func monoNow() int64 { return int64(time.Since(monoBase)) }

// SetWriteDeadline sets the write deadline unless the one in force covers
// it (deadline.covers): the server re-arms its write timeout before every
// response (a timer change in the runtime, about 0.4 µs of a 15-20 µs
// cache hit), so on a keep-alive connection the deadline moves on about
// every sixteenth of the timeout instead; a response's write may time out
// up to that much early (with server.write_timeout 10 s: after 9.4 s at
// the least), never late.
func (c *limitConn) SetWriteDeadline(t time.Time) error {
	if c.writeSet.covers(unixNanos(t)) {
		return nil
	}
	if err := c.Conn.SetWriteDeadline(t); err != nil {
		return err
	}
	c.writeSet.set(t)
	return nil
}

// unixNanos is a deadline as the conn keeps it: Unix ns, 0 for none.
func unixNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// SetDeadline caps the read side under pressure. Both deadlines are set
// on the socket at once.
func (c *limitConn) SetDeadline(t time.Time) error {
	c.parkArmed = false
	if err := c.Conn.SetWriteDeadline(t); err != nil {
		return err
	}
	c.writeSet.set(t)
	t = c.cap(t)
	c.readWant = t
	if err := c.Conn.SetReadDeadline(t); err != nil {
		return err
	}
	c.readSet.set(t)
	return nil
}

// unpark makes a parked connection new to the server again: its next
// read has no deadline until the server sets one, and it is not parked
// again before it has answered a request.
func (c *limitConn) unpark() {
	c.wrote.Store(false)
	c.readSince.Store(false)
	c.parkPending.Store(false)
	c.parkArmed = false
	c.readWant = time.Time{}
	_ = c.Conn.SetReadDeadline(time.Time{})
	c.readSet.set(time.Time{})
}

// cap returns the read deadline t under the busy cap (BusyIdleTimeout
// from now when the listener is under pressure) and records it as the
// idle deadline in force (idleUntil; 0 for none), which the parker and
// the accept loop's sweep read.
func (c *limitConn) cap(t time.Time) time.Time {
	if d := c.l.o.BusyIdleTimeout; d > 0 && c.l.Busy() {
		if limit := time.Now().Add(d); !t.IsZero() && t.After(limit) {
			t = limit
		}
	}
	c.idleUntil.Store(unixNanos(t))
	return t
}

func (c *limitConn) Close() error {
	if c.parkPending.CompareAndSwap(true, false) {
		if c.l.parker.park(c) {
			return nil // the parker owns it now
		}
	}
	var linger *net.TCPConn
	c.closeOnce.Do(func() {
		c.l.connsMu.Lock()
		delete(c.l.conns, c)
		c.l.connsMu.Unlock()
		c.l.unregister(c)
		if c.linger.Load() == lingerMarked && c.refusal() == nil && c.everRead.Load() {
			if linger = tcpConn(c.Conn); linger != nil && c.l.lingers.Add(1) > MaxLingering {
				c.l.lingers.Add(-1)
				linger = nil
				c.lingerNow()
			}
		}
		if linger == nil {
			c.l.open.Add(-1)
			return
		}
		// Still open (counted in Open, against MaxConns) until the
		// lingering close ends; a Close from another goroutine (a
		// shutdown's) leaves it to that.
		c.linger.Store(lingerOn)
	})
	if linger != nil {
		_ = linger.CloseWrite()
		go c.l.lingerClose(c.Conn, linger)
		return nil
	}
	if c.linger.Load() == lingerOn {
		return nil // another Close began the lingering close, which closes
	}
	if resp := c.refusal(); resp != nil && c.answered.CompareAndSwap(false, true) {
		return c.l.answer(c.Conn, resp)
	}
	return c.Conn.Close()
}

// LingerOnClose marks c, a connection accepted from a LimitListener (or
// the TLS layer above one), so that its Close is lingering: a server's
// error handler calls it for an answer after which the server closes the
// connection (a request refused while the client may still be sending it:
// a header block, request line or body too large, a malformed head).
// Closed at once with the client's bytes unread in its socket, the
// connection is reset by the kernel instead of ended, and the client,
// often still writing, meets "connection reset" instead of the answer.
// The lingering close ends the sending side after the answer (FIN), then
// reads and discards what the client sends, on a goroutine of its own
// (the server's worker is free at once), until the client ends its side,
// nothing came for LingerIdle, LingerTime passed or LingerBytes were
// read, and then closes: nginx's lingering close. At most MaxLingering
// connections of a listener linger at once; past that one is closed after
// discarding what its socket holds then. A lingering connection stays
// counted in Open (and against LimitOptions.MaxConns) until it is closed.
// Anything else is left as it is.
func LingerOnClose(c net.Conn) {
	switch v := c.(type) {
	case *limitConn:
		v.linger.CompareAndSwap(0, lingerMarked)
	case *tlsConn:
		if v.lc != nil {
			v.lc.linger.CompareAndSwap(0, lingerMarked)
		}
	}
}

// limitConn.linger's states.
const (
	lingerMarked = 1
	lingerOn     = 2
)

// The bounds of a lingering close (LingerOnClose).
const (
	// LingerTime is the longest a lingering close lasts.
	LingerTime = 3 * time.Second
	// LingerIdle is the longest it waits for the client's next bytes.
	LingerIdle = time.Second
	// LingerBytes is the most it reads and discards.
	LingerBytes = 4 << 20
	// MaxLingering is the most connections of one listener that linger
	// at once (each holds a descriptor and a goroutine of a few KiB).
	MaxLingering = 128
)

// lingerNow is the lingering close past MaxLingering: the sending side
// ended, what the socket holds now discarded (the server closes c next).
func (c *limitConn) lingerNow() {
	if tc := tcpConn(c.Conn); tc != nil {
		_ = tc.CloseWrite()
		drainNow(tc)
	}
}

// lingerClose reads and discards what tc (the socket of c, its sending
// side ended) receives within the bounds of LingerOnClose, then closes c.
func (l *LimitListener) lingerClose(c net.Conn, tc *net.TCPConn) {
	// lingers first: Open minus Lingering (the connections served) never
	// reads low.
	defer l.open.Add(-1)
	defer l.lingers.Add(-1)
	buf := stashPool.Get().(*[stashSize]byte)
	defer stashPool.Put(buf)
	end := time.Now().Add(LingerTime)
	for n := 0; n < LingerBytes; {
		d := time.Now().Add(LingerIdle)
		if d.After(end) {
			d = end
		}
		if tc.SetReadDeadline(d) != nil {
			break
		}
		k, err := tc.Read(buf[:])
		n += k
		if err != nil {
			break // the client's FIN, a reset, or a bound
		}
	}
	_ = c.Close()
}

// refusal is the answer owed to a connection refused for a limit, nil for
// any other.
func (c *limitConn) refusal() []byte {
	switch {
	case c.overloaded.Load(), c.overCap:
		return c.l.o.OverloadResponse
	case c.rejected.Load():
		return c.l.o.RejectResponse
	}
	return nil
}

// status503 starts a server's 503 answer (fasthttp writes the status line
// of its fast answers on its own).
var status503 = []byte("HTTP/1.1 503 ")

// Answering a connection over a limit.
const (
	// answerWait is how long answer waits for the request.
	answerWait = 100 * time.Millisecond
	// maxAnswering bounds the connections waiting in answer at once (each
	// holds a descriptor and a goroutine): 32, so that a flood of silent
	// connections cannot take the descriptors the edge keeps for its
	// upstream, Redis and admin connections.
	maxAnswering = 32
	// drainBytes bounds what answer reads and discards.
	drainBytes = 64 << 10
)

// answer sends resp to a connection refused for a limit (over the server's
// concurrency, or over the per-address cap) and closes it, which the
// server would do at once, before reading anything. Two things go wrong
// then. An answer that reaches a client before it has written its request
// is unsolicited: Go's HTTP client, for one, drops the connection with an
// error instead of reading it ("readLoopPeekFailLocked"). And closing a
// socket that holds unread bytes (the request) makes the kernel reset the
// connection instead of ending it; a client that meets the reset reports
// "connection reset" instead of the answer. Both hit exactly when an answer
// matters: the edge is full. So answer waits up to answerWait for the
// request (on a goroutine of its own, at most maxAnswering at once; past
// that it answers at once), then writes resp, ends the sending side (FIN),
// discards what the socket holds and closes: nginx's lingering close,
// bounded in time and count so that a refused connection never holds its
// descriptor for long. Without a TCP connection below (a test's pipe) it
// writes resp and closes.
func (l *LimitListener) answer(c net.Conn, resp []byte) error {
	resp = dated(resp, time.Now())
	tc := tcpConn(c)
	if tc == nil {
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = c.Write(resp)
		return c.Close()
	}
	if l.answering.Add(1) > maxAnswering {
		l.answering.Add(-1)
		answerNow(c, tc, resp)
		return nil
	}
	go func() {
		defer l.answering.Add(-1)
		_ = tc.SetReadDeadline(time.Now().Add(answerWait))
		var buf [512]byte
		_, _ = tc.Read(buf[:]) // the request's first bytes, or the deadline
		answerNow(c, tc, resp)
	}()
	return nil
}

// dated returns resp with a Date field after its status line, the time
// now: RFC 9110 6.6.1 asks an origin server with a clock for one on every
// 2xx, 3xx and 4xx answer (the 429 of a connection over its address's cap
// among them), and the answers are made once, at start. A resp without a
// status line, or with a Date already, is returned as it is. Refusals are
// rare next to requests, so the copy is allocated.
func dated(resp []byte, now time.Time) []byte {
	i := bytes.Index(resp, []byte("\r\n"))
	if i < 0 || hasField(resp[i+2:], "date") {
		return resp
	}
	out := make([]byte, 0, len(resp)+len("Date: Mon, 02 Jan 2006 15:04:05 GMT\r\n"))
	out = append(out, resp[:i+2]...)
	out = append(out, "Date: "...)
	out = now.UTC().AppendFormat(out, "Mon, 02 Jan 2006 15:04:05 GMT")
	out = append(out, "\r\n"...)
	return append(out, resp[i+2:]...)
}

// hasField reports whether a header block (lines ended by CRLF, up to the
// empty line) has a field called name (lowercase), in any case.
func hasField(block []byte, name string) bool {
	for len(block) > 0 {
		line := block
		if i := bytes.Index(block, []byte("\r\n")); i >= 0 {
			line, block = block[:i], block[i+2:]
		} else {
			block = nil
		}
		if len(line) == 0 {
			return false
		}
		if len(line) > len(name) && line[len(name)] == ':' && strings.EqualFold(string(line[:len(name)]), name) {
			return true
		}
	}
	return false
}

// answerNow writes resp to tc, ends its sending side, discards what its
// socket holds now and closes c.
func answerNow(c net.Conn, tc *net.TCPConn, resp []byte) {
	_ = tc.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = tc.Write(resp)
	_ = tc.CloseWrite()
	drainNow(tc)
	_ = c.Close()
}

// tcpConn returns the TCP connection under c: c itself, or the one under a
// PROXY protocol connection; nil for anything else.
func tcpConn(c net.Conn) *net.TCPConn {
	switch v := c.(type) {
	case *net.TCPConn:
		return v
	case interface{ TCPConn() (*net.TCPConn, bool) }:
		if tc, ok := v.TCPConn(); ok {
			return tc
		}
	}
	return nil
}

// drainNow reads and discards what tc's socket holds now (up to
// drainBytes), without waiting for more.
func drainNow(tc *net.TCPConn) {
	raw, err := tc.SyscallConn()
	if err != nil {
		return
	}
	var buf [2048]byte
	_ = raw.Read(func(fd uintptr) bool {
		for n := 0; n < drainBytes; {
			k, err := syscall.Read(int(fd), buf[:])
			if k <= 0 || err != nil {
				break
			}
			n += k
		}
		return true // never wait in the poller
	})
}
