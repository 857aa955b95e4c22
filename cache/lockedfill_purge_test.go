package cache

import (
	"context"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
)

// TestLockedFillAcrossPurgeStaysRetired: a locked fill that began before
// another instance purged the dealer, and ends after every instance took
// the purge, stores its pre-purge body with the lock's release script
// (which sets the entry whatever the lock holds), but under the key of the
// generation it began with: no instance reads that key after the purge,
// neither the filling one, nor the purging one, nor one started after it.
// Real redis-server, three instances.
func TestLockedFillAcrossPurgeStaysRetired(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	pol := Policy{TTL: time.Hour}
	opts := func() Options {
		return Options{Redis: newClient(t, srv.Addr), LockWait: time.Second, LockTTL: 5 * time.Second}
	}
	a, b := newCache(t, opts()), newCache(t, opts())
	gen, _ := a.generation(ctx, 3)
	_, _ = b.generation(ctx, 3)

	started, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		_, _, _ = a.Get(ctx, 3, []byte("/k"), pol, func(context.Context) ([]byte, error) {
			close(started)
			<-release
			return []byte("pre-purge"), nil
		})
	}()
	<-started
	if err := b.PurgeDealer(ctx, 3); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a takes b's purge", func() bool { return mustGen(t, a, 3) == mustGen(t, b, 3) })
	close(release)
	<-done
	rc := newClient(t, srv.Addr)
	if v := rc.Exists(ctx, a.entryKey(3, gen, "/k")).Val(); v != 1 {
		t.Fatalf("the locked fill stored nothing under its generation (%d): the test does not exercise the late store", v)
	}
	c := newCache(t, opts())
	for name, inst := range map[string]*Cache{"filling": a, "purging": b, "started after": c} {
		e, _ := mustGet(t, inst, 3, "/k", pol, newFiller("post-purge").fill)
		if string(e.Body()) != "post-purge" {
			t.Errorf("the %s instance answered %q after the purge", name, e.Body())
		}
	}
}
