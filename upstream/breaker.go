package upstream

import (
	"errors"
	"sync"
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
// Every service has its own breaker with these settings, and every content
// type of the content service its own (see typeBreakers). The zero value
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
//   - success: a 2xx answer (ErrUnchanged is one: a 200 whose body the
//     caller already holds), and also ErrNotFound: a 404 is a healthy
//     service answering about a missing record.
//   - excluded (neither success nor failure): the caller gave up, i.e. its
//     context was cancelled or its own deadline, earlier than the
//     service's timeout, ran out. That says nothing about the service,
//     and must neither trip the breaker nor reset its failure count.
//   - failure: everything else (service timeout, connection error, 5xx,
//     undecodable body).
//
// It opens on b.ConsecutiveFailures consecutive failures that are the
// service's, not one dealer's (tr.serviceWide; a dealer failing alone is
// refused by its own breaker, dealerbreaker.go).
func newBreaker(svc string, b BreakerSettings, tr *dealerTrack, onChange func(svc, from, to string)) *gobreaker.CircuitBreaker[struct{}] {
	st := gobreaker.Settings{
		Name:        svc,
		MaxRequests: b.HalfOpenRequests,
		Timeout:     b.OpenFor,
		ReadyToTrip: func(c gobreaker.Counts) bool {
			return c.ConsecutiveFailures >= b.ConsecutiveFailures && tr.serviceWide()
		},
		IsSuccessful: callSucceeded,
		IsExcluded:   callExcluded,
	}
	if onChange != nil {
		st.OnStateChange = func(name string, from, to gobreaker.State) {
			onChange(name, from.String(), to.String())
		}
	}
	return gobreaker.NewCircuitBreaker[struct{}](st)
}

// typeBreakers are the content service's breakers, one per content type.
// The content service answers each type from its own store, and one type
// can fail while the others answer: with a single breaker, a type that
// fails every call opened it for all six as soon as no call of another
// type came in between to reset the count, which is the normal case once
// the other types' views are cached (a hub then lost every section, and
// every content listing failed, for the breaker's open period). Each type
// now trips alone; the service's state as reported (BreakerStates, the
// metrics, the status page, the alerts) is the worst of its types'.
type typeBreakers struct {
	svc    string
	byType map[string]*gobreaker.CircuitBreaker[struct{}] // fixed at New
	tracks map[string]*dealerTrack                        // byType's per-dealer accounting, fixed at New

	mu       sync.Mutex
	last     map[string]gobreaker.State // as the breakers last reported
	reported gobreaker.State            // the worst of last, as last reported
	onChange func(svc, from, to string)
}

func newTypeBreakers(svc string, types []string, b BreakerSettings, onChange func(svc, from, to string), onType func(contentType, from, to string), onDealer func(svc, contentType string, dealer int64)) *typeBreakers {
	t := &typeBreakers{
		svc:      svc,
		byType:   make(map[string]*gobreaker.CircuitBreaker[struct{}], len(types)),
		tracks:   make(map[string]*dealerTrack, len(types)),
		last:     make(map[string]gobreaker.State, len(types)),
		onChange: onChange,
	}
	for _, ct := range types {
		t.tracks[ct] = newDealerTrack(b, svc, ct, onDealer)
		t.byType[ct] = newBreaker(ct, b, t.tracks[ct], func(ct, from, to string) {
			if onType != nil {
				onType(ct, from, to)
			}
			t.changed(ct, to)
		})
	}
	return t
}

// of returns the breaker of contentType, or nil for a type not known (the
// caller then uses the service's own).
func (t *typeBreakers) of(contentType string) *gobreaker.CircuitBreaker[struct{}] {
	return t.byType[contentType]
}

// trackOf returns the per-dealer accounting of contentType's breaker, or
// nil for a type not known.
func (t *typeBreakers) trackOf(contentType string) *dealerTrack {
	return t.tracks[contentType]
}

// changed records a type breaker's new state and reports the service's,
// the worst of its types', when that changed. It runs under the type
// breaker's lock (gobreaker's OnStateChange) and calls no breaker.
func (t *typeBreakers) changed(contentType, to string) {
	var st gobreaker.State
	switch to {
	case BreakerOpen:
		st = gobreaker.StateOpen
	case BreakerHalfOpen:
		st = gobreaker.StateHalfOpen
	default:
		st = gobreaker.StateClosed
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.last[contentType] = st
	w := gobreaker.StateClosed
	for _, s := range t.last {
		w = max(w, s) // closed < half-open < open
	}
	if w != t.reported {
		from := t.reported
		t.reported = w
		if t.onChange != nil {
			t.onChange(t.svc, from.String(), w.String())
		}
	}
}

// states returns each type's state, asking each breaker (an open breaker
// whose period has passed turns half-open when asked).
func (t *typeBreakers) states() map[string]string {
	m := make(map[string]string, len(t.byType))
	for ct, cb := range t.byType {
		m[ct] = cb.State().String()
	}
	return m
}

// worst returns the worst of the types' states: the service's state.
func (t *typeBreakers) worst() string {
	w := gobreaker.StateClosed
	for _, cb := range t.byType {
		w = max(w, cb.State())
	}
	return w.String()
}
