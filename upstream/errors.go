package upstream

import "errors"

// ErrNotFound reports that the internal service answered 404 for the
// requested record. It is not a service failure and does not trip breakers.
var ErrNotFound = errors.New("upstream: not found")

// ErrUnavailable reports that a service could not answer: timeout, breaker
// open, connection failure, 5xx or an undecodable body. Errors returned by
// the client wrap it (errors.Is(err, ErrUnavailable)) together with the
// service name.
var ErrUnavailable = errors.New("upstream: unavailable")
