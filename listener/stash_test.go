package listener

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// tcpPair returns the two ends of a loopback TCP connection, the server's
// wrapped as the listener wraps it.
func tcpPair(t *testing.T) (server *limitConn, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close(); _ = sc.Close() })
	return &limitConn{Conn: sc, l: &LimitListener{}, checked: true}, client
}

// readAll reads n bytes from c with reads of the given sizes in turn (the
// last repeats), as fasthttp does: a one-byte wait, then buffered reads.
func readAll(t *testing.T, c *limitConn, n int, sizes ...int) []byte {
	t.Helper()
	var got []byte
	for i := 0; len(got) < n; i++ {
		b := make([]byte, sizes[min(i, len(sizes)-1)])
		m, err := c.Read(b)
		if err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		got = append(got, b[:m]...)
	}
	return got
}

// TestOneByteReadStash: fasthttp's one-byte wait for the next request
// (server.reduce_memory) takes everything the socket holds in one read,
// hands out the rest from memory, in order, and holds no buffer once it
// is drained; deadlines, EOF and a peer's reset still reach the server.
func TestOneByteReadStash(t *testing.T) {
	req := []byte("GET /dealer/REWIND/listing HTTP/1.1\r\nHost: x\r\nX-Api-Key: k\r\n\r\n")
	t.Run("requests", func(t *testing.T) {
		c, client := tcpPair(t)
		for round := range 3 {
			if _, err := client.Write(req); err != nil {
				t.Fatal(err)
			}
			b := make([]byte, 1)
			if n, err := c.Read(b); n != 1 || err != nil {
				t.Fatalf("round %d: one-byte read: %d, %v", round, n, err)
			}
			if len(c.stash) != len(req)-1 {
				t.Fatalf("round %d: the one-byte read took %d bytes, want the whole request (%d)", round, len(c.stash)+1, len(req))
			}
			got := append(b, readAll(t, c, len(req)-1, 10, 4096)...)
			if !bytes.Equal(got, req) {
				t.Fatalf("round %d: read %q, want %q", round, got, req)
			}
			if c.stash != nil || c.stashBuf != nil {
				t.Fatalf("round %d: the stash holds a buffer once drained", round)
			}
		}
	})
	t.Run("more than the stash holds", func(t *testing.T) {
		c, client := tcpPair(t)
		big := bytes.Repeat([]byte("0123456789"), stashSize/5)
		go func() { _, _ = client.Write(big) }()
		got := readAll(t, c, len(big), 1, 8192)
		if !bytes.Equal(got, big) {
			t.Fatalf("read %d bytes, not what was sent", len(got))
		}
	})
	t.Run("deadline", func(t *testing.T) {
		c, _ := tcpPair(t)
		_ = c.Conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		n, err := c.Read(make([]byte, 1))
		if n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read %d, %v; want the deadline's error", n, err)
		}
		if c.stashBuf != nil {
			t.Fatal("a failed read holds a buffer")
		}
	})
	t.Run("EOF", func(t *testing.T) {
		c, client := tcpPair(t)
		_ = client.Close()
		if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Fatalf("read %d, %v; want io.EOF", n, err)
		}
	})
	t.Run("reset", func(t *testing.T) {
		c, client := tcpPair(t)
		_ = client.(*net.TCPConn).SetLinger(0)
		_ = client.Close()
		time.Sleep(20 * time.Millisecond)
		if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil || err == io.EOF {
			t.Fatalf("read %d, %v; want the reset", n, err)
		}
	})
}

// chunkConn is a net.Conn (not TCP) whose reads return the next of chunks
// (at most len(b) of it), then io.EOF.
type chunkConn struct {
	net.Conn
	chunks [][]byte
}

func (c *chunkConn) Read(b []byte) (int, error) {
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(b, c.chunks[0])
	if c.chunks[0] = c.chunks[0][n:]; len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	return n, nil
}

// TestOneByteReadOtherConns: a connection that is not plain TCP (PROXY
// protocol buffers above its socket) reads one byte as asked.
func TestOneByteReadOtherConns(t *testing.T) {
	req := []byte("GET / HTTP/1.1\r\n\r\n")
	c := &limitConn{Conn: &chunkConn{chunks: [][]byte{append([]byte(nil), req...)}}, l: &LimitListener{}, checked: true}
	b := make([]byte, 1)
	if n, err := c.Read(b); n != 1 || err != nil || c.stash != nil {
		t.Fatalf("one-byte read: %d, %v, stash %q", n, err, c.stash)
	}
	if got := append(b, readAll(t, c, len(req)-1, 4096)...); !bytes.Equal(got, req) {
		t.Fatalf("read %q, want %q", got, req)
	}
}

