package listener

import (
	"errors"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Accept-error kinds: the values RetryOptions.OnError receives.
const (
	ErrKindEMFILE       = "EMFILE"       // the process is out of file descriptors
	ErrKindENFILE       = "ENFILE"       // the system is out of file descriptors
	ErrKindENOBUFS      = "ENOBUFS"      // out of socket buffers
	ErrKindENOMEM       = "ENOMEM"       // out of kernel memory
	ErrKindECONNABORTED = "ECONNABORTED" // the client gave up before accept
	ErrKindOther        = "other"        // any other error that says it is temporary
)

// ErrKinds lists every kind OnError may receive.
var ErrKinds = []string{ErrKindEMFILE, ErrKindENFILE, ErrKindENOBUFS, ErrKindENOMEM, ErrKindECONNABORTED, ErrKindOther}

// Backoff bounds of the accept retry: the first retry waits MinBackoff,
// each next one twice as long, up to MaxBackoff (the net/http habit).
const (
	MinBackoff = 5 * time.Millisecond
	MaxBackoff = time.Second
)

// RetryOptions configure Retry.
type RetryOptions struct {
	// Name names the listener in log lines ("public", "admin").
	Name string
	// OnError, when set, is called for every temporary accept error with
	// its kind (one of ErrKinds).
	OnError func(kind string)
	// Logger receives a warning when accepting starts failing and an info
	// line when it recovers (never one per error); nil discards them.
	Logger *slog.Logger
}

// RetryListener retries temporary accept errors with backoff. Any other
// error (the listener was closed, a broken socket) is returned: the
// server's Serve then ends, and the caller treats that as fatal unless it
// is shutting down.
type RetryListener struct {
	net.Listener
	o       RetryOptions
	log     *slog.Logger
	failing atomic.Bool
	done    chan struct{}
	once    sync.Once
}

// Retry wraps ln.
func Retry(ln net.Listener, o RetryOptions) *RetryListener {
	l := &RetryListener{Listener: ln, o: o, log: o.Logger, done: make(chan struct{})}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	return l
}

// Accept returns the next connection, waiting out temporary errors.
//
// While accept fails, each retry waits at most probeWait for a client (on
// a listener with a deadline, as a TCP listener has): when the wait ends
// with no client and no error, accept works again and the listener is
// accepting (ready) without waiting for a client to prove it, which a
// pod taken out of its Service for not being ready would never get.
func (l *RetryListener) Accept() (net.Conn, error) {
	var delay time.Duration
	var first time.Time
	dl, canProbe := l.Listener.(interface{ SetDeadline(time.Time) error })
	probing := false
	recovered := func() {
		if l.failing.CompareAndSwap(true, false) {
			l.log.Info("accepting connections again", "listener", l.o.Name, "failing_for_s", time.Since(first).Round(time.Millisecond).Seconds())
		}
	}
	for {
		c, err := l.Listener.Accept()
		if probing && (err == nil || errors.Is(err, os.ErrDeadlineExceeded)) {
			_ = dl.SetDeadline(time.Time{})
			probing = false
		}
		if err == nil {
			recovered()
			return c, nil
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			recovered() // the probe's wait ended without an error
			delay, first = 0, time.Time{}
			continue
		}
		kind, temporary := Classify(err)
		if !temporary {
			return nil, err
		}
		if l.o.OnError != nil {
			l.o.OnError(kind)
		}
		if first.IsZero() {
			first = time.Now()
		}
		if l.failing.CompareAndSwap(false, true) {
			l.log.Warn("accept failing; retrying with backoff, not ready until it recovers", "listener", l.o.Name, "error", kind)
		}
		delay = min(max(2*delay, MinBackoff), MaxBackoff)
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-l.done:
			t.Stop()
			return nil, net.ErrClosed
		}
		if canProbe && dl.SetDeadline(time.Now().Add(probeWait)) == nil {
			probing = true
		}
	}
}

// probeWait is how long a retry after a failed accept waits for a client
// before it counts the listener as accepting again.
const probeWait = 500 * time.Millisecond

// Close closes the listener and ends a backoff wait at once.
func (l *RetryListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// Accepting reports whether the last accept did not fail: false from a
// temporary error until the next connection is accepted.
func (l *RetryListener) Accepting() bool { return !l.failing.Load() }

// Classify names a temporary accept error (one of ErrKinds) and reports
// whether it is one; other errors end the listener.
func Classify(err error) (kind string, temporary bool) {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.EMFILE:
			return ErrKindEMFILE, true
		case syscall.ENFILE:
			return ErrKindENFILE, true
		case syscall.ENOBUFS:
			return ErrKindENOBUFS, true
		case syscall.ENOMEM:
			return ErrKindENOMEM, true
		case syscall.ECONNABORTED:
			return ErrKindECONNABORTED, true
		case syscall.EINTR, syscall.EAGAIN, syscall.ECONNRESET, syscall.EPROTO:
			return ErrKindOther, true
		}
	}
	var ne interface{ Temporary() bool }
	if errors.As(err, &ne) && ne.Temporary() && !errors.Is(err, net.ErrClosed) {
		return ErrKindOther, true
	}
	return "", false
}
