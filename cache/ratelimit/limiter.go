package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dealer-edge/dealer-edge/internal/redisauth"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Defaults of Options.
const (
	DefaultPrefix        = "edge:v1"
	DefaultRedisTimeout  = 50 * time.Millisecond
	DefaultMaxLease      = 256
	DefaultLeaseWindow   = 250 * time.Millisecond
	DefaultProbeInterval = time.Second
	DefaultMaxKeys       = 1 << 16
)

const (
	numShards = 64
	// sweepEvery is how often (limiter clock) a shard drops entries that
	// carry no state, checked when a key is inserted into it.
	sweepEvery = 10 * time.Second
	// maxRounds bounds how often a request waits for another goroutine's
	// refill of the same key before it makes its own one-token call.
	maxRounds = 3
)

// Options configure a Limiter. The zero value is a local-only limiter with
// the documented defaults.
type Options struct {
	// Redis holds the shared state. Any go-redis client fits (*redis.Client,
	// *redis.ClusterClient, *redis.Ring, redis.UniversalClient). Nil means
	// local only: every instance enforces the limit on its own. The client
	// belongs to the caller; Close does not close it.
	Redis redis.Scripter
	// Prefix of every Redis key, "<prefix>:{d<dealer>}:rl:<keyID>". It must
	// not contain '{' or '}' (the dealer hash tag). Default DefaultPrefix.
	Prefix string
	// FailMode while Redis is unavailable. Default FallbackLocal.
	FailMode FailMode
	// RedisTimeout bounds one Redis round trip; a slower answer counts as
	// Redis unavailable. Default DefaultRedisTimeout.
	RedisTimeout time.Duration
	// MaxLease is the most tokens one instance takes from Redis at once
	// for one key. 1 disables leasing (one round trip per admitted
	// request, exact). Default DefaultMaxLease. See the package doc for
	// how the lease size adapts and what it costs in accuracy.
	MaxLease int
	// LeaseWindow is how long leased tokens stay usable; unspent ones are
	// dropped after it. It bounds how long an overshoot can last. Default
	// DefaultLeaseWindow.
	LeaseWindow time.Duration
	// ProbeInterval is how long Redis is left alone after a failure before
	// one request tries it again. Default DefaultProbeInterval.
	ProbeInterval time.Duration
	// MaxKeys bounds the number of keys with local state (leases, cached
	// rejections, fallback buckets). Idle keys are dropped first; beyond
	// the bound arbitrary keys are evicted. Default DefaultMaxKeys.
	MaxKeys int
	// Now is the clock. Nil means the monotonic system clock, and Redis
	// then evaluates buckets on its own clock (TIME), so clock skew
	// between edge hosts does not matter. When set (tests, simulations),
	// its time is also sent to Redis, and every instance sharing a bucket
	// must use the same clock: see "Clocks" in the package doc. It must
	// return times after 1970.
	Now func() time.Time
	// BackgroundProbe, when set, makes a goroutine try Redis once per
	// ProbeInterval while it is marked unavailable (one script call on a
	// key of its own, "<prefix>:{probe}:rl:probe", as a request's would
	// be) and mark it available again when it answers. Without it only a
	// request tries Redis again, so a limiter that decides few requests
	// (the per-address one) stays marked unavailable, and says nothing,
	// until its next request after Redis is back. When Redis refused the
	// credentials (WRONGPASS, NOAUTH) or a command (NOPERM), the probe
	// first asks whether the credentials hold (AUTH), and only it ends
	// that outage: the connections opened before a password rotation
	// still run a request's script. Close stops it.
	BackgroundProbe bool
	// Logger receives one line per Redis state change. Nil discards. A
	// caller with several limiters names each in its logger's attributes
	// (slog.Logger.With), so their lines can be told apart.
	Logger *slog.Logger
	// TracerProvider, when non-nil, makes a span of every Redis call made
	// for a context that carries a recording span (a traced request). The
	// span names neither the key nor its hash. Nil: no spans.
	TracerProvider trace.TracerProvider
}

