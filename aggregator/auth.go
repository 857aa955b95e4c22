package aggregator

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/sync/singleflight"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// maxKeyLen bounds an API key; longer values are rejected without a
// lookup.
const maxKeyLen = 256

// ExtractKey finds the API key of a request from the X-Api-Key and
// Authorization header values (nil or empty when absent). It returns the
// key, or the problem code that answers the request:
//
//   - neither header: missing_api_key;
//   - both headers: invalid_api_key (the contract makes them mutually
//     exclusive; the edge refuses to guess which one is meant);
//   - Authorization: Bearer (case-insensitive) without a token, only
//     spaces after the scheme: missing_api_key, as an empty X-Api-Key is
//     (no key was sent: typically a key variable that is empty);
//   - Authorization with a scheme other than Bearer (case-insensitive), or
//     Bearer not followed by a space: invalid_api_key;
//   - a key longer than 256 bytes or with bytes outside printable ASCII:
//     invalid_api_key.
func ExtractKey(xAPIKey, authorization []byte) (key []byte, code string) {
	hasX, hasAuth := len(xAPIKey) > 0, len(authorization) > 0
	switch {
	case hasX && hasAuth:
		return nil, codeInvalidKey
	case hasX:
		key = xAPIKey
	case hasAuth:
		const scheme = "bearer"
		if len(authorization) < len(scheme) || !bytes.EqualFold(authorization[:len(scheme)], []byte(scheme)) {
			return nil, codeInvalidKey
		}
		rest := authorization[len(scheme):]
		if len(rest) > 0 && rest[0] != ' ' {
			return nil, codeInvalidKey
		}
		key = bytes.TrimLeft(rest, " ")
		if len(key) == 0 {
			return nil, codeMissingKey
		}
	default:
		return nil, codeMissingKey
	}
	if len(key) == 0 || len(key) > maxKeyLen {
		return nil, codeInvalidKey
	}
	for _, c := range key {
		if c < 0x21 || c > 0x7e {
			return nil, codeInvalidKey
		}
	}
	return key, ""
}

// principal is a resolved API key: the dealer it acts for, or the public
// error it resolves to. It is immutable once cached.
type principal struct {
	keyID     string // hex of the keyed hash: rate-limit identity, safe to store
	dealerID  int64
	dealer    upstream.Dealer
	plan      string
	expiresAt time.Time // zero: never
	errCode   string    // non-empty: the key resolves to this error
	fetched   time.Time // when the dealers service answered (index: the index's last good sync)

	fromIndex     bool      // built from the key index
	ver           uint64    // the index version it was built from
	dealerFetched time.Time // when the dealer profile was fetched (index principals)
}

// keyHasher computes keyed hashes (HMAC-SHA-256) of API keys without
// allocating: the edge never keeps or logs a raw key, only this hash.
type keyHasher struct{ pool sync.Pool }

// hmacState is a pooled HMAC with the buffer its sum is written to, so
// the sum does not escape to the heap.
type hmacState struct {
	h   hash.Hash
	buf [sha256.Size]byte
}

func newKeyHasher(secret []byte) *keyHasher {
	s := append([]byte(nil), secret...)
	return &keyHasher{pool: sync.Pool{New: func() any { return &hmacState{h: hmac.New(sha256.New, s)} }}}
}

func (h *keyHasher) sum(key []byte) [32]byte {
	m := h.pool.Get().(*hmacState)
	m.h.Reset()
	m.h.Write(key)
	out := [32]byte(m.h.Sum(m.buf[:0]))
	h.pool.Put(m)
	return out
}

const authShards = 64

// authCache maps keyed key hashes to principals. Lookups are by the hash,
// which an attacker cannot choose, so map access is not a timing oracle
// for keys; the dealers service compares key hashes in constant time.
type authCache struct {
	shards [authShards]struct {
		sync.RWMutex
		m map[[32]byte]*principal
	}
	maxPerShard int
	flight      singleflight.Group
}

func newAuthCache(maxEntries int) *authCache {
	c := &authCache{maxPerShard: max(maxEntries/authShards, 16)}
	for i := range c.shards {
		c.shards[i].m = make(map[[32]byte]*principal)
	}
	return c
}

func (c *authCache) get(id [32]byte) *principal {
	sh := &c.shards[id[0]%authShards]
	sh.RLock()
	p := sh.m[id]
	sh.RUnlock()
	return p
}

func (c *authCache) del(id [32]byte) {
	sh := &c.shards[id[0]%authShards]
	sh.Lock()
	delete(sh.m, id)
	sh.Unlock()
}

func (c *authCache) put(id [32]byte, p *principal) {
	sh := &c.shards[id[0]%authShards]
	sh.Lock()
	if len(sh.m) >= c.maxPerShard {
		// Bounded: drop an arbitrary entry (map order is random).
		for k := range sh.m {
			delete(sh.m, k)
			break
		}
	}
	sh.m[id] = p
	sh.Unlock()
}

