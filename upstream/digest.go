package upstream

import (
	"context"
	"encoding/binary"
	"errors"

	"github.com/cespare/xxhash/v2"
)

// ErrUnchanged is returned, instead of a decoded answer, by a call made
// with a Digest whose Prev the answer's body matches: the caller already
// holds what the answer would decode to. It is a successful call for the
// breaker and for metrics.
var ErrUnchanged = errors.New("upstream: answer unchanged")

// Digest identifies the answer a call received, so that a caller that
// built something from an earlier answer can tell the same one again
// before decoding it (a cache refresh whose sources did not change). It
// is for one call: with the Digest in its context (WithDigest), a call
// that is answered 200 sets Sum to a digest of Seed and the body, and
// when Prev is not zero and Sum equals it, returns ErrUnchanged without
// decoding the body. Sum is never zero after such a call.
type Digest struct {
	// Seed goes into Sum: whatever else the caller's result depends on.
	Seed uint64
	// Prev is the Sum of the answer the caller holds the result of; zero
	// for none.
	Prev uint64
	// Sum is set by the call.
	Sum uint64
}

type digestKey struct{}

// WithDigest returns ctx carrying d for the calls made with it.
func WithDigest(ctx context.Context, d *Digest) context.Context {
	return context.WithValue(ctx, digestKey{}, d)
}

// digestFrom returns the Digest of ctx, nil when there is none.
func digestFrom(ctx context.Context) *Digest {
	d, _ := ctx.Value(digestKey{}).(*Digest)
	return d
}

// observe sets d.Sum from body and reports whether it equals d.Prev.
func (d *Digest) observe(body []byte) (unchanged bool) {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:], d.Seed)
	binary.LittleEndian.PutUint64(b[8:], xxhash.Sum64(body))
	d.Sum = xxhash.Sum64(b[:])
	if d.Sum == 0 {
		d.Sum = 1
	}
	return d.Prev != 0 && d.Sum == d.Prev
}
