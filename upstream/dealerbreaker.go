package upstream

import (
	"context"
	"errors"
	"sync"
	"time"
)

// A service's breaker is shared by every dealer, and one dealer's calls can
// fail while the service answers every other dealer: a record of that
// dealer the service cannot serve, that dealer's shard down, a query of
// its own that times the service out. With the breaker alone, five failed
// calls of one dealer (a key asking for five pages it does not have cached)
// opened it for every dealer, and a key of that dealer kept it open by
// asking again at each trial: every dealer's misses on the service were
// 503. dealerTrack separates the two cases for one breaker:
//
//   - every dealer-scoped call (a call for one dealer's records) passes a
//     breaker of its dealer first, with the service breaker's settings:
//     that dealer's consecutive failures open it, for that dealer only, so
//     its calls stop reaching the service as the service breaker would
//     have stopped them;
//   - the service breaker opens on its consecutive failures only when they
//     are the service's, not one dealer's: the run holds failures of two
//     dealers or more, or of a call of no dealer (a key lookup, the key
//     index), or no call of another dealer has succeeded since the edge
//     started (the service answered nobody else: nothing says the failure
//     is that dealer's).
//
// So a service that is down still opens its breaker at its threshold once
// two dealers' calls failed (one failed call more than before when one
// dealer's calls were the only ones, whose own breaker opened meanwhile),
// and a dealer whose calls fail alone is refused alone.
type dealerTrack struct {
	failures uint32
	openFor  time.Duration
	now      func() time.Time
	svc, ct  string                                      // for onOpen
	onOpen   func(svc, contentType string, dealer int64) // may be nil

	mu        sync.Mutex
	runDealer int64 // the dealer of the current run of consecutive failures
	runLen    uint32
	runShared bool // the run holds failures of two dealers, or of a call of none

	okDealer, okOther int64 // the last dealer a call succeeded for, and the last one before it that differs
	okAt, okOtherAt   time.Time

	guards map[int64]*dealerGuard
}

// dealerGuard is the breaker of one dealer's calls to one service (or
// content type). It exists only while the dealer's last call failed.
type dealerGuard struct {
	fails     uint32
	openUntil time.Time
	trial     bool // a trial call is in flight (half-open)
}

// maxDealerGuards bounds the dealers tracked per breaker; past it a new
// failing dealer is guarded by the service breaker alone.
const maxDealerGuards = 10000

func newDealerTrack(b BreakerSettings, svc, contentType string, onOpen func(svc, contentType string, dealer int64)) *dealerTrack {
	return &dealerTrack{failures: b.ConsecutiveFailures, openFor: b.OpenFor, now: time.Now, svc: svc, ct: contentType, onOpen: onOpen, guards: make(map[int64]*dealerGuard)}
}

// callSucceeded and callExcluded classify a call's error as the breakers do.
func callSucceeded(err error) bool {
	return err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrCursorExpired) || errors.Is(err, ErrUnchanged)
}

func callExcluded(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errCallTooLarge)
}

// admit reports whether a call for dealer may be made, and whether it is
// its dealer breaker's trial call (to be passed to done or release).
// Calls of no dealer (0) are always admitted here.
func (t *dealerTrack) admit(dealer int64) (ok, trial bool) {
	if dealer == 0 {
		return true, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	g := t.guards[dealer]
	if g == nil || g.fails < t.failures {
		return true, false
	}
	if t.now().Before(g.openUntil) || g.trial {
		return false, false
	}
	g.trial = true
	return true, true
}

// release gives back a trial that made no call (the service breaker
// refused it).
func (t *dealerTrack) release(dealer int64, trial bool) {
	if !trial {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if g := t.guards[dealer]; g != nil {
		g.trial = false
	}
}

// done records the outcome of a call made for dealer (0: a call of no
// dealer). It runs before the service breaker counts the call, so that
// serviceWide sees it.
func (t *dealerTrack) done(dealer int64, trial bool, err error) {
	if t.record(dealer, trial, err) && t.onOpen != nil {
		t.onOpen(t.svc, t.ct, dealer)
	}
}

// record is done under the lock; it reports whether dealer's breaker
// opened (from closed: a failed trial reopens it silently).
func (t *dealerTrack) record(dealer int64, trial bool, err error) (opened bool) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case callSucceeded(err):
		t.runLen, t.runShared = 0, false
		if dealer == t.okDealer {
			t.okAt = now
		} else {
			t.okOther, t.okOtherAt = t.okDealer, t.okAt
			t.okDealer, t.okAt = dealer, now
		}
		if dealer != 0 {
			delete(t.guards, dealer)
		}
	case callExcluded(err):
		if g := t.guards[dealer]; g != nil && trial {
			g.trial = false
		}
	default:
		if t.runLen == 0 {
			t.runDealer = dealer
		} else if dealer != t.runDealer {
			t.runShared = true
		}
		if dealer == 0 {
			t.runShared = true
		}
		t.runLen++
		if dealer == 0 {
			return false
		}
		g := t.guards[dealer]
		if g == nil {
			if len(t.guards) >= maxDealerGuards {
				t.prune(now)
				if len(t.guards) >= maxDealerGuards {
					return false
				}
			}
			g = &dealerGuard{}
			t.guards[dealer] = g
		}
		g.fails++
		if trial || g.fails >= t.failures {
			opened = !trial && g.fails == t.failures
			g.fails = t.failures
			g.openUntil = now.Add(t.openFor)
			g.trial = false
		}
	}
	return opened
}

// prune drops the guards that would admit a call now.
func (t *dealerTrack) prune(now time.Time) {
	for d, g := range t.guards {
		if g.fails < t.failures || !now.Before(g.openUntil) && !g.trial {
			delete(t.guards, d)
		}
	}
}

// serviceWide reports whether the current run of consecutive failures is
// the service's: of several dealers, of a call of none, or of one dealer
// while no call of another dealer ever succeeded.
func (t *dealerTrack) serviceWide() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.runShared || t.runLen == 0 || t.runDealer == 0 {
		return true
	}
	if t.okDealer != t.runDealer && !t.okAt.IsZero() {
		return false
	}
	if t.okOther != t.runDealer && !t.okOtherAt.IsZero() {
		return false
	}
	return true
}
