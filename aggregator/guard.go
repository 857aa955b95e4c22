package aggregator

import (
	"runtime/debug"

	"github.com/dealer-edge/dealer-edge/cache"
)

// guard wraps a function run on a goroutine of its own (a fan-out branch),
// turning a panic into an error: recover works only on the panicking
// goroutine, and an unrecovered panic there would end the process instead
// of failing one request with 500 internal_error. The error is the cache's
// PanicError, so the request's failure path logs the stack once.
func guard(f func() error) func() error {
	return func() (err error) {
		defer recoverInto(&err)
		return f()
	}
}

// recoverInto, deferred, stores a recovered panic in *err.
func recoverInto(err *error) {
	if r := recover(); r != nil {
		*err = &cache.PanicError{Value: r, Stack: debug.Stack()}
	}
}
