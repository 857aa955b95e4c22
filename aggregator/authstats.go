package aggregator

import (
	"context"
	"sync/atomic"
	"time"
)

// Authentication results counted by AuthStats.Results, in this order.
var authResults = []string{"ok", codeMissingKey, codeInvalidKey, codeExpiredKey, codeDealerNotFound, "failed_auth_limited", codeUnavailable}

// authCounters are the authentication counters of a Server.
type authCounters struct {
	results     [7]atomic.Uint64 // by authResults
	lookups     [3]atomic.Uint64 // no_index, index_stale, budget_exceeded
	indexMisses atomic.Uint64
	addrLimited [2]atomic.Uint64 // failed-auth, openapi
}

func (c *authCounters) result(code string) {
	for i, r := range authResults {
		if r == code {
			c.results[i].Add(1)
			return
		}
	}
}

// AuthStats are the authentication counters and the key index state, for
// metrics. Nothing in it names a key.
type AuthStats struct {
	// IndexState is IndexLoading, IndexFresh, IndexStale, IndexGone, or
	// "" when the edge has no key feed.
	IndexState string
	IndexKeys  int64
	// IndexAge is the time since the last good sync (-1 before the first).
	IndexAge                             time.Duration
	IndexSyncs, IndexErrors, IndexResync uint64
	// IndexMisses counts keys the fresh index refused without a lookup.
	IndexMisses uint64
	// Results counts authentication outcomes by reason: "ok" or the
	// problem code ("failed_auth_limited" for the per-address 429).
	Results map[string]uint64
	// Lookups counts per-key lookups by cause (LookupNoIndex,
	// LookupIndexStale) and the refusals of the budget
	// (LookupBudgetExceeded).
	Lookups map[string]uint64
	// AddrLimited counts per-address rejections: "failed_auth" and
	// "openapi".
	AddrLimited map[string]uint64
}

// AuthStats returns the authentication counters.
func (s *Server) AuthStats() AuthStats {
	st := s.settings.Load()
	now := s.now()
	out := AuthStats{
		IndexState:  s.indexState(now, st),
		IndexMisses: s.authStats.indexMisses.Load(),
		Results:     map[string]uint64{},
		Lookups: map[string]uint64{
			LookupNoIndex:        s.authStats.lookups[0].Load(),
			LookupIndexStale:     s.authStats.lookups[1].Load(),
			LookupBudgetExceeded: s.authStats.lookups[2].Load(),
		},
		AddrLimited: map[string]uint64{"failed_auth": s.authStats.addrLimited[0].Load(), "openapi": s.authStats.addrLimited[1].Load()},
	}
	for i, r := range authResults {
		out.Results[r] = s.authStats.results[i].Load()
	}
	if ix := s.index; ix != nil {
		out.IndexKeys = ix.size.Load()
		out.IndexAge = -1
		if last := ix.lastGood.Load(); last != 0 {
			out.IndexAge = now.Sub(time.Unix(0, last))
		}
		out.IndexSyncs, out.IndexErrors, out.IndexResync = ix.syncs.Load(), ix.syncErrors.Load(), ix.resyncs.Load()
	}
	return out
}

// RunKeyIndex keeps the key index in sync until ctx ends: a full snapshot
// first, then the changes every Settings.IndexInterval. It returns at once
// when the Server has no KeyFeed. Run it in its own goroutine.
func (s *Server) RunKeyIndex(ctx context.Context) {
	if s.index == nil {
		return
	}
	s.index.run(ctx, func() *Settings { return s.settings.Load().Settings })
}

// SyncKeyIndex runs one sync of the key index now (tests, start-up):
// a snapshot when there is none, else the changes.
func (s *Server) SyncKeyIndex(ctx context.Context) error {
	if s.index == nil {
		return nil
	}
	return s.index.syncOnce(ctx)
}