// Limiter enforces per-key limits shared through Redis. It is safe for
// concurrent use; Allow does not allocate when it answers from a lease.
type Limiter struct {
	rdb         redis.Scripter
	prefix      string
	mode        FailMode
	timeout     time.Duration
	maxLease    int
	window      int64 // LeaseWindow, ns
	probe       int64 // ProbeInterval, ns
	perShard    int
	now         func() int64 // ns
	callerClock bool
	log         *slog.Logger
	seed        maphash.Seed
	tracer      trace.Tracer // nil: no spans

	// outage is Redis marked unavailable (nil: available), read without
	// a lock on every request; markDown and markUp change it under
	// stateMu. The flag and the time it was set are one pointer, so
	// markUp reads the start of the outage it ends: with a separate flag
	// and time, a markUp between the flag's swap and the time's store
	// logged the previous outage's start as down_for
	// (TestDownForIsThisOutages).
	outage    atomic.Pointer[outage]
	stateMu   sync.Mutex
	nextProbe atomic.Int64
	closed    atomic.Bool

	// testHookMarkedDown, when set (tests only, before use), runs in
	// markDown right after the outage is published.
	testHookMarkedDown func()

	// The background probe (Options.BackgroundProbe): one goroutine per
	// outage, started by markDown, stopped by Close.
	bgProbe bool
	// probeOnly: only the background probe ends an outage (a Cluster
	// with BackgroundProbe). A request's call answers for its key's slot
	// alone: with one master dead, a request of a dealer on a live master
	// ended the outage and the next one on the dead master began another,
	// once a ProbeInterval (TestClusterOneMasterDownNoFlap); the probe
	// asks every master (redisauth.Check).
	probeOnly bool
	probeMu   sync.Mutex // guards probeDone and the Add of probeWG
	probeDone bool       // Close began: no new probe goroutine
	probeStop chan struct{}
	probeWG   sync.WaitGroup

	redisCalls  atomic.Uint64
	redisErrors atomic.Uint64
	activations atomic.Uint64
	evictions   atomic.Uint64

	shards [numShards]shard
}

// shard is one part of the key table, padded against false sharing. Keys
// are looked up by their 64-bit seeded hash, so the key string is hashed
// once per request; the entry confirms the identity, and the rare key
// whose hash is taken by another lives in more.
type shard struct {
	mu        sync.RWMutex
	m         map[uint64]*entry
	more      map[entryKey]*entry // hash collisions; nil until one happens
	lastSweep int64
	admitted  atomic.Uint64
	rejected  atomic.Uint64
	_         [64]byte
}

type entryKey struct {
	dealer int64
	key    string
}

// entry is the local state of one key.
type entry struct {
	dealer   int64
	keyID    string
	redisKey string
	lease    atomic.Pointer[lease]  // current lease or cached rejection
	flight   atomic.Pointer[flight] // refill in progress
	ltat     atomic.Int64           // local GCRA: theoretical arrival time, ns
	unpaid   atomic.Int64           // fallback admissions not yet charged to Redis
	size     int                    // adaptive lease size; only the refill leader uses it
}

// lease is what one Redis answer left for later requests of one key:
// granted-1 tokens until expires, or (granted == 0) a rejection valid
// until deniedUntil. Everything but left is immutable.
type lease struct {
	left        atomic.Int64
	lim         Limit
	granted     int64
	remaining   int64 // tokens left in Redis after the grant
	start       int64 // ns, when the call was sent
	expires     int64 // ns, start + LeaseWindow
	deniedUntil int64 // ns, when Redis had (or will have) its first token; with granted == 0 only, may be past
	resetAt     int64 // ns, bucket full again
}

// outage is one period of Redis marked unavailable.
type outage struct {
	since int64 // ns, limiter clock
	// refused: Redis refused the edge's credentials or its ACL user
	// (redisauth.Refused). The connections opened before a password
	// rotation still answer, so a request's script call proves nothing;
	// with the background probe, only it (which checks the credentials)
	// ends the outage.
	refused bool
	// cause is redisauth.Cause of the error that began the outage, or of
	// a later one that named a cause the operator can act on (noteCause).
	cause string
}

// flight is a refill in progress; done closes when its lease is published.
type flight struct {
	done chan struct{}
}

