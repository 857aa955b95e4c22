package cache

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/redis/go-redis/v9"
)

// dropPublish swallows every PUBLISH, so that the other instances can learn
// of a purge only by polling.
type dropPublish struct{}

func (dropPublish) DialHook(next redis.DialHook) redis.DialHook { return next }
func (dropPublish) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if strings.EqualFold(cmd.Name(), "publish") {
			return nil
		}
		return next(ctx, cmd)
	}
}
func (dropPublish) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// bodyOf returns the body Get serves for (dealer, key), filling fill on a miss.
func bodyOf(t *testing.T, c *Cache, dealer int64, key, fill string) string {
	t.Helper()
	e, _ := mustGet(t, c, dealer, key, Policy{TTL: time.Hour, StaleIfError: time.Hour}, newFiller(fill).fill)
	return string(e.Body())
}

// TestPurgeAllAcrossInstances: after PurgeAll on one instance no entry
// stored before it (any dealer, L1, bulk tier or Redis) is served by either
// instance: the purging one at once, the other within the propagation
// bound, by the pub/sub message or, while its subscription is unhealthy,
// by polling (GenerationPoll). A new instance does not find the old
// entries in Redis either.
func TestPurgeAllAcrossInstances(t *testing.T) {
	srv := redistest.Start(t)
	const poll = 100 * time.Millisecond
	for _, tc := range []struct {
		name    string
		tiers   Options
		polling bool // the purge message is lost and B's subscription is down
	}{
		{"pub/sub", Options{}, false},
		{"pub/sub, bulk tier", Options{L1MaxBytes: 40 << 20, L1HotBytes: 256 << 10}, false},
		{"polling", Options{}, true},
		{"polling, bulk tier", Options{L1MaxBytes: 40 << 20, L1HotBytes: 256 << 10}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			prefix := "pa" + strconv.Itoa(int(time.Now().UnixNano()%1e9))
			mk := func(drop bool) *Cache {
				rc := newClient(t, srv.Addr)
				if drop {
					rc.AddHook(dropPublish{})
				}
				o := tc.tiers
				o.Redis, o.Prefix, o.GenerationPoll = rc, prefix, poll
				return newCache(t, o)
			}
			a, b := mk(tc.polling), mk(false)
			waitFor(t, "subscriptions", func() bool { return a.Stats().PubSubUp && b.Stats().PubSubUp })
			for d := int64(1); d <= 3; d++ {
				if got := bodyOf(t, a, d, "/k", "old"); got != "old" {
					t.Fatalf("a, dealer %d: %q", d, got)
				}
				if got := bodyOf(t, b, d, "/k", "b-filled"); got != "old" {
					t.Fatalf("b, dealer %d: %q, want old from Redis", d, got)
				}
			}
			if tc.polling {
				b.setPubSub(false, errors.New("test: subscription lost"))
			}

			start := time.Now()
			if err := a.PurgeAll(ctx); err != nil {
				t.Fatalf("PurgeAll: %v", err)
			}
			if st := a.Stats(); st.PurgesAll != 1 || st.L1Entries != 0 || st.BulkEntries != 0 {
				t.Errorf("a after PurgeAll: PurgesAll %d, L1 entries %d, bulk entries %d; want 1, 0, 0", st.PurgesAll, st.L1Entries, st.BulkEntries)
			}
			for d := int64(1); d <= 3; d++ {
				if got := bodyOf(t, a, d, "/k", "new"); got != "new" {
					t.Errorf("a, dealer %d after its PurgeAll: %q, want a fill of new", d, got)
				}
			}
			waitFor(t, "b to drop the old entries", func() bool { return bodyOf(t, b, 1, "/k", "new") == "new" })
			if took, bound := time.Since(start), poll+time.Second; took > bound {
				t.Errorf("b saw the purge after %v, bound %v", took, bound)
			}
			for d := int64(2); d <= 3; d++ {
				if got := bodyOf(t, b, d, "/k", "b-new"); got == "old" {
					t.Errorf("b, dealer %d: still the old entry", d)
				}
			}
			c := mk(false)
			if got := bodyOf(t, c, 3, "/k", "c-new"); got == "old" {
				t.Errorf("a new instance found the old entry in Redis")
			}
		})
	}
}

