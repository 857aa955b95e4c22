package cache

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
)

// TestRedisBudgetCount checks the per-dealer count of new Redis bytes:
// what fits is counted until the end of its expiry's minute, what would
// pass the limit is refused and not counted, dealers are counted apart,
// and a dealer whose entries have all expired is forgotten.
func TestRedisBudgetCount(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC) // on a minute
	type step struct {
		at      time.Duration // since t0
		dealer  int64
		size    int64
		ttl     time.Duration // Redis keeps the entry this long after at
		ok      bool
		heldNow int64 // the dealer's count after the step
	}
	for _, c := range []struct {
		name  string
		limit int64
		steps []step
	}{
		{"no budget", 0, []step{
			{0, 1, 1 << 40, time.Hour, true, 0},
		}},
		{"fits, then refused, others apart", 100, []step{
			{0, 1, 60, time.Minute, true, 60},
			{0, 1, 40, time.Minute, true, 100},
			{0, 1, 1, time.Minute, false, 100},
			{0, 2, 100, time.Minute, true, 100},
		}},
		{"an expired entry frees its bytes at the end of its minute", 100, []step{
			{0, 1, 60, 30 * time.Second, true, 60}, // counted until 1 min
			{10 * time.Second, 1, 60, 5 * time.Minute, false, 60},
			{59 * time.Second, 1, 60, 5 * time.Minute, false, 60},
			{60 * time.Second, 1, 60, 5 * time.Minute, true, 60}, // the first left; this one is counted until 6 min
			{5*time.Minute + 59*time.Second, 1, 41, time.Minute, false, 60},
			{6 * time.Minute, 1, 100, time.Minute, true, 100},
		}},
		{"a long TTL is counted for 63 minutes", 100, []step{
			{0, 1, 100, 24 * time.Hour, true, 100},
			{62 * time.Minute, 1, 1, time.Minute, false, 100},
			{63 * time.Minute, 1, 100, time.Minute, true, 100},
		}},
		{"a gap longer than the wheel clears the count", 100, []step{
			{0, 1, 70, 10 * time.Minute, true, 70},
			{3 * time.Hour, 1, 100, time.Minute, true, 100},
		}},
		{"an entry larger than the budget is refused", 100, []step{
			{0, 1, 101, time.Minute, false, 0},
			{0, 1, 100, time.Minute, true, 100},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b redisBudget
			b.limit.Store(c.limit)
			for i, s := range c.steps {
				now := t0.Add(s.at)
				ok, _, _, _ := b.admit(s.dealer, s.size, now, now.Add(s.ttl))
				if ok != s.ok {
					t.Fatalf("step %d: admit %d bytes of dealer %d at %v: %v, want %v", i, s.size, s.dealer, s.at, ok, s.ok)
				}
				if got := b.held(s.dealer, now); got != s.heldNow {
					t.Fatalf("step %d: dealer %d holds %d bytes, want %d", i, s.dealer, got, s.heldNow)
				}
			}
		})
	}
	t.Run("a refund takes a failed write back", func(t *testing.T) {
		var b redisBudget
		b.limit.Store(100)
		_, _, _, ch := b.admit(1, 70, t0, t0.Add(time.Minute))
		if ok, _, _, _ := b.admit(1, 70, t0, t0.Add(time.Minute)); ok {
			t.Fatal("140 bytes admitted under a budget of 100")
		}
		b.refund(ch)
		if got := b.held(1, t0); got != 0 {
			t.Fatalf("after the refund dealer 1 holds %d bytes, want 0", got)
		}
		if ok, _, _, _ := b.admit(1, 70, t0, t0.Add(time.Minute)); !ok {
			t.Fatal("70 bytes refused after the refund of the first 70")
		}
		// A refund whose bucket ended meanwhile takes nothing off the
		// bucket that reuses its slot.
		later := t0.Add(budgetBuckets * time.Duration(budgetSlot))
		_, _, _, ch2 := b.admit(1, 30, later, later.Add(time.Minute))
		b.refund(ch)
		if got := b.held(1, later); got != 30 {
			t.Fatalf("a stale refund changed the count: %d bytes, want 30", got)
		}
		b.refund(ch2)
		b.refund(budgetCharge{}) // nothing counted: nothing to take back
		if got := b.held(1, later); got != 0 {
			t.Fatalf("dealer 1 holds %d bytes, want 0", got)
		}
	})
	t.Run("idle dealers are forgotten", func(t *testing.T) {
		var b redisBudget
		b.limit.Store(1 << 20)
		for d := int64(1); d <= 1000; d++ {
			b.admit(d, 10, t0, t0.Add(time.Minute))
		}
		later := t0.Add(20 * time.Minute)
		b.admit(5000, 10, later, later.Add(time.Minute))
		if n := len(b.dealers); n != 1 {
			t.Fatalf("%d dealers counted after their entries expired, want 1", n)
		}
	})
	t.Run("one warning per dealer per 10 minutes", func(t *testing.T) {
		var b redisBudget
		b.limit.Store(10)
		warns := 0
		for s := 0; s < 25*60; s += 5 {
			now := t0.Add(time.Duration(s) * time.Second)
			if _, _, warn, _ := b.admit(1, 11, now, now.Add(time.Minute)); warn {
				warns++
			}
		}
		if warns != 3 {
			t.Fatalf("%d warnings in 25 minutes over the budget, want 3", warns)
		}
	})
}

