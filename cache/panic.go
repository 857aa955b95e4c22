package cache

import (
	"fmt"
	"runtime/debug"
)

// PanicError is what a FillFunc that panicked returns to every caller
// instead of the panic: fills run on goroutines of the cache (the shared
// flight of a key, background refreshes), where a panic would end the
// process rather than one request. Stack is the panicking goroutine's, for
// the log; it must never reach a client.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("cache: fill panicked: %v", e.Value) }

// safeFill calls fill, turning a panic into a *PanicError.
func safeFill(fill func() ([]byte, error)) (body []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			body, err = nil, &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return fill()
}
