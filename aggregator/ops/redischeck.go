package ops

import (
	"context"
	"sync"
	"time"
)

// RedisCheckTimeout bounds one run of the Redis check behind /readyz, the
// status page and the scrape's edge_redis_up: all three wait as long, so
// they agree about one Redis (the scrape waited 250 ms where the others
// waited 1 s, and a Redis whose check took between the two was down for
// the alert and up for the probe).
const RedisCheckTimeout = time.Second

// RedisCheckReuse is how long a Redis check's result answers later
// callers: /readyz needs no token, also on an admin listener beyond
// loopback, and each check is about fifteen Redis commands (writes among
// them, on the one generation probe key every instance shares), so a
// client calling it in a loop would have turned each request into them.
const RedisCheckReuse = time.Second

// SharedCheck wraps a Redis check so that one run at a time answers every
// caller: a caller that finds a result younger than reuse gets it; one
// that finds a run under way waits for it (or for its own context); else
// it starts one, bounded by timeout and not by the caller's context, so
// that a caller giving up does not cut the run the others wait for.
func SharedCheck(check func(context.Context) error, timeout, reuse time.Duration) func(context.Context) error {
	s := &sharedCheck{check: check, timeout: timeout, reuse: reuse}
	return s.do
}

type sharedCheck struct {
	check          func(context.Context) error
	timeout, reuse time.Duration
	mu             sync.Mutex
	at             time.Time     // when the last run ended; zero: none yet
	err            error         // its result
	running        chan struct{} // closed when the run under way ends; nil: none
}

func (s *sharedCheck) do(ctx context.Context) error {
	s.mu.Lock()
	if !s.at.IsZero() && time.Since(s.at) < s.reuse {
		err := s.err
		s.mu.Unlock()
		return err
	}
	ch := s.running
	if ch == nil {
		ch = make(chan struct{})
		s.running = ch
		go s.run(ch)
	}
	s.mu.Unlock()
	select {
	case <-ch:
		s.mu.Lock()
		err := s.err
		s.mu.Unlock()
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *sharedCheck) run(done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	err := s.check(ctx)
	cancel()
	s.mu.Lock()
	s.err, s.at, s.running = err, time.Now(), nil
	s.mu.Unlock()
	close(done)
}
