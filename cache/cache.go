package cache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dealer-edge/dealer-edge/internal/workers"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/singleflight"
)

// FillFunc produces the body of a missing or expired entry. It may run after
// the Get that supplied it has returned (a background stale-while-revalidate
// refresh, or a fill shared with other callers), with a context detached from
// that caller's cancellation: it must not use request-scoped memory (such as
// a fasthttp.RequestCtx) and must honour ctx. The returned slice is kept by
// the cache and must not be modified afterwards.
type FillFunc func(ctx context.Context) ([]byte, error)

// ErrPurgeDeferred is wrapped in the error of PurgeDealer when the purge took
// effect in this instance but Redis could not be told. The instance retries
// on its own when Redis is back; until then other instances keep their
// entries.
var ErrPurgeDeferred = errors.New("cache: purge deferred until redis is reachable")

// Defaults of Options.
const (
	DefaultPrefix         = "edge:v1"
	DefaultL1MaxBytes     = 64 << 20
	DefaultRedisTimeout   = 50 * time.Millisecond
	DefaultRefreshTimeout = 5 * time.Second
	DefaultLockTTL        = 5 * time.Second
	DefaultGenerationPoll = 2 * time.Second
	// DefaultMaxRefreshes is half of the upstream client's default
	// connection pool per service (upstream.DefaultMaxConnsPerHost, 256):
	// background refreshes alone never hold more than half of a service's
	// connections, so foreground misses keep the rest. At a 5 ms upstream
	// the bench's refresh row (3,000 refreshes a second) has 15-30 under
	// way; 128 is 25,000 a second at 5 ms, 2,500 at 50 ms.
	DefaultMaxRefreshes = 128

	backoffMin = 500 * time.Millisecond
	backoffMax = 5 * time.Second
)

// Options configure a Cache. The zero value is an L1-only cache of 64 MiB.
type Options struct {
	// Redis is the shared L2 (a single node, a Cluster or Sentinel). Nil
	// means L1 only; purges are then local. The cache never closes it.
	//
	// Every Redis call runs under a hard RedisTimeout budget enforced by the
	// cache, whatever the client's own timeouts; set ContextTimeoutEnabled
	// and short Read/WriteTimeouts on the client as well, so that abandoned
	// calls also free their connection quickly, and a low DialerRetries (1),
	// so that a dead node is recognised within the budget.
	Redis redis.UniversalClient
	// Prefix starts every Redis key of an entry and of its fill lock; the
	// caller puts the contract version in it, so a release that shapes
	// bodies for another contract version never reads these entries.
	// Default "edge:v1". It must not contain '{' or '}' (they would break
	// the per-dealer hash tag).
	Prefix string
	// PurgePrefix starts the dealers' generation keys and the purge
	// channel; default Prefix. Instances that must see each other's purges
	// need the same PurgePrefix, whatever their Prefix: during a rolling
	// deploy from one contract version to the next (two Prefixes on one
	// Redis), a purge made on either side then moves the generation of
	// both, and both drop the dealer's entries. Same rule for '{' and '}'.
	PurgePrefix string
	// L1MaxBytes bounds the in-process cache (bodies, keys and a per-entry
	// overhead). Zero means 64 MiB; negative disables L1. Entries larger
	// than an eighth of the hot tier are not kept in the hot tier.
	//
	// Above 256 MiB the budget is split in two tiers (see L1HotBytes): a
	// hot tier of Go objects (zero-copy hits, no allocation) and an
	// off-heap bulk tier (entries in Redis's wire format, compressed when
	// Redis is used, in memory the garbage collector never scans), looked
	// up after the hot tier and before Redis.
	L1MaxBytes int64
	// L1HotBytes is the hot tier's share of L1MaxBytes; the rest is the
	// bulk tier. Zero: 16 MiB when L1MaxBytes is above 256 MiB, else all
	// of it (no bulk tier). Negative: no bulk tier at any size. A bulk
	// tier under 32 MiB is not made (L1Tiers).
	L1HotBytes int64
	// RedisTimeout is the budget of each Redis call. Default 50ms.
	RedisTimeout time.Duration
	// Now is the clock. Default time.Now; tests pass a fake clock.
	Now func() time.Time
	// Logger receives one line per Redis or subscription state change.
	// Default slog.Default().
	Logger *slog.Logger
	// TracerProvider, when non-nil, makes spans of the fill and of the
	// Redis calls that a Get makes for a context carrying a recording span
	// (a traced request). Get's fast paths check nothing else; Fresh never
	// looks. Nil: no spans.
	TracerProvider trace.TracerProvider
	// ServeStaleOn decides which fill errors allow serving an entry within
	// its stale-if-error window. Default: every error.
	ServeStaleOn func(error) bool
	// DropOn decides which fill errors mean that the key's response no
	// longer exists (a detail whose record the service now answers 404
	// for): the key's entry is then removed from L1, the bulk tier and
	// Redis, so a copy kept for stale-while-revalidate or stale-if-error
	// is never served again; a later request fills anew. Default: none.
	DropOn func(error) bool
	// RefreshTimeout bounds a background stale-while-revalidate refresh and
	// a shared fill whose first caller had no deadline. Default 5s.
	RefreshTimeout time.Duration
	// LockWait enables coalescing across instances: on an L2 miss an instance
	// takes a Redis lock (SET NX PX LockTTL) before filling; the others poll
	// L2 for up to LockWait and fill themselves when it runs out. Zero
	// disables the lock.
	LockWait time.Duration
	// LockTTL is how long a fill lock lives if its holder dies. Default 5s.
	LockTTL time.Duration
	// GenerationPoll is how often generations are re-read from Redis while
	// the purge subscription is not confirmed healthy; it bounds how late a
	// purge from another instance is seen then. Default 2s.
	GenerationPoll time.Duration
	// NoAutoPipeline sends each entry read and write on a connection of its
	// own, one round trip per call. By default they are pipelined: the
	// commands of all concurrent requests queued while a round trip runs go
	// out together in the next one (one write and one read), so the system
	// calls per request fall as concurrency rises (see batcher). The
	// RedisTimeout budget, skipping a Redis marked down and the background
	// probe work the same either way.
	NoAutoPipeline bool
	// GzipLevel is how entries' bodies are compressed (for Redis, the
	// bulk tier and gzip clients): 0 (DefaultGzipLevel) with the shared
	// code of internal/deflate, whose members an identity client's L2 hit
	// inflates without building Huffman tables; 1-9 with klauspost's
	// compressor at that level, which makes values about 12% smaller than
	// the shared code at level 6 but compresses in 2.5 times its time and
	// inflates in about 1.3 times. Among levels 1-9 a lower level
	// compresses faster for more bytes (level 1: half the time of level 6
	// for 11-17% more bytes); decompression costs the same at any of them.
	GzipLevel int
	// MaxRefreshes bounds the background stale-while-revalidate refreshes
	// under way at once in this process. A stale hit that finds the bound
	// reached is served stale as always but starts no refresh (counted in
	// Stats.RefreshesSkipped); the next stale hit of the key tries again.
	// Nothing waits or queues for it, and foreground fills (misses,
	// refills within stale-if-error) are neither counted nor bounded.
	// Zero means DefaultMaxRefreshes; negative means no bound.
	// SetMaxRefreshes changes it at run time.
	MaxRefreshes int
	// RedisDealerBudget bounds the bytes (key and value) of one dealer's
	// entries that this instance adds to Redis and that Redis still keeps:
	// a write of an entry Redis did not hold is counted until the entry's
	// Redis TTL ends, and one that would pass the budget is not made (the
	// response is answered and kept in L1 all the same; counted in
	// Stats.RedisBudgetSkips, and logged once per dealer per 10 minutes).
	// Rewrites of entries Redis holds are never refused, nor are facts
	// stored with Put (small, short-lived remembered answers). It keeps one key
	// that floods distinct URLs from filling Redis and evicting the other
	// dealers' entries (budget.go). Zero or negative: no budget.
	// SetRedisDealerBudget changes it at run time.
	RedisDealerBudget int64
}