// New returns a Limiter. It does not contact Redis: the script is loaded
// by the first call that needs it.
func New(opts Options) (*Limiter, error) {
	var errs []error
	bad := func(field, msg string) { errs = append(errs, fmt.Errorf("ratelimit: %s %s", field, msg)) }
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	} else if strings.ContainsAny(opts.Prefix, "{}") {
		bad("Prefix", "must not contain '{' or '}'")
	}
	if opts.FailMode < FallbackLocal || opts.FailMode > FailClosed {
		bad("FailMode", "is unknown")
	}
	def := func(field string, d *time.Duration, v time.Duration) {
		switch {
		case *d == 0:
			*d = v
		case *d < 0:
			bad(field, "must not be negative")
		}
	}
	def("RedisTimeout", &opts.RedisTimeout, DefaultRedisTimeout)
	def("LeaseWindow", &opts.LeaseWindow, DefaultLeaseWindow)
	def("ProbeInterval", &opts.ProbeInterval, DefaultProbeInterval)
	switch {
	case opts.MaxLease == 0:
		opts.MaxLease = DefaultMaxLease
	case opts.MaxLease < 0:
		bad("MaxLease", "must not be negative")
	}
	switch {
	case opts.MaxKeys == 0:
		opts.MaxKeys = DefaultMaxKeys
	case opts.MaxKeys < 0:
		bad("MaxKeys", "must not be negative")
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	l := &Limiter{
		rdb:       opts.Redis,
		prefix:    opts.Prefix,
		mode:      opts.FailMode,
		timeout:   opts.RedisTimeout,
		maxLease:  opts.MaxLease,
		window:    int64(opts.LeaseWindow),
		probe:     int64(opts.ProbeInterval),
		perShard:  max(1, (opts.MaxKeys+numShards-1)/numShards),
		log:       opts.Logger,
		seed:      maphash.MakeSeed(),
		bgProbe:   opts.BackgroundProbe && opts.Redis != nil,
		probeStop: make(chan struct{}),
	}
	if _, ok := opts.Redis.(*redis.ClusterClient); ok && l.bgProbe {
		l.probeOnly = true
	}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	if opts.TracerProvider != nil {
		l.tracer = opts.TracerProvider.Tracer("github.com/dealer-edge/dealer-edge/cache/ratelimit")
	}
	if opts.Now != nil {
		now := opts.Now
		l.now = func() int64 { return now().UnixNano() }
		l.callerClock = true
	} else {
		base := time.Now()
		baseNS := base.UnixNano()
		l.now = func() int64 { return baseNS + int64(time.Since(base)) }
	}
	for i := range l.shards {
		l.shards[i].m = make(map[uint64]*entry)
	}
	return l, nil
}

// Allow decides one request of the key keyID (a keyed hash of the API key,
// never the key itself) of dealer dealerID under lim. It costs at most one
// Redis round trip, none when a lease or a cached rejection answers. It
// never fails: when Redis cannot answer, the FailMode decides. A lim that
// does not Validate is rejected (SourceInvalid). It is AllowN with cost 1.
func (l *Limiter) Allow(ctx context.Context, dealerID int64, keyID string, lim Limit) Decision {
	return l.AllowN(ctx, dealerID, keyID, lim, 1)
}

// AllowN is Allow for a request that spends cost tokens of the key's
// bucket at once (an expensive request), all or none: it is admitted only
// when cost tokens are available, and RetryAfter is the time until they
// are. cost is clamped to [1, lim.Burst], so a request can always be
// admitted by a full bucket. Decision.Cost is the cost charged.
func (l *Limiter) AllowN(ctx context.Context, dealerID int64, keyID string, lim Limit, cost int) Decision {
	now := l.now()
	sh, e := l.entry(dealerID, keyID, now)
	var d Decision
	if lim.Validate() != nil {
		d = Decision{Limit: lim, RetryAfter: time.Second, Source: SourceInvalid, Cost: 1}
	} else {
		cost = max(1, min(cost, lim.Burst))
		d = l.decide(ctx, e, lim, int64(cost), now)
		d.Cost = cost
	}
	if d.Allowed {
		sh.admitted.Add(1)
	} else {
		sh.rejected.Add(1)
	}
	return d
}

func (l *Limiter) decide(ctx context.Context, e *entry, lim Limit, cost, now int64) Decision {
	if l.rdb == nil || l.closed.Load() {
		return l.local(e, lim, cost, now)
	}
	if d, ok := fromLease(e, lim, cost, now); ok {
		return d // the common case: no defer in this function
	}
	return l.decideRedis(ctx, e, lim, cost, now)
}

// decideRedis is decide past an empty lease: share another request's
// refill, refill, or take tokens alone.
func (l *Limiter) decideRedis(ctx context.Context, e *entry, lim Limit, cost, now int64) Decision {
	// One RedisTimeout bounds the request's whole time in the limiter (its
	// waits for other requests' refills and its own call), not each of up
	// to maxRounds+1 waits: on a Redis slow but within the timeout, a
	// request waited up to four of them (TestSlowRedisOneBudget).
	deadline := now + int64(l.timeout)
	var timer *time.Timer // only on the waiting path: the lease path stays allocation-free
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for range maxRounds {
		if d, ok := fromLease(e, lim, cost, now); ok {
			return d
		}
		if !l.redisUsable(now) {
			return l.fallback(e, lim, cost, now)
		}
		if f := e.flight.Load(); f != nil {
			// Another request of this key is refilling: share its lease
			// instead of a round trip of our own. Its call is bounded by
			// RedisTimeout.
			if timer == nil {
				timer = time.NewTimer(time.Duration(deadline - now))
			}
			select {
			case <-f.done:
			case <-ctx.Done():
				return l.fallback(e, lim, cost, now)
			case <-timer.C: // budget spent waiting; says nothing about Redis
				return l.budgetSpent(e, lim, cost, l.now())
			}
			now = l.now()
			continue
		}
		f := &flight{done: make(chan struct{})}
		if !e.flight.CompareAndSwap(nil, f) {
			continue
		}
		return l.refill(ctx, e, lim, cost, now, f, deadline)
	}
	// The shared leases ran dry under us repeatedly: take our tokens alone.
	return l.direct(ctx, e, lim, cost, l.now(), deadline)
}

