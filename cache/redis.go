package cache

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/dealer-edge/dealer-edge/internal/redisauth"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"
)

// genState is the cached generation of one dealer.
type genState struct {
	gen      atomic.Uint64
	verified atomic.Bool // read from Redis at least once
	// remote is the newest generation Redis has given: read, published or
	// returned by a purge's INCR.
	remote atomic.Uint64
	// guess is, while a purge made here has not reached Redis (refused with
	// an error reply, or Redis down: ErrPurgeDeferred), the generation this
	// instance moved on to alone; 0 otherwise. Redis may later hand that
	// very number to another instance's purge, so L2 is not used under it
	// (what this instance wrote there would become current again for every
	// instance after that purge), and each newer generation Redis gives
	// drops the dealer's L1 even when it is not above the guess.
	guess atomic.Uint64
}

// l2Usable reports whether L2 may be read and written under the dealer's
// generation: one Redis confirmed, not a guess of this instance.
func (st *genState) l2Usable() bool { return st.verified.Load() && st.guess.Load() == 0 }

// generations maps dealers to their generation state; it only grows (one
// small struct per dealer ever seen).
type generations struct {
	mu sync.RWMutex
	m  map[int64]*genState
}

func (g *generations) get(dealer int64) *genState {
	g.mu.RLock()
	st := g.m[dealer]
	g.mu.RUnlock()
	if st != nil {
		return st
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if st = g.m[dealer]; st == nil {
		st = &genState{}
		g.m[dealer] = st
	}
	return st
}

func (g *generations) lookup(dealer int64) *genState {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.m[dealer]
}

func (g *generations) dealers() []int64 {
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make([]int64, 0, len(g.m))
	for d := range g.m {
		out = append(out, d)
	}
	return out
}

// Keys. Every key of a dealer carries the hash tag {d<id>}.

func (c *Cache) dealerPrefix(b []byte, dealer int64) []byte {
	return appendDealerTag(append(b, c.prefix...), dealer)
}

// appendDealerTag appends ":{d<id>}:" to b, a prefix.
func appendDealerTag(b []byte, dealer int64) []byte {
	b = append(b, ":{d"...)
	b = strconv.AppendInt(b, dealer, 10)
	return append(b, '}', ':')
}

// genKey is the dealer's generation key, under the purge prefix: shared by
// instances whose entry prefixes differ (Options.PurgePrefix).
func (c *Cache) genKey(dealer int64) string {
	b := append(make([]byte, 0, len(c.purgePrefix)+32), c.purgePrefix...)
	return string(append(appendDealerTag(b, dealer), "gen"...))
}

// epochKey is the global purge epoch's key, under the purge prefix. It has
// no dealer hash tag: in a Redis Cluster it lives in a slot of its own,
// which suits the single-key commands (SETNX, GET, INCR) it is used with.
func (c *Cache) epochKey() string { return c.purgePrefix + ":epoch" }

// entryKeyAt is the key of an entry under the dealer's generation gen and
// the purge epoch ep.
func (c *Cache) entryKeyAt(dealer int64, gen, ep uint64, key string) string {
	return c.keyWith('g', dealer, gen, ep, key)
}

func (c *Cache) lockKeyAt(dealer int64, gen, ep uint64, key string) string {
	return c.keyWith('l', dealer, gen, ep, key)
}

// keyWith builds an entry or lock key. Under epoch 0 (the epoch not read
// from Redis yet, or a Redis without one: an instance without Redis, or
// one of a release before the epoch was seeded) the key has no epoch, as
// the keys of the releases without the epoch; from epoch 1 on it carries
// "e<epoch>" after the generation, which no key without it can be.
func (c *Cache) keyWith(kind byte, dealer int64, gen, ep uint64, key string) string {
	b := c.dealerPrefix(make([]byte, 0, len(c.prefix)+80+len(key)), dealer)
	b = append(b, kind)
	b = strconv.AppendUint(b, gen, 10)
	if ep != 0 {
		b = append(b, 'e')
		b = strconv.AppendUint(b, ep, 10)
	}
	b = append(b, ':')
	b = append(b, key...)
	// b is this key's storage alone and is never written again: the
	// string views it instead of copying it (one allocation a key, not two).
	return unsafe.String(unsafe.SliceData(b), len(b))
}

var errRedisDown = errors.New("cache: redis marked down")

// maxQueuedCommands bounds the commands the batcher holds (queued or in
// flight): while Redis is slow, commands beyond it fail at once (a miss)
// instead of growing a queue. At 50ms per batch it is far above what a
// healthy Redis ever holds.
const maxQueuedCommands = 8192

// redisDo runs f under the hard RedisTimeout budget: f runs in its own
// goroutine and the caller stops waiting when the budget is spent, whatever
// the client's own timeouts. While Redis is marked down it returns at once.
// A failure that says Redis is unreachable marks it down.
func (c *Cache) redisDo(ctx context.Context, f func(ctx context.Context) error) error {
	if !c.redisUp.Load() {
		return errRedisDown
	}
	return c.redisCall(ctx, c.redisTimeout, f, true)
}

func (c *Cache) redisCall(parent context.Context, budget time.Duration, f func(ctx context.Context) error, health bool) error {
	if err := parent.Err(); err != nil {
		// The caller gave up before the call (a refresh Close cancelled
		// whose fill still had its body): nothing is sent. Started, f
		// ran on its own goroutine after the caller had returned, and
		// so after Close had waited for the refresh: its command went
		// to the Redis client after Close returned
		// (TestCloseWaitsForRefreshes, NoAutoPipeline=true).
		return err
	}
	ctx, cancel := context.WithTimeout(parent, budget)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f(ctx) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = fmt.Errorf("cache: redis call exceeded %v: %w", budget, ctx.Err())
	}
	return c.redisResult(parent, err, health)
}

