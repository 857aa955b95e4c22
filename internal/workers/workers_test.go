package workers

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestPool: every job runs once; jobs handed out one after another reuse a
// worker instead of a goroutine each; concurrent jobs get workers of their
// own; idle workers exit.
func TestPool(t *testing.T) {
	p := New(200 * time.Millisecond)
	var ran atomic.Int64
	for range 50 {
		var wg sync.WaitGroup
		wg.Add(1)
		p.Go(func() { defer wg.Done(); ran.Add(1) })
		wg.Wait()
		time.Sleep(time.Millisecond) // the worker is back to waiting
	}
	if got := ran.Load(); got != 50 {
		t.Fatalf("ran %d jobs, want 50", got)
	}
	// One worker, unless the machine is so slow that it had not gone back
	// to waiting by the next job; never a goroutine per job.
	if n := p.Live(); n < 1 || n > 3 {
		t.Errorf("%d workers for 50 jobs in turn, want 1", n)
	}

	// Six at once (a hub): each blocks until all have started, so they
	// cannot share a worker.
	var wg sync.WaitGroup
	var started sync.WaitGroup
	started.Add(6)
	wg.Add(6)
	for range 6 {
		p.Go(func() { defer wg.Done(); started.Done(); started.Wait(); ran.Add(1) })
	}
	wg.Wait()
	if got := ran.Load(); got != 56 {
		t.Fatalf("ran %d jobs, want 56", got)
	}
	if n := p.Live(); n < 6 {
		t.Errorf("%d workers after six concurrent jobs, want at least 6", n)
	}

	deadline := time.Now().Add(5 * time.Second)
	for p.Live() > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := p.Live(); n > 0 {
		t.Errorf("%d workers left after idling", n)
	}
}

// deep uses about n KiB of stack, as a refresh through the aggregator, the
// upstream client and fasthttp does.
//
//go:noinline
func deep(n int) int {
	var pad [1024]byte
	pad[n%1024] = byte(n)
	if n == 0 {
		return int(pad[0])
	}
	return deep(n-1) + int(pad[n%1024])
}

// BenchmarkDeepJob: one job at a time that needs a 32 KiB stack, on a new
// goroutine each (its stack grown by copying every time) against a
// worker of the pool.
func BenchmarkDeepJob(b *testing.B) {
	done := make(chan int, 1)
	job := func() { done <- deep(32) }
	b.Run("goroutine", func(b *testing.B) {
		for range b.N {
			go job()
			<-done
		}
	})
	b.Run("pool", func(b *testing.B) {
		p := New(time.Minute)
		for range b.N {
			p.Go(job)
			<-done
		}
	})
}
