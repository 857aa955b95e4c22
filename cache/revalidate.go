package cache

import (
	"context"
	"errors"
	"time"
)

// ErrUnchanged is what a fill returns, instead of a body, when the
// upstream answers it builds from are those the entry it replaces was
// built from (Revalidation.Prev): the cache then stores that entry's body
// again with new times, and the fill has decoded, mapped, encoded and
// compressed nothing. A fill returns it only when Prev is not zero.
var ErrUnchanged = errors.New("cache: upstream answers unchanged")

// Revalidation is what the cache tells a fill about the entry it replaces
// and what the fill tells the cache about the body it makes. The fill of
// a cached route finds it in its context (RevalidationFrom).
type Revalidation struct {
	// Prev is the source digest of the entry the fill replaces (a stale
	// entry being refreshed, or one served within stale-if-error) when
	// the cache can store that entry again; zero otherwise, and then the
	// fill must build its body.
	Prev uint64
	// Source is set by the fill: a digest of everything its body is made
	// from (the upstream answers, and anything else the body depends on
	// beyond the cache key), not zero; a fill that leaves it zero makes
	// entries that are never revalidated.
	Source uint64
	// AsOf, when set by the fill, is when the data its body was made
	// from was read (a page past the end made from a known
	// total): the entry's windows start then, not at the store, so it is
	// never fresher than what it was made from.
	AsOf time.Time
}

type revalidationKey struct{}

// RevalidationFrom returns the Revalidation of a fill's context, nil when
// the fill runs without one (the cache is off for the route, or the
// caller is not the cache).
func RevalidationFrom(ctx context.Context) *Revalidation {
	rv, _ := ctx.Value(revalidationKey{}).(*Revalidation)
	return rv
}

// renewable reports whether prev can be stored again as the result of a
// fill that found its sources unchanged: it has a source digest, its
// payload is sound, and it holds a coding of its body in storage of its
// own for good (never lent from a pool), which the new entry shares. The
// source digest travels with a compressed Redis value (see the wire
// format), so an entry another instance filled revalidates too; a bulk-tier
// copy (lent storage) does not.
func renewable(prev *Entry) bool {
	if prev == nil || prev.src == 0 || prev.bad.Load() {
		return false
	}
	if v := prev.plain.Load(); v != nil && v.kept {
		return true
	}
	v := prev.gz.Load()
	return v != nil && v.kept && v.body != nil
}

// renewed is a new entry of prev's body stored at now under p: it shares
// prev's codings whose storage is their own (see renewable), its source
// digest, and its being stored plain in Redis (plainWire).
func (prev *Entry) renewed(now time.Time, p Policy) *Entry {
	e := &Entry{ETag: prev.ETag, hash: prev.hash, plainLen: prev.plainLen, src: prev.src, plainWire: prev.plainWire, StoredAt: now}
	if v := prev.plain.Load(); v != nil && v.kept {
		e.plain.Store(v)
	}
	if v := prev.gz.Load(); v != nil && v.kept {
		e.gz.Store(v)
	}
	e.setWindows(now, p)
	return e
}
