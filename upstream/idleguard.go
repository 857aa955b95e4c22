package upstream

import (
	"errors"
	"net"
	"time"
)

// An idle keep-alive connection must hold nothing when a call takes it:
// bytes waiting in its socket before the request is written are an answer
// nobody asked for (a server's "408 Request Timeout" on an idle connection,
// as Node and several gateways send before closing it; a service that
// answered one request twice or sent a body longer than its
// Content-Length). fasthttp reads a reused connection's next answer from
// the socket, so that stale answer would become the next call's, whatever
// it asked for: another dealer's records, or a 408 counted against the
// breaker. Go's net/http client drops such a connection ("Unsolicited
// response received on idle HTTP channel"); so does the edge, by peeking
// at the socket when fasthttp sets the write deadline of each request
// after the first (one non-blocking recv with MSG_PEEK). A connection the
// service has closed (EOF waiting) is dropped the same way, before a
// request is written to it. Both are retried on another connection
// (retryStaleConn), within the call's deadline. Plain TCP only: under TLS
// the socket can legitimately hold records the TLS layer reads lazily
// (TLS 1.3 session tickets).

// errUnsolicited is the error of a reused connection that held bytes.
var errUnsolicited = errors.New("upstream: an idle connection held an answer nobody asked for; dropped")

// errIdleClosed is the error of a reused connection the service closed.
var errIdleClosed = errors.New("upstream: an idle connection was closed by the service; dropped")

// idleGuardConn checks a reused connection before each request.
type idleGuardConn struct {
	net.Conn
	used bool // a request went out on it before
}

// guardIdle wraps a dialed plain TCP connection.
func guardIdle(c net.Conn) net.Conn {
	if _, ok := c.(*net.TCPConn); !ok {
		return c
	}
	return &idleGuardConn{Conn: c}
}

// SetWriteDeadline is called by fasthttp before every request it writes.
func (c *idleGuardConn) SetWriteDeadline(t time.Time) error {
	if c.used {
		if err := idleState(c.Conn.(*net.TCPConn)); err != nil {
			return err
		}
	}
	c.used = true
	return c.Conn.SetWriteDeadline(t)
}