// Causes of a per-key lookup at the dealers service, and what happened to
// those the lookup budget refused.
const (
	LookupNoIndex        = "no_index"    // the index is loading or expired (or there is none)
	LookupIndexStale     = "index_stale" // a miss of a stale index
	LookupBudgetExceeded = "budget_exceeded"
)

// errLookupBudget answers an unknown key when the lookup budget is spent
// (see the README: why 503 and not 401).
var errLookupBudget = &apiError{code: codeUnavailable, detail: "the API key cannot be checked right now; retry after the number of seconds in Retry-After", retryAfter: 1}

// authenticate resolves the request's key to a principal. With a fresh key
// index it asks nothing of the network for the key: a hit is resolved from
// the index (and the per-dealer profile cache), a miss is invalid. Without
// one (loading, or stale beyond auth.index_stale_after) an unknown key is
// looked up at the dealers service, one call per key at a time, under the
// per-instance lookup budget; results are cached, valid keys and invalid
// ones in separate bounded caches, so that no number of invalid keys can
// evict a valid one. When the dealers service cannot answer, a principal
// resolved earlier is used for up to Settings.AuthStale.
func (s *Server) authenticate(ctx *fasthttp.RequestCtx, rawKey []byte, rs *reqState) (*principal, error) {
	st := s.settings.Load()
	now := rs.start // the request's one clock read
	id := s.hasher.sum(rawKey)
	state := s.indexState(now, st)
	p := s.auth.get(id)
	if p != nil && p.usable(s, state, now, st) {
		return p, nil
	}
	lookupCause := LookupNoIndex
	revoked := false
	if state == IndexFresh || state == IndexStale {
		sum := sha256.Sum256(rawKey)
		ver := s.index.version.Load()
		if e, ok := s.index.tab.Load().get(&sum); ok {
			return s.fromIndex(id, e, ver, rs, st, p)
		}
		if state == IndexFresh {
			s.authStats.indexMisses.Add(1)
			return invalidPrincipal, nil
		}
		lookupCause = LookupIndexStale
		// A principal resolved before the table's last good sync, which
		// no longer holds the key, was revoked (or expired) there: it is
		// no fallback while the index is stale, and the table's answer
		// (invalid) stands when the lookup cannot be made.
		if p != nil && !p.fetched.After(time.Unix(0, s.index.lastGood.Load())) {
			p, revoked = nil, true
		}
	} else if state == IndexGone && p != nil && !p.fetched.After(time.Unix(0, s.index.lastGood.Load())) {
		// The same holds once the index has expired: its last good table,
		// newer than the principal, is still the latest word on the key
		// (TestRevokedKeyStaysRevoked).
		sum := sha256.Sum256(rawKey)
		if _, ok := s.index.tab.Load().get(&sum); !ok {
			p, revoked = nil, true
		}
	}
	if n := s.negAuth.get(id); n != nil && now.Sub(n.fetched) < st.AuthNegativeTTL {
		return n, nil
	}
	stale := p != nil && now.Sub(p.fetched) < st.AuthTTL+st.AuthStale
	if !stale {
		// A key about to be looked up counts against its address's
		// failed-auth limit first, so that an address over it causes no
		// lookup (a key that then resolves valid has spent one request).
		rs.addrCounted = true
		if ae := s.addrAllow(ctx, addrFailedAuth, st.FailedAuthLimit); ae != nil {
			return nil, ae
		}
	}
	if !s.budget.take(now, st.LookupRate, st.LookupBurst) {
		if stale {
			return p, nil
		}
		if revoked {
			return invalidPrincipal, nil
		}
		s.authStats.lookups[2].Add(1)
		return nil, errLookupBudget
	}
	if lookupCause == LookupNoIndex {
		s.authStats.lookups[0].Add(1)
	} else {
		s.authStats.lookups[1].Add(1)
	}
	key := string(rawKey) // copied: the flight may outlive this request's buffers
	v, err, _ := s.auth.flight.Do(string(id[:]), func() (any, error) {
		ctx, cancel := context.WithTimeout(rs.context(), st.RequestTimeout)
		defer cancel()
		ctx = upstream.WithTraceContext(ctx, string(rs.reqID), rs.traceparent, rs.tracestate)
		ctx, span := s.startSpan(ctx, "auth key lookup")
		np, err := s.resolve(ctx, key, id)
		endSpan(span, err)
		if err != nil {
			return nil, err
		}
		if np.errCode == "" {
			s.auth.put(id, np)
		} else {
			// The older valid principal is no stale fallback for a key
			// this lookup found invalid (TestRevokedByLookupStaysRevoked).
			s.auth.del(id)
			s.negAuth.put(id, np)
		}
		return np, nil
	})
	if err != nil {
		if stale && errors.Is(err, upstream.ErrUnavailable) {
			return p, nil
		}
		if revoked && errors.Is(err, upstream.ErrUnavailable) {
			return invalidPrincipal, nil
		}
		return nil, err
	}
	return v.(*principal), nil
}

