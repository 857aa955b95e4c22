package fake

import "time"

// timerWait returns after dur on Go's timers, or when closing is closed:
// the injected latency where there is no timerfd (delay_other.go) or once
// the delays are closed (delay_linux.go).
func timerWait(dur time.Duration, closing <-chan struct{}) {
	t := time.NewTimer(dur)
	defer t.Stop()
	select {
	case <-t.C:
	case <-closing:
	}
}
