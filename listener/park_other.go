//go:build !linux

package listener

import (
	"errors"
	"net"
	"sync/atomic"
)

// parkSupported reports whether this platform can park connections: only
// Linux (epoll) can.
const parkSupported = false

// parker is not available here; Limit never makes one.
type parker struct {
	serve atomic.Pointer[func(net.Conn)]
	count atomic.Int64
}

func newParker() (*parker, error) { return nil, errors.New("listener: parking needs Linux") }

func (p *parker) park(*limitConn) bool { return false }

func (p *parker) close() {}