// fromLease answers from the key's lease or cached rejection, if they
// apply to lim, cost and now. A cached rejection says when one token
// exists in Redis; cost tokens exist cost-1 emission intervals later (no
// other instance can return tokens), so a rejection is exact for any cost.
// A lease admits a request only if it still holds all cost tokens.
func fromLease(e *entry, lim Limit, cost, now int64) (Decision, bool) {
	ls := e.lease.Load()
	if ls == nil || ls.lim != lim {
		return Decision{}, false
	}
	if ls.granted == 0 {
		t := lim.interval(1e9)
		if until := ls.deniedUntil + (cost-1)*t; now < until {
			// The tokens there are now (fewer than cost): the first came
			// at deniedUntil, one more every interval since.
			var there int64
			if now >= ls.deniedUntil {
				there = min(1+(now-ls.deniedUntil)/t, int64(lim.Burst))
			}
			return Decision{
				Limit:      lim,
				Remaining:  int(there),
				RetryAfter: time.Duration(until - now),
				Reset:      time.Duration(max(0, ls.resetAt-now)),
				Source:     SourceLease,
			}, true
		}
	}
	if now < ls.expires {
		for {
			left := ls.left.Load()
			if left < cost {
				break
			}
			if ls.left.CompareAndSwap(left, left-cost) {
				// Redis's bucket has refilled since the grant, one token
				// per interval: the remaining count follows it, so r and t
				// of the RateLimit field agree (t = 0 only with r at the
				// burst).
				refilled := (now - ls.start) / lim.interval(1e9)
				return Decision{
					Allowed:   true,
					Limit:     lim,
					Remaining: int(min(min(ls.remaining+refilled, int64(lim.Burst))+left-cost, int64(lim.Burst))),
					Reset:     time.Duration(max(0, ls.resetAt-now)),
					Source:    SourceLease,
				}, true
			}
		}
	}
	return Decision{}, false
}

// refill is run by the one request per key that holds the flight f: it
// takes a lease from Redis (its own cost plus the lease size less one, and
// nothing unless at least its cost is there), keeps its cost and publishes
// the rest. Tokens left in the lease it replaces (fewer than its cost)
// expire unspent: under-admission, never over.
func (l *Limiter) refill(ctx context.Context, e *entry, lim Limit, cost, now int64, f *flight, deadline int64) Decision {
	defer func() {
		e.flight.Store(nil)
		close(f.done)
	}()
	n := int64(l.leaseSize(e, lim, cost, now)) + cost - 1
	res, err := l.call(ctx, e, lim, n, cost, now, deadline)
	if errors.Is(err, errBudget) {
		return l.budgetSpent(e, lim, cost, now)
	}
	if err != nil {
		return l.fallback(e, lim, cost, now)
	}
	ls := &lease{
		lim:       lim,
		granted:   res.granted,
		remaining: res.remaining,
		start:     now,
		resetAt:   now + res.resetUS*1000,
	}
	if res.granted == 0 {
		// retry_us is for cost tokens; the cached rejection keeps the time
		// of the first token (fromLease adds the cost back), exactly: it is
		// past when Redis holds some tokens, fewer than cost. Clamping it
		// to now, as before, held back cheaper requests the bucket could
		// pay and told a retry of the same cost to wait up to cost-1
		// intervals more than the Retry-After it had been given.
		ls.deniedUntil = now + res.retryUS*1000 - (cost-1)*lim.interval(1e9)
		e.lease.Store(ls)
		return Decision{
			Limit:      lim,
			Remaining:  int(min(res.remaining, int64(lim.Burst))),
			RetryAfter: time.Duration(res.retryUS) * time.Microsecond,
			Reset:      time.Duration(res.resetUS) * time.Microsecond,
			Source:     SourceRedis,
		}
	}
	ls.expires = now + l.window
	ls.left.Store(res.granted - cost)
	e.lease.Store(ls)
	return Decision{
		Allowed:   true,
		Limit:     lim,
		Remaining: int(min(res.remaining+res.granted-cost, int64(lim.Burst))),
		Reset:     time.Duration(res.resetUS) * time.Microsecond,
		Source:    SourceRedis,
	}
}