// TestOneByteReadAllocations: the one-byte wait for the next request
// allocates nothing once the connection is warm (its read function is made
// once per connection, not per read).
func TestOneByteReadAllocations(t *testing.T) {
	c, client := tcpPair(t)
	req := []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	b := make([]byte, 1)
	rest := make([]byte, 4096)
	one := func() {
		if _, err := client.Write(req); err != nil {
			t.Fatal(err)
		}
		if n, err := c.Read(b); n != 1 || err != nil {
			t.Fatalf("one-byte read: %d, %v", n, err)
		}
		for got := 1; got < len(req); {
			n, err := c.Read(rest)
			if err != nil {
				t.Fatal(err)
			}
			got += n
		}
	}
	one()
	if allocs := testing.AllocsPerRun(100, one); allocs > 0 {
		t.Errorf("a one-byte read and its stash allocate %.1f times per request", allocs)
	}
}

// TestWriteDeadlineCoalesced: a write deadline later than the one in force
// by less than a sixteenth of the time left is not set again (the server
// re-arms it before every response); an earlier one, a zero one, a much
// later one and SetDeadline's are.
func TestWriteDeadlineCoalesced(t *testing.T) {
	rec := &deadlineRecorder{}
	c := &limitConn{Conn: rec, l: &LimitListener{}}
	now := time.Now()
	steps := []struct {
		name string
		t    time.Time
		set  bool
	}{
		{"first", now.Add(10 * time.Second), true},
		{"1 ms later", now.Add(10*time.Second + time.Millisecond), false},
		{"500 ms later", now.Add(10*time.Second + 500*time.Millisecond), false},
		{"earlier", now.Add(9 * time.Second), true},
		{"1 s later than in force", now.Add(10 * time.Second), true},
		{"zero", time.Time{}, true},
		{"after zero", now.Add(10 * time.Second), true},
	}
	for _, st := range steps {
		before := rec.writes
		if err := c.SetWriteDeadline(st.t); err != nil {
			t.Fatal(err)
		}
		if set := rec.writes > before; set != st.set {
			t.Errorf("%s: set %v, want %v", st.name, set, st.set)
		}
		if st.set && !rec.write.Equal(st.t) {
			t.Errorf("%s: deadline in force %v, want %v", st.name, rec.write, st.t)
		}
	}
	// SetDeadline records its write deadline: a slightly later one after
	// it is coalesced.
	_ = c.SetDeadline(now.Add(20 * time.Second))
	before := rec.writes
	_ = c.SetWriteDeadline(now.Add(20*time.Second + time.Millisecond))
	if rec.writes != before {
		t.Errorf("a write deadline 1 ms after SetDeadline's was set again")
	}
}

// TestReadDeadlineLazy: a read deadline reaches the socket only when a
// read may wait under it, no later than asked, and is left as it is while
// the one in force is earlier by less than a sixteenth of the time it has left.
func TestReadDeadlineLazy(t *testing.T) {
	rec := &deadlineRecorder{}
	l := &LimitListener{}
	c := &limitConn{Conn: rec, l: l}
	now := time.Now()
	one := make([]byte, 1)
	steps := []struct {
		name  string
		ask   time.Time // asked before the read (zero: nothing asked)
		stash bool      // the read is served from the stash
		set   bool      // the socket's deadline is set before the read
		want  time.Time // the deadline in force after the read
	}{
		{"idle, read waits", now.Add(60 * time.Second), false, true, now.Add(60 * time.Second)},
		{"read timeout, request in the stash", now.Add(5 * time.Second), true, false, now.Add(60 * time.Second)},
		{"idle 1 ms later", now.Add(60*time.Second + time.Millisecond), false, false, now.Add(60 * time.Second)},
		{"idle 3 s later", now.Add(63 * time.Second), false, false, now.Add(60 * time.Second)},
		{"idle 4 s later (past a sixteenth)", now.Add(64 * time.Second), false, true, now.Add(64 * time.Second)},
		{"read timeout, read waits", now.Add(5 * time.Second), false, true, now.Add(5 * time.Second)},
		{"nothing asked, read waits", time.Time{}, false, false, now.Add(5 * time.Second)},
	}
	for _, st := range steps {
		if !st.ask.IsZero() {
			if err := c.SetReadDeadline(st.ask); err != nil {
				t.Fatal(err)
			}
		}
		if rec.reads != 0 {
			t.Fatalf("%s: SetReadDeadline set the socket's deadline", st.name)
		}
		if st.stash {
			c.stash, c.stashBuf = stashed("x")
		}
		if _, err := c.Read(one); err != nil {
			t.Fatal(err)
		}
		if set := rec.reads > 0; set != st.set {
			t.Errorf("%s: set %v, want %v", st.name, set, st.set)
		}
		if !rec.read.Equal(st.want) {
			t.Errorf("%s: deadline in force %v, want %v", st.name, rec.read.Sub(now), st.want.Sub(now))
		}
		rec.reads = 0
	}
	// The sweep under pressure lowers idleUntil: the next read that waits
	// takes the lower deadline.
	_ = c.SetReadDeadline(now.Add(60 * time.Second))
	c.lowerIdleUntil(now.Add(2 * time.Second).UnixNano())
	if _, err := c.Read(one); err != nil {
		t.Fatal(err)
	}
	if !rec.read.Equal(time.Unix(0, now.Add(2*time.Second).UnixNano())) {
		t.Errorf("after the sweep: deadline in force %v, want 2s", rec.read.Sub(now))
	}
	// A deadline in force that has (nearly) run out is not kept for a
	// later one asked, however close.
	rec.reads = 0
	first := time.Now().Add(160 * time.Millisecond)
	_ = c.SetReadDeadline(first)
	_, _ = c.Read(one)
	time.Sleep(170 * time.Millisecond)
	later := first.Add(5 * time.Millisecond) // within a sixteenth of the 160 ms first was set for, but first has run out
	_ = c.SetReadDeadline(later)
	_, _ = c.Read(one)
	if rec.reads != 2 || !rec.read.Equal(later) {
		t.Errorf("after an expired deadline: %d sets, in force %v, want 2 and the later one", rec.reads, rec.read)
	}
}