// TestPurgeAllWhileRedisDown: a PurgeAll while Redis cannot be reached
// takes effect here at once (ErrPurgeDeferred), uses no L2 under the
// guessed epoch, and reaches Redis, and from there the other instance, once
// Redis is back.
func TestPurgeAllWhileRedisDown(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	mk := func() *Cache {
		return newCache(t, Options{Redis: newClient(t, srv.Addr), RedisTimeout: 100 * time.Millisecond, GenerationPoll: 100 * time.Millisecond})
	}
	a, b := mk(), mk()
	waitFor(t, "subscriptions", func() bool { return a.Stats().PubSubUp && b.Stats().PubSubUp })
	if got := bodyOf(t, a, 1, "/k", "old"); got != "old" {
		t.Fatalf("a: %q", got)
	}
	if got := bodyOf(t, b, 1, "/k", "b"); got != "old" {
		t.Fatalf("b: %q, want old from Redis", got)
	}

	srv.Stop()
	waitWithin(t, 5*time.Second, "redis marked down", func() bool {
		_, _, _ = a.Get(ctx, 9, []byte("/probe"), Policy{TTL: time.Hour}, newFiller("p").fill)
		return !a.RedisHealthy()
	})
	if err := a.PurgeAll(ctx); !errors.Is(err, ErrPurgeDeferred) {
		t.Fatalf("PurgeAll with Redis down: %v, want ErrPurgeDeferred", err)
	}
	if got := bodyOf(t, a, 1, "/k", "new"); got != "new" {
		t.Errorf("a at once after its deferred PurgeAll: %q, want new", got)
	}
	if a.epoch.l2Usable() {
		t.Error("L2 usable under an epoch Redis did not give")
	}

	srv.Restart()
	waitWithin(t, 10*time.Second, "the deferred purge to reach Redis", func() bool {
		return a.RedisHealthy() && !a.pendingAll.Load() && a.epoch.l2Usable()
	})
	rc := newClient(t, srv.Addr)
	ep, err := rc.Get(ctx, a.epochKey()).Uint64()
	if err != nil || ep == 0 || ep != a.epoch.gen.Load() {
		t.Fatalf("epoch in Redis %d (%v), a holds %d", ep, err, a.epoch.gen.Load())
	}
	// The epoch is stored before dropAll empties L1: wait for both.
	waitWithin(t, 10*time.Second, "b to adopt the epoch", func() bool {
		return b.epoch.gen.Load() == ep && b.l1.lookupString(1, "/k") == nil
	})
	if got := bodyOf(t, b, 1, "/k", "b-new"); got == "old" {
		t.Error("b still serves the entry stored before the deferred PurgeAll")
	}
}

// TestPurgeMessages: what each form of message on the purge channel does.
// "all:<epoch>" moves the epoch and no dealer's generation; the id "all"
// does not parse as a dealer id (strconv.ParseInt, as every release's
// parser does), so a release without PurgeAll ignores the message instead
// of reading it as a dealer's purge. Malformed messages change nothing.
func TestPurgeMessages(t *testing.T) {
	if _, err := strconv.ParseInt(purgeAllID, 10, 64); err == nil {
		t.Fatalf("%q parses as a dealer id: a release without PurgeAll would take it for a dealer's purge", purgeAllID)
	}
	for _, tc := range []struct {
		name           string
		payload        string
		wantEp, wantG1 uint64
		wantDrop       bool
	}{
		{"purge all", "all:5", 5, 100, true},
		{"dealer purge, the old format", "1:101", 0, 101, true},
		{"older epoch", "all:0", 0, 100, false},
		{"all without a number", "all:", 0, 100, false},
		{"all, not a number", "all:x", 0, 100, false},
		{"negative epoch", "all:-1", 0, 100, false},
		{"no colon", "all", 0, 100, false},
		{"empty id", ":5", 0, 100, false},
		{"other dealer", "2:500", 0, 100, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCache(t, Options{})
			st := c.gens.get(1)
			st.gen.Store(100)
			st.verified.Store(true)
			mustGet(t, c, 1, "/k", Policy{TTL: time.Hour}, newFiller("v").fill)
			mustGet(t, c, 2, "/k", Policy{TTL: time.Hour}, newFiller("v").fill)
			c.handlePurgeMessage(tc.payload)
			if got := c.epoch.gen.Load(); got != tc.wantEp {
				t.Errorf("epoch %d, want %d", got, tc.wantEp)
			}
			if got := st.gen.Load(); got != tc.wantG1 {
				t.Errorf("dealer 1's generation %d, want %d", got, tc.wantG1)
			}
			if dropped := c.l1.lookupString(1, "/k") == nil; dropped != tc.wantDrop {
				t.Errorf("dealer 1's L1 entry dropped: %v, want %v", dropped, tc.wantDrop)
			}
		})
	}
}

