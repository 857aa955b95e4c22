// Package ratelimit limits requests per API key across any number of edge
// instances that share one Redis (single node or Cluster), at most one
// Redis round trip per request and usually none.
//
// # Algorithm
//
// Each key is a token bucket of Burst tokens refilled at Rate per second,
// evaluated as GCRA (generic cell rate algorithm): Redis stores one number
// per key, the theoretical arrival time (TAT). One Lua script, run by SHA
// (EVALSHA, EVAL after NOSCRIPT), takes up to n tokens atomically and
// answers how many it granted, how many remain, when the bucket is full,
// and, when it granted none, exactly when one token will exist. The key,
// "<prefix>:{d<dealer>}:rl:<keyID>", carries the dealer as a hash tag so a
// dealer's keys share a Cluster slot; it expires when the bucket would be
// full again, so idle keys cost Redis nothing.
//
// # Leases
//
// A round trip per request would cap the edge at Redis's ~50k calls/s per
// core, so an instance takes tokens in small batches (leases) and spends
// them in process, lock-free. Per key and instance:
//
//   - Only one request refills at a time; concurrent requests of the same
//     key wait for that refill and share its lease. One RedisTimeout
//     bounds a request's whole time in the limiter (its waits for other
//     requests' refills and its own call): past it the request is decided
//     by the local GCRA (which follows Redis's TAT, and is charged to
//     Redis at the key's next call), without marking Redis down (the
//     Redis answered within its timeout; the request waited behind
//     others); only a Redis marked down hands requests to the fail mode.
//   - The lease size adapts to the instance's demand for the key: it starts
//     at 1, doubles while leases run out within half a LeaseWindow, and
//     shrinks to what was used when a lease expires with tokens left.
//   - The lease size is capped by the limit: k = max(1, min(MaxLease,
//     ⌊Burst/4⌋, ⌊Rate·LeaseWindow/2⌋)). Low limits lease one token at a
//     time and are exact: 10/s with burst 10 gives k = 1 with the default
//     250ms window; the default 50/s burst 100 gives k = 6; 1e6/s gives
//     k = MaxLease = 256 (DefaultMaxLease: a hot key of a high limit costs
//     one Redis call per 256 requests; the bound below in LeaseWindow
//     terms does not depend on it).
//   - Leased tokens are usable for LeaseWindow from the moment the refill
//     was sent, then dropped.
//   - A rejection is remembered until the time Redis said a token would
//     exist; requests before then are rejected in process. This is exact
//     (no token can appear in Redis earlier) and makes a flood of
//     over-limit requests cost no round trips.
//
// # Cost
//
// AllowN charges a request cost tokens (clamped to [1, Burst]) all or
// none: an expensive request (a search fanning out to many backend calls)
// spends more of the key's budget than a cached listing. The local GCRA
// moves the TAT by cost intervals; a lease admits a request only while it
// holds all cost tokens, and a refill asks Redis for the lease plus the
// cost with the cost as the least worth granting (the script's ARGV[6]),
// so Redis grants all of a request's tokens or none, never a part that
// would be lost. A cached rejection remembers when the first token exists
// and adds cost-1 intervals, so it is exact for every cost and never holds
// back a cheaper request that fits. Tokens a lease still holds when a
// costlier request needs a refill expire unspent (under-admission, at
// most cost-1 tokens per refill). All counts (Remaining, the bound below)
// are in tokens.
//
// # Accuracy bound
//
// For one key with lease cap k, N instances sharing one Redis and one
// clock, over any interval [a, b]:
//
//	admitted(a, b) ≤ Rate·(b−a) + Burst + N·(k−1)
//	admitted(a, b) ≤ Rate·(b−a+LeaseWindow) + Burst
//
// Proof: GCRA lets Redis grant at most Rate·(b−a) + Burst tokens in
// [a, b] (every grant of g tokens moves TAT by g/Rate, and TAT never runs
// more than Burst/Rate ahead of the clock). Every admission spends a token
// granted no later than itself, either in [a, b] or earlier and still held
// at a. An instance holds at most k−1 unspent tokens of a key (one lease,
// one token of which its refiller spends at once), and a held token was
// granted less than LeaseWindow before it is spent. So the overshoot over
// a single shared bucket is at most N·(k−1) requests, it can only be
// spent within LeaseWindow of the grants it came from, and it does not
// accumulate: over consecutive intervals the total stays within
// Rate·total + Burst + N·(k−1), so the long-run rate is exact. With k = 1
// (MaxLease 1, or any low limit) the bound is that of a single bucket:
// Rate·(b−a) + Burst. TestTwoInstancesAccuracyBound checks both bounds
// over every interval of a run of two instances with bursty demand;
// TestOvershootWorstCase builds the worst case and admits exactly
// Burst + N·(k−1), so the bound is tight; TestDemoLimitExact checks that
// 10/s burst 10 is exact across instances.
//
// Leases cost accuracy in the other direction too: unspent leased tokens
// expire, so a key spread thinly over many instances can be admitted a
// little less than its limit; the demand-adapted lease size keeps this
// small (an instance that sees a key rarely leases one token).
//
// Outside the bound: a Redis restart or failover without persistence
// forgets buckets (keys start full again), as does a Redis at its
// maxmemory that evicts them (volatile-ttl evicts them first: they
// expire within their refill window), and while Redis is unavailable
// the FailMode decides (below). When MaxKeys forces out a key that still
// holds a lease, requests in flight may spend it alongside a new one.
//
// # Clocks
//
// With Options.Now nil the script reads Redis's clock (TIME), so the edge
// hosts' clocks do not matter; leases and cached rejections are timed
// with each instance's monotonic clock as relative durations. With
// Options.Now set, its time is sent to Redis instead (tests use this for
// exact, reproducible counts); instances whose clocks differ by δ then
// overshoot by up to Rate·δ more, and δ must stay well below Burst/Rate.
//
// # Failure
//
// A Redis error or a reply slower than RedisTimeout marks Redis
// unavailable (logged once per state change) and the request is decided
// by the FailMode: FallbackLocal (default) runs the same Limit in an
// in-process GCRA per instance, so N instances admit up to N times the
// limit during an outage; FailOpen admits; FailClosed rejects until the
// next probe. One request per ProbeInterval tries Redis again; its success
// restores the shared limit. With Options.BackgroundProbe a goroutine also
// tries it once per ProbeInterval while it is marked unavailable, so a
// limiter that decides few requests is found back (and logs it) without
// waiting for one; when Redis refused the credentials or a command
// (WRONGPASS, NOAUTH, NOPERM), only that probe, which first checks the
// credentials with AUTH, ends the outage. Allow never returns an error. A
// caller's cancelled context does not count against Redis.
//
// Switching costs no extra burst. Every Redis answer moves the key's local
// TAT forward to the shared bucket's (now + reset), so the fallback
// continues where Redis left off; and the first call after the fallback
// admitted requests of the key passes the local TAT's lead over now as the
// script's debt, which moves the shared TAT forward to at least it: it
// carries what the fallback admitted into the shared bucket (the largest
// instance's, with several). Other calls pass no debt: on the system clock
// the local TAT is the shared one shifted by a round trip's latency, and
// charging that jitter would waste tokens on every slower call.
//
// # Memory
//
// Local state per key (lease, cached rejection, fallback bucket) lives in
// a sharded table bounded by MaxKeys. Entries without state (expired
// lease and rejection, full local bucket) are swept when their shard
// grows; at the bound arbitrary entries are evicted (Stats.Evictions).
//
// # Headers
//
// Decision.AppendHeaders writes the IETF RateLimit draft fields without
// allocating:
//
//	RateLimit-Policy: "<name>";q=<Burst>;w=<⌈Burst/Rate⌉ seconds>[;edge-cost=<Cost>]
//	RateLimit: "<name>";r=<Remaining>;t=<⌈Reset⌉ seconds until full>
//
// and Decision.RetryAfterSeconds gives the Retry-After value of a 429.
package ratelimit
