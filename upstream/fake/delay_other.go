//go:build !linux

package fake

import "time"

// delays is Go's timers where there is no timerfd (see delay_linux.go).
type delays struct{}

// wait returns after dur, or when closing is closed.
func (*delays) wait(dur time.Duration, closing <-chan struct{}) { timerWait(dur, closing) }

// close does nothing: there is nothing to release.
func (*delays) close() {}
