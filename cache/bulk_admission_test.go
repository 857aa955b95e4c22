package cache

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
)

// TestBulkHitAdmissionJudgesRehomedCost: probeBulk asks the hot
// tier's admission (wouldAdmit: sketch estimate per byte of cost against
// the last victim's) with a cost that still counts the pooled buffer's
// unused capacity (held, added just before), although since a73a8bd a
// kept hit is rehomed and charged only its bodies' lengths. A page whose
// density clears the bar at the cost the hot tier will charge is then
// refused as if it cost the 4 KiB buffer: the hot share the commit meant
// to restore stays down.
func TestBulkHitAdmissionJudgesRehomedCost(t *testing.T) {
	_, rc := newMiniRedis(t)
	a := newCache(t, Options{Redis: rc, L1MaxBytes: -1})
	b := newCache(t, Options{Redis: rc, L1MaxBytes: 48 << 20, L1HotBytes: 4 << 20})
	if b.bulk == nil {
		t.Fatal("no bulk tier")
	}
	waitFor(t, "subscriptions", func() bool { return a.Stats().PubSubUp && b.Stats().PubSubUp })
	pol := Policy{TTL: time.Hour}
	ctx := context.Background()
	key := []byte("/k1")
	body := listingBody(1, 12)
	if _, _, err := a.GetGzip(ctx, 3, key, pol, func(context.Context) ([]byte, error) { return body, nil }); err != nil {
		t.Fatal(err)
	}
	noFill := func(context.Context) ([]byte, error) { return nil, errors.New("no fill expected") }
	get := func() {
		t.Helper()
		e, res, err := b.GetGzip(ctx, 3, key, pol, noFill)
		if err != nil || res != Hit {
			t.Fatalf("%v %v", res, err)
		}
		if l := e.Lent(); l != nil {
			_ = l.Close()
		}
	}
	get() // a Redis hit: into both tiers
	b.l1.dropAll()
	get() // a bulk hit, kept (no victim yet)
	charged := b.Stats().L1Bytes
	if b.Stats().L1Entries != 1 || charged <= 0 {
		t.Fatalf("bulk hit not kept: %+v", b.Stats())
	}
	b.l1.dropAll()
	h := keyHash(3, xxhash.Sum64(key))
	f := float64(b.l1.freq.estimate(h))
	// The last victim's density: two thirds of this page's at the cost the
	// hot tier charges it (the sketch's estimate only grows by the next
	// lookup), so the page beats it.
	bar := f / float64(charged) / 1.5
	b.l1.lastVictim.Store(math.Float64bits(bar))
	get() // a bulk hit again
	st := b.Stats()
	t.Logf("charged %d B a kept hit; estimate %.0f; bar %.6f/B; density at the charged cost >= %.6f/B", charged, f, bar, f/float64(charged))
	if st.L1Entries != 1 {
		t.Errorf("a bulk hit whose density (%.6f/B at the %d B the hot tier charges) beats the last victim's (%.6f/B) was not offered to the hot tier: wouldAdmit judged it with the pooled buffer's size", f/float64(charged), charged, bar)
	}
}