// Cache is a two-level response cache. It is safe for concurrent use.
type Cache struct {
	gzipLevel      int8         // Options.GzipLevel, given to every entry made here
	plainBelow     atomic.Int64 // SetPlainBelow
	rdb            redis.UniversalClient
	batch          *batcher // nil: one round trip per call
	prefix         string   // entries and fill locks (Options.Prefix)
	purgePrefix    string   // generation keys and the purge channel (Options.PurgePrefix)
	channel        string
	now            func() time.Time
	realClock      bool // now is time.Now: a caller's reading of it may stand in (FreshAt)
	log            *slog.Logger
	serveStaleOn   func(error) bool
	dropOn         func(error) bool
	redisTimeout   time.Duration
	refreshTimeout atomic.Int64 // nanoseconds; SetRefreshTimeout
	lockTTL        time.Duration
	lockWait       time.Duration
	genPoll        time.Duration

	tracer   trace.Tracer // nil: no spans
	l1       *l1          // nil when disabled
	bulk     *bulkTier    // nil unless L1 is split in tiers
	bulkGzip bool         // the bulk tier keeps gzip variants (Redis needs them anyway)
	gens     generations
	// epoch is the global purge epoch (PurgeAll), kept as a dealer's
	// generation is, with the same guess rules while Redis is unreachable.
	epoch      genState
	flights    singleflight.Group
	genFlights singleflight.Group
	refreshing sync.Map // flight key -> struct{}: refreshes under way
	fillsMu    sync.Mutex
	fills      map[string]*fillTrack // flight key -> the fills of it under way in this instance
	refreshers *workers.Pool         // runs them on goroutines that keep their grown stacks
	// refreshSlots counts the refreshes under way, at most maxRefreshes
	// (negative: no bound); a stale hit takes a slot without waiting.
	refreshSlots atomic.Int64
	maxRefreshes atomic.Int64
	// refreshWG counts the refresh goroutines, for Close to wait for;
	// refreshMu orders a refresh's start (read lock) against Close setting
	// refreshClosed, so that none starts after Close has waited.
	refreshMu     sync.RWMutex
	refreshClosed bool
	refreshWG     sync.WaitGroup

	redisUp  atomic.Bool
	pubsubUp atomic.Bool
	downCh   chan struct{}
	// downCause is redisauth.Cause of the error that marked Redis down,
	// for the probe loop's "still unavailable" line.
	downCause atomic.Pointer[string]

	// heldLocks holds the fill locks of the fills under way (*heldLock ->
	// struct{}), for Close to release.
	heldLocks sync.Map
	// orphans are fill locks whose release found Redis marked down
	// (see unlock).
	orphanMu sync.Mutex
	orphans  []orphanLock

	pendingMu sync.Mutex
	pending   map[int64]struct{} // purges Redis has not seen yet
	// pendingAll is set while a PurgeAll made here has not reached Redis.
	pendingAll atomic.Bool

	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
	psMu      sync.Mutex
	ps        *redis.PubSub

	st     counters
	budget redisBudget // Options.RedisDealerBudget

	// testHookJoin runs after a caller joined a flight (tests only).
	testHookJoin func()
}

// MaxL1Bytes bounds Options.L1MaxBytes: the frequency sketch is allocated
// at start for the whole L1 (a thirty-second to a sixty-fourth of it), so a
// typo in the exabytes panicked in New and one in the terabytes was an
// out-of-memory kill at start.
const MaxL1Bytes = 1 << 40

