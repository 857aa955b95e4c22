package upstream

import (
	"context"
	"testing"
	"time"
)

type ctxKey struct{}

func TestWatchNeeded(t *testing.T) {
	deadlineOnly, cancel1 := WithTimeout(context.Background(), time.Minute)
	defer cancel1()
	cancellable, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	fromCancellable, cancel3 := WithTimeout(cancellable, time.Minute)
	defer cancel3()
	child, cancel4 := context.WithCancel(deadlineOnly)
	defer cancel4()
	childTimeout, cancel5 := context.WithTimeout(deadlineOnly, time.Minute)
	defer cancel5()
	plain, cancel6 := context.WithTimeout(context.Background(), time.Minute)
	defer cancel6()
	cases := []struct {
		name string
		ctx  context.Context
		want bool
	}{
		{"background", context.Background(), false},
		{"without cancel", context.WithoutCancel(cancellable), false},
		{"WithTimeout of background", deadlineOnly, false},
		{"value under WithTimeout", context.WithValue(deadlineOnly, ctxKey{}, 1), false},
		{"WithTrace under WithTimeout", WithTrace(deadlineOnly, "r", ""), false},
		{"WithTimeout of a cancellable parent", fromCancellable, true},
		{"WithCancel under WithTimeout", child, true},
		{"context.WithTimeout under WithTimeout", childTimeout, true},
		{"context.WithTimeout of background", plain, true},
		{"cancellable", cancellable, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := watchNeeded(c.ctx, c.ctx.Done()); got != c.want {
				t.Errorf("watchNeeded = %v, want %v", got, c.want)
			}
		})
	}
}

// TestWithTimeoutCalls checks that a call made with a WithTimeout context,
// run without the watcher goroutine, still ends at the context's deadline
// with the caller's error (not the service's timeout, so the breaker stays
// closed), and that a call made before the deadline answers.
func TestWithTimeoutCalls(t *testing.T) {
	ts := newTestServer(t)
	c := newTestClient(t, ts, func(o *Options) { o.Breaker.ConsecutiveFailures = 2 })
	const slack = 150 * time.Millisecond

	ts.set(200, `{"id":7}`, 0)
	ctx, cancel := WithTimeout(context.Background(), time.Second)
	d, err := c.Dealer(ctx, 7)
	cancel()
	if err != nil || d.ID != 7 {
		t.Fatalf("got %+v, %v", d, err)
	}

	ts.set(200, `{}`, 400*time.Millisecond)
	checkCallerDeadlines(t, c, WithTimeout, slack)
}
