package aggregator

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"sync"
	"time"

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
//   - Authorization with a scheme other than Bearer (case-insensitive), or
//     without a token: invalid_api_key;
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
		if len(authorization) <= len(scheme) || !bytes.EqualFold(authorization[:len(scheme)], []byte(scheme)) || authorization[len(scheme)] != ' ' {
			return nil, codeInvalidKey
		}
		key = bytes.TrimLeft(authorization[len(scheme):], " ")
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
	fetched   time.Time
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

// authenticate resolves the request's key to a principal, from the
// in-process cache when it is fresh, else from the dealers service (one
// call per key at a time). When the dealers service cannot answer, a
// stale principal is used for up to Settings.AuthStale.
func (s *Server) authenticate(rawKey []byte, rs *reqState) (*principal, error) {
	st := s.settings.Load()
	now := rs.start // the request's one clock read
	id := s.hasher.sum(rawKey)
	p := s.auth.get(id)
	if p != nil {
		ttl := st.AuthTTL
		if p.errCode != "" {
			ttl = st.AuthNegativeTTL
		}
		if now.Sub(p.fetched) < ttl {
			return p, nil
		}
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
		s.auth.put(id, np)
		return np, nil
	})
	if err != nil {
		if p != nil && errors.Is(err, upstream.ErrUnavailable) && now.Sub(p.fetched) < st.AuthTTL+st.AuthStale {
			return p, nil
		}
		return nil, err
	}
	return v.(*principal), nil
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
		return nil, errors.New("aggregator: dealers service returned another dealer")
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
