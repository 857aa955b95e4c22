package cache

import (
	"context"
	"encoding/binary"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/redis/go-redis/v9"
)

// TestRaisedGenerationReachesEveryInstance: Redis comes back with a
// dealer's generation older than the fleet holds (a restart from an older
// RDB, a failover to a replica that missed the last INCRs). An instance
// that reads the dealer's generation in that window (started then, or
// asked for the dealer for the first time) adopts the old number, under
// which Redis still holds entries the purge retired. The instances that
// know better write their number back (raiseGen), but say nothing: the
// instance on the old number keeps serving the purged entries as HITs,
// well past the purge bound (2 s plus a round trip), until their TTL or
// the dealer's next purge.
func TestRaisedGenerationReachesEveryInstance(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	a := newCache(t, Options{Redis: newClient(t, srv.Addr)})
	waitWithin(t, 10*time.Second, "subscription", func() bool { return a.Stats().PubSubUp })
	const dealer = 5
	pol := Policy{TTL: time.Hour}
	mustGet(t, a, dealer, "/x", pol, newFiller("v1").fill)
	old := mustGen(t, a, dealer)
	if err := a.PurgeDealer(ctx, dealer); err != nil {
		t.Fatal(err)
	}
	if e, _ := mustGet(t, a, dealer, "/x", pol, newFiller("v2").fill); string(e.Body()) != "v2" {
		t.Fatalf("a after the purge: %q", e.Body())
	}
	// Redis loses the last INCR (the v1 entry, written before the purge,
	// is still there, as in the snapshot).
	direct := srv.Client()
	if err := direct.Set(ctx, a.genKey(dealer), strconv.FormatUint(old, 10), 0).Err(); err != nil {
		t.Fatal(err)
	}
	// c reads the dealer in that window.
	c := newCache(t, Options{Redis: newClient(t, srv.Addr)})
	waitWithin(t, 10*time.Second, "c's subscription", func() bool { return c.Stats().PubSubUp })
	e, res := mustGet(t, c, dealer, "/x", pol, newFiller("v2").fill)
	t.Logf("c in the window: %v %q (generation %d)", res, e.Body(), mustGen(t, c, dealer))
	// a resyncs (what its resubscription after the restart does) and
	// writes its generation back.
	a.resync(ctx)
	if g, _ := direct.Get(ctx, a.genKey(dealer)).Uint64(); g != mustGen(t, a, dealer) {
		t.Fatalf("a did not raise Redis: %d, a holds %d", g, mustGen(t, a, dealer))
	}
	time.Sleep(2500 * time.Millisecond) // the purge bound: 2 s plus a round trip
	e, res = mustGet(t, c, dealer, "/x", pol, newFiller("v2").fill)
	if string(e.Body()) != "v2" {
		t.Errorf("c, 2.5 s after Redis was raised back: %v %q (generation %d, Redis and a: %d): the purged entry is still served",
			res, e.Body(), mustGen(t, c, dealer), mustGen(t, a, dealer))
	}
}