// TestPurgeAllDuringFlight: a fill that started before PurgeAll is neither
// joined by a request made after PurgeAll returned (flights are keyed by
// the epoch too) nor stored where a later request finds it: its L1 insert
// is refused (the epoch is checked under the shard lock) and its Redis
// write goes to a key of the old epoch.
func TestPurgeAllDuringFlight(t *testing.T) {
	srv := redistest.Start(t)
	c := newCache(t, Options{Redis: newClient(t, srv.Addr)})
	pol := Policy{TTL: time.Hour}
	mustGet(t, c, 1, "/warm", pol, newFiller("w").fill)

	started, release := make(chan struct{}), make(chan struct{})
	old := func(context.Context) ([]byte, error) {
		close(started)
		<-release
		return []byte("pre-purge"), nil
	}
	oldDone := make(chan struct{})
	go func() {
		defer close(oldDone)
		_, _, _ = c.Get(context.Background(), 1, []byte("/k"), pol, old)
	}()
	<-started
	if err := c.PurgeAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Bounded: a request that joined the old flight would wait for it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	e, _, err := c.Get(ctx, 1, []byte("/k"), pol, newFiller("post-purge").fill)
	cancel()
	close(release)
	if err != nil {
		t.Fatalf("a request made after PurgeAll returned: %v (it joined the fill started before)", err)
	}
	if got := string(e.Body()); got != "post-purge" {
		t.Fatalf("a request made after PurgeAll returned got %q", got)
	}
	<-oldDone
	for name, cc := range map[string]*Cache{"this instance": c, "another instance": newCache(t, Options{Redis: newClient(t, srv.Addr)})} {
		if e, res := mustGet(t, cc, 1, "/k", pol, newFiller("again").fill); string(e.Body()) != "post-purge" {
			t.Errorf("%s after the old fill ended: %v %q, want post-purge", name, res, e.Body())
		}
	}
}

// TestPurgeAllEpochKeyLost: Redis may lose the epoch key while it keeps the
// entries a purge of everything retired (an allkeys-* maxmemory policy
// evicts it as any key, and nothing reads it while the instances'
// subscriptions are up). An instance that starts then must not reach those
// entries: the missing key is seeded above every epoch given before.
func TestPurgeAllEpochKeyLost(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	pol := Policy{TTL: time.Hour, StaleIfError: 2 * time.Hour}
	a := newCache(t, Options{Redis: newClient(t, srv.Addr)})
	waitFor(t, "a's subscription", func() bool { return a.Stats().PubSubUp })
	mustGet(t, a, 7, "/page", pol, func(context.Context) ([]byte, error) { return []byte("before the purge"), nil })
	retired := a.entryKey(7, a.gens.get(7).gen.Load(), "/page")
	if err := a.PurgeAll(ctx); err != nil {
		t.Fatal(err)
	}
	rdb := newClient(t, srv.Addr)
	if err := rdb.Del(ctx, a.epochKey()).Err(); err != nil { // what an eviction does
		t.Fatal(err)
	}
	if rdb.Exists(ctx, retired).Val() != 1 {
		t.Fatalf("the retired entry %q is not in Redis: the test proves nothing", retired)
	}
	c := newCache(t, Options{Redis: newClient(t, srv.Addr)}) // a deploy, a scale-out
	e, res := mustGet(t, c, 7, "/page", pol, func(context.Context) ([]byte, error) { return []byte("after the purge"), nil })
	if string(e.Body()) != "after the purge" || res != Miss {
		t.Fatalf("a new instance after the epoch key was lost: %v %q (epoch %d, a holds %d); want a miss filled after the purge",
			res, e.Body(), c.epoch.gen.Load(), a.epoch.gen.Load())
	}
	if c.epoch.gen.Load() <= a.epoch.gen.Load() {
		t.Fatalf("the epoch seeded after the loss (%d) is not above the one the purge gave (%d)", c.epoch.gen.Load(), a.epoch.gen.Load())
	}
	// a purge of everything by either instance reaches both.
	if err := c.PurgeAll(ctx); err != nil {
		t.Fatal(err)
	}
	want := c.epoch.gen.Load()
	waitWithin(t, 10*time.Second, "a to adopt c's epoch", func() bool { return a.epoch.gen.Load() == want })
}
