package cache

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisErrReply is an error reply from Redis (it implements redis.Error),
// such as OOM or MISCONF: Redis answers, so the cache does not mark it down.
type redisErrReply string

func (e redisErrReply) Error() string { return string(e) }
func (redisErrReply) RedisError()     {}

// refuseIncr fails, while armed, every pipeline that holds an INCR (a
// purge's) with an OOM error reply, without sending it.
type refuseIncr struct{ armed atomic.Bool }

func (h *refuseIncr) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *refuseIncr) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *refuseIncr) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if h.armed.Load() {
			for _, c := range cmds {
				if strings.EqualFold(c.Name(), "incr") {
					err := redisErrReply("OOM command not allowed when used memory > 'maxmemory'.")
					for _, c := range cmds {
						c.SetErr(err)
					}
					return err
				}
			}
		}
		return next(ctx, cmds)
	}
}

// TestRefusedPurgeGenerationDoesNotCollide: a purge that Redis refuses with
// an error reply moves the dealer's generation on in this instance alone,
// to the number Redis will give the next INCR. Another instance's purge
// then gets that very number. Nothing this instance filled between the two
// purges may be served after the second one, by either instance: this
// instance uses no L2 under its guess, and the other purge makes it guess
// again (dropping L1, leaving the bulk tier's entries under the old
// number). Once Redis takes the deferred purge, Redis is past every guess
// and L2 is used again. With and without a bulk tier. (Found by an audit:
// before, both instances served the value filled before the second purge.)
func TestRefusedPurgeGenerationDoesNotCollide(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"hot L1 only", Options{}},
		{"with a bulk tier", Options{L1MaxBytes: 40 << 20, L1HotBytes: 256 << 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, rcB := newMiniRedis(t)
			rcA := newClient(t, rcB.Options().Addr)
			refuse := &refuseIncr{}
			rcA.AddHook(refuse)
			ctx := context.Background()
			optsA, optsB := tc.opts, tc.opts
			optsA.Redis, optsB.Redis = rcA, rcB
			optsA.GenerationPoll = time.Hour // A retries its deferred purge only when the test says
			a := newCache(t, optsA)
			b := newCache(t, optsB)
			waitFor(t, "subscriptions", func() bool { return a.Stats().PubSubUp && b.Stats().PubSubUp })
			pol := Policy{TTL: time.Hour}
			body := func(c *Cache, fill string) string {
				t.Helper()
				e, _ := mustGet(t, c, 1, "/k", pol, newFiller(fill).fill)
				return string(e.Body())
			}
			if got := body(a, "v0"); got != "v0" {
				t.Fatalf("first fill: %q", got)
			}

			refuse.armed.Store(true)
			if err := a.PurgeDealer(ctx, 1); !errors.Is(err, ErrPurgeDeferred) {
				t.Fatalf("refused purge: %v", err)
			}
			refuse.armed.Store(false)
			if !a.RedisHealthy() {
				t.Fatal("an error reply marked Redis down (the case needs it up)")
			}
			if got := body(a, "v1"); got != "v1" {
				t.Fatalf("A after its refused purge: %q, want a fill of v1", got)
			}
			_, st := a.generation(ctx, 1)
			if st.l2Usable() {
				t.Error("L2 is used under a generation Redis did not give")
			}

			// The content changes again; B purges (Redis takes it).
			if err := b.PurgeDealer(ctx, 1); err != nil {
				t.Fatalf("B's purge: %v", err)
			}
			if got := body(b, "v2"); got != "v2" {
				t.Errorf("B after its purge: %q, filled before it; want a fill of v2", got)
			}
			waitFor(t, "A to see B's purge", func() bool { return body(a, "v2") == "v2" })

			// A's deferred purge reaches Redis: Redis is moved past A's
			// guesses, both instances agree and L2 is used again.
			a.flushPending(ctx)
			ga, st := a.generation(ctx, 1)
			if !st.l2Usable() {
				t.Error("L2 still unused after the deferred purge reached Redis")
			}
			waitFor(t, "B to adopt A's purge", func() bool { gb, _ := b.generation(ctx, 1); return gb == ga })
			if got := body(b, "v3"); got != "v3" {
				t.Errorf("B after A's deferred purge: %q, want a fill of v3", got)
			}
			if got := body(a, "v4"); got != "v3" {
				t.Errorf("A after B stored v3 in L2: %q, want v3 from L2", got)
			}
		})
	}
}