// TestHostileGenerationDoesNotWrap: a dealer's generation key in
// Redis holds a number Redis itself cannot INCR (a corrupted or hostile
// value: 2^64-1 parses as a uint64). The purge is refused by Redis
// (ErrPurgeDeferred, as documented), so it applies locally as a guess:
// bumpLocal's Add(1) wraps the generation to 0, and guess 0 means "no
// guess", so the instance uses L2 under generation 0 as if Redis had
// given it. Worse, its next resync reads 2^64-1 again, which is "newer"
// than 0: the instance goes back to the pre-purge generation and serves
// the purged entry again, from Redis, while the purge is still pending.
func TestHostileGenerationDoesNotWrap(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	a := newCache(t, Options{Redis: newClient(t, srv.Addr)})
	const dealer = 6
	direct := srv.Client()
	if err := direct.Set(ctx, a.genKey(dealer), "18446744073709551615", 0).Err(); err != nil {
		t.Fatal(err)
	}
	pol := Policy{TTL: time.Hour}
	mustGet(t, a, dealer, "/x", pol, newFiller("v1").fill)
	err := a.PurgeDealer(ctx, dealer)
	t.Logf("purge: %v; generation now %d, guess %d", err, mustGen(t, a, dealer), a.gens.get(dealer).guess.Load())
	if e, _ := mustGet(t, a, dealer, "/x", pol, newFiller("v2").fill); string(e.Body()) != "v2" {
		t.Fatalf("right after the purge: %q", e.Body())
	}
	a.resync(ctx) // every 2 s while the subscription is not confirmed; at every resubscription
	if e, res := mustGet(t, a, dealer, "/x", pol, newFiller("v3").fill); string(e.Body()) == "v1" {
		t.Errorf("after a resync the purged entry is served again: %v %q (generation %d)", res, e.Body(), mustGen(t, a, dealer))
	}
}

// TestLockReleasedAfterRedisHiccup: a fill holding the
// cross-instance lock ends while its instance has Redis marked down (a
// hiccup: Redis stalled for longer than redis.timeout, then answered
// again; the probe brings it back 0.5-5 s later). Nothing is stored, and
// the deferred release goes through redisCmd, which refuses at once while
// Redis is marked down: the lock stays for the rest of lock_ttl with no
// fill behind it. Every other instance's first miss of the key then waits
// lock_wait for nothing (the holder's EXISTS check never ends it), as
// does the holder itself once Redis is back.
func TestLockReleasedAfterRedisHiccup(t *testing.T) {
	srv := redistest.Start(t)
	const lockWait = 2 * time.Second
	ctx := context.Background()
	opts := func() Options {
		return Options{Redis: newClient(t, srv.Addr), LockWait: lockWait, LockTTL: 10 * time.Second, RedisTimeout: 100 * time.Millisecond}
	}
	a, b := newCache(t, opts()), newCache(t, opts())
	const dealer = 7
	gen, _ := a.generation(ctx, dealer)
	_, _ = b.generation(ctx, dealer)
	pol := Policy{TTL: time.Minute}
	key := []byte("/k")
	release := make(chan struct{})
	aDone := make(chan error, 1)
	go func() {
		_, _, err := a.Get(ctx, dealer, key, pol, func(context.Context) ([]byte, error) {
			<-release
			return []byte("a"), nil
		})
		aDone <- err
	}()
	direct := srv.Client()
	waitFor(t, "a holds the lock", func() bool { return direct.Exists(ctx, a.lockKey(dealer, gen, string(key))).Val() == 1 })
	// The hiccup: Redis stalls for 300 ms; a's next call exceeds its
	// budget and marks Redis down.
	srv.Pause()
	_, _, _ = a.Get(ctx, dealer, []byte("/other"), pol, newFiller("o").fill)
	srv.Resume()
	if a.RedisHealthy() {
		t.Fatal("a did not mark Redis down")
	}
	close(release) // a's fill ends while Redis is marked down in a
	if err := <-aDone; err != nil {
		t.Fatal(err)
	}
	waitWithin(t, 10*time.Second, "a's probe to bring Redis back", a.RedisHealthy)
	t.Logf("lock still held: %v (pttl %v)", direct.Exists(ctx, a.lockKey(dealer, gen, string(key))).Val() == 1,
		direct.PTTL(ctx, a.lockKey(dealer, gen, string(key))).Val())
	start := time.Now()
	e, res := mustGet(t, b, dealer, string(key), pol, newFiller("b").fill)
	took := time.Since(start)
	t.Logf("b: %v %q in %v", res, e.Body(), took)
	if took >= lockWait/2 {
		t.Errorf("b's miss took %v: it waited lock_wait (%v) on a lock nobody holds any more", took, lockWait)
	}
}