// TestRedisDealerBudget floods one dealer's distinct keys through a cache
// on a real redis-server with a budget of about four entries: every
// request is answered, the dealer's entries in Redis stay within the
// budget, the rest are counted and logged once, another dealer is not
// touched, a rewrite of an entry Redis holds is never refused, and the
// bytes come back once the entries' Redis TTL has passed. Without the
// budget every entry is in Redis (the control).
func TestRedisDealerBudget(t *testing.T) {
	const (
		bodySize = 4 << 10
		budget   = 20 << 10
		keys     = 12
	)
	pol := Policy{TTL: time.Minute, StaleWhileRevalidate: time.Minute, StaleIfError: time.Hour}
	body := func() []byte { // incompressible, so each entry is about bodySize in Redis
		b := make([]byte, bodySize)
		_, _ = rand.Read(b)
		return b
	}
	for _, limit := range []int64{0, budget} {
		t.Run(fmt.Sprintf("budget %d", limit), func(t *testing.T) {
			srv := redistest.Start(t)
			clock := newFakeClock()
			logs := &logRecorder{}
			a := newCache(t, Options{
				Now: clock.Now, RedisTimeout: 5 * time.Second, Redis: newClient(t, srv.Addr),
				RedisDealerBudget: limit, Logger: slogNew(logs),
			})
			ctx := context.Background()
			fill := func(context.Context) ([]byte, error) { return body(), nil }
			for i := 0; i < keys; i++ {
				for _, dealer := range []int64{1, 2} {
					e, res := mustGet(t, a, dealer, fmt.Sprintf("/k%d", i), pol, fill)
					if res != Miss || len(e.Body()) != bodySize {
						t.Fatalf("dealer %d key %d: %v, %d bytes", dealer, i, res, len(e.Body()))
					}
				}
			}
			rdb := newClient(t, srv.Addr)
			inRedis := func(dealer int64) (n int, bytes int64) {
				t.Helper()
				ks, err := rdb.Keys(ctx, fmt.Sprintf("*{d%d}*", dealer)).Result()
				if err != nil {
					t.Fatal(err)
				}
				for _, k := range ks {
					if strings.Contains(k, ":gen") || strings.Contains(k, ":lock:") {
						continue
					}
					l, err := rdb.StrLen(ctx, k).Result()
					if err != nil {
						t.Fatal(err)
					}
					n++
					bytes += int64(len(k)) + l
				}
				return n, bytes
			}
			n1, b1 := inRedis(1)
			n2, _ := inRedis(2)
			t.Logf("budget %d: dealer 1 has %d entries (%d bytes) in Redis, dealer 2 %d; %d writes refused", limit, n1, b1, n2, a.Stats().RedisBudgetSkips)
			if limit == 0 {
				if n1 != keys || n2 != keys || a.Stats().RedisBudgetSkips != 0 {
					t.Fatalf("without a budget: %d and %d entries in Redis, %d refused; want %d, %d, 0", n1, n2, a.Stats().RedisBudgetSkips, keys, keys)
				}
				return
			}
			// Two dealers of the same size: each is held to the budget
			// alone (both have 4 entries: the other's do not count).
			if b1 > limit || n1 < 3 || n2 != n1 {
				t.Fatalf("dealer 1: %d entries, %d bytes in Redis (budget %d); dealer 2: %d entries", n1, b1, limit, n2)
			}
			if got, want := a.Stats().RedisBudgetSkips, uint64(2*(keys-n1)); got != want {
				t.Fatalf("RedisBudgetSkips %d, want %d", got, want)
			}
			if got := logs.count("over its Redis byte budget"); got != 2 {
				t.Fatalf("%d log lines about the budget, want 2 (one per dealer)", got)
			}
			// A fact stored with Put (a remembered 404) is written over the
			// budget too (here one byte, so nothing new fits), and counts
			// in nothing.
			a.SetRedisDealerBudget(1)
			a.Put(ctx, 1, []byte("/fact"), pol, a.StampNow(ctx, 1), []byte("not found"))
			if ks, err := rdb.Keys(ctx, "*{d1}*/fact").Result(); err != nil || len(ks) != 1 || a.Stats().RedisBudgetSkips != uint64(2*(keys-n1)) {
				t.Fatalf("a fact over the budget: in Redis %q (%v), %d refused", ks, err, a.Stats().RedisBudgetSkips)
			}
			a.SetRedisDealerBudget(limit)
			// A refresh of an entry Redis holds is written, over the budget:
			// another instance (no L1) finds the new body.
			clock.Advance(pol.TTL + time.Second)
			newer := body() // does not fit beside the dealer's entries: a new entry of its size would be refused
			if _, res := mustGet(t, a, 1, "/k0", pol, func(context.Context) ([]byte, error) { return newer, nil }); res != Stale {
				t.Fatalf("stale hit: %v", res)
			}
			waitRefreshes(t, a)
			b := newCache(t, Options{Now: clock.Now, RedisTimeout: 5 * time.Second, Redis: newClient(t, srv.Addr), L1MaxBytes: -1})
			e, res := mustGet(t, b, 1, "/k0", pol, func(context.Context) ([]byte, error) { return []byte("b's fill"), nil })
			if res != Hit || string(e.Body()) != string(newer) {
				t.Fatalf("another instance: %v, %d bytes, want the refreshed entry from Redis", res, len(e.Body()))
			}
			// Once the entries' Redis TTL (ttl + stale_while_revalidate,
			// counted to the end of its minute) has passed on the
			// instance's clock, a new entry of the dealer fits again.
			skips := a.Stats().RedisBudgetSkips
			mustGet(t, a, 1, "/late", pol, fill)
			if a.Stats().RedisBudgetSkips != skips+1 {
				t.Fatal("a new entry was written while the budget was spent")
			}
			clock.Advance(2 * time.Minute)
			mustGet(t, a, 1, "/later", pol, fill)
			if a.Stats().RedisBudgetSkips != skips+1 {
				t.Fatal("a new entry was refused after the dealer's entries had expired")
			}
			if ks, err := rdb.Keys(ctx, "*{d1}*/later").Result(); err != nil || len(ks) != 1 {
				t.Fatalf("the entry written after the budget freed up: %q %v", ks, err)
			}
		})
	}
}

