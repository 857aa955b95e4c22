// Package cache is the edge's response cache: a bounded in-process L1 in
// front of a Redis L2 shared by every edge instance.
//
// A lookup is [Cache.Get] with the dealer, the normalised route+query key
// built by the caller, the [Policy] of that route and a [FillFunc] that
// produces the body on a miss. The package adds, on top of a plain
// key/value store:
//
//   - dealer isolation: the dealer id is part of every L1 and L2 key
//     (`<prefix>:{d<id>}:g<generation>:<key>`), so one dealer's entries can
//     never be served to another;
//   - freshness with two stale windows per entry: stale-while-revalidate
//     (serve stale, refresh once in the background, with at most
//     [Options.MaxRefreshes] refreshes under way at once) and stale-if-error
//     (serve stale when the fill fails);
//   - request coalescing: concurrent misses of one key make one fill
//     (singleflight in process and, when [Options.LockWait] is set, a short
//     Redis lock across instances);
//   - purge per dealer ([Cache.PurgeDealer]) through a per-dealer generation
//     counter in Redis and a pub/sub channel that makes every instance drop
//     that dealer's L1 entries, and purge of everything ([Cache.PurgeAll])
//     through a global purge epoch kept the same way;
//   - Redis failure tolerance: every Redis call has a hard time budget; after
//     a failure Redis is skipped until a background probe finds it back, and
//     each transition is logged once.
//
// [Cache.Peek] and [Cache.Put] keep facts rather than responses (the
// aggregator's remembered "not found" of a detail): Peek looks for a fresh
// entry in L1 and L2 without a fill, Put stores one under the generation
// and epoch Peek saw, so the same isolation and purges apply; the caller
// coalesces the work that finds a fact out in a Get of its own.
//
// The L1 hit path takes a shard read lock and two map lookups and does not
// allocate. Entries are immutable once stored: callers may hand Entry.Body
// to the network without copying and must never modify it.
//
// A fill that replaces an entry (a refresh, a refill within stale-if-error,
// or one of an entry L1 held expired) is told that entry's source digest
// ([RevalidationFrom]); when its upstream answers are those the entry was
// built from it returns [ErrUnchanged] and the entry is stored again with
// new times, nothing built. A fill that makes the same body keeps the
// replaced entry's compressed bytes. See revalidate.go.
//
// A large L1 (over 256 MiB, or as [Options.L1HotBytes] says) is split in a
// hot tier, the L1 above, and an off-heap bulk tier (fastcache) looked up
// after it and before Redis, whose entries the garbage collector never
// sees; see bulk.go and [L1Tiers].
//
// # Keys in Redis
//
// Every key carries the dealer hash tag, so all keys of one dealer live in one
// Redis Cluster slot:
//
//	<purge prefix>:{d<id>}:gen       generation counter of the dealer
//	<purge prefix>:epoch             global purge epoch (no hash tag: a slot of its own)
//	<prefix>:{d<id>}:g<gen>:<key>    an entry (binary header + body), PX = until StaleUntil (*)
//	<prefix>:{d<id>}:l<gen>:<key>    the cross-instance fill lock, PX = LockTTL
//	<purge prefix>:purge             pub/sub channel, message "<id>:<gen>" or "all:<epoch>"
//
// Entry and lock keys carry the epoch after the generation once it is above
// 0: g<gen>e<epoch>, l<gen>e<epoch>. A missing epoch key is seeded as a
// generation is (the current Unix millisecond), so an epoch Redis lost
// (evicted under an allkeys-* policy) cannot lead back to entries a
// PurgeAll retired; epoch 0 (no key, as releases without the epoch and
// releases before 2026-11-29 read it) is an instance that has not read it.
// Only single-key commands (SETNX, GET, INCR, the raise script) touch the
// epoch key, so its slot in a Redis Cluster does not matter. A release
// without the epoch fails to parse "all" as a dealer id and ignores the
// message.
//
// The purge prefix is [Options.PurgePrefix] (default: the prefix). Two
// releases whose entries must stay apart (another contract version in the
// prefix) share it, so that while they run side by side on one Redis a
// purge made on either moves the dealer's generation for both.
//
// (*) At least a few seconds (at most the TTL) past FreshUntil, never past
// ErrorUntil. Every read of an entry (GETEX PX) keeps it for TTL plus
// StaleIfError from that read (a plain GET when StaleIfError is no longer
// than StaleWhileRevalidate: nothing to extend), so an entry read again
// lasts through its stale-if-error window and one never read leaves Redis
// when its stale-while-revalidate window ends. Redis's TTL never decides
// freshness: the entry's own windows do.
//
// A purge makes old entries unreachable (their generation, or the epoch, is
// no longer current); they expire by their own TTL.
//
// # Purge propagation bound
//
// The purging instance drops its own L1 entries before PurgeDealer returns.
// Other instances drop theirs when the pub/sub message arrives (typically
// well under a millisecond on a LAN). While an instance's subscription is
// not confirmed healthy it re-reads the generations of every dealer it knows
// from Redis every [Options.GenerationPoll] (default 2s), and it re-reads all
// of them at once whenever the subscription is (re-)established or Redis
// comes back. So, as long as the instance can reach Redis, a purge is visible
// there within GenerationPoll plus one Redis round trip. An instance that
// cannot reach Redis cannot learn about purges; it keeps serving its L1
// within the entries' own windows and resynchronises as soon as Redis is
// back. A purge issued while Redis is unreachable takes effect locally at
// once, is remembered, and is sent to Redis by this instance when Redis
// returns ([ErrPurgeDeferred]).
//
// [Cache.PurgeAll] has the same bound: the epoch is re-read with the
// generations (every GenerationPoll while the subscription is unhealthy, at
// once when it or Redis comes back), its message drops every entry of L1
// and the bulk tier, and one made while Redis is unreachable is a guess
// under which L2 is not used until this instance has sent it.
package cache
