package tracing

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestClientSampledCapped: a client that sets the sampled flag of its
// traceparent on every request (or, under traceidratio, picks trace ids
// below the ratio's bound) has at most ClientSampledPerSecond of them
// traced a second, with a second's burst, under the samplers whose root
// would not sample every request; the turned-down decisions are counted.
// The clock is the test's: 1,000 requests in the same instant, then 0.5 s
// later. Before 2026-11-29 all 1,000 were traced (README "Propagation").
func TestClientSampledCapped(t *testing.T) {
	for _, c := range []struct {
		sampler string
		arg     float64
		capped  bool
	}{
		{SamplerParentBasedTraceIDRatio, 0.01, true},
		{SamplerParentBasedAlwaysOff, 0, true},
		{SamplerTraceIDRatio, 0.5, true},
		// The root samples every request: the client's flag adds nothing.
		{SamplerParentBasedAlwaysOn, 0, false},
		{SamplerAlwaysOn, 0, false},
	} {
		t.Run(fmt.Sprintf("%s/%v", c.sampler, c.arg), func(t *testing.T) {
			tr, err := New(Config{TracesEndpoint: "http://127.0.0.1:9/v1/traces", Sampler: c.sampler, SamplerArg: c.arg}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = tr.Shutdown(t.Context()) })
			var now int64
			tr.clientCap.now = func() int64 { return now }
			rng := rand.New(rand.NewPCG(3, 4))
			// Under traceidratio the hostile client picks ids below the
			// bound: a low half of zeros but for the last bit.
			tp := func() []byte {
				b := randomTraceparent(rng, true)
				copy(b[19:35], "0000000000000001")
				return b
			}
			sampled := func(n int) int {
				k := 0
				for range n {
					if tr.Decide(tp()).Sampled() {
						k++
					}
				}
				return k
			}
			got := sampled(1000)
			want, wantCapped := DefaultClientSampledPerSecond, uint64(1000-DefaultClientSampledPerSecond)
			if !c.capped {
				want, wantCapped = 1000, 0
			}
			if got != want || tr.ClientSampledCapped() != wantCapped {
				t.Fatalf("1000 client-sampled requests at once: %d traced, %d counted capped; want %d, %d", got, tr.ClientSampledCapped(), want, wantCapped)
			}
			now += int64(500 * time.Millisecond)
			if got, want := sampled(1000), map[bool]int{true: DefaultClientSampledPerSecond / 2, false: 1000}[c.capped]; got != want {
				t.Errorf("half a second later: %d traced, want %d", got, want)
			}
			// A client's unsampled flag and a request without traceparent
			// take no token: the operator's ratio is not the client's.
			if c.sampler == SamplerParentBasedAlwaysOff {
				if tr.Decide(randomTraceparent(rng, false)).Sampled() || tr.Decide(nil).Sampled() {
					t.Error("sampled without a client's sampled flag under parentbased_always_off")
				}
			}
		})
	}
}

// TestClientSampledUnbounded: a negative ClientSampledPerSecond is no
// bound (the behaviour before the bound), and the decision still allocates
// nothing with the bound in place.
func TestClientSampledUnbounded(t *testing.T) {
	tr, err := New(Config{TracesEndpoint: "http://127.0.0.1:9/v1/traces", ClientSampledPerSecond: -1}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Shutdown(t.Context()) })
	tp := []byte("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	for i := range 1000 {
		if !tr.Decide(tp).Sampled() {
			t.Fatalf("request %d not traced with no bound", i)
		}
	}
	capped, err := New(Config{TracesEndpoint: "http://127.0.0.1:9/v1/traces"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = capped.Shutdown(t.Context()) })
	if a := testing.AllocsPerRun(1000, func() { _ = capped.Decide(tp); _ = capped.Decide(nil) }); a != 0 {
		t.Errorf("Decide with the bound allocates %.1f times", a)
	}
}

// TestClientSampledTinyRate: a rate far below one a second (the config
// takes any positive number) still bounds: the interval, computed in
// float, is clamped rather than overflowing int64 into a negative (which
// max(…, 1) made one nanosecond: no bound at all).
func TestClientSampledTinyRate(t *testing.T) {
	for _, rate := range []float64{1e-300, 1e-9, 0.5} {
		c := newClientCap(rate)
		var now int64
		c.now = func() int64 { now += int64(time.Millisecond); return now }
		if !c.allow() || c.allow() || c.allow() {
			t.Errorf("rate %v: three decisions a millisecond apart: want the first only", rate)
		}
	}
}

// TestClientSampledConcurrent: decisions taken at once from many
// goroutines share the bound exactly (one atomic word, no lock).
func TestClientSampledConcurrent(t *testing.T) {
	c := newClientCap(50)
	c.now = func() int64 { return 7 }
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 500 {
				if c.allow() {
					allowed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if allowed.Load() != 50 || c.count() != 8*500-50 {
		t.Errorf("%d allowed, %d counted capped; want 50, %d", allowed.Load(), c.count(), 8*500-50)
	}
}