// redisCmd runs one command of the hot path (entry GET and SET, lock SET NX)
// under the RedisTimeout budget. Pipelined (the default), the command joins
// the commands of every other request waiting to be sent (see batcher), and
// the caller waits for its batch's replies or for the budget, whichever
// comes first: a command abandoned by its caller still runs in its batch
// (its result is dropped), and a dead or stalled Redis costs each caller at
// most the budget, then marks Redis down so that no further command is
// queued. Unpipelined (Options.NoAutoPipeline) it is redisDo.
func (c *Cache) redisCmd(ctx context.Context, cmd redis.Cmder) (err error) {
	if !c.redisUp.Load() {
		return errRedisDown
	}
	if c.tracer != nil {
		var span trace.Span
		if ctx, span = c.redisSpan(ctx, cmd.Name()); span != nil {
			span.SetAttributes(attrKeyKind.String(keyKind(cmd)))
			defer func() { endSpan(span, err) }()
		}
	}
	if c.batch == nil {
		return c.redisCall(ctx, c.redisTimeout, func(ctx context.Context) error {
			return c.rdb.Process(ctx, cmd)
		}, true)
	}
	err = c.batch.do(ctx, cmd, c.redisTimeout)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		err = fmt.Errorf("cache: redis call exceeded %v: %w", c.redisTimeout, err)
	}
	return c.redisResult(ctx, err, true)
}

// redisResult counts a failed call and marks Redis down when the failure
// says it is unreachable.
func (c *Cache) redisResult(parent context.Context, err error, health bool) error {
	if err == nil || errors.Is(err, redis.Nil) || redis.HasErrorPrefix(err, "NOSCRIPT") || redis.HasErrorPrefix(err, "TRYAGAIN") {
		return err // NOSCRIPT: runScript sends the script itself; TRYAGAIN: l2Set stores the entry key alone
	}
	if parent.Err() != nil {
		// The caller gave up; that says nothing about Redis.
		return err
	}
	if c.ctx.Err() != nil && errors.Is(err, redis.ErrClosed) {
		// After Close: a request's fill still running (Close waits for
		// the refreshes it cancels, not for a fill the drain outlived)
		// meets the Redis client its owner closed next,
		// which says nothing about Redis either. Marked down, every
		// shutdown with refreshes under way logged a Redis outage after
		// its drain (TestRefreshEndingAfterCloseReportsNoOutage). Other
		// errors still mark it down: Close's own lock releases on a
		// Redis that stopped answering then cost one budget, not one
		// each.
		return err
	}
	c.st.l2Errors.Add(1)
	if health && unreachable(err) {
		c.markDown(err)
	}
	return err
}

// unreachable tells errors that mean Redis cannot serve (network, timeout,
// a node loading or a cluster down, the edge's credentials or its ACL user
// refused) from errors it replied with.
func unreachable(err error) bool {
	if errors.Is(err, errBatchFull) {
		return false // Redis is slow, not gone: this call is a miss
	}
	if redisauth.Refused(err) {
		// WRONGPASS, NOAUTH: a rotated password or a changed ACL user
		// fails every connection opened from now on, and NOPERM every
		// call of a command the user lost. Either is an outage until the
		// probe finds the credentials accepted again.
		return true
	}
	var re redis.Error
	if errors.As(err, &re) {
		msg := re.Error()
		for _, p := range []string{"LOADING", "CLUSTERDOWN", "MASTERDOWN", "READONLY"} {
			if strings.HasPrefix(msg, p) {
				return true
			}
		}
		return false
	}
	return true
}

func (c *Cache) markDown(err error) {
	if c.redisUp.CompareAndSwap(true, false) {
		c.st.redisDownEvents.Add(1)
		cause := redisauth.Cause(err)
		c.downCause.Store(&cause)
		c.log.Warn("cache: redis unavailable, serving from L1 and fill", "cause", cause, "err", err)
		select {
		case c.downCh <- struct{}{}:
		default:
		}
	}
}

// probeLoop brings Redis back: after it is marked down, it pings with an
// exponential backoff (500ms..5s) and marks it up on the first success, then
// sends deferred purges and re-reads every known generation.
//
// A probe refused for a reason the operator must act on (the credentials
// or the ACL user: redisauth.Cause) other than the last one logged for
// this outage gets a line of its own: an outage that began with a dropped
// connection (a password rotation's CLIENT KILL, a Redis restart) logged
// "unavailable", and every probe after it was refused with WRONGPASS
// without a word.
func (c *Cache) probeLoop() {
	defer c.wg.Done()
	backoff := backoffMin
	var upSince time.Time
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-c.downCh:
		}
		if time.Since(upSince) > time.Minute {
			backoff = backoffMin // it was stable: start over
		}
		logged := redisauth.CauseUnavailable
		if p := c.downCause.Load(); p != nil {
			logged = *p
		}
		for !c.redisUp.Load() {
			t := time.NewTimer(backoff)
			select {
			case <-c.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			backoff = min(2*backoff, backoffMax)
			if err := c.redisCall(c.ctx, max(c.redisTimeout, 250*time.Millisecond), c.ping, false); err != nil {
				if cause, news := redisauth.NewCause(logged, err); news && c.ctx.Err() == nil {
					logged = cause
					c.log.Warn("cache: redis still unavailable", "cause", cause, "err", err)
				}
				continue
			}
			if c.redisUp.CompareAndSwap(false, true) {
				upSince = time.Now()
				c.log.Info("cache: redis available again")
				c.releaseOrphans()
				c.flushPending(c.ctx)
				c.resync(c.ctx)
			}
		}
	}
}

// ping checks that Redis can serve the cache (Ping).
func (c *Cache) ping(ctx context.Context) error { return c.Ping(ctx) }

