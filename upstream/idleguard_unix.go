//go:build unix

package upstream

import (
	"net"
	"syscall"
)

// idleState peeks at a connection's socket without waiting: nil when it
// holds nothing, errUnsolicited when it holds bytes, errIdleClosed at EOF
// or on a socket error.
func idleState(c *net.TCPConn) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return errIdleClosed
	}
	var buf [1]byte
	var n int
	var rerr error
	if err := rc.Read(func(fd uintptr) bool {
		n, _, rerr = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true // never wait: one look
	}); err != nil {
		return errIdleClosed
	}
	switch {
	case rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK:
		return nil
	case rerr == syscall.EINTR:
		return nil
	case rerr != nil, n == 0:
		return errIdleClosed
	default:
		return errUnsolicited
	}
}
