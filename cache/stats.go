package cache

import "sync/atomic"

// counters are the cache's internal atomic counters.
type counters struct {
	hitsL2, misses, stale, bypass    atomic.Uint64
	l2Hits, l2Misses, l2Errors       atomic.Uint64
	fills, fillErrors, staleOnError  atomic.Uint64
	fillsUnchanged, fillsRevalidated atomic.Uint64
	coalesced, lockWaitHits          atomic.Uint64
	refreshes, refreshErrors, purges atomic.Uint64
	refreshesSkipped, purgesAll      atomic.Uint64
	redisDownEvents, dropped         atomic.Uint64
	budgetSkips                      atomic.Uint64
}

// Stats is a snapshot of the cache's counters (totals since New) and gauges.
type Stats struct {
	// Results returned by Get: Hits = L1Hits + fresh entries found in the
	// bulk tier, in L2 or by a flight.
	Hits, Misses, Stale, Bypass uint64
	// L1Hits are fresh hits served from L1's hot tier (the whole L1 when
	// it is not split in tiers) without a flight.
	L1Hits uint64
	// BulkHits count lookups answered fresh from L1's bulk tier after a
	// hot-tier miss (a stale answer counts in StaleServed); BulkErrors
	// the values there that did not decode (dropped, looked up further as
	// missing). BulkEntries and BulkBytes are the tier's current size
	// (bytes of its ring in use, at most its share of L1MaxBytes). All
	// zero without a bulk tier (Options.L1HotBytes).
	BulkHits, BulkErrors   uint64
	BulkEntries, BulkBytes int64
	// L2Hits, L2Misses count lookups in Redis that found a usable entry or
	// nothing this release can read (nothing, or a value of a later wire
	// format: another release's in a rolling deploy); L2Errors counts
	// failed Redis calls and malformed entries.
	L2Hits, L2Misses, L2Errors uint64
	// Fills counts fill calls (misses and background refreshes); FillErrors
	// those that failed; StaleOnError the stale entries served because of
	// a failure (of the fill or of the wait for it).
	Fills, FillErrors, StaleOnError uint64
	// FillsUnchanged counts fills that made the same body as the entry
	// they replace (a stale entry being refreshed, or one served within
	// stale-if-error) and so kept its compressed bytes instead of
	// compressing again (Entry.adoptGzip).
	FillsUnchanged uint64
	// FillsRevalidated counts fills that found the upstream answers of
	// the entry they replace (ErrUnchanged) and stored that entry's body
	// again: nothing decoded, encoded or compressed. They count in Fills,
	// not in FillsUnchanged.
	FillsRevalidated uint64
	// Dropped counts entries removed because their fill answered that the
	// response no longer exists (Options.DropOn: a detail's 404).
	Dropped uint64
	// RedisBudgetSkips counts new entries kept out of Redis because their
	// dealer's byte budget was spent (Options.RedisDealerBudget).
	RedisBudgetSkips uint64
	// Coalesced counts Get calls that shared another call's flight instead of
	// running their own; LockWaitHits fills saved by waiting on another
	// instance's lock.
	Coalesced, LockWaitHits uint64
	// Refreshes counts background refreshes started, RefreshErrors those that
	// failed.
	Refreshes, RefreshErrors uint64
	// RefreshesSkipped counts stale hits that would have started a
	// background refresh but found Options.MaxRefreshes under way (served
	// stale all the same, with no refresh).
	RefreshesSkipped uint64
	// RefreshesInFlight is the number of background refreshes under way;
	// MaxRefreshes the bound in force (-1: none).
	RefreshesInFlight, MaxRefreshes int64
	// Purges counts PurgeDealer calls; PurgesAll PurgeAll calls.
	Purges, PurgesAll uint64
	// Evictions counts entries evicted from L1 for space; L1Rejected the
	// new entries L1 did not keep because the entry they would have
	// evicted is asked for more often per byte (TinyLFU admission).
	Evictions, L1Rejected uint64
	// L1Bytes and L1Entries are the current size of L1.
	L1Bytes, L1Entries int64
	// RedisUp reports whether Redis is in use, PubSubUp whether the purge
	// subscription is confirmed, RedisDownEvents how often Redis went down.
	RedisUp, PubSubUp bool
	RedisDownEvents   uint64
}

// Stats returns a snapshot of the counters.
func (c *Cache) Stats() Stats {
	s := Stats{
		Misses:           c.st.misses.Load(),
		Stale:            c.st.stale.Load(),
		Bypass:           c.st.bypass.Load(),
		L2Hits:           c.st.l2Hits.Load(),
		L2Misses:         c.st.l2Misses.Load(),
		L2Errors:         c.st.l2Errors.Load(),
		Fills:            c.st.fills.Load(),
		FillErrors:       c.st.fillErrors.Load(),
		FillsUnchanged:   c.st.fillsUnchanged.Load(),
		FillsRevalidated: c.st.fillsRevalidated.Load(),
		StaleOnError:     c.st.staleOnError.Load(),
		Dropped:          c.st.dropped.Load(),
		RedisBudgetSkips: c.st.budgetSkips.Load(),
		Coalesced:        c.st.coalesced.Load(),
		LockWaitHits:     c.st.lockWaitHits.Load(),
		Refreshes:        c.st.refreshes.Load(),
		RefreshErrors:    c.st.refreshErrors.Load(),
		RefreshesSkipped: c.st.refreshesSkipped.Load(),
		MaxRefreshes:     c.maxRefreshes.Load(),
		Purges:           c.st.purges.Load(),
		PurgesAll:        c.st.purgesAll.Load(),
		RedisUp:          c.RedisHealthy(),
		PubSubUp:         c.pubsubUp.Load(),
		RedisDownEvents:  c.st.redisDownEvents.Load(),
	}
	if c.l1 != nil {
		s.L1Hits = c.l1.hits()
		s.Evictions = c.l1.evictions.Load()
		s.L1Rejected = c.l1.rejected.Load()
		s.L1Bytes = c.l1.bytes.Load()
		s.L1Entries = c.l1.entries.Load()
	}
	if c.bulk != nil {
		s.BulkHits = c.bulk.hits.Load()
		s.BulkErrors = c.bulk.errors.Load()
		s.BulkEntries, s.BulkBytes = c.bulk.stats()
	}
	s.RefreshesInFlight = c.refreshSlots.Load()
	s.Hits = s.L1Hits + c.st.hitsL2.Load()
	return s
}