// direct takes cost tokens from Redis without touching the shared lease.
func (l *Limiter) direct(ctx context.Context, e *entry, lim Limit, cost, now, deadline int64) Decision {
	res, err := l.call(ctx, e, lim, cost, cost, now, deadline)
	if errors.Is(err, errBudget) {
		return l.budgetSpent(e, lim, cost, now)
	}
	if err != nil {
		return l.fallback(e, lim, cost, now)
	}
	d := Decision{
		Allowed:   res.granted > 0,
		Limit:     lim,
		Remaining: int(res.remaining),
		Reset:     time.Duration(res.resetUS) * time.Microsecond,
		Source:    SourceRedis,
	}
	if !d.Allowed {
		d.RetryAfter = time.Duration(res.retryUS) * time.Microsecond
	}
	return d
}

// leaseCap is the largest lease for lim: at most MaxLease, at most what
// the key may spend at its full rate in half a LeaseWindow, and at most a
// quarter of its burst; at least 1. Low limits therefore lease one token
// at a time and are exact.
func (l *Limiter) leaseCap(lim Limit) int {
	c := min(l.maxLease, lim.Burst/4)
	c = min(c, int(lim.Rate*float64(l.window)/float64(time.Second)/2))
	return max(1, c)
}

// leaseSize adapts the lease of one key on this instance to its demand:
// it doubles while leases run out within half a window, and shrinks to
// what was used when a lease expires with tokens left, so an instance
// that sees a key rarely takes one token at a time and wastes none. A
// lease has run out when it cannot pay the request refilling now (left <
// cost), not only at zero: otherwise the requests of a costly route (a
// hub spends 3) found a lease of size 2 with 1 token left every time,
// never grew it, and each made a Redis round trip
// (TestLeaseGrowsForCostlyRequests).
func (l *Limiter) leaseSize(e *entry, lim Limit, cost, now int64) int {
	size := max(1, e.size)
	if prev := e.lease.Load(); prev != nil && prev.granted > 0 {
		left := max(0, prev.left.Load())
		used := int(prev.granted - left)
		switch {
		case left < cost && now-prev.start < l.window/2:
			size *= 2
		case left > 0 && now >= prev.expires:
			size = max(1, min(size/2, used))
		}
	}
	size = min(size, l.leaseCap(lim))
	e.size = size
	return size
}

// call makes one Redis round trip and tracks Redis health. The timeout is
// enforced here, not left to the client: go-redis does not apply the
// context deadline to a connection's handshake, so a Redis that accepts
// connections but does not answer would hold the request for the client's
// DialTimeout (5s by default). A call abandoned at the timeout finishes in
// the background with its context cancelled.
func (l *Limiter) call(ctx context.Context, e *entry, lim Limit, n, least, now, deadline int64) (takeResult, error) {
	var r takeReply
	// What is left of the request's budget bounds the call; a call cut
	// short by it (less than a whole RedisTimeout) does not mark Redis
	// down.
	budget := min(time.Duration(l.timeout), time.Duration(deadline-now))
	if budget <= 0 {
		return takeResult{}, errBudget
	}
	l.redisCalls.Add(1)
	var nowUS int64
	if l.callerClock {
		nowUS = now / 1000
	}
	// The local bucket is kept at Redis's last word (below); it is ahead
	// of it by what the fallback admitted while Redis was out, which the
	// script then charges to the shared bucket. Only then: on the system
	// clock the local TAT is Redis's TAT shifted by the call's latency
	// (sent at now, evaluated at Redis's later TIME), so with no fallback
	// admission to pay for, its lead over now is latency jitter, and
	// passing it as debt ratcheted the shared TAT forward on every slower
	// call, wasting tokens (TestTwoInstancesRealClock under load).
	var debtUS int64
	// Claimed, not read: calls of one key run concurrently (a refill and
	// requests gone direct), and each subtracting what it read drove the
	// count negative, so a later outage's admissions were never charged
	// (TestDebtChargedOnceByConcurrentCalls). Given back unless
	// Redis answered.
	unpaid := max(0, e.unpaid.Swap(0))
	if unpaid > 0 {
		debtUS = (e.ltat.Load() - now) / 1000
	}
	charged := false
	defer func() {
		if !charged && unpaid > 0 {
			e.unpaid.Add(unpaid)
		}
	}()
	key := e.redisKey
	if l.tracer != nil && trace.SpanFromContext(ctx).IsRecording() {
		var span trace.Span
		ctx, span = l.tracer.Start(ctx, "ratelimit redis EVALSHA", trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("db.system.name", "redis"), attribute.String("db.operation.name", "EVALSHA"),
				attribute.Int64("ratelimit.tokens", n)))
		defer func() {
			if r.err != nil {
				span.SetStatus(codes.Error, "redis unavailable")
			}
			span.End()
		}()
	}
	cctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	ch := make(chan takeReply, 1)
	go func() {
		res, err := take(cctx, l.rdb, key, lim, n, least, nowUS, debtUS)
		ch <- takeReply{res, err}
	}()
	select {
	case r = <-ch:
	case <-cctx.Done():
		r.err = fmt.Errorf("ratelimit: no answer from redis within %v: %w", budget, cctx.Err())
		if budget < l.timeout {
			return r.res, errBudget
		}
	}
	if r.err != nil {
		l.redisErrors.Add(1)
		if ctx.Err() == nil { // the caller giving up says nothing about Redis
			l.markDown(r.err, now)
		}
		return r.res, r.err
	}
	if !l.probeOnly {
		l.markUp(now)
	}
	charged = true // admissions meanwhile stay owed
	// The local GCRA continues from the shared bucket's state, so a
	// fallback later starts where Redis left off, not with a fresh burst.
	// The TAT only moves forward (a concurrent answer may be newer).
	syncTAT(e, now+r.res.resetUS*1000)
	return r.res, nil
}

