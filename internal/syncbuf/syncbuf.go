// Package syncbuf holds Buffer, a bytes.Buffer that one goroutine (a
// logger, a child process's output) writes while another reads: the
// tests' sink for log lines.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a goroutine-safe, growing record of what was written to it.
// The zero value is empty and ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Count returns how many times s occurs in what was written so far.
func (b *Buffer) Count(s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Count(b.b.Bytes(), []byte(s))
}

// Take returns everything written so far and empties the buffer.
func (b *Buffer) Take() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.b.String()
	b.b.Reset()
	return s
}