// Ping reports whether Redis can serve the cache now: PingRedis, then
// whether the edge's ACL user may still run the commands the cache sends,
// on keys of its prefixes (redisauth.CheckCommands): a user that lost one
// (NOPERM) passes PING and AUTH, so the probe brought Redis back at once
// and the next request's command marked it down again, every 0.5-5 s, while
// edge_redis_up and /readyz said "up". The commands: on an entry key SET
// (ACL rules name commands, not their flags: the fill lock's SET NX is a
// SET), GET, GETEX, EXISTS, DEL and the fill lock's script (EVALSHA, EVAL,
// with the GET and DEL it runs); on a generation key SETNX, INCR, INCRBY
// and GET. Their values expire within redisauth.ProbeTTL, but for the
// generation probe key, one integer under the purge prefix. PUBLISH and
// SUBSCRIBE on the purge channel are not checked (a message there reaches
// every instance). Without Redis it reports nil.
func (c *Cache) Ping(ctx context.Context) error {
	if c.rdb == nil {
		return nil
	}
	if err := PingRedis(ctx, c.rdb); err != nil {
		return err
	}
	if err := redisauth.CheckCommands(ctx, c.rdb, c.prefix+":{probe}:ping", entryProbe); err != nil {
		return err
	}
	return redisauth.CheckCommands(ctx, c.rdb, c.purgePrefix+":{probe}:gen", generationProbe)
}

// The commands Ping checks, on an entry key and on a generation key.
var (
	probeMS    = redisauth.ProbeTTL.Milliseconds()
	entryProbe = []redisauth.Command{
		{"set", redisauth.Key, "1", "px", probeMS},
		{"get", redisauth.Key},
		{"getex", redisauth.Key, "px", probeMS},
		{"exists", redisauth.Key},
		{"evalsha", unlockScript.Hash(), 1, redisauth.Key, "probe"},
		{"eval", unlockSrc, 1, redisauth.Key, "probe"},
		{"del", redisauth.Key},
	}
	generationProbe = []redisauth.Command{
		{"setnx", redisauth.Key, "0"},
		{"incr", redisauth.Key},
		{"incrby", redisauth.Key, 1},
		{"get", redisauth.Key},
	}
)

// PingRedis reports whether rdb can serve the cache and the rate limiter
// now: every master of a Cluster answers a PING (one dead master fails the
// keys of its slots, then, once the cluster fails, every key), or the one
// server does and is no replica. A replica answers PING but refuses every
// write (READONLY), as the demoted master does that a failover without
// Sentinel leaves behind an address; ROLE tells, and its answer is
// ErrReplica. A server that does not know ROLE (miniredis) or refuses it
// (an ACL) is taken as a master. A server (or master) that no longer
// accepts the client's credentials fails too (redisauth.Check: AUTH with
// them), although the connections opened before a password rotation still
// answer PING: every connection opened from then on is refused. The cache
// probes with it before it uses Redis again; /readyz and edge_redis_up
// report it.
func PingRedis(ctx context.Context, rdb redis.UniversalClient) error {
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			if err := m.Ping(ctx).Err(); err != nil {
				return err
			}
			if err := redisauth.Check(ctx, m); err != nil {
				return err
			}
			// A master that answers PING in a Cluster whose state is
			// "fail" (a slot unserved: a cluster-bus partition, an
			// unfinished reshard) refuses every key with CLUSTERDOWN,
			// an error reply the command check takes as "permitted"
			// (TestClusterDownIsDown). A refused CLUSTER INFO (an ACL)
			// says nothing.
			info, err := m.ClusterInfo(ctx).Result()
			var rerr redis.Error
			switch {
			case err != nil && !errors.As(err, &rerr):
				return err
			case err == nil && !strings.Contains(info, "cluster_state:ok"):
				return ErrClusterDown
			}
			return nil
		})
	}
	if err := rdb.Ping(ctx).Err(); err != nil {
		return err
	}
	if err := redisauth.Check(ctx, rdb); err != nil {
		return err
	}
	role, err := rdb.Do(ctx, "ROLE").Slice()
	var rerr redis.Error
	switch {
	case err != nil && !errors.As(err, &rerr):
		return err
	case err == nil && len(role) > 0 && (role[0] == "slave" || role[0] == "replica"):
		return ErrReplica
	}
	// One address of a Cluster (a managed Cluster's configuration
	// endpoint, one seed listed) makes a plain client: the keys of the
	// other masters' slots are refused with MOVED, an error reply that
	// marks nothing down (TestOneAddressOfAClusterIsNotUp).
	if info, err := rdb.Info(ctx, "cluster").Result(); err == nil && strings.Contains(info, "cluster_enabled:1") {
		// A Cluster of one master serving every slot sends no MOVED:
		// its one address is the whole Cluster
		// (TestOneMasterClusterSingleAddressIsUp).
		if ci, err := rdb.ClusterInfo(ctx).Result(); err == nil &&
			strings.Contains(ci, "cluster_state:ok") && strings.Contains(ci, "cluster_size:1\r\n") &&
			servesEverySlot(ctx, rdb) {
			return nil
		}
		return ErrClusterNode
	}
	return nil
}

// ErrClusterNode is PingRedis' answer for a plain client on a node of a
// Redis Cluster: redis.addrs must list at least two of its nodes.
var ErrClusterNode = errors.New("the Redis server is a Cluster node reached as a single node: list at least two Cluster addresses in redis.addrs")

// ErrClusterDown is PingRedis' answer for a Cluster whose state is not
// ok; its text starts as Redis' own CLUSTERDOWN error.
var ErrClusterDown = errors.New("CLUSTERDOWN a master reports cluster_state other than ok")

// ErrReplica is PingRedis' answer for a replica; its text starts as
// Redis' own READONLY error, so it reads as the same kind of failure.
var ErrReplica = errors.New("READONLY the Redis server is a replica; the cache and the rate limiter cannot write to it")

// pollLoop re-reads generations while the subscription is not healthy and
// retries deferred purges.
func (c *Cache) pollLoop() {
	defer c.wg.Done()
	t := time.NewTicker(c.genPoll)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		if !c.redisUp.Load() {
			continue
		}
		c.flushPending(c.ctx)
		if !c.pubsubUp.Load() {
			c.resync(c.ctx)
		}
	}
}