// syncTAT moves the key's local TAT forward to tat.
func syncTAT(e *entry, tat int64) {
	for {
		old := e.ltat.Load()
		if old >= tat || e.ltat.CompareAndSwap(old, tat) {
			return
		}
	}
}

// errBudget: the request's RedisTimeout was spent before Redis answered,
// partly waiting for other requests' refills; Redis is not marked down.
var errBudget = errors.New("ratelimit: request's redis budget spent")

type takeReply struct {
	res takeResult
	err error
}

// redisUsable reports whether this request may try Redis: always while it
// is up; while it is down, for one request per ProbeInterval.
func (l *Limiter) redisUsable(now int64) bool {
	o := l.outage.Load()
	if o == nil {
		return true
	}
	if (o.refused && l.bgProbe) || l.probeOnly {
		return false
	}
	np := l.nextProbe.Load()
	return now >= np && l.nextProbe.CompareAndSwap(np, now+l.probe)
}

// markDown marks Redis unavailable from now, once per outage. nextProbe
// is stored before the outage is published, so a request that sees the
// outage sees its probe time. Transitions are serialised with their log
// lines (stateMu), so the lines come in the order of the changes: a
// markUp that ends this outage waits for its "unavailable" line.
func (l *Limiter) markDown(err error, now int64) {
	if l.outage.Load() != nil {
		l.noteCause(err)
		return
	}
	l.stateMu.Lock()
	defer l.stateMu.Unlock()
	if l.outage.Load() != nil {
		l.noteCauseLocked(err)
		return
	}
	l.nextProbe.Store(now + l.probe)
	l.outage.Store(&outage{since: now, refused: redisauth.Refused(err), cause: redisauth.Cause(err)})
	if l.testHookMarkedDown != nil {
		l.testHookMarkedDown()
	}
	l.activations.Add(1)
	// Durations are seconds in a *_s field, as in the other event lines
	// (slog would write a time.Duration as integer nanoseconds in JSON);
	// markUp's down_for_s is rounded to the millisecond.
	l.log.Warn("ratelimit: redis unavailable, falling back",
		"fail_mode", l.mode.String(), "probe_in_s", time.Duration(l.probe).Seconds(), "cause", redisauth.Cause(err), "err", err)
	if l.bgProbe {
		l.probeMu.Lock()
		if !l.probeDone {
			l.probeWG.Add(1)
			go l.probeLoop()
		}
		l.probeMu.Unlock()
	}
}

// noteCause records a failure during an outage: one that names a cause
// the operator can act on (the credentials, the ACL user) that the outage
// has not named yet gets a line, and a refusal makes the outage one only
// the background probe ends (outage.refused). An outage that began with a
// dropped connection (a password rotation's CLIENT KILL, a Redis restart)
// logged "unavailable", and the probes refused with WRONGPASS after it
// said nothing.
func (l *Limiter) noteCause(err error) {
	o := l.outage.Load()
	if o == nil {
		return
	}
	if _, news := redisauth.NewCause(o.cause, err); !news {
		return
	}
	l.stateMu.Lock()
	defer l.stateMu.Unlock()
	l.noteCauseLocked(err)
}

// noteCauseLocked is noteCause under stateMu.
func (l *Limiter) noteCauseLocked(err error) {
	o := l.outage.Load()
	if o == nil {
		return
	}
	cause, news := redisauth.NewCause(o.cause, err)
	if !news {
		return
	}
	n := *o
	n.cause = cause
	n.refused = n.refused || redisauth.Refused(err)
	l.outage.Store(&n)
	l.log.Warn("ratelimit: redis still unavailable", "cause", n.cause, "err", err)
}