// TestReadDeadlineAfterSweep: the accept loop's sweep under pressure cuts
// an idle connection's deadline on the socket; once pressure is over, the
// next wait asks for a deadline just later than the one the reader set
// before the sweep, and that must go on the socket. Without the sweep
// forgetting the reader's deadline, the one before the sweep stood for it
// (covers) and the connection stayed under the sweep's 2 s limit.
func TestReadDeadlineAfterSweep(t *testing.T) {
	rec := &deadlineRecorder{}
	c := &limitConn{Conn: rec, l: &LimitListener{}}
	now := time.Now()
	one := make([]byte, 1)
	_ = c.SetReadDeadline(now.Add(60 * time.Second))
	if _, err := c.Read(one); err != nil {
		t.Fatal(err)
	}
	cut := now.Add(2 * time.Second)
	c.cutIdle(cut)
	if !rec.read.Equal(cut) {
		t.Fatalf("after the sweep: deadline in force %v, want 2s", rec.read.Sub(now))
	}
	// A request arrives whole (the stash), is answered, and the server
	// waits for the next one under its idle timeout, pressure over.
	_ = c.SetReadDeadline(now.Add(5 * time.Second))
	c.stash, c.stashBuf = stashed("x")
	if _, err := c.Read(one); err != nil {
		t.Fatal(err)
	}
	next := now.Add(60*time.Second + time.Millisecond)
	_ = c.SetReadDeadline(next)
	if _, err := c.Read(one); err != nil {
		t.Fatal(err)
	}
	if !rec.read.Equal(next) {
		t.Errorf("next wait: deadline in force %v, want %v", rec.read.Sub(now), next.Sub(now))
	}
}

// TestReadDeadlineSweepDuringArm: a sweep that lowers idleUntil between the
// reader's look at it and its setting of the socket is not undone by it.
func TestReadDeadlineSweepDuringArm(t *testing.T) {
	now := time.Now()
	cut := now.Add(2 * time.Second)
	var c *limitConn
	rec := &deadlineRecorder{onRead: func(d time.Time) {
		if d.After(cut) && c.idleUntil.Load() != cut.UnixNano() {
			c.cutIdle(cut) // the sweep runs just before the reader's setting lands
		}
	}}
	c = &limitConn{Conn: rec, l: &LimitListener{}}
	_ = c.SetReadDeadline(now.Add(60 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	if !rec.read.Equal(cut) {
		t.Errorf("deadline in force %v, want the sweep's 2s", rec.read.Sub(now))
	}
}

// stashed returns a stash holding s in a buffer of the stash's pool, as
// readStashed leaves one (a stash without its buffer would put nil into
// the pool when it is drained, and another test's read would take it).
func stashed(s string) ([]byte, *[stashSize]byte) {
	buf := new([stashSize]byte)
	return buf[:copy(buf[:], s)], buf
}

// deadlineRecorder is a net.Conn that records its deadlines; its reads
// return one byte.
type deadlineRecorder struct {
	net.Conn
	write  time.Time
	writes int
	read   time.Time
	reads  int
	onRead func(time.Time) // called before a read deadline is recorded
}

func (d *deadlineRecorder) SetWriteDeadline(t time.Time) error { d.write = t; d.writes++; return nil }
func (d *deadlineRecorder) SetReadDeadline(t time.Time) error {
	if d.onRead != nil {
		d.onRead(t)
	}
	d.read = t
	d.reads++
	return nil
}
func (d *deadlineRecorder) Read(b []byte) (int, error) { b[0] = 'x'; return 1, nil }
