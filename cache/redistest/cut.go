package redistest

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Cutter is a go-redis Dialer (Options.Dialer, ClusterOptions.Dialer,
// UniversalOptions.Dialer) whose connections can be cut between a command
// and its reply: after Arm(marker), the next write that holds marker is
// sent to Redis, Redis runs it and answers, and the connection is closed
// before the client reads the answer: the client reads EOF, as after a
// CLIENT KILL, a Redis restart or a proxy that drops the connection once
// the request has gone through. It records every command written on its
// connections (Commands), so a test can tell how often one was sent.
type Cutter struct {
	mu     sync.Mutex
	marker string
	cmds   [][]string
}

// Arm makes the next write that holds marker (a key, usually) be cut
// after Redis has answered it. It is one-shot.
func (c *Cutter) Arm(marker string) {
	c.mu.Lock()
	c.marker = marker
	c.mu.Unlock()
}

// Commands returns the commands written so far on the Cutter's
// connections whose arguments include arg (all of them for ""), each
// as its arguments, the command name in lower case.
func (c *Cutter) Commands(arg string) [][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out [][]string
	for _, cmd := range c.cmds {
		if arg == "" || containsArg(cmd, arg) {
			out = append(out, cmd)
		}
	}
	return out
}

func containsArg(cmd []string, arg string) bool {
	for _, a := range cmd {
		if a == arg {
			return true
		}
	}
	return false
}

// Dial dials addr and wraps the connection.
func (c *Cutter) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	cn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &cutConn{Conn: cn, c: c}, nil
}

// take records the commands of a write and reports whether it is the
// one to cut (and disarms it then).
func (c *Cutter) take(b []byte) bool {
	cmds := parseCommands(b)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cmds = append(c.cmds, cmds...)
	if c.marker == "" || !bytes.Contains(b, []byte(c.marker)) {
		return false
	}
	c.marker = ""
	return true
}

type cutConn struct {
	net.Conn
	c   *Cutter
	cut atomic.Bool
}

func (cn *cutConn) Write(b []byte) (int, error) {
	if cn.cut.Load() {
		return 0, io.ErrClosedPipe
	}
	n, err := cn.Conn.Write(b)
	if err != nil || !cn.c.take(b[:n]) {
		return n, err
	}
	// Redis answers once it has run the commands it read: the first byte
	// of the answer says the commands of this write ran. The answer is
	// dropped with the connection.
	_ = cn.Conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	var one [1]byte
	_, _ = io.ReadFull(cn.Conn, one[:])
	cn.cut.Store(true)
	_ = cn.Conn.Close()
	return n, nil
}

// The deadlines of a cut connection are accepted (and mean nothing): its
// reads end with EOF, as a socket's whose peer closed it.
func (cn *cutConn) SetDeadline(t time.Time) error {
	if cn.cut.Load() {
		return nil
	}
	return cn.Conn.SetDeadline(t)
}

func (cn *cutConn) SetReadDeadline(t time.Time) error {
	if cn.cut.Load() {
		return nil
	}
	return cn.Conn.SetReadDeadline(t)
}

func (cn *cutConn) Read(b []byte) (int, error) {
	if cn.cut.Load() {
		return 0, io.EOF
	}
	return cn.Conn.Read(b)
}

// parseCommands reads the RESP arrays of bulk strings a client writes;
// it stops at anything else.
func parseCommands(b []byte) [][]string {
	r := bufio.NewReader(bytes.NewReader(b))
	var out [][]string
	for {
		line, err := r.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "*") {
			return out
		}
		n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
		if err != nil || n < 0 {
			return out
		}
		cmd := make([]string, 0, n)
		for range n {
			hdr, err := r.ReadString('\n')
			if err != nil || !strings.HasPrefix(hdr, "$") {
				return out
			}
			l, err := strconv.Atoi(strings.TrimSpace(hdr[1:]))
			if err != nil || l < 0 {
				return out
			}
			arg := make([]byte, l+2)
			if _, err := io.ReadFull(r, arg); err != nil {
				return out
			}
			cmd = append(cmd, string(arg[:l]))
		}
		if len(cmd) > 0 {
			cmd[0] = strings.ToLower(cmd[0])
		}
		out = append(out, cmd)
	}
}