// subscriptionAnswered marks the subscription healthy again when its
// connection answers after a silence had marked it lost: go-redis keeps the
// connection (and the subscription on it) across read timeouts, so after a
// Redis that stalled no new "subscribe" confirmation comes to do it. The
// resync is the one a resubscription does.
func (c *Cache) subscriptionAnswered() {
	if !c.pubsubUp.Load() {
		c.setPubSub(true, nil)
		c.resync(c.ctx)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

func (c *Cache) setPubSub(up bool, err error) {
	if c.pubsubUp.Swap(up) == up {
		return
	}
	if up {
		c.log.Info("cache: purge subscription active", "channel", c.channel)
	} else {
		c.log.Warn("cache: purge subscription lost, polling generations", "every", c.genPoll, "err", err)
	}
}

// purgeAllID stands for the dealer id in the purge message of a purge of
// everything ("all:<epoch>"): a release that predates it fails to parse it
// as a dealer id and ignores the message.
const purgeAllID = "all"

func (c *Cache) handlePurgeMessage(payload string) {
	ds, gs, ok := strings.Cut(payload, ":")
	if !ok {
		return
	}
	if ds == purgeAllID {
		if ep, err := strconv.ParseUint(gs, 10, 64); err == nil {
			c.applyEpoch(ep)
		}
		return
	}
	dealer, err1 := strconv.ParseInt(ds, 10, 64)
	gen, err2 := strconv.ParseUint(gs, 10, 64)
	if err1 != nil || err2 != nil {
		return
	}
	if st := c.gens.lookup(dealer); st != nil {
		c.applyGen(dealer, st, gen)
	}
}

// applyGen adopts gen, a generation Redis gave, for dealer if it is newer
// than the cached one and then drops the dealer's L1 entries. Generations
// only move forward (they start at a millisecond timestamp and are
// incremented), so a stale read racing a purge message cannot move an
// instance back to a purged generation. While the dealer's generation is a
// guess of this instance (genState.guess), a generation newer than any
// Redis gave before that is not above the guess may be another instance's
// purge that Redis numbered as this one guessed: the instance then guesses
// again, one further (bumpLocal), which drops L1 and leaves what the bulk
// tier holds under the old number unreachable.
func (c *Cache) applyGen(dealer int64, st *genState, gen uint64) {
	switch drop, rebump := adopt(st, gen); {
	case rebump:
		c.bumpLocal(dealer, st)
	case drop && c.l1 != nil:
		c.l1.dropDealer(dealer)
	}
}

// applyEpoch is applyGen for the purge epoch: a newer epoch drops this
// instance's whole L1 (and empties the bulk tier).
func (c *Cache) applyEpoch(ep uint64) {
	if drop, rebump := adopt(&c.epoch, ep); rebump {
		c.bumpEpochLocal()
	} else if drop {
		c.dropAll()
	}
}

// adopt moves st to gen, a number Redis gave, by applyGen's rules. It
// reports drop when st moved on (the entries held under the old number must
// go), rebump when the number is a guess of this instance that gen may
// equal (the caller guesses one further).
func adopt(st *genState, gen uint64) (drop, rebump bool) {
	if gen >= maxGen {
		// A number no seed and INCRs make (a corrupted or
		// hostile value, in Redis or on the channel): never adopted, so
		// that a local purge's Add(1) cannot wrap the generation to 0.
		return false, false
	}
	st.verified.Store(true)
	newer := false
	for {
		r := st.remote.Load()
		if gen <= r {
			break
		}
		if st.remote.CompareAndSwap(r, gen) {
			newer = true
			break
		}
	}
	for {
		old := st.gen.Load()
		if gen <= old {
			return false, newer && st.guess.Load() != 0
		}
		if st.gen.CompareAndSwap(old, gen) {
			return true, false
		}
	}
}

// generation returns the dealer's current generation, reading it from Redis
// the first time (or while it could not be read yet).
func (c *Cache) generation(ctx context.Context, dealer int64) (uint64, *genState) {
	st := c.gens.get(dealer)
	if st.verified.Load() || c.rdb == nil || !c.redisUp.Load() {
		return st.gen.Load(), st
	}
	v, err, _ := c.genFlights.Do(strconv.FormatInt(dealer, 10), func() (any, error) {
		return c.readGen(ctx, dealer)
	})
	if err == nil {
		c.applyGen(dealer, st, v.(uint64))
		c.raiseGen(ctx, c.genKey(dealer), strconv.FormatInt(dealer, 10), st, v.(uint64))
	}
	return st.gen.Load(), st
}

// currentEpoch returns the purge epoch, reading it from Redis the first time
// (or while it could not be read yet). Callers read it before the dealer's
// generation and carry both to every key and L1 insert of the lookup.
func (c *Cache) currentEpoch(ctx context.Context) uint64 {
	if c.epoch.verified.Load() || c.rdb == nil || !c.redisUp.Load() {
		return c.epoch.gen.Load()
	}
	v, err, _ := c.genFlights.Do(purgeAllID, func() (any, error) {
		return c.readEpoch(ctx)
	})
	if err == nil {
		c.applyEpoch(v.(uint64))
		c.raiseGen(ctx, c.epochKey(), purgeAllID, &c.epoch, v.(uint64))
	}
	return c.epoch.gen.Load()
}

// readEpoch reads the purge epoch, seeded as a generation is (readGen)
// when Redis has none: a missing key is either a Redis that never held one
// or one that lost it (an allkeys-* maxmemory policy evicts it like any
// key), and read as 0 after a purge of everything it would lead an
// instance to the entries that purge retired, written under epoch 0. A
// seed is above every epoch given before it (purges count up from a seed
// or from 0), so what any earlier epoch wrote stays unreachable.
func (c *Cache) readEpoch(ctx context.Context) (uint64, error) {
	return c.readSeeded(ctx, c.epochKey(), "epoch")
}

// genSeed starts a dealer's generation or the purge epoch (when Redis has
// none, also after Redis lost its data) at the current Unix millisecond,
// so they keep moving forward across a Redis restart.
func genSeed() int64 { return time.Now().UnixMilli() }

func (c *Cache) readGen(ctx context.Context, dealer int64) (uint64, error) {
	return c.readSeeded(ctx, c.genKey(dealer), "generation")
}

// readSeeded reads a generation or the epoch under key, seeding it first
// (genSeed) when Redis has none.
func (c *Cache) readSeeded(ctx context.Context, key, kind string) (uint64, error) {
	var get *redis.StringCmd
	ctx, span := c.redisSpan(ctx, "SETNX+GET")
	if span != nil {
		span.SetAttributes(attrKeyKind.String(kind))
	}
	err := c.redisDo(ctx, func(ctx context.Context) error {
		_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.SetNX(ctx, key, genSeed(), 0)
			get = p.Get(ctx, key)
			return nil
		})
		return err
	})
	endSpan(span, err)
	if err != nil {
		return 0, err
	}
	v, err := get.Uint64()
	if err == nil && v >= maxGen {
		err = errBadGeneration
	}
	return v, err
}