// New returns a Cache. With a Redis client it starts background goroutines
// (purge subscription, health probe, generation poll) that Close stops.
func New(opts Options) (*Cache, error) {
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if strings.ContainsAny(opts.Prefix, "{}") {
		return nil, fmt.Errorf("cache: Prefix %q must not contain '{' or '}'", opts.Prefix)
	}
	if opts.PurgePrefix == "" {
		opts.PurgePrefix = opts.Prefix
	}
	if strings.ContainsAny(opts.PurgePrefix, "{}") {
		return nil, fmt.Errorf("cache: PurgePrefix %q must not contain '{' or '}'", opts.PurgePrefix)
	}
	durations := []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"RedisTimeout", &opts.RedisTimeout, DefaultRedisTimeout},
		{"RefreshTimeout", &opts.RefreshTimeout, DefaultRefreshTimeout},
		{"LockTTL", &opts.LockTTL, DefaultLockTTL},
		{"LockWait", &opts.LockWait, 0},
		{"GenerationPoll", &opts.GenerationPoll, DefaultGenerationPoll},
	}
	for _, d := range durations {
		if *d.v < 0 {
			return nil, fmt.Errorf("cache: %s must not be negative, got %v", d.name, *d.v)
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if opts.L1MaxBytes > MaxL1Bytes {
		return nil, fmt.Errorf("cache: L1MaxBytes %d is above %d (1 TiB)", opts.L1MaxBytes, int64(MaxL1Bytes))
	}
	if opts.L1MaxBytes == 0 {
		opts.L1MaxBytes = DefaultL1MaxBytes
	}
	if opts.GzipLevel < 0 || opts.GzipLevel > 9 {
		return nil, fmt.Errorf("cache: GzipLevel must be 0 (the default, the shared code) or 1-9, got %d", opts.GzipLevel)
	}
	realClock := opts.Now == nil
	if realClock {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ServeStaleOn == nil {
		opts.ServeStaleOn = func(error) bool { return true }
	}
	c := &Cache{
		refreshers:   workers.New(workerIdle),
		gzipLevel:    int8(opts.GzipLevel),
		rdb:          opts.Redis,
		prefix:       opts.Prefix,
		purgePrefix:  opts.PurgePrefix,
		channel:      opts.PurgePrefix + ":purge",
		now:          opts.Now,
		realClock:    realClock,
		log:          opts.Logger,
		serveStaleOn: opts.ServeStaleOn,
		dropOn:       opts.DropOn,
		redisTimeout: opts.RedisTimeout,
		lockTTL:      opts.LockTTL,
		lockWait:     opts.LockWait,
		genPoll:      opts.GenerationPoll,
		downCh:       make(chan struct{}, 1),
		pending:      make(map[int64]struct{}),
	}
	c.SetMaxRefreshes(opts.MaxRefreshes)
	c.SetRefreshTimeout(opts.RefreshTimeout) // defaulted above
	c.SetRedisDealerBudget(opts.RedisDealerBudget)
	c.gens.m = make(map[int64]*genState)
	if opts.TracerProvider != nil {
		c.tracer = opts.TracerProvider.Tracer("github.com/dealer-edge/dealer-edge/cache")
	}
	if opts.L1MaxBytes > 0 {
		hot, bulk := L1Tiers(opts.L1MaxBytes, opts.L1HotBytes)
		c.l1 = newL1(hot)
		c.l1.epoch = &c.epoch.gen
		if bulk > 0 {
			// One sketch counts lookups for both tiers: sized for the
			// whole budget, as one tier of that size would be.
			c.l1.freq = newSketch(opts.L1MaxBytes / 256)
			c.bulk = newBulkTier(bulk, c.l1.freq)
			c.bulkGzip = c.rdb != nil
			c.l1.onEvict = c.demote
		}
	}
	if c.rdb != nil && !opts.NoAutoPipeline {
		c.batch = newBatcher(c.rdb, maxQueuedCommands, c.redisTimeout)
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	if c.rdb != nil {
		c.redisUp.Store(true)
		c.wg.Add(3)
		go c.probeLoop()
		go c.subscribeLoop()
		go c.pollLoop()
	}
	return c, nil
}

// Close stops the background goroutines and waits for them, releases
// the fill locks of the fills still running, cancels the background
// refreshes and waits for them to end (their fills must honour their
// context: Close waits at most the refresh timeout for one that does not),
// and empties the bulk tier, whose memory (outside the Go heap) the
// collector would not reclaim. Once it returns no refresh writes to L1 or
// Redis, so the caller may close the Redis client
// (TestCloseWaitsForRefreshes). The Redis client stays open. Get keeps
// working after Close, without refreshes in the background.
func (c *Cache) Close() error {
	c.closeOnce.Do(func() {
		c.cancel()
		c.refreshMu.Lock()
		c.refreshClosed = true
		c.refreshMu.Unlock()
		// The fills still running (the background refreshes just
		// cancelled, a request the drain outlived) release their locks
		// when they end, which may be after the caller closed the Redis
		// client (cmd/dealer-edge does, next): released here, the
		// others' misses of those keys need not wait for lock_ttl
		// (TestCloseReleasesLocksOfRunningFills). A fill that stores
		// after it still does (its release finds the lock gone).
		c.heldLocks.Range(func(k, _ any) bool {
			h := k.(*heldLock)
			c.unlock(h.key, h.token)
			return true
		})
		c.psMu.Lock()
		if c.ps != nil {
			_ = c.ps.Close()
		}
		c.psMu.Unlock()
		c.wg.Wait()
		// Before this, a refresh cancelled above whose fill had its body
		// already stored it (L1, the bulk tier, Redis) after Close had
		// returned, on a Redis client the caller had closed meanwhile.
		// At most the refresh timeout, as documented: a fill that does
		// not honour its context (an upstream call blocked past it)
		// kept Close, and the shutdown after the grace period, waiting
		// until it ended, if ever (TestCloseBoundedByRefreshTimeout).
		waited := make(chan struct{})
		go func() {
			c.refreshWG.Wait()
			close(waited)
		}()
		bound := time.NewTimer(c.RefreshTimeout())
		select {
		case <-waited:
		case <-bound.C:
			c.log.Warn("cache: closed with background refreshes still running (their fills ignore their cancellation)",
				"refreshes", c.refreshSlots.Load())
		}
		bound.Stop()
		if c.batch != nil {
			// What the refreshes (and the lock releases above) queued
			// and stopped waiting for still goes out: before Close
			// returns (TestCloseWaitsForRefreshes, NoAutoPipeline=false).
			c.batch.drain()
		}
		if c.bulk != nil {
			c.bulk.fc.Reset()
		}
	})
	return nil
}

// RedisHealthy reports whether the cache currently uses Redis.
func (c *Cache) RedisHealthy() bool { return c.rdb != nil && c.redisUp.Load() }

// Get returns the entry of key for dealerID, filling it on a miss.
//
// key is the normalised route and query (defaults applied, parameters
// sorted), without the dealer, which Get adds; Get does not keep key. pol is
// the route's current policy. The Result says how the entry was obtained, for
// X-Cache. On an error the entry is nil; fill errors are returned as they
// are (wrapped by nothing), or hidden by a stale entry within its
// stale-if-error window (Result Stale, nil error). A fill error is never
// cached.
//
// The entry's plain body is ready (Body does not fail) unless another
// caller's flight handed over an entry read from Redis whose payload turned
// out corrupt; see GetGzip for callers that serve the gzip variant.
func (c *Cache) Get(ctx context.Context, dealerID int64, key []byte, pol Policy, fill FillFunc) (*Entry, Result, error) {
	return c.get(ctx, dealerID, key, pol, fill, true)
}

// GetGzip is Get for a caller that will send the entry's gzip variant
// (Entry.Gzip) when it has one: an entry read from Redis in compressed form
// is then served without ever being decompressed.
func (c *Cache) GetGzip(ctx context.Context, dealerID int64, key []byte, pol Policy, fill FillFunc) (*Entry, Result, error) {
	return c.get(ctx, dealerID, key, pol, fill, false)
}

// usable reports whether e can be served to a caller that needs the plain
// body (plain) or not, decompressing it if needed; an entry whose stored
// payload is corrupt is not.
func usable(e *Entry, plain bool) bool {
	return !plain || e.plain.Load() != nil || e.Body() != nil
}

func (c *Cache) get(ctx context.Context, dealerID int64, key []byte, pol Policy, fill FillFunc, plain bool) (*Entry, Result, error) {
	pol = pol.normalised()
	if pol.TTL == 0 {
		return c.bypass(ctx, pol, fill)
	}
	var fallback, expired *Entry
	if c.l1 != nil {
		if n, s := c.l1.lookup(dealerID, key); n != nil {
			now := c.now()
			st := pol.state(n.entry, now)
			if st != stateExpired && !usable(n.entry, plain) {
				c.st.l2Errors.Add(1)
				st = stateExpired
			}
			switch st {
			case stateFresh:
				s.hits.Add(1)
				return n.entry, Hit, nil
			case stateStale:
				c.st.stale.Add(1)
				c.refresh(ctx, dealerID, string(key), pol, fill)
				return n.entry, Stale, nil
			case stateError:
				fallback = n.entry
			default:
				// Never served again, but its fill may find it unchanged
				// (see l2Probe.expired).
				expired = n.entry
				c.l1.remove(n)
			}
		}
	}
	return c.miss(ctx, dealerID, key, pol, fill, fallback, expired, plain)
}

// Fresh returns the entry of key for dealerID when L1 holds it fresh under
// pol: the hit path without a fill function, so a caller can build its fill
// (a closure, which allocates) only when it is needed. A fresh entry found
// here counts as a hit, as in Get. It never touches Redis. Its plain body
// is ready, as after Get; FreshGzip is the GetGzip form.
func (c *Cache) Fresh(dealerID int64, key []byte, pol Policy) (*Entry, bool) {
	return c.fresh(dealerID, key, pol, true, time.Time{})
}

// FreshGzip is Fresh for a caller that will send the gzip variant when the
// entry has one.
func (c *Cache) FreshGzip(dealerID int64, key []byte, pol Policy) (*Entry, bool) {
	return c.fresh(dealerID, key, pol, false, time.Time{})
}

// FreshAt is Fresh, or FreshGzip when gzip is set, judged at now: a
// reading of time.Now the caller took at the start of the request (a hit
// then costs no clock read of its own, about 60 ns on this VM). A zero
// now, or a cache given a clock of its own (Options.Now), reads the
// cache's clock.
func (c *Cache) FreshAt(dealerID int64, key []byte, pol Policy, gzip bool, now time.Time) (*Entry, bool) {
	return c.fresh(dealerID, key, pol, !gzip, now)
}

func (c *Cache) fresh(dealerID int64, key []byte, pol Policy, plain bool, now time.Time) (*Entry, bool) {
	pol = pol.normalised()
	if pol.TTL == 0 || c.l1 == nil {
		return nil, false
	}
	n, s := c.l1.lookup(dealerID, key)
	if n == nil {
		return nil, false
	}
	if now.IsZero() || !c.realClock {
		now = c.now()
	}
	if pol.state(n.entry, now) != stateFresh || !usable(n.entry, plain) {
		return nil, false
	}
	s.hits.Add(1)
	return n.entry, true
}

func (c *Cache) bypass(ctx context.Context, pol Policy, fill FillFunc) (*Entry, Result, error) {
	c.st.bypass.Add(1)
	body, err := safeFill(func() ([]byte, error) { return fill(ctx) })
	if err != nil {
		return nil, Bypass, err
	}
	// The body may be the caller's pooled storage (a route with its
	// cache off encodes into one): never shared with another entry.
	e := newEntryOf(body, c.now(), pol, false)
	e.level = c.gzipLevel
	return e, Bypass, nil
}

// outcome is what a flight hands to every caller that joined it.
type outcome struct {
	e   *Entry
	res Result
}

// flightKey names the one flight (or refresh) of key under the dealer's
// current generation: a caller that comes after a purge starts a fill of
// its own instead of joining one that began before it and would hand it
// the pre-purge body.
func (c *Cache) flightKey(dealer int64, key string) string {
	ep := c.epoch.gen.Load()
	gen := c.gens.get(dealer).gen.Load()
	b := make([]byte, 0, 72+len(key))
	b = strconv.AppendInt(b, dealer, 10)
	b = append(b, 0)
	b = strconv.AppendUint(b, gen, 10)
	b = append(b, 0)
	b = strconv.AppendUint(b, ep, 10)
	b = append(b, 0)
	b = append(b, key...)
	return string(b)
}

// miss runs (or joins) the one flight of the key and waits for it or for ctx.
func (c *Cache) miss(ctx context.Context, dealer int64, key []byte, pol Policy, fill FillFunc, fallback, expired *Entry, plain bool) (*Entry, Result, error) {
	if c.bulk != nil {
		if o, ok := c.probeBulk(ctx, dealer, key, pol, fill, &fallback, plain); ok {
			c.count(o.res)
			return o.e, o.res, nil
		}
	}
	skey := string(key)
	probe := l2Probe{expired: expired}
	if c.rdb != nil {
		if o, ok := c.probeL2(ctx, dealer, skey, pol, fill, &probe, plain); ok {
			c.count(o.res)
			return o.e, o.res, nil
		}
		// An entry only within its stale-if-error window is what this
		// caller serves if it gives up on the flight, as one held in L1
		// would be.
		fallback = newer(fallback, probe.e)
	}
	return c.joinFlight(ctx, dealer, skey, pol, fill, fallback, probe, plain)
}

// joinFlight is miss past the lookups: it runs (or joins) the key's flight
// and waits for it or for ctx. It is a function of its own because the
// flight's closure captures its arguments, which then live on the heap: in
// miss they were made there on every call, an L2 hit's included (two
// allocations an L2 hit).
func (c *Cache) joinFlight(ctx context.Context, dealer int64, skey string, pol Policy, fill FillFunc, fallback *Entry, probe l2Probe, plain bool) (*Entry, Result, error) {
	led := false
	ch := c.flights.DoChan(c.flightKey(dealer, skey), func() (any, error) {
		led = true
		fctx, cancel := c.flightContext(ctx)
		defer cancel()
		return c.load(fctx, dealer, skey, pol, fill, fallback, false, probe, plain)
	})
	if c.testHookJoin != nil {
		c.testHookJoin()
	}
	var err error
	select {
	case r := <-ch:
		if !led {
			c.st.coalesced.Add(1)
		}
		if r.Err == nil {
			o := r.Val.(outcome)
			c.count(o.res)
			return o.e, o.res, nil
		}
		err = r.Err
	case <-ctx.Done():
		err = ctx.Err()
	}
	if fallback != nil && c.serveStaleOn(err) && pol.state(fallback, c.now()) != stateExpired {
		c.st.staleOnError.Add(1)
		c.count(Stale)
		return fallback, Stale, nil
	}
	c.count(Miss)
	return nil, Miss, err
}

func (c *Cache) count(r Result) {
	switch r {
	case Hit:
		c.st.hitsL2.Add(1)
	case Miss:
		c.st.misses.Add(1)
	case Stale:
		c.st.stale.Add(1)
	}
}

// flightContext detaches a shared fill from the cancellation of the caller
// that happened to start it (the others may still want the result), keeping
// its values. Its deadline is the later of that caller's and RefreshTimeout
// from now: a caller that joins later, with more time (or no deadline),
// must not fail when the first caller's deadline ends (it did); each
// caller's wait is bounded by its own context (miss).
func (c *Cache) flightContext(ctx context.Context) (context.Context, context.CancelFunc) {
	base := context.WithoutCancel(ctx)
	dl := time.Now().Add(c.RefreshTimeout())
	if d, ok := ctx.Deadline(); ok && d.After(dl) {
		dl = d
	}
	return context.WithDeadline(base, dl)
}

var errRefreshElsewhere = errors.New("cache: another instance is refreshing")

// load is the body of a flight: look again in L1 (a flight that just ended
// may have stored the entry: the race groupcache's load comments on), then
// L2, then take the cross-instance lock or wait for its holder, then fill and
// store. In refresh mode only a fresh entry ends the search, and a lock held
// elsewhere ends the refresh.
// l2Probe is what a caller's own L2 lookup, made before it joined a flight,
// found: nothing servable (e is nil, or an entry only within its
// stale-if-error window) under generation gen and purge epoch ep.
type l2Probe struct {
	done bool
	gen  uint64
	ep   uint64
	e    *Entry
	// expired is the entry L1 held past all its windows, if any: never
	// served, but the one the fill is offered to revalidate (and whose
	// compressed bytes it keeps) when no servable entry is at hand.
	expired *Entry
}

// probeL2 looks the key up in L2 before any flight: an L2 hit is one
// (pipelined) GET, with no flight, goroutine or channel of its own,
// and concurrent lookups of one key are cheap since they share round trips.
// It reports true with the outcome when the entry can be served (fresh, or
// stale within stale-while-revalidate, which starts one refresh); otherwise
// it records in p what it found, so that the flight does not ask again.
func (c *Cache) probeL2(ctx context.Context, dealer int64, key string, pol Policy, fill FillFunc, p *l2Probe, plain bool) (outcome, bool) {
	ep := c.currentEpoch(ctx)
	gen, cur := c.generation(ctx, dealer)
	if !c.l2Usable(cur) || !c.redisUp.Load() {
		return outcome{}, false
	}
	// An identity client's fresh or stale hit is inflated into storage
	// lent from a pool (Entry.inflateLent) and offered to L1 as any L2 hit
	// is, while marked lending, which L1's lookups pass over: if L1 keeps
	// it, the entry keeps the storage; if not (most L2 hits of a working
	// set larger than L1), no other request can have taken it from L1, and
	// the storage goes back once this response is written. The bulk tier
	// copies the entry's compressed value and keeps nothing of it, so it
	// does not change that: before 2026-11-28 an L2 hit with a bulk tier
	// made its body on the heap, 9 KB of garbage a hit that L1's hot tier
	// mostly did not keep (BenchmarkLargeL1Redis: the collector's share of
	// the CPU at 1 GiB was 21%, see the README).
	e := c.l2Get(ctx, c.entryKeyAt(dealer, gen, ep, key), pol, false)
	p.done, p.gen, p.ep = true, gen, ep
	if e == nil {
		return outcome{}, false
	}
	st := pol.state(e, c.now())
	if plain {
		switch {
		case st == stateFresh || st == stateStale:
			if !e.inflateLent() {
				c.st.l2Errors.Add(1)
				return outcome{}, false
			}
			e.lending.Store(true)
			if c.l1put(dealer, key, gen, ep, cur, e) {
				e.keepLent() // L1 keeps it, with the storage or a copy of its length
			}
			e.lending.Store(false)
		case st != stateExpired:
			if !usable(e, true) {
				c.st.l2Errors.Add(1)
				return outcome{}, false
			}
			c.l1put(dealer, key, gen, ep, cur, e)
		}
	} else if st != stateExpired {
		c.l1put(dealer, key, gen, ep, cur, e)
	}
	switch st {
	case stateFresh:
		c.st.l2Hits.Add(1)
		return outcome{e, Hit}, true
	case stateStale:
		c.st.l2Hits.Add(1)
		c.refresh(ctx, dealer, key, pol, fill)
		return outcome{e, Stale}, true
	case stateError:
		p.e = e
	}
	return outcome{}, false
}

func (c *Cache) load(ctx context.Context, dealer int64, key string, pol Policy, fill FillFunc, fallback *Entry, refresh bool, probe l2Probe, plain bool) (outcome, error) {
	var held *heldLock // the fill lock, while this call holds it
	ep := c.currentEpoch(ctx)
	gen, cur := c.generation(ctx, dealer)
	now := c.now()
	if c.l1 != nil {
		if n := c.l1.lookupString(dealer, key); n != nil && n.gen == gen && n.epoch == ep && usable(n.entry, plain) {
			switch pol.state(n.entry, now) {
			case stateFresh:
				return outcome{n.entry, Hit}, nil
			case stateStale:
				if !refresh {
					c.refresh(ctx, dealer, key, pol, fill)
					return outcome{n.entry, Stale}, nil
				}
				fallback = newer(fallback, n.entry)
			case stateError:
				fallback = newer(fallback, n.entry)
			}
		}
	}
	var rkey string
	l2Held := false // Redis held an entry of the key (a write replaces it)
	// Without a generation confirmed by Redis, L2 is not used: its keys
	// would be guesses, and could find entries a purge has retired (or,
	// after a purge Redis has not taken, be the number Redis gives the next
	// purge of another instance).
	if c.rdb != nil && c.l2Usable(cur) {
		rkey = c.entryKeyAt(dealer, gen, ep, key)
		var e *Entry
		if probe.done && probe.gen == gen && probe.ep == ep {
			e = probe.e // looked up just before the flight
		} else {
			e = c.l2Get(ctx, rkey, pol, plain)
		}
		if e != nil {
			l2Held = true
			st := pol.state(e, now)
			if st != stateExpired {
				c.l1put(dealer, key, gen, ep, cur, e)
			}
			switch st {
			case stateFresh:
				c.st.l2Hits.Add(1)
				return outcome{e, Hit}, nil
			case stateStale:
				if !refresh {
					c.st.l2Hits.Add(1)
					c.refresh(ctx, dealer, key, pol, fill)
					return outcome{e, Stale}, nil
				}
				fallback = newer(fallback, e)
			case stateError:
				fallback = newer(fallback, e)
			}
		}
		if c.lockWait > 0 {
			lkey := c.lockKeyAt(dealer, gen, ep, key)
			token, got, err := c.lock(ctx, lkey)
			switch {
			case err != nil:
				// Redis trouble: fill without the lock.
			case got:
				held = &heldLock{key: lkey, token: token}
				// Released with the entry's store (l2Set), or here
				// when the fill stores nothing; by Close if the fill
				// is still running then.
				h := held
				c.heldLocks.Store(h, struct{}{})
				defer func() {
					if held != nil {
						c.unlock(held.key, held.token)
					}
					c.heldLocks.Delete(h)
				}()
			case refresh:
				return outcome{}, errRefreshElsewhere
			default:
				if e := c.waitL2(ctx, rkey, lkey, pol, plain); e != nil {
					c.st.lockWaitHits.Add(1)
					c.l1put(dealer, key, gen, ep, cur, e)
					return outcome{e, Hit}, nil
				}
			}
		}
	}
	c.st.fills.Add(1)
	fctx, span := c.startSpan(ctx, "cache fill", attrRefresh.Bool(refresh))
	// What the fill replaces: the entry it may fall back on, else one L1
	// held expired. Only after the fill found its sources unchanged is
	// that entry served again (renewed).
	prev := fallback
	if prev == nil {
		prev = probe.expired
	}
	rv := &Revalidation{}
	if renewable(prev) {
		rv.Prev = prev.src
	}
	fctx = context.WithValue(fctx, revalidationKey{}, rv)
	fk := c.flightKey(dealer, key)
	tk := c.beginFill(fk)
	var stored *Entry // what this fill stored, for the fills of the key still running
	defer func() { c.endFill(fk, tk, stored) }()
	fillStart := c.now()
	body, err := safeFill(func() ([]byte, error) { return fill(fctx) })
	if errors.Is(err, ErrUnchanged) && rv.Prev != 0 {
		// The fill found the sources of the entry it replaces: that
		// entry's body, stored again with new times.
		if span != nil {
			span.SetAttributes(attrRevalidated)
		}
		endSpan(span, nil)
		c.st.fillsRevalidated.Add(1)
		if n := c.storedSince(dealer, key, gen, ep, fillStart, tk); n != nil {
			return outcome{n, Miss}, nil
		}
		e := prev.renewed(c.now(), pol)
		e.level = c.gzipLevel // a variant made later is at cache.gzip_level
		stored = e
		c.l1put(dealer, key, gen, ep, cur, e)
		if rkey != "" {
			c.l2Set(ctx, dealer, rkey, e, &held, !l2Held)
		}
		return outcome{e, Miss}, nil
	}
	endSpan(span, err)
	if err != nil {
		c.st.fillErrors.Add(1)
		if c.dropOn != nil && c.dropOn(err) {
			c.drop(ctx, dealer, key, gen, ep, rkey)
			return outcome{}, err
		}
		if !refresh && fallback != nil && c.serveStaleOn(err) && pol.state(fallback, c.now()) != stateExpired {
			c.st.staleOnError.Add(1)
			return outcome{fallback, Stale}, nil
		}
		return outcome{}, err
	}
	if n := c.storedSince(dealer, key, gen, ep, fillStart, tk); n != nil {
		return outcome{n, Miss}, nil
	}
	at := c.now()
	if !rv.AsOf.IsZero() && rv.AsOf.Before(at) {
		at = rv.AsOf // see Revalidation.AsOf
	}
	e := newEntry(body, at, pol)
	stored = e
	e.level, e.src = c.gzipLevel, rv.Source
	e.plainWire = int64(len(body)) < c.plainBelow.Load()
	// A refresh (or a refill within stale-if-error) that made the body
	// the entry it replaces holds keeps that entry's compressed bytes.
	if e.adoptGzip(prev) {
		c.st.fillsUnchanged.Add(1)
	}
	c.l1put(dealer, key, gen, ep, cur, e)
	if rkey != "" {
		c.l2Set(ctx, dealer, rkey, e, &held, !l2Held)
	}
	return outcome{e, Miss}, nil
}

// drop removes the entry of key under (gen, ep) from L1, the bulk tier
// and Redis (rkey, when L2 is in use): its fill answered that the response
// no longer exists (Options.DropOn). A stale copy left behind would be
// served again by every stale hit, each starting a refresh that finds the
// same answer (a sold vehicle's 200 came back once per remembered
// "not found"). A fresh entry another fill stored meanwhile goes too: the
// next request fills it again.
func (c *Cache) drop(ctx context.Context, dealer int64, key string, gen, ep uint64, rkey string) {
	c.st.dropped.Add(1)
	if c.l1 != nil {
		if n := c.l1.node(dealer, key); n != nil { // a node being lent too (probeL2)
			c.l1.remove(n)
		}
	}
	if c.bulk != nil {
		c.bulk.del(dealer, gen, ep, []byte(key))
	}
	if rkey != "" && c.redisUp.Load() {
		_ = c.redisCmd(ctx, redis.NewIntCmd(ctx, "del", rkey))
	}
}

// storedSince returns the entry another fill of the key in this instance
// stored after start (it ended while this one ran), else nil: the one L1
// holds under gen, or the last one stored by a fill tracked with tk (also
// when L1 is off, refused it or has evicted it). A fill that finds one
// stores nothing and serves that entry: a background refresh that read its
// sources before a miss's fill did must not write its older body over the
// miss's (it did; a refresh and a miss of one key are separate flights).
func (c *Cache) storedSince(dealer int64, key string, gen, ep uint64, start time.Time, tk *fillTrack) *Entry {
	if c.l1 != nil {
		if n := c.l1.lookupString(dealer, key); n != nil && n.gen == gen && n.epoch == ep && n.entry.StoredAt.After(start) {
			return n.entry
		}
	}
	c.fillsMu.Lock()
	last := tk.last
	c.fillsMu.Unlock()
	if last != nil && last.StoredAt.After(start) {
		return last
	}
	return nil
}

// fillTrack is what the fills of one key under way in this instance share:
// how many run, and the entry the last one to end stored.
type fillTrack struct {
	active int
	last   *Entry
}

// beginFill registers a fill of the flight key fk; endFill must follow.
// The map holds a key only while a fill of it runs, so it is bounded by
// the fills under way.
func (c *Cache) beginFill(fk string) *fillTrack {
	c.fillsMu.Lock()
	defer c.fillsMu.Unlock()
	if c.fills == nil {
		c.fills = make(map[string]*fillTrack)
	}
	tk := c.fills[fk]
	if tk == nil {
		tk = &fillTrack{}
		c.fills[fk] = tk
	}
	tk.active++
	return tk
}

// endFill ends a fill registered by beginFill; stored is the entry it
// stored, if any, which the other fills of the key still running see.
func (c *Cache) endFill(fk string, tk *fillTrack, stored *Entry) {
	c.fillsMu.Lock()
	defer c.fillsMu.Unlock()
	if stored != nil && (tk.last == nil || stored.StoredAt.After(tk.last.StoredAt)) {
		tk.last = stored
	}
	if tk.active--; tk.active == 0 {
		delete(c.fills, fk)
	}
}

func newer(a, b *Entry) *Entry {
	if a == nil || (b != nil && b.StoredAt.After(a.StoredAt)) {
		return b
	}
	return a
}

// l1put stores an entry that enters the process (a fill, a Redis hit) in
// both in-process tiers. With Redis the bulk tier keeps the gzip variant,
// which the write to Redis makes anyway. It reports whether L1 (its hot
// tier) took e.
func (c *Cache) l1put(dealer int64, key string, gen, ep uint64, cur *genState, e *Entry) bool {
	if c.bulk != nil && cur.gen.Load() == gen && c.epoch.gen.Load() == ep {
		c.bulk.put(dealer, gen, ep, key, e, c.bulkGzip)
	}
	return c.l1 != nil && c.l1.put(dealer, key, gen, ep, &cur.gen, e)
}

// l2Usable reports whether L2 may be used under the dealer's generation
// (cur) and the purge epoch: both confirmed by Redis, neither a guess of
// this instance.
func (c *Cache) l2Usable(cur *genState) bool { return cur.l2Usable() && c.epoch.l2Usable() }

// refresh starts one background refresh of the key unless one is running in
// this instance already or MaxRefreshes are (then it counts a skip: the
// caller serves the stale entry all the same, and its next stale hit tries
// again). It never waits.
func (c *Cache) refresh(ctx context.Context, dealer int64, key string, pol Policy, fill FillFunc) {
	fk := c.flightKey(dealer, key)
	// A key already refreshing is the common case (every hit of a hot key
	// while its refresh runs): it is settled by a read of the map alone,
	// without touching the shared slot counter.
	if _, busy := c.refreshing.Load(fk); busy {
		return
	}
	if c.ctx.Err() != nil {
		return
	}
	if !c.takeRefreshSlot() {
		c.st.refreshesSkipped.Add(1)
		return
	}
	if _, busy := c.refreshing.LoadOrStore(fk, struct{}{}); busy {
		c.refreshSlots.Add(-1)
		return
	}
	c.refreshMu.RLock()
	if c.refreshClosed { // Close ran since the check above
		c.refreshMu.RUnlock()
		c.refreshing.Delete(fk)
		c.refreshSlots.Add(-1)
		return
	}
	c.refreshWG.Add(1)
	c.refreshMu.RUnlock()
	c.st.refreshes.Add(1)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.RefreshTimeout())
	stop := context.AfterFunc(c.ctx, cancel)
	c.refreshers.Go(func() {
		defer func() {
			stop()
			cancel()
			c.refreshing.Delete(fk)
			c.refreshSlots.Add(-1)
			c.refreshWG.Done()
		}()
		if _, err := c.load(rctx, dealer, key, pol, fill, nil, true, l2Probe{}, false); err != nil && !errors.Is(err, errRefreshElsewhere) {
			c.st.refreshErrors.Add(1)
			c.log.Debug("cache: background refresh failed", "dealer", dealer, "err", err)
		}
	})
}

// takeRefreshSlot takes one of the MaxRefreshes slots, or reports false
// when all are taken. It never waits; a failed compare-and-swap only means
// another refresh took or gave back a slot meanwhile.
func (c *Cache) takeRefreshSlot() bool {
	for {
		n, limit := c.refreshSlots.Load(), c.maxRefreshes.Load()
		if limit >= 0 && n >= limit {
			return false
		}
		if c.refreshSlots.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// SetRefreshTimeout replaces Options.RefreshTimeout (0: its default,
// negative: ignored) for the refreshes and shared fills that start from
// now on. An edge whose request budget is longer than the default sets it
// so that a shared fill may use the whole budget.
func (c *Cache) SetRefreshTimeout(d time.Duration) {
	switch {
	case d == 0:
		d = DefaultRefreshTimeout
	case d < 0:
		return
	}
	c.refreshTimeout.Store(int64(d))
}

// RefreshTimeout is the bound in force of a background refresh and of a
// shared fill whose first caller had no later deadline.
func (c *Cache) RefreshTimeout() time.Duration { return time.Duration(c.refreshTimeout.Load()) }

// SetMaxRefreshes sets the bound of background refreshes under way at once
// (Options.MaxRefreshes: zero means DefaultMaxRefreshes, negative no
// bound), for the refreshes started from now on. Lowering it below the
// number under way stops no refresh: new ones are skipped until enough
// have ended.
func (c *Cache) SetMaxRefreshes(n int) {
	switch {
	case n == 0:
		n = DefaultMaxRefreshes
	case n < 0:
		n = -1
	}
	c.maxRefreshes.Store(int64(n))
}

// SetPlainBelow makes the entries filled from now on whose body is shorter
// than n bytes go to Redis (and to the bulk tier) plain, and never be
// compressed on their own account: the edge sends a body below its
// server.gzip_min_bytes plain to every client, so compressing it at the
// fill was wasted, and every L2 hit of it, a gzip client's too, had to
// inflate it (table building dominates that for a small body: about 3 µs
// of an L2 hit's CPU). 0 (the default) compresses every body that
// compression shrinks by an eighth. A gzip client of such an entry, should
// n be lowered later, gets a variant made on demand, as for any plain
// value. Safe for concurrent use.
func (c *Cache) SetPlainBelow(n int) { c.plainBelow.Store(int64(max(n, 0))) }

// workerIdle is how long a pooled worker of the cache (a refresh's, the
// batcher's flusher) waits for its next job before it exits. A refresh goes
// deep (the fill through the aggregator and the upstream client, then the
// cache's Redis calls): on a new goroutine its stack grew by copying every
// time, 6% of the edge's CPU when most requests were refreshes (a CPU
// profile, runtime.newstack).
const workerIdle = 10 * time.Second

// PurgeDealer makes every cached entry of dealerID unreachable in every
// instance: it bumps the dealer's generation in Redis, drops the dealer's L1
// entries here and publishes the new generation so that the other instances
// drop theirs. When Redis cannot be reached the purge still takes effect here
// and the error wraps ErrPurgeDeferred; the instance sends it to Redis when
// Redis is back. See the package doc for the propagation bound.
func (c *Cache) PurgeDealer(ctx context.Context, dealerID int64) error {
	c.st.purges.Add(1)
	st := c.gens.get(dealerID)
	if c.rdb == nil {
		c.bumpLocal(dealerID, st)
		return nil
	}
	if err := c.purgeRemote(ctx, dealerID, st); err != nil {
		c.bumpLocal(dealerID, st)
		c.pendingMu.Lock()
		c.pending[dealerID] = struct{}{}
		c.pendingMu.Unlock()
		return fmt.Errorf("cache: purge dealer %d: %w: %w", dealerID, ErrPurgeDeferred, err)
	}
	return nil
}

// bumpLocal moves the dealer's generation on in this instance only and drops
// its L1 entries. With Redis configured the new generation is a guess
// (genState.guess) until the purge reaches Redis: L2 is not used under it.
func (c *Cache) bumpLocal(dealer int64, st *genState) {
	g := st.gen.Add(1)
	if c.rdb != nil {
		st.guess.Store(g)
	}
	if c.l1 != nil {
		c.l1.dropDealer(dealer)
	}
}

// PurgeAll makes every cached entry, of every dealer, unreachable in every
// instance: for a release that changes response bodies without a new
// contract version (see the README, Rolling upgrades). It bumps the global
// purge epoch in Redis (<purge prefix>:epoch), which is part of every L1,
// bulk and L2 key, drops this instance's L1 and bulk tier and publishes the
// new epoch ("all:<epoch>") so that the other instances drop theirs. When
// Redis cannot be reached the purge still takes effect here and the error
// wraps ErrPurgeDeferred; the instance sends it when Redis is back, as
// PurgeDealer does. See the package doc for the propagation bound.
func (c *Cache) PurgeAll(ctx context.Context) error {
	c.st.purgesAll.Add(1)
	if c.rdb == nil {
		c.bumpEpochLocal()
		return nil
	}
	if err := c.purgeAllRemote(ctx); err != nil {
		c.bumpEpochLocal()
		c.pendingAll.Store(true)
		return fmt.Errorf("cache: purge all: %w: %w", ErrPurgeDeferred, err)
	}
	return nil
}

// bumpEpochLocal is bumpLocal for the purge epoch: it drops all of L1.
func (c *Cache) bumpEpochLocal() {
	ep := c.epoch.gen.Add(1)
	if c.rdb != nil {
		c.epoch.guess.Store(ep)
	}
	c.dropAll()
}

// dropAll empties the in-process tiers after the purge epoch moved on. The
// epoch is stored before: an insert of an entry read or filled under the
// old epoch checks it under the shard lock (l1.put) and is refused, and
// the bulk tier's keys carry the epoch, so what a demotion racing the
// reset writes there is unreachable.
func (c *Cache) dropAll() {
	if c.l1 != nil {
		c.l1.dropAll()
	}
	if c.bulk != nil {
		c.bulk.reset()
	}
}