// authFailed answers an authentication failure (401, or 404
// dealer_not_found): counted against the client address's failed-auth
// limit, and 429 instead when the address is over it.
func (s *Server) authFailed(ctx *fasthttp.RequestCtx, rs *reqState, ae *apiError) {
	if !rs.addrCounted {
		if lim := s.addrAllow(ctx, addrFailedAuth, s.settings.Load().FailedAuthLimit); lim != nil {
			s.authStats.result("failed_auth_limited")
			s.writeProblem(ctx, rs, lim)
			return
		}
	}
	s.authStats.result(ae.code)
	s.writeProblem(ctx, rs, ae)
}

// invalidPrincipal answers a key the fresh index does not hold.
var invalidPrincipal = &principal{errCode: codeInvalidKey}

// indexState returns the key index state at now ("" when there is no
// index: the edge was built without a key feed).
func (s *Server) indexState(now time.Time, st *liveSettings) string {
	if s.index == nil {
		return ""
	}
	return s.index.stateAt(now, st.IndexStaleAfter, st.AuthStale)
}

// usable reports whether a cached valid principal answers without asking
// anything: one built from the index while the index it came from is
// still the one in force (no change applied since) and its dealer profile
// within auth.ttl; one from a lookup within auth.ttl while there is no
// fresh index (a fresh index decides alone).
func (p *principal) usable(s *Server, state string, now time.Time, st *liveSettings) bool {
	if p.fromIndex {
		return (state == IndexFresh || state == IndexStale) && p.ver == s.index.version.Load() && now.Sub(p.dealerFetched) < st.AuthTTL
	}
	if state != IndexFresh && state != "" && !p.fetched.After(time.Unix(0, s.index.lastGood.Load())) {
		// The index synced after this lookup: it decides (authenticate's
		// index path), so a key it dropped since is not answered from the
		// older lookup (TestRevokedKeyStaysRevoked).
		return false
	}
	return state != IndexFresh && now.Sub(p.fetched) < st.AuthTTL
}

// fromIndex builds the principal of an index hit. The dealer profile comes
// from the per-dealer cache, so the dealers service sees at most one call
// per dealer per auth.ttl, whatever the number of keys.
func (s *Server) fromIndex(id [32]byte, e ixEntry, ver uint64, rs *reqState, st *liveSettings, old *principal) (*principal, error) {
	if exp := e.expires(); !exp.IsZero() && !rs.start.Before(exp) {
		// Expired: the index's answer needs no dealer profile (as a
		// lookup, resolve, decides expiry before the dealer:
		// TestExpiredKeyNeedsNoProfile).
		return &principal{dealerID: e.dealerID, expiresAt: exp, errCode: codeExpiredKey}, nil
	}
	d, err := s.dealerOf(e.dealerID, rs, st)
	fallback := false
	if err != nil {
		// The older principal lends its dealer profile only: the index's
		// entry (dealer, plan, expiry) is the latest word on the key. A
		// key the index moved to another dealer is not answered as its old
		// dealer's (TestMovedKeyNotServedAsOldDealer), nor a key
		// it expired as the older principal's never-expiring one
		// (TestExpiredInIndexNotServedFromLookup).
		if old == nil || old.dealerID != e.dealerID || !errors.Is(err, upstream.ErrUnavailable) || rs.start.Sub(old.fetched) >= st.AuthTTL+st.AuthStale {
			return nil, err
		}
		d, fallback = &dealerRec{d: old.dealer, fetched: old.dealerFetched}, true
	}
	p := &principal{
		keyID:         hex.EncodeToString(id[:16]),
		dealerID:      e.dealerID,
		plan:          s.index.planOf(e),
		fromIndex:     true,
		ver:           ver,
		fetched:       time.Unix(0, s.index.lastGood.Load()),
		dealerFetched: d.fetched,
	}
	p.expiresAt = e.expires()
	if d.gone {
		p.errCode = codeDealerNotFound
		return p, nil
	}
	p.dealer = d.d
	if !fallback {
		s.auth.put(id, p)
	}
	return p, nil
}

// dealerRec is a cached dealer profile, or the fact that it does not
// exist.
type dealerRec struct {
	d       upstream.Dealer
	gone    bool
	fetched time.Time
}

// maxDealers bounds the dealer profile cache; its keys come from the index
// or from keys the dealers service confirmed, never from a client.
const maxDealers = 1 << 16