// maxGen bounds the generations and epochs this release adopts: they
// start at a Unix millisecond (about 2^41) and move by INCR, so a number
// at or above 2^62 is a corrupted or hostile value, which Redis may not
// even INCR (above 2^63-1) and which uint64 arithmetic wraps.
const maxGen = 1 << 62

var errBadGeneration = errors.New("cache: generation in redis out of range")

// resync re-reads the generation of every dealer this instance knows, in
// pipelined batches.
func (c *Cache) resync(ctx context.Context) {
	// The dealers are those known when the resync began, as before the
	// epoch was read here: a dealer first seen during the resync reads its
	// generation itself.
	dealers := c.dealerIDs()
	if ep, err := c.readEpoch(ctx); err == nil {
		c.applyEpoch(ep)
		c.raiseGen(ctx, c.epochKey(), purgeAllID, &c.epoch, ep)
	}
	const batch = 256
	for len(dealers) > 0 && c.redisUp.Load() {
		n := min(batch, len(dealers))
		part := dealers[:n]
		dealers = dealers[n:]
		gets := make([]*redis.StringCmd, len(part))
		err := c.redisDo(ctx, func(ctx context.Context) error {
			_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				for i, d := range part {
					k := c.genKey(d)
					p.SetNX(ctx, k, genSeed(), 0)
					gets[i] = p.Get(ctx, k)
				}
				return nil
			})
			return err
		})
		if err != nil {
			return
		}
		for i, d := range part {
			if g, err := gets[i].Uint64(); err == nil {
				st := c.gens.get(d)
				c.applyGen(d, st, g)
				c.raiseGen(ctx, c.genKey(d), strconv.FormatInt(d, 10), st, g)
			}
		}
	}
}

// raiseGen moves a generation in Redis (key: a dealer's, or the purge
// epoch) up to the one this instance holds when Redis gave an older one (got): Redis came back
// rolled back (a failover to a replica that missed the last INCRs, a
// restart from an older snapshot). Otherwise an instance that starts
// meanwhile would adopt the older number and number its next purge at or
// below what the others hold, which drops nothing there.
//
// The raised number is also published ("<id>:<held>", as a
// purge's), so that an instance that adopted the older number meanwhile
// (started, or first asked for the dealer, in the window) moves on and
// stops serving, from Redis, the entries the lost purges retired.
func (c *Cache) raiseGen(ctx context.Context, key, id string, st *genState, got uint64) {
	if held := st.gen.Load(); got < held && st.guess.Load() == 0 {
		err := c.redisDo(ctx, func(ctx context.Context) error {
			return raiseGenScript.Run(ctx, c.rdb, []string{key}, held).Err()
		})
		if err == nil {
			payload := id + ":" + strconv.FormatUint(held, 10)
			_ = c.redisDo(ctx, func(ctx context.Context) error {
				return c.rdb.Publish(ctx, c.channel, payload).Err()
			})
		}
	}
}

// raiseGenScript sets KEYS[1] to ARGV[1] when it holds less (or nothing).
var raiseGenScript = redis.NewScript(`
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
if v < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[1])
end
return 0
`)

func (c *Cache) dealerIDs() []int64 { return c.gens.dealers() }

// purgeRemote bumps the generation in Redis, adopts it and publishes it.
// When the dealer's generation is a guess of this instance (a purge Redis
// has not taken yet), Redis is moved past the guess (INCRBY), so that the
// instance goes on under a number Redis gave and no other purge will get.
func (c *Cache) purgeRemote(ctx context.Context, dealer int64, st *genState) error {
	id := strconv.FormatInt(dealer, 10)
	return c.bumpRemote(ctx, c.genKey(dealer), id, st, func(gen uint64) { c.applyGen(dealer, st, gen) })
}

// purgeAllRemote is purgeRemote for the purge epoch.
func (c *Cache) purgeAllRemote(ctx context.Context) error {
	return c.bumpRemote(ctx, c.epochKey(), purgeAllID, &c.epoch, c.applyEpoch)
}

// bumpRemote increments the generation under key (a dealer's or the epoch,
// seeded as readSeeded does), adopts the number with
// apply and publishes "<id>:<number>".
func (c *Cache) bumpRemote(ctx context.Context, key, id string, st *genState, apply func(uint64)) error {
	guess := st.guess.Load()
	var incr *redis.IntCmd
	err := c.redisDo(ctx, func(ctx context.Context) error {
		_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.SetNX(ctx, key, genSeed(), 0)
			incr = p.Incr(ctx, key)
			return nil
		})
		return err
	})
	if err != nil {
		return err
	}
	gen := uint64(incr.Val())
	// Past the guess, and past the generation this instance holds: Redis
	// may have come back with an older number (a failover to a replica
	// that missed the last INCRs, a restart from an older snapshot), and a
	// purge numbered at or below what the instances hold would drop
	// nothing anywhere.
	if floor := max(guess, st.gen.Load()); gen <= floor {
		err := c.redisDo(ctx, func(ctx context.Context) error {
			incr = c.rdb.IncrBy(ctx, key, int64(floor-gen)+1)
			return incr.Err()
		})
		if err != nil {
			return err
		}
		gen = uint64(incr.Val())
	}
	if incr.Val() < 0 || gen >= maxGen {
		return errBadGeneration
	}
	apply(gen)
	// A guess made meanwhile (a purge that failed, or another instance's
	// purge numbered as guessed) is not covered by this INCR: the purge
	// stays pending, to move Redis past it next time. A guess another
	// purge of this instance cleared meanwhile (no guess left) is covered:
	// that purge's INCR took it, and this one's reached Redis too (a purge
	// racing the probe's flush of the deferred ones answered 503 for a
	// purge Redis had taken: TestConcurrentPurgesOverAGuess).
	covered := st.guess.CompareAndSwap(guess, 0) || st.guess.Load() == 0
	payload := id + ":" + strconv.FormatUint(gen, 10)
	err = c.redisDo(ctx, func(ctx context.Context) error {
		return c.rdb.Publish(ctx, c.channel, payload).Err()
	})
	if err == nil && !covered {
		err = errGuessMoved
	}
	return err
}