// TestCorruptLengthBoundedAllocation: a compressed value whose header
// and gzip trailer claim a plain length of 256 MiB over a few bytes of
// deflate (a corrupted or hostile value; deflate cannot expand more than
// about 1032:1) makes every identity client's L2 read allocate the claimed
// length before the inflation fails. The L2 read runs before the flight,
// so N concurrent requests of the key allocate N x 256 MiB at once.
func TestCorruptLengthBoundedAllocation(t *testing.T) {
	mr, rc := newMiniRedis(t)
	_ = mr
	c := newCache(t, Options{Redis: rc, L1MaxBytes: -1})
	ctx := context.Background()
	const dealer = 8
	c.currentEpoch(ctx)
	gen, _ := c.generation(ctx, dealer)
	// A stored (BTYPE 00) empty final block: a valid deflate stream of 5 bytes.
	member := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 1, 0, 0, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0}
	const claimed = maxWireBody
	binary.LittleEndian.PutUint32(member[len(member)-4:], claimed)
	v := make([]byte, wireHeader)
	v[0], v[1] = wireVersion, wireGzip
	now := time.Now()
	for i, ts := range []time.Time{now, now.Add(time.Hour), now.Add(time.Hour), now.Add(time.Hour)} {
		binary.BigEndian.PutUint64(v[2+8*i:], uint64(ts.UnixNano()))
	}
	binary.BigEndian.PutUint32(v[2+4*8+8:], claimed)
	v = append(v, member...)
	if err := rc.Set(ctx, c.entryKey(dealer, gen, "/x"), v, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	e, res := mustGet(t, c, dealer, "/x", Policy{TTL: time.Minute}, newFiller("ok").fill)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%v %q; allocated %d MiB for a %d-byte value", res, e.Body(), alloc>>20, len(v))
	if alloc > 16<<20 {
		t.Errorf("one read of a %d-byte corrupt value allocated %d MiB", len(v), alloc>>20)
	}
}

// slowLockHook makes the reply of a fill lock's SET NX late, past the
// caller's budget: Redis ran the command, its caller gave up on it.
type slowLockHook struct{ delay time.Duration }

func isLockSet(c redis.Cmder) bool {
	a := c.Args()
	return len(a) == 6 && a[0] == "set" && a[5] == "nx"
}

func (slowLockHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h slowLockHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if isLockSet(cmd) {
			time.Sleep(h.delay)
		}
		return err
	}
}
func (h slowLockHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			if isLockSet(c) {
				time.Sleep(h.delay)
				break
			}
		}
		return err
	}
}

// TestAbandonedLockReleased: a fill lock's SET NX that outlives its
// caller's budget still runs (the batcher sends what it queued), so the
// lock is taken with a token its instance threw away. It is remembered
// and released when the probe finds Redis back; before, it stayed for
// lock_ttl and every instance's first miss of the key waited lock_wait.
func TestAbandonedLockReleased(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	rc := newClient(t, srv.Addr)
	rc.AddHook(slowLockHook{delay: 300 * time.Millisecond})
	a := newCache(t, Options{Redis: rc, LockWait: 2 * time.Second, LockTTL: 20 * time.Second, RedisTimeout: 100 * time.Millisecond})
	const dealer = 7
	gen, _ := a.generation(ctx, dealer)
	if _, _, err := a.Get(ctx, dealer, []byte("/k"), Policy{TTL: time.Minute}, newFiller("a").fill); err != nil {
		t.Fatal(err)
	}
	direct := srv.Client()
	lk := a.lockKey(dealer, gen, "/k")
	waitWithin(t, 2*time.Second, "the abandoned SET NX to run", func() bool { return direct.Exists(ctx, lk).Val() == 1 })
	waitWithin(t, 10*time.Second, "the lock released once Redis is back", func() bool {
		return a.RedisHealthy() && direct.Exists(ctx, lk).Val() == 0
	})
}
