package cache

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
)

// TestLockWaitEndsWithTheHolder: an instance waiting on another's fill
// lock stops waiting when the holder releases it without storing an entry
// (its fill failed, or kept a fact instead of a response, as a detail's
// 404 does) and fills itself at once, rather than after LockWait; when
// the holder stores, the waiter is served the stored entry (no fill).
func TestLockWaitEndsWithTheHolder(t *testing.T) {
	srv := redistest.Start(t)
	const lockWait = 2 * time.Second
	prefix := "lw" + strconv.Itoa(int(time.Now().UnixNano()%1e9))
	pol := Policy{TTL: time.Minute}
	ctx := context.Background()
	for _, c := range []struct {
		name      string
		holderErr error
		wantFills uint64 // the waiter's
	}{
		{"holder fails", errors.New("upstream down"), 1},
		{"holder stores", nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := newCache(t, Options{Redis: newClient(t, srv.Addr), Prefix: prefix, LockWait: lockWait, LockTTL: 5 * time.Second})
			b := newCache(t, Options{Redis: newClient(t, srv.Addr), Prefix: prefix, LockWait: lockWait, LockTTL: 5 * time.Second})
			key := []byte("/k/" + c.name)
			gen, _ := a.generation(ctx, 5)
			_, _ = b.generation(ctx, 5)
			release := make(chan struct{})
			aDone := make(chan error, 1)
			go func() {
				_, _, err := a.Get(ctx, 5, key, pol, func(context.Context) ([]byte, error) {
					<-release
					return []byte("a"), c.holderErr
				})
				aDone <- err
			}()
			rc := newClient(t, srv.Addr)
			waitFor(t, "a holds the lock", func() bool { return rc.Exists(ctx, a.lockKey(5, gen, string(key))).Val() == 1 })
			bDone := make(chan string, 1)
			go func() {
				e, _, err := b.Get(ctx, 5, key, pol, func(context.Context) ([]byte, error) { return []byte("b"), nil })
				if err != nil {
					bDone <- "error: " + err.Error()
					return
				}
				bDone <- string(e.Body())
			}()
			time.Sleep(100 * time.Millisecond) // b waits on the lock
			released := time.Now()
			close(release)
			<-aDone
			body := <-bDone
			took := time.Since(released)
			t.Logf("b answered %q %v after a's fill ended (lock_wait %v)", body, took, lockWait)
			if took >= lockWait/2 {
				t.Errorf("b took %v after the holder's fill ended: it waited out lock_wait", took)
			}
			want := "a"
			if c.holderErr != nil {
				want = "b"
			}
			if body != want {
				t.Errorf("b answered %q, want %q", body, want)
			}
			if got := b.Stats().Fills; got != c.wantFills {
				t.Errorf("b made %d fills, want %d", got, c.wantFills)
			}
		})
	}
}