// errGuessMoved is purgeRemote's answer when the dealer's guessed
// generation moved on while the purge was in flight.
var errGuessMoved = errors.New("cache: the dealer's local generation moved on during the purge")

// flushPending sends the purges made while Redis was unreachable.
func (c *Cache) flushPending(ctx context.Context) {
	if c.pendingAll.Load() {
		if err := c.purgeAllRemote(ctx); err != nil {
			return
		}
		c.pendingAll.Store(false)
	}
	c.pendingMu.Lock()
	ids := make([]int64, 0, len(c.pending))
	for d := range c.pending {
		ids = append(ids, d)
	}
	c.pendingMu.Unlock()
	for _, d := range ids {
		if err := c.purgeRemote(ctx, d, c.gens.get(d)); err != nil {
			return
		}
		c.pendingMu.Lock()
		delete(c.pending, d)
		c.pendingMu.Unlock()
	}
}

// l2Get reads the entry of rkey from Redis; nil when there is none or it
// cannot be used. With plain, a compressed entry is decompressed here (and
// counts as unusable if that fails), for a caller that serves the plain body.
//
// The read also extends the value's expiry in Redis to pol's keep (see
// Policy.l2Keep), in the same command (GETEX key PX): a fill is written to
// live only until the end of its stale-while-revalidate window (l2Set), and
// an entry somebody reads again is kept for its stale-if-error window from
// that read, still one command per L2 hit. Redis's expiry only decides how
// long the bytes stay: whether an entry is fresh, stale or usable on an
// error is decided by its own windows (Policy.state), never by its TTL.
func (c *Cache) l2Get(ctx context.Context, rkey string, pol Policy, plain bool) *Entry {
	var cmd *redis.StringCmd
	if keep := pol.l2Keep(); keep >= time.Millisecond {
		cmd = redis.NewStringCmd(ctx, "getex", rkey, "px", keep.Milliseconds())
	} else {
		cmd = redis.NewStringCmd(ctx, "get", rkey)
	}
	err := c.redisCmd(ctx, cmd)
	if err != nil {
		if errors.Is(err, redis.Nil) {
			c.st.l2Misses.Add(1)
		}
		return nil
	}
	// The reply is a string go-redis made for this command alone; the
	// entry keeps its bytes (decodeEntry aliases them) and nothing ever
	// writes to an entry's bodies, so it is viewed, not copied
	// (StringCmd.Bytes would copy a whole compressed page per hit).
	v := cmd.Val()
	e, err := decodeEntry(unsafe.Slice(unsafe.StringData(v), len(v)), true)
	if errors.Is(err, errLaterWire) {
		// A later release's value (a rolling deploy): a miss, not a
		// Redis error that the dashboard would show for the deploy.
		c.st.l2Misses.Add(1)
		return nil
	}
	if err != nil || !usable(e, plain) {
		c.st.l2Errors.Add(1)
		return nil
	}
	// The times are readings of the writer's clock; one that
	// runs ahead of this instance's must not stretch freshness past the
	// TTL here (nor max-age on the wire): read such an entry as stored now.
	if now := c.now(); e.StoredAt.After(now) {
		d := now.Sub(e.StoredAt)
		e.StoredAt, e.FreshUntil = now, e.FreshUntil.Add(d)
		e.StaleUntil, e.ErrorUntil = e.StaleUntil.Add(d), e.ErrorUntil.Add(d)
	}
	return e
}

// heldLock is a cross-instance fill lock this instance took (lock).
type heldLock struct{ key, token string }

// l2Set stores e until the end of its stale-while-revalidate window (at
// least l2WriteFloor past its freshness, never past its ErrorUntil): a
// value nobody reads again leaves Redis then, and one that is read is kept
// for its stale-if-error window by the read (l2Get). When *held is a fill
// lock it also releases it, in the same round trip (setUnlockScript), and
// clears *held; an entry too close to its end to store leaves the lock to
// the caller's deferred unlock. fresh reports that Redis did not hold the
// key when it was looked up: the write adds an entry, which the dealer's
// byte budget may refuse (admitL2; the lock is then left to the caller
// too).
func (c *Cache) l2Set(ctx context.Context, dealer int64, rkey string, e *Entry, held **heldLock, fresh bool) {
	ttl := e.l2WriteUntil().Sub(c.now())
	if ttl < time.Millisecond || !c.redisUp.Load() {
		// While Redis is marked down the write would be refused: nothing
		// is encoded (for a plain client that is a compression) or
		// counted in the dealer's budget for it.
		return
	}
	buf := encodeEntry(e)
	charge, ok := c.admitL2(dealer, rkey, buf, e, fresh)
	if !ok {
		return // *held stays: the caller's deferred unlock releases the lock
	}
	h := *held
	if h == nil {
		if err := c.redisCmd(ctx, redis.NewStatusCmd(ctx, "set", rkey, buf, "px", ttl.Milliseconds())); err != nil {
			c.budget.refund(charge)
		}
		return
	}
	// Not the caller's cancellation: a lock left behind makes the other
	// instances wait for it to expire.
	ctx = context.WithoutCancel(ctx)
	err := c.runScript(ctx, setUnlockScript, setUnlockSrc, []string{rkey, h.key}, buf, ttl.Milliseconds(), h.token)
	if err == nil {
		*held = nil
		return
	}
	if isTryAgain(err) {
		// A Cluster slot being migrated refuses a script of two keys when
		// one is missing on the node (TRYAGAIN) for the whole
		// migration; single-key commands follow its ASK redirects.
		err = c.redisCmd(ctx, redis.NewStatusCmd(ctx, "set", rkey, buf, "px", ttl.Milliseconds()))
	}
	if err != nil {
		c.budget.refund(charge)
	}
	// *held stays: the caller's deferred unlock releases the lock.
}