// held returns dealer's count now.
func (b *redisBudget) held(dealer int64, now time.Time) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	d := b.dealers[dealer]
	if d == nil {
		return 0
	}
	d.sweep(now.UnixNano() / budgetSlot)
	return d.total
}

// TestRedisDealerBudgetCountsWritesMade: the budget counts the bytes a
// dealer's new entries hold in Redis, so fills whose write was not made
// count nothing: fills while Redis is marked down (no write is sent), and
// writes Redis refuses (here: out of memory under noeviction). Either way,
// once Redis takes writes again the dealer's first new entry is written.
func TestRedisDealerBudgetCountsWritesMade(t *testing.T) {
	const bodySize = 4 << 10 // 10 of them are twice the budget
	pol := Policy{TTL: time.Minute, StaleWhileRevalidate: time.Minute, StaleIfError: time.Hour}
	fill := func(context.Context) ([]byte, error) { // incompressible
		b := make([]byte, bodySize)
		_, _ = rand.Read(b)
		return b, nil
	}
	ctx := context.Background()
	for _, outage := range []string{"redis down", "writes refused"} {
		t.Run(outage, func(t *testing.T) {
			srv := redistest.Start(t)
			rdb := newClient(t, srv.Addr)
			a := newCache(t, Options{RedisTimeout: 500 * time.Millisecond, Redis: newClient(t, srv.Addr), RedisDealerBudget: 20 << 10})
			mustGet(t, a, 1, "/before", pol, fill) // the generation read, one entry written
			switch outage {
			case "redis down":
				srv.Stop()
				waitFor(t, "redis marked down", func() bool {
					_, _, _ = a.Get(ctx, 1, []byte("/probe-down"), pol, fill)
					return !a.RedisHealthy()
				})
			case "writes refused":
				if err := rdb.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err(); err != nil {
					t.Fatal(err)
				}
				if err := rdb.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
					t.Fatal(err)
				}
			}
			errs := a.Stats().L2Errors
			for i := 0; i < 10; i++ {
				mustGet(t, a, 1, fmt.Sprintf("/outage%d", i), pol, fill)
			}
			switch outage {
			case "redis down":
				srv.Restart()
				rdb = newClient(t, srv.Addr)
				waitFor(t, "redis marked up", a.RedisHealthy)
			case "writes refused":
				if a.Stats().L2Errors == errs || !a.RedisHealthy() {
					t.Fatalf("the refused writes: %d errors, redis healthy %v; want errors on a healthy Redis", a.Stats().L2Errors-errs, a.RedisHealthy())
				}
				if err := rdb.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
					t.Fatal(err)
				}
			}
			if n := a.Stats().RedisBudgetSkips; n != 0 {
				t.Fatalf("%d writes refused by the budget; none was made", n)
			}
			mustGet(t, a, 1, "/after", pol, fill)
			if ks, _ := rdb.Keys(ctx, "*{d1}*/after").Result(); len(ks) != 1 || a.Stats().RedisBudgetSkips != 0 {
				t.Fatalf("the first new entry after the outage: in Redis %q, %d budget refusals; want it written", ks, a.Stats().RedisBudgetSkips)
			}
		})
	}
}

// TestNoCompressionWhileRedisDown: with Redis marked down a plain client's
// fill writes nothing to Redis, so it compresses nothing for it either
// ("Redis down: L1 and the upstream, no added latency").
func TestNoCompressionWhileRedisDown(t *testing.T) {
	srv := redistest.Start(t)
	a := newCache(t, Options{RedisTimeout: 200 * time.Millisecond, Redis: newClient(t, srv.Addr)})
	pol := Policy{TTL: time.Minute, StaleWhileRevalidate: time.Minute, StaleIfError: time.Hour}
	body := []byte(strings.Repeat("compressible listing page ", 400))
	fill := func(context.Context) ([]byte, error) { return body, nil }
	mustGet(t, a, 1, "/before", pol, fill)
	srv.Stop()
	waitFor(t, "redis marked down", func() bool {
		_, _, _ = a.Get(context.Background(), 1, []byte("/probe-down"), pol, fill)
		return !a.RedisHealthy()
	})
	e, _ := mustGet(t, a, 1, "/outage", pol, fill)
	if g := e.gz.Load(); g != nil {
		t.Fatalf("a plain client's fill while Redis is down compressed its body (%d -> %d bytes) for a write that is never sent", len(body), len(g.body))
	}
}
