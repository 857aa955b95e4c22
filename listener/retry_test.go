package listener

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	op := func(e error) error {
		return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", e)}
	}
	for _, tc := range []struct {
		name      string
		err       error
		kind      string
		temporary bool
	}{
		{"emfile", op(syscall.EMFILE), ErrKindEMFILE, true},
		{"enfile", op(syscall.ENFILE), ErrKindENFILE, true},
		{"enobufs", op(syscall.ENOBUFS), ErrKindENOBUFS, true},
		{"enomem", op(syscall.ENOMEM), ErrKindENOMEM, true},
		{"econnaborted", op(syscall.ECONNABORTED), ErrKindECONNABORTED, true},
		{"eproto", op(syscall.EPROTO), ErrKindOther, true},
		{"closed", op(net.ErrClosed), "", false},
		{"ebadf", op(syscall.EBADF), "", false},
		{"einval", op(syscall.EINVAL), "", false},
		{"plain", errors.New("boom"), "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kind, temp := Classify(tc.err)
			if kind != tc.kind || temp != tc.temporary {
				t.Fatalf("Classify(%v) = %q, %v; want %q, %v", tc.err, kind, temp, tc.kind, tc.temporary)
			}
		})
	}
}

// scripted is a listener whose Accept returns the scripted errors first,
// then blocks until a connection is handed in or it is closed.
type scripted struct {
	mu     sync.Mutex
	errs   []error
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
	calls  int
}

func newScripted(errs ...error) *scripted {
	return &scripted{errs: errs, conns: make(chan net.Conn, 1), closed: make(chan struct{})}
}

func (s *scripted) Accept() (net.Conn, error) {
	s.mu.Lock()
	s.calls++
	if len(s.errs) > 0 {
		e := s.errs[0]
		s.errs = s.errs[1:]
		s.mu.Unlock()
		return nil, e
	}
	s.mu.Unlock()
	select {
	case c := <-s.conns:
		return c, nil
	case <-s.closed:
		return nil, net.ErrClosed
	}
}

func (s *scripted) Close() error   { s.once.Do(func() { close(s.closed) }); return nil }
func (s *scripted) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

func emfile() error {
	return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
}

func TestRetryWaitsOutTemporaryErrors(t *testing.T) {
	sl := newScripted(emfile(), emfile(), emfile(), &net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.ECONNABORTED)})
	var mu sync.Mutex
	kinds := map[string]int{}
	rl := Retry(sl, RetryOptions{Name: "public", OnError: func(k string) { mu.Lock(); kinds[k]++; mu.Unlock() }})
	if !rl.Accepting() {
		t.Fatal("accepting before any error")
	}
	got := make(chan error, 1)
	go func() {
		c, err := rl.Accept()
		if c != nil {
			c.Close()
		}
		got <- err
	}()
	// Backoff: 5, 10, 20, 40 ms: the scripted errors are used up within
	// about 75 ms; meanwhile the listener says it is not accepting.
	deadline := time.Now().Add(5 * time.Second)
	for {
		sl.mu.Lock()
		left := len(sl.errs)
		sl.mu.Unlock()
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("errors not retried")
		}
		time.Sleep(time.Millisecond)
	}
	if rl.Accepting() {
		t.Fatal("Accepting() true while accept fails")
	}
	a, b := net.Pipe()
	defer b.Close()
	sl.conns <- a
	if err := <-got; err != nil {
		t.Fatalf("Accept: %v", err)
	}
	if !rl.Accepting() {
		t.Fatal("Accepting() false after a connection was accepted")
	}
	mu.Lock()
	defer mu.Unlock()
	if kinds[ErrKindEMFILE] != 3 || kinds[ErrKindECONNABORTED] != 1 {
		t.Fatalf("counted %v, want 3 EMFILE and 1 ECONNABORTED", kinds)
	}
}

func TestRetryReturnsPermanentErrors(t *testing.T) {
	perm := &net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EINVAL)}
	rl := Retry(newScripted(perm), RetryOptions{})
	if _, err := rl.Accept(); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Accept: %v, want EINVAL", err)
	}
}

func TestRetryCloseEndsBackoff(t *testing.T) {
	errs := make([]error, 100)
	for i := range errs {
		errs[i] = emfile()
	}
	rl := Retry(newScripted(errs...), RetryOptions{})
	got := make(chan error, 1)
	go func() { _, err := rl.Accept(); got <- err }()
	time.Sleep(50 * time.Millisecond)
	rl.Close()
	select {
	case err := <-got:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Accept after Close: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Accept still waiting after Close")
	}
}

func ExampleClassify() {
	kind, temporary := Classify(emfile())
	fmt.Println(kind, temporary)
	// Output: EMFILE true
}