// isTryAgain reports Redis Cluster's TRYAGAIN error (a multi-key command
// on a slot in migration).
func isTryAgain(err error) bool { return redis.HasErrorPrefix(err, "TRYAGAIN") }

// lock tries to take the cross-instance fill lock of a key.
func (c *Cache) lock(ctx context.Context, lkey string) (string, bool, error) {
	token := strconv.FormatUint(rand.Uint64(), 36)
	err := c.redisCmd(ctx, c.lockCmd(ctx, lkey, token))
	if errors.Is(err, redis.Nil) {
		return token, false, nil // held elsewhere
	}
	if err != nil {
		// A SET NX its caller gave up on (past the budget) may still run:
		// the batcher sends what it queued, and Redis may have taken it
		// before it stalled. The token is remembered, as a release that
		// found Redis down is (TestAbandonedLockReleased).
		c.orphanLockIfDown(lkey, token)
		return "", false, err
	}
	return token, true, nil
}

// lockCmd is the command that takes the fill lock lkey with token: SET NX
// with lock_ttl, sent once (noRetryStatusCmd): a SET NX sent again after
// the connection dropped before its reply finds the lock the first one
// took and answers nil, and the request then waited lock_wait on its own
// lock (TestClusterFillLockNotReplayedAfterCut).
func (c *Cache) lockCmd(ctx context.Context, lkey, token string) redis.Cmder {
	return noRetryStatusCmd{redis.NewStatusCmd(ctx, "set", lkey, token, "px", max(c.lockTTL.Milliseconds(), 1), "nx")} // PX 0 is refused (TestLockTTLBelowOneMillisecond)
}

// The scripts of the fill lock. Their keys (an entry's and its lock's)
// share the dealer's hash tag, so they run on a Cluster too.
const (
	unlockSrc    = `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`
	setUnlockSrc = `redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2]) if redis.call("GET", KEYS[2]) == ARGV[3] then redis.call("DEL", KEYS[2]) end return 1`
)

var (
	unlockScript = redis.NewScript(unlockSrc)
	// setUnlockScript stores an entry (KEYS[1], the value ARGV[1] for
	// ARGV[2] ms) and releases the fill lock (KEYS[2]) if its token is
	// still ARGV[3]: the end of a locked fill in one round trip.
	setUnlockScript = redis.NewScript(setUnlockSrc)
)

// unlock releases the lock if this instance still holds it.
//
// While Redis is marked down (or the release fails for that
// reason) the lock is remembered and released when the probe brings
// Redis back (releaseOrphans): left alone it stayed for the rest of
// lock_ttl, and every instance's first miss of the key waited lock_wait
// for a fill that had ended.
//
// The release is not cancelled by Close: a fill still running at shutdown
// (a request the listener's drain outlived, a background refresh, which
// Close cancels) releases its lock as well. Under the cache's context,
// which Close cancels, the release was never sent unpipelined, nor
// pipelined when Redis answered the EVALSHA with NOSCRIPT (the EVAL after
// it was not sent), and the lock stayed for the rest of lock_ttl
// (TestCloseMidFillReleasesLock).
func (c *Cache) unlock(lkey, token string) {
	if err := c.runScript(context.Background(), unlockScript, unlockSrc, []string{lkey}, token); err != nil {
		c.orphanLockIfDown(lkey, token)
	}
}

// orphanLockIfDown remembers a lock whose command failed with Redis
// marked down, for releaseOrphans (at most maxOrphans of them).
func (c *Cache) orphanLockIfDown(lkey, token string) {
	if c.redisUp.Load() {
		return
	}
	c.orphanMu.Lock()
	if len(c.orphans) < maxOrphans {
		c.orphans = append(c.orphans, orphanLock{lkey, token, time.Now().Add(c.lockTTL)})
	}
	c.orphanMu.Unlock()
}

// orphanLock is a fill lock whose release found Redis marked down.
type orphanLock struct {
	key, token string
	until      time.Time // it expires by itself then
}

const maxOrphans = 4096

// releaseOrphans releases the locks unlock could not, once Redis is up.
func (c *Cache) releaseOrphans() {
	c.orphanMu.Lock()
	ls := c.orphans
	c.orphans = nil
	c.orphanMu.Unlock()
	now := time.Now()
	for _, l := range ls {
		if now.Before(l.until) {
			_ = c.runScript(c.ctx, unlockScript, unlockSrc, []string{l.key}, l.token)
		}
	}
}

// runScript runs a script as one command of the hot path (redisCmd: with
// the other requests' commands, under the budget): EVALSHA, then EVAL
// with src when Redis does not know the script (NOSCRIPT: restarted or
// flushed since it last ran it).
func (c *Cache) runScript(ctx context.Context, s *redis.Script, src string, keys []string, args ...any) error {
	cmdArgs := func(first, script string) []any {
		a := make([]any, 0, 3+len(keys)+len(args))
		a = append(a, first, script, len(keys))
		for _, k := range keys {
			a = append(a, k)
		}
		return append(a, args...)
	}
	err := c.redisCmd(ctx, scriptCall(redis.NewCmd(ctx, cmdArgs("evalsha", s.Hash())...), len(keys)))
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		err = c.redisCmd(ctx, scriptCall(redis.NewCmd(ctx, cmdArgs("eval", src)...), len(keys)))
	}
	return err
}

