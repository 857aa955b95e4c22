package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/redis/go-redis/v9"
)

// The batcher against a real redis-server: results reach their callers,
// commands of concurrent callers share round trips, and the bounds hold
// while Redis stalls.
func TestBatcher(t *testing.T) {
	srv := redistest.Start(t)
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second, MaxRetries: -1})
	t.Cleanup(func() { _ = rc.Close() })
	ctx := context.Background()

	t.Run("results", func(t *testing.T) {
		b := newBatcher(rc, 100, time.Second)
		trips := &tripCounter{}
		rc.AddHook(trips)
		var wg sync.WaitGroup
		for i := 0; i < 64; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				k := fmt.Sprintf("batch:%d", i)
				if err := b.do(ctx, redis.NewStatusCmd(ctx, "set", k, i), time.Second); err != nil {
					t.Errorf("set %s: %v", k, err)
					return
				}
				get := redis.NewStringCmd(ctx, "get", k)
				if err := b.do(ctx, get, time.Second); err != nil || get.Val() != fmt.Sprint(i) {
					t.Errorf("get %s: %q %v", k, get.Val(), err)
				}
				miss := redis.NewStringCmd(ctx, "get", k+":none")
				if err := b.do(ctx, miss, time.Second); !errors.Is(err, redis.Nil) {
					t.Errorf("get of no key: %v, want redis.Nil", err)
				}
			}()
		}
		wg.Wait()
		if per := float64(trips.cmds.Load()) / float64(trips.trips.Load()); per < 2 {
			t.Errorf("%.2f commands per round trip for 64 concurrent callers", per)
		}
	})

	t.Run("stalled redis: budget, abandoned calls and the queue bound", func(t *testing.T) {
		const max = 8
		b := newBatcher(rc, max, 200*time.Millisecond)
		srv.Pause()
		resumed := false
		defer func() {
			if !resumed {
				srv.Resume()
			}
		}()
		// The first batch is written and waits for replies; callers give up
		// at their budget (a short one here) while it stays in flight.
		var wg sync.WaitGroup
		var timedOut atomic.Int32
		for i := 0; i < max; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				err := b.do(ctx, redis.NewStringCmd(ctx, "get", "batch:1"), 100*time.Millisecond)
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("call to a stalled redis: %v, want the budget's deadline", err)
				}
				if d := time.Since(start); d > 2*time.Second {
					t.Errorf("waited %v with a 100ms budget", d)
				}
				timedOut.Add(1)
			}()
		}
		wg.Wait()
		// Every slot is held by an abandoned command still in flight or
		// queued: the next is refused at once.
		start := time.Now()
		if err := b.do(ctx, redis.NewStringCmd(ctx, "get", "batch:1"), time.Second); !errors.Is(err, errBatchFull) {
			t.Fatalf("call over the bound: %v, want errBatchFull", err)
		}
		if d := time.Since(start); d > 50*time.Millisecond {
			t.Fatalf("refusal took %v", d)
		}
		// A caller whose context ends stops waiting.
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		b2 := newBatcher(rc, max, time.Second)
		if err := b2.do(cctx, redis.NewStringCmd(ctx, "get", "batch:1"), time.Second); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled caller: %v", err)
		}
		srv.Resume()
		resumed = true
		// The abandoned commands complete; the batcher serves again.
		waitWithin(t, 10*time.Second, "batcher to serve again", func() bool {
			get := redis.NewStringCmd(ctx, "get", "batch:1")
			return b.do(ctx, get, time.Second) == nil && get.Val() == "1"
		})
	})
}

// A cache keeps its L2 after Close (Get keeps working after Close): the
// batcher needs no background goroutine of the cache's.
func TestBatcherAfterClose(t *testing.T) {
	srv := redistest.Start(t)
	c := newCache(t, Options{Redis: newClient(t, srv.Addr), L1MaxBytes: -1})
	pol := Policy{TTL: time.Hour}
	fill := func(context.Context) ([]byte, error) { return []byte("body"), nil }
	mustGet(t, c, 1, "/k", pol, fill)
	_ = c.Close()
	_, res, err := c.Get(context.Background(), 1, []byte("/k"), pol, fill)
	if err != nil || res != Hit {
		t.Fatalf("after Close: %v %v, want an L2 hit", res, err)
	}
	if st := c.Stats(); st.L2Hits == 0 {
		t.Fatalf("no L2 hit after Close: %+v", st)
	}
}
