package syncbuf

import (
	"fmt"
	"sync"
	"testing"
)

// TestBufferConcurrent: writers and readers at once, every line kept
// whole; Take empties the buffer.
func TestBufferConcurrent(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				fmt.Fprintf(&b, "line w%d i%d\n", w, i)
				_ = b.Count("line")
			}
		}()
	}
	wg.Wait()
	if n := b.Count("line "); n != 1600 {
		t.Fatalf("Count = %d, want 1600", n)
	}
	if s := b.Take(); len(s) == 0 || b.String() != "" || b.Count("line") != 0 {
		t.Fatalf("Take left %q", b.String())
	}
}