// probeLoop tries Redis once per ProbeInterval until it answers (then
// marks it available), a request found it back first, or Close.
func (l *Limiter) probeLoop() {
	defer l.probeWG.Done()
	t := time.NewTimer(time.Duration(l.probe))
	defer t.Stop()
	for {
		select {
		case <-l.probeStop:
			return
		case <-t.C:
		}
		if l.outage.Load() == nil {
			return
		}
		err := l.probeOnce()
		if err == nil {
			l.markUp(l.now())
			return
		}
		l.noteCause(err)
		t.Reset(time.Duration(l.probe))
	}
}

// probeKey is the background probe's bucket (a limit of 1/s): the hash
// tag keeps it one key on a Cluster.
const probeKey = ":{probe}:rl:probe"

// probeOnce makes one script call as a request would, bounded by
// RedisTimeout the same way (call); a refusal is an answer too. Before it,
// Redis must accept the credentials new connections authenticate with
// (redisauth.Check): after a password rotation the pooled connections
// still run the script, while every new one is refused.
func (l *Limiter) probeOnce() error {
	l.redisCalls.Add(1)
	var nowUS int64
	if l.callerClock {
		nowUS = l.now() / 1000
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	defer cancel()
	ch := make(chan error, 1)
	go func() {
		if u, ok := l.rdb.(redis.UniversalClient); ok {
			if err := redisauth.Check(ctx, u); err != nil {
				ch <- err
				return
			}
		}
		_, err := take(ctx, l.rdb, l.prefix+probeKey, Limit{Rate: 1, Burst: 1}, 1, 1, nowUS, 0)
		ch <- err
	}()
	var err error
	select {
	case err = <-ch:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		l.redisErrors.Add(1)
	}
	return err
}

// markUp ends the outage, if any. down_for_s is never negative: a call sent
// before the outage began may answer after it was marked.
func (l *Limiter) markUp(now int64) {
	if l.outage.Load() == nil {
		return
	}
	l.stateMu.Lock()
	defer l.stateMu.Unlock()
	o := l.outage.Load()
	if o == nil {
		return
	}
	// The line is written before the outage ends, so whoever sees it ended
	// (Stats, a request) finds the line too: in the other order a test
	// polling Stats read the recovery before its line (CI, 2026-11-28).
	l.log.Info("ratelimit: redis available again, shared limits restored",
		"down_for_s", time.Duration(max(0, now-o.since)).Round(time.Millisecond).Seconds())
	l.outage.Store(nil)
}

// budgetSpent decides a request whose one RedisTimeout ran out behind
// other requests' refills, on a Redis not marked down: from
// the local GCRA, which follows Redis's TAT and is charged to Redis at the
// next call, whatever the fail mode: the fail mode is for a Redis that
// cannot answer, and fail-closed refused requests of a key under its quota
// on a Redis answering within its timeout.
func (l *Limiter) budgetSpent(e *entry, lim Limit, cost, now int64) Decision {
	if l.outage.Load() != nil {
		return l.fallback(e, lim, cost, now)
	}
	d := l.local(e, lim, cost, now)
	if d.Allowed {
		e.unpaid.Add(1)
	}
	return d
}

// fallback decides without Redis, per FailMode.
func (l *Limiter) fallback(e *entry, lim Limit, cost, now int64) Decision {
	switch l.mode {
	case FailOpen:
		return Decision{Allowed: true, Limit: lim, Remaining: lim.Burst, Source: SourceFailOpen}
	case FailClosed:
		ra := l.nextProbe.Load() - now
		if ra <= 0 {
			ra = l.probe
		}
		// The quota is unknown until the probe; t must not say "full now"
		// (r=0;t=0) next to a Retry-After (TestFailClosedHeaderNotFullNow).
		return Decision{Limit: lim, RetryAfter: time.Duration(ra), Reset: time.Duration(ra), Source: SourceFailClosed}
	}
	d := l.local(e, lim, cost, now)
	if d.Allowed {
		e.unpaid.Add(1)
	}
	return d
}

// local is the in-process GCRA of one key, lock-free: a request of cost c
// moves the TAT by c emission intervals.
func (l *Limiter) local(e *entry, lim Limit, cost, now int64) Decision {
	t := lim.interval(1e9)
	ct := cost * t
	limit := now + int64(lim.Burst)*t
	for {
		old := e.ltat.Load()
		// min: a TAT beyond lim's full window was set under a limit
		// that refills more slowly (a plan change); empty under lim.
		tat := min(max(old, now), limit)
		if tat+ct > limit {
			if old > limit && !e.ltat.CompareAndSwap(old, limit) {
				continue // stored, so the next request starts from it
			}
			return Decision{
				Limit:      lim,
				RetryAfter: time.Duration(tat + ct - limit),
				Reset:      time.Duration(tat - now),
				Source:     SourceLocal,
			}
		}
		if e.ltat.CompareAndSwap(old, tat+ct) {
			return Decision{
				Allowed:   true,
				Limit:     lim,
				Remaining: int((limit - tat - ct) / t),
				Reset:     time.Duration(tat + ct - now),
				Source:    SourceLocal,
			}
		}
	}
}

// entry returns the local state of a key, creating it if needed.
func (l *Limiter) entry(dealerID int64, keyID string, now int64) (*shard, *entry) {
	h := maphash.String(l.seed, keyID) ^ uint64(dealerID)*0x9e3779b97f4a7c15
	sh := &l.shards[(h^h>>32)%numShards]
	sh.mu.RLock()
	e := sh.lookup(h, dealerID, keyID)
	sh.mu.RUnlock()
	if e != nil {
		return sh, e
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e := sh.lookup(h, dealerID, keyID); e != nil {
		return sh, e
	}
	if sh.len() >= l.perShard || now-sh.lastSweep >= int64(sweepEvery) {
		sh.sweep(now)
	}
	for sh.len() >= l.perShard {
		sh.evictOne()
		l.evictions.Add(1)
	}
	e = &entry{
		dealer:   dealerID,
		keyID:    keyID,
		redisKey: l.prefix + ":{d" + strconv.FormatInt(dealerID, 10) + "}:rl:" + keyID,
	}
	if _, taken := sh.m[h]; !taken {
		sh.m[h] = e
	} else {
		if sh.more == nil {
			sh.more = make(map[entryKey]*entry)
		}
		sh.more[entryKey{dealerID, keyID}] = e
	}
	return sh, e
}

// lookup finds a key; the caller holds sh.mu.
func (sh *shard) lookup(h uint64, dealerID int64, keyID string) *entry {
	e := sh.m[h]
	if e == nil || e.dealer == dealerID && e.keyID == keyID {
		return e
	}
	return sh.more[entryKey{dealerID, keyID}]
}

func (sh *shard) len() int { return len(sh.m) + len(sh.more) }

// evictOne drops an arbitrary entry (map order is random).
func (sh *shard) evictOne() {
	for k := range sh.more {
		delete(sh.more, k)
		return
	}
	for h := range sh.m {
		delete(sh.m, h)
		return
	}
}

// sweep drops the entries of a shard that carry no state: no refill in
// flight, no usable lease or cached rejection, and a full local bucket.
// Dropping them loses nothing but the adaptive lease size.
func (sh *shard) sweep(now int64) {
	sh.lastSweep = now
	for h, e := range sh.m {
		if e.idle(now) {
			delete(sh.m, h)
		}
	}
	for k, e := range sh.more {
		if e.idle(now) {
			delete(sh.more, k)
		}
	}
}

func (e *entry) idle(now int64) bool {
	if e.flight.Load() != nil || e.ltat.Load() > now {
		return false
	}
	ls := e.lease.Load()
	return ls == nil || now >= ls.expires && now >= ls.deniedUntil
}

// Stats are counters since New.
type Stats struct {
	Admitted            uint64 // requests allowed
	Rejected            uint64 // requests rejected
	RedisCalls          uint64 // Redis round trips
	RedisErrors         uint64 // round trips that failed or timed out
	FallbackActivations uint64 // times Redis was marked unavailable
	Evictions           uint64 // keys with state dropped because MaxKeys was reached
	Keys                int    // keys with local state now
	FallbackActive      bool   // Redis is marked unavailable now
}

// Stats returns the counters. They are read one by one, not as a snapshot.
func (l *Limiter) Stats() Stats {
	s := Stats{
		RedisCalls:          l.redisCalls.Load(),
		RedisErrors:         l.redisErrors.Load(),
		FallbackActivations: l.activations.Load(),
		Evictions:           l.evictions.Load(),
		FallbackActive:      l.outage.Load() != nil,
	}
	for i := range l.shards {
		sh := &l.shards[i]
		s.Admitted += sh.admitted.Load()
		s.Rejected += sh.rejected.Load()
		sh.mu.RLock()
		s.Keys += sh.len()
		sh.mu.RUnlock()
	}
	return s
}

// Close stops the use of Redis: later calls of Allow decide with the local
// limiter only, and the background probe ends (Close waits for it, at most
// RedisTimeout). It does not close the Redis client, which belongs to the
// caller, and always returns nil.
func (l *Limiter) Close() error {
	l.closed.Store(true)
	l.probeMu.Lock()
	if !l.probeDone {
		l.probeDone = true
		close(l.probeStop)
	}
	l.probeMu.Unlock()
	l.probeWG.Wait()
	return nil
}
