package aggregator

import (
	"bytes"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// body requests uri with key and returns the status and the body.
func (e *indexEdge) reviewBody(uri, key string) (int, []byte) {
	var req fasthttp.Request
	req.SetRequestURI(uri)
	req.Header.Set("X-Api-Key", key)
	var ctx fasthttp.RequestCtx
	ctx.Init(&req, nil, nil)
	e.s.Handler()(&ctx)
	return ctx.Response.StatusCode(), append([]byte(nil), ctx.Response.Body()...)
}

// TestMovedKeyNotServedAsOldDealer: the fresh index says a key now belongs
// to dealer 102; the dealers service cannot give 102's profile right now.
// fromIndex falls back to the principal cached before the move, which acts
// for dealer 101: 101's data is answered to a key of 102.
func TestMovedKeyNotServedAsOldDealer(t *testing.T) {
	e := newIndexEdge(t, fake.Options{}, nil, true)
	e.sync(t)
	const uri = "/dealer/REWIND/listing"
	st, alpha := e.reviewBody(uri, "demo-key-alpha")
	if st != 200 {
		t.Fatalf("warm: %d", st)
	}
	// The key now belongs to dealer 102 (the change feed's upsert).
	if err := e.fk.AddKey("demo-key-alpha", 102, fake.PlanDefault, nil); err != nil {
		t.Fatal(err)
	}
	e.sync(t) // fresh: the index holds alpha -> 102
	e.fk.SetDown(upstream.SvcDealers, true)
	st, b := e.reviewBody(uri, "demo-key-alpha")
	if st == 200 && bytes.Equal(b, alpha) {
		t.Fatalf("a key the fresh index gives to dealer 102 answered 200 with dealer 101's listing")
	}
	t.Logf("status %d", st)
}

// TestExpiredInIndexNotServedFromLookup: a key resolved by a lookup while
// the index was loading (no expiry then) is expired by the first snapshot;
// with the dealers service down, the older lookup principal (no expiry)
// is the fallback of fromIndex and the expired key answers 200.
func TestExpiredInIndexNotServedFromLookup(t *testing.T) {
	e := newIndexEdge(t, fake.Options{}, nil, true)
	if got := e.get("demo-key-gamma"); got != 200 { // index loading: lookup
		t.Fatalf("warm by lookup: %d", got)
	}
	past := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	if err := e.fk.AddKey("demo-key-gamma", 103, fake.PlanDefault, &past); err != nil {
		t.Fatal(err)
	}
	e.sync(t) // fresh: the index holds gamma, expired
	e.fk.SetDown(upstream.SvcDealers, true)
	if got := e.get("demo-key-gamma"); got != 401 {
		t.Fatalf("a key the fresh index holds as expired answered %d; want 401 expired_api_key", got)
	}
}

// TestRevokedByLookupStaysRevoked: without a deciding index (here no key
// feed: auth.index false), a key resolved valid, then revoked, then looked
// up again as revoked (401) comes back as 200 once the negative entry
// (auth.negative_ttl) has passed and the dealers service is down: the
// older valid principal was never dropped from the valid cache, and it is
// the stale fallback for up to auth.ttl + auth.stale after its lookup.
func TestRevokedByLookupStaysRevoked(t *testing.T) {
	for _, down := range []bool{true, false} {
		name := "dealers service down"
		if !down {
			name = "lookup budget spent"
		}
		t.Run(name, func(t *testing.T) {
			e := newIndexEdge(t, fake.Options{}, func(s *Settings) {
				if !down {
					s.LookupRate, s.LookupBurst = 0.0001, 2
				}
			}, false)
			now := time.Now()
			e.s.now, e.s.realClock = func() time.Time { return now }, false
			if got := e.get("demo-key-alpha"); got != 200 { // lookup 1: valid
				t.Fatalf("warm: %d", got)
			}
			e.fk.RevokeKey("demo-key-alpha")
			now = now.Add(61 * time.Second)                 // past auth.ttl
			if got := e.get("demo-key-alpha"); got != 401 { // lookup 2: revoked
				t.Fatalf("after the lookup that saw the revocation: %d, want 401", got)
			}
			now = now.Add(11 * time.Second) // past auth.negative_ttl
			if down {
				e.fk.SetDown(upstream.SvcDealers, true)
			}
			// 401 (the last word on the key) or 503 (it cannot be checked
			// now, as any key without a usable cache entry); never 200.
			if got := e.get("demo-key-alpha"); got == 200 {
				t.Fatalf("a key the last lookup found revoked answered %d (%s); want 401 or 503", got, name)
			}
		})
	}
}

// TestExpiredKeyNeedsNoProfile: the fresh index holds the key as expired;
// the answer (401 expired_api_key) needs nothing of the dealers service,
// but the index path fetches the dealer profile first, so with that
// service down (profile not cached) an expired key is 503, and with its
// dealer deleted it is 404 dealer_not_found where a lookup (resolve:
// status, then expiry, then dealer) says 401 expired_api_key.
func TestExpiredKeyNeedsNoProfile(t *testing.T) {
	e := newIndexEdge(t, fake.Options{}, nil, true)
	past := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	if err := e.fk.AddKey("expired-orphan", 199, fake.PlanDefault, &past); err != nil {
		t.Fatal(err)
	}
	e.sync(t)
	if got := e.get("expired-orphan"); got != 401 {
		t.Errorf("expired key of a deleted dealer, fresh index: %d; want 401 expired_api_key as by lookup", got)
	}
	e.fk.SetDown(upstream.SvcDealers, true)
	if got := e.get("demo-key-expired"); got != 401 {
		t.Errorf("expired key, fresh index, dealers service down: %d; want 401 expired_api_key", got)
	}
	// By lookup (no index), for comparison.
	l := newIndexEdge(t, fake.Options{}, nil, false)
	if err := l.fk.AddKey("expired-orphan", 199, fake.PlanDefault, &past); err != nil {
		t.Fatal(err)
	}
	if got := l.get("expired-orphan"); got != 401 {
		t.Errorf("by lookup: %d", got)
	}
}
