package upstream

import (
	"context"
	"errors"
	"time"

	"github.com/sony/gobreaker/v2"
)

// ErrCircuitOpen reports that a call was refused without a network trip
// because the service's circuit breaker is open (or half-open with its
// trial calls in flight). Errors carrying it also wrap ErrUnavailable.
var ErrCircuitOpen = errors.New("upstream: circuit open")

// Breaker states as reported by Client.BreakerStates and OnBreakerChange.
const (
	BreakerClosed   = "closed"
	BreakerOpen     = "open"
	BreakerHalfOpen = "half-open"
)

// BreakerSettings configures the circuit breaker that guards each service.
// Every service has its own breaker with these settings. The zero value
// selects the defaults.
type BreakerSettings struct {
	// ConsecutiveFailures is the number of consecutive failed calls that
	// trips the breaker open. Zero selects 5.
	ConsecutiveFailures uint32
	// OpenFor is how long an open breaker refuses calls before it lets
	// trial calls through (half-open). Zero selects 5s.
	OpenFor time.Duration
	// HalfOpenRequests is the number of trial calls let through while
	// half-open; that many consecutive successes close the breaker, one
	// failure opens it again. Zero selects 1.
	HalfOpenRequests uint32
}

// Breaker defaults.
const (
	DefaultBreakerFailures = 5
	DefaultBreakerOpenFor  = 5 * time.Second
	DefaultBreakerHalfOpen = 1
)

func (b BreakerSettings) withDefaults() BreakerSettings {
	if b.ConsecutiveFailures == 0 {
		b.ConsecutiveFailures = DefaultBreakerFailures
	}
	if b.OpenFor == 0 {
		b.OpenFor = DefaultBreakerOpenFor
	}
	if b.HalfOpenRequests == 0 {
		b.HalfOpenRequests = DefaultBreakerHalfOpen
	}
	return b
}

// newBreaker builds the breaker of one service.
//
// What counts:
//   - success: a 2xx answer, and also ErrNotFound: a 404 is a healthy
//     service answering about a missing record.
//   - excluded (neither success nor failure): the caller gave up, i.e. its
//     context was cancelled or its own deadline, earlier than the
//     service's timeout, ran out. That says nothing about the service,
//     and must neither trip the breaker nor reset its failure count.
//   - failure: everything else (service timeout, connection error, 5xx,
//     undecodable body).
func newBreaker(svc string, b BreakerSettings, onChange func(svc, from, to string)) *gobreaker.CircuitBreaker[struct{}] {
	st := gobreaker.Settings{
		Name:        svc,
		MaxRequests: b.HalfOpenRequests,
		Timeout:     b.OpenFor,
		ReadyToTrip: func(c gobreaker.Counts) bool {
			return c.ConsecutiveFailures >= b.ConsecutiveFailures
		},
		IsSuccessful: func(err error) bool {
			return err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrCursorExpired)
		},
		IsExcluded: func(err error) bool {
			return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
		},
	}
	if onChange != nil {
		st.OnStateChange = func(name string, from, to gobreaker.State) {
			onChange(name, from.String(), to.String())
		}
	}
	return gobreaker.NewCircuitBreaker[struct{}](st)
}