// scriptCall is the command runScript sends for cmd, a script call on
// keys keys: a script of several keys (setUnlockScript) goes as a command
// go-redis never retries nor replays (noRetryCmd).
//
// Such a script is the one command of the cache that a Cluster slot in
// migration refuses with TRYAGAIN, for as long as the migration lasts,
// when one of its keys has moved (or was never on the source) and the
// other has not: l2Set then stores the entry alone, at once. go-redis's
// Cluster client instead retried a TRYAGAIN up to MaxRedirects times
// (MaxRetries -1 does not apply to it) with its backoff, 10-30, 10-50 and
// 10-90 ms: past the default redis.timeout (50 ms), so the cache marked
// Redis down for every dealer and the entry was lost
// (TestClusterMigratingSlotLockTakenBefore). In a pipeline it replayed
// the node's whole sub-batch whenever the script's reply came first:
// every other request's command ran again, a fill lock's SET NX then
// found its own lock (nil), and the last round left ASK errors
// (TestClusterBatchTryAgainNotReplayed). MOVED and ASK redirects are still
// followed: go-redis checks them before it asks whether to retry.
func scriptCall(cmd *redis.Cmd, keys int) redis.Cmder {
	if keys > 1 {
		return noRetryCmd{cmd}
	}
	return cmd
}

// noRetryCmd is a command whose NoRetry is true: go-redis sends it once
// (following MOVED and ASK), and never replays a pipeline that holds it.
// Its result is the embedded command's.
//
// MaxRetries -1 (ClientOptions) is not enough on a Cluster: its client
// retries an error that may come after the command ran (EOF: a connection
// dropped before the reply was read; a read timeout) in its redirect loop,
// up to MaxRedirects times, a single command on the same node and then on
// another, a pipeline as the node's whole share of it. A command that
// must not run twice (the fill lock's SET NX) is a noRetry one.
type noRetryCmd struct{ *redis.Cmd }

func (noRetryCmd) NoRetry() bool { return true }

// noRetryStatusCmd is noRetryCmd for a command with a status reply.
type noRetryStatusCmd struct{ *redis.StatusCmd }

func (noRetryStatusCmd) NoRetry() bool { return true }

// waitL2 polls L2 for a fresh entry while another instance holds the fill
// lock lkey, for at most LockWait. It stops early, with nil, when the lock
// is gone and no entry came: the holder's fill stored nothing (an error,
// or a detail's 404 whose fact it kept instead, see aggregator's
// notfound.go), and waiting on would only delay the caller's own fill.
// The holder stores its entry and releases the lock in one script, so a
// lock found gone and an entry looked up after it cannot miss a store.
func (c *Cache) waitL2(ctx context.Context, rkey, lkey string, pol Policy, plain bool) *Entry {
	deadline := time.Now().Add(c.lockWait)
	interval := min(max(c.lockWait/20, 2*time.Millisecond), 25*time.Millisecond)
	for {
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		if e := c.l2Get(ctx, rkey, pol, plain); e != nil && pol.state(e, c.now()) == stateFresh {
			return e
		}
		if !c.redisUp.Load() || time.Now().After(deadline) {
			return nil
		}
		held := redis.NewIntCmd(ctx, "exists", lkey)
		if err := c.redisCmd(ctx, held); err == nil && held.Val() == 0 {
			// Released since the GET: the entry stored with the release,
			// if any, is there now.
			if e := c.l2Get(ctx, rkey, pol, plain); e != nil && pol.state(e, c.now()) == stateFresh {
				return e
			}
			return nil
		}
	}
}

// servesEverySlot reports whether the node rdb reaches holds all 16384
// slots itself (its "myself" line of CLUSTER NODES): cluster_size counts
// the masters with a slot, so an empty master beside a one-master Cluster
// reports cluster_size:1 too while refusing every key with MOVED.
func servesEverySlot(ctx context.Context, rdb redis.UniversalClient) bool {
	nodes, err := rdb.ClusterNodes(ctx).Result()
	if err != nil {
		return false
	}
	for _, line := range strings.Split(nodes, "\n") {
		f := strings.Fields(line)
		if len(f) >= 9 && strings.Contains(f[2], "myself") && strings.Contains(f[2], "master") {
			return len(f) == 9 && f[8] == "0-16383"
		}
	}
	return false
}

// ClientOptions sets on o what the cache and the rate limiter need of the
// go-redis client they share (cmd/dealer-edge builds its client with it),
// timeout being redis.timeout, and returns o:
//
//   - Read and write timeouts of timeout, a dial timeout of at least
//     200 ms, ContextTimeoutEnabled: calls honour their budget's deadline
//     and an abandoned call frees its connection soon.
//   - MaxRetries -1 and DialerRetries 1: no command is sent twice and a
//     dead node is given up after one dial; the cache and the limiter mark
//     Redis down and probe it in the background, so no request waits on
//     retries. A Cluster client still sends a command again after an
//     error that may come after it ran (EOF, a read timeout), in its
//     redirect loop (MaxRedirects): the commands that must not run twice
//     (the fill lock's SET NX, the lock's two-key script, the rate
//     limiter's script) are sent as commands whose NoRetry is true, which
//     it sends once (TestClusterFillLockNotReplayedAfterCut).
//   - MinRetryBackoff -1 (no backoff): a Cluster client follows MOVED and
//     ASK in rounds bounded by MaxRedirects whatever MaxRetries says, and
//     slept its backoff (10 ms plus up to 20, 40, 80 ms) before each round
//     of a pipeline, redirects included. With the default 50 ms budget a
//     batch that met an ASK during a slot migration, or a MOVED after a
//     failover, outlived its budget: the cache marked Redis down for every
//     dealer and a purge was deferred (TestClusterSlotMigrationUnderLoad).
//     A redirect needs no wait.
func ClientOptions(o *redis.UniversalOptions, timeout time.Duration) *redis.UniversalOptions {
	o.DialTimeout = max(timeout, 200*time.Millisecond)
	o.ReadTimeout, o.WriteTimeout = timeout, timeout
	o.ContextTimeoutEnabled = true
	o.MaxRetries = -1
	o.DialerRetries = 1
	o.MinRetryBackoff = -1
	return o
}
