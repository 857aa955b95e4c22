package aggregator

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"sync"

	"github.com/cespare/xxhash/v2"

	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/upstream"
)

// revalidating prepares a fill that makes one upstream call and builds its
// body from that answer alone, with the cache key (inventory listings, an
// NLT offer's detail, a content type's visible view) for a cache refill: when the cache offers a revalidation, ctx carries an
// upstream digest of the answer, and done, called with the call's error,
// records the digest as the new entry's source and turns an answer equal
// to the previous entry's (upstream.ErrUnchanged) into cache.ErrUnchanged:
// the cache then stores the previous body again and nothing is decoded,
// mapped, encoded or compressed. The seed is the body builder and the
// build (buildSeed): the body depends on nothing else that the key does
// not hold (no settings, no time), and the digest is kept in Redis with
// the entry, so an entry another instance filled revalidates only when
// that instance runs the same code.
// Without a revalidation (the route's cache is off) ctx is unchanged.
func revalidating(ctx context.Context, seed uint64) (context.Context, func(error) error) {
	rv := cache.RevalidationFrom(ctx)
	if rv == nil {
		return ctx, func(err error) error { return err }
	}
	d := &upstream.Digest{Seed: seed ^ buildSeed(), Prev: rv.Prev}
	return upstream.WithDigest(ctx, d), func(err error) error {
		if errors.Is(err, upstream.ErrUnchanged) {
			return cache.ErrUnchanged
		}
		if err == nil {
			rv.Source = d.Sum
		}
		return err
	}
}

// Seeds of the fills that revalidate (revalidating): one per body builder,
// so that two builders never share a digest.
const (
	seedVehicleListing = 0x7665_6869_636c_6531 // "vehicle1"
	seedOfferListing   = 0x6f66_6665_7273_3031 // "offers01"
	seedOfferDetail    = 0x6f66_6665_7264_3031 // "offerd01"
	seedContentView    = 0x7669_6577_7330_3031 // "views001"
)

// buildSeed identifies the code this process runs, for the digests of
// revalidated fills: an entry in Redis built by another release (another
// mapping of the same upstream answer) must never be stored again as this
// one's. It is a hash of the executable's bytes (26 MB read once at
// start, a few milliseconds); when the executable cannot be read, a random
// value, so this process revalidates only what it filled itself.
var buildSeed = sync.OnceValue(func() uint64 {
	if exe, err := os.Executable(); err == nil {
		if f, err := os.Open(exe); err == nil {
			defer f.Close()
			h := xxhash.New()
			if _, err := io.Copy(h, f); err == nil {
				return h.Sum64()
			}
		}
	}
	return rand.Uint64()
})