// dealerCache holds dealer profiles by dealer id.
type dealerCache struct {
	mu     sync.RWMutex
	m      map[int64]*dealerRec
	flight singleflight.Group
}

func (s *Server) dealerOf(dealerID int64, rs *reqState, st *liveSettings) (*dealerRec, error) {
	c := &s.dealers
	c.mu.RLock()
	r := c.m[dealerID]
	c.mu.RUnlock()
	now := rs.start
	if r != nil {
		ttl := st.AuthTTL
		if r.gone {
			ttl = st.AuthNegativeTTL
		}
		if now.Sub(r.fetched) < ttl {
			return r, nil
		}
	}
	v, err, _ := c.flight.Do(strconv.FormatInt(dealerID, 10), func() (any, error) {
		ctx, cancel := context.WithTimeout(rs.context(), st.RequestTimeout)
		defer cancel()
		ctx = upstream.WithTraceContext(ctx, string(rs.reqID), rs.traceparent, rs.tracestate)
		ctx, span := s.startSpan(ctx, "auth dealer profile")
		d, err := s.backend.Dealer(ctx, dealerID)
		endSpan(span, err)
		nr := &dealerRec{d: d, fetched: s.now()}
		switch {
		case errors.Is(err, upstream.ErrNotFound):
			nr = &dealerRec{gone: true, fetched: nr.fetched}
		case err != nil:
			return nil, err
		case d.ID != dealerID:
			return nil, errStrayDealer
		}
		c.mu.Lock()
		if c.m == nil {
			c.m = map[int64]*dealerRec{}
		}
		if len(c.m) >= maxDealers {
			for k := range c.m {
				delete(c.m, k)
				break
			}
		}
		c.m[dealerID] = nr
		c.mu.Unlock()
		return nr, nil
	})
	if err != nil {
		if r != nil && !r.gone && errors.Is(err, upstream.ErrUnavailable) && now.Sub(r.fetched) < st.AuthTTL+st.AuthStale {
			return r, nil
		}
		return nil, err
	}
	return v.(*dealerRec), nil
}

// errStrayDealer is the dealers service answering a profile request with
// another dealer's profile: the service's fault, as a listing holding
// another dealer's record is (errStrayVehicle), so a 503 whose request may
// be retried, not an internal error (until 2026-11-29 it was a 500;
// FuzzUpstreamAnswer).
var errStrayDealer = fmt.Errorf("%w: dealers service returned another dealer", upstream.ErrUnavailable)

// lookupBudget is a token bucket of per-key lookups, per instance.
type lookupBudget struct {
	mu     sync.Mutex
	tokens float64
	last   time.Time
	init   bool
}

// take spends one lookup if the bucket (rate per second, burst) has one.
func (b *lookupBudget) take(now time.Time, rate float64, burst int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.init {
		b.tokens, b.last, b.init = float64(burst), now, true
	}
	if dt := now.Sub(b.last); dt > 0 {
		b.tokens = min(float64(burst), b.tokens+dt.Seconds()*rate)
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func (s *Server) resolve(ctx context.Context, key string, id [32]byte) (*principal, error) {
	sum := sha256.Sum256([]byte(key))
	p := &principal{keyID: hex.EncodeToString(id[:16]), fetched: s.now()}
	rec, err := s.backend.LookupKey(ctx, hex.EncodeToString(sum[:]))
	switch {
	case errors.Is(err, upstream.ErrNotFound):
		p.errCode = codeInvalidKey
		return p, nil
	case err != nil:
		return nil, err
	}
	if rec.Status != "active" {
		p.errCode = codeInvalidKey
		return p, nil
	}
	p.dealerID, p.plan = rec.DealerID, rec.Plan
	if rec.ExpiresAt != nil {
		p.expiresAt = *rec.ExpiresAt
		if !p.expiresAt.After(s.now()) {
			p.errCode = codeExpiredKey
			return p, nil
		}
	}
	d, err := s.backend.Dealer(ctx, rec.DealerID)
	switch {
	case errors.Is(err, upstream.ErrNotFound):
		p.errCode = codeDealerNotFound
		return p, nil
	case err != nil:
		return nil, err
	}
	if d.ID != rec.DealerID {
		return nil, errStrayDealer
	}
	p.dealer = d
	return p, nil
}

// check turns a principal into the error it stands for at time now, if
// any (a key can expire while cached).
func (p *principal) check(now time.Time) *apiError {
	code := p.errCode
	if code == "" && !p.expiresAt.IsZero() && !now.Before(p.expiresAt) {
		code = codeExpiredKey
	}
	switch code {
	case "":
		return nil
	case codeExpiredKey:
		return problemf(code, "the API key has expired; regenerate it in the dealer dashboard")
	case codeDealerNotFound:
		return problemf(code, "the dealer of this API key no longer exists")
	default:
		return problemf(codeInvalidKey, "the API key is not valid")
	}
}
