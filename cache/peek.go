package cache

import (
	"context"
	"time"
)

// Stamp is the dealer's generation and the purge epoch a Peek saw. Put
// stores under it, so that a fact learnt from the services before a purge
// (of the dealer or of everything) is never found after the purge: its L2
// key names the old generation, and L1 refuses an insert under one.
type Stamp struct {
	gen, ep uint64
	ok      bool
	at      time.Time // StampNow's reading of the clock
}

// At is when StampNow took the Stamp (zero for a Peek's).
func (s Stamp) At() time.Time { return s.at }

// Peek reports whether L1 or L2 holds a fresh entry of key for dealerID
// under pol, without a fill, a refresh, a stale answer or a flight: for a
// caller that keeps facts rather than responses (a remembered "not found",
// see aggregator's notFoundKeyPrefix) and makes the work that finds them
// out in a Get of another key. A fresh entry found counts as a hit, as in
// Get (an L2 one also as an L2 hit, and is offered to L1); a miss counts
// nothing, since the caller's Get that follows counts it. The Stamp is for
// the Put that records what that work finds.
func (c *Cache) Peek(ctx context.Context, dealerID int64, key []byte, pol Policy) (Stamp, bool) {
	pol = pol.normalised()
	if pol.TTL == 0 {
		return Stamp{}, false
	}
	ep := c.currentEpoch(ctx)
	gen, cur := c.generation(ctx, dealerID)
	st := Stamp{gen: gen, ep: ep, ok: true}
	if c.l1 != nil {
		if n, s := c.l1.lookup(dealerID, key); n != nil && n.gen == gen && n.epoch == ep && pol.state(n.entry, c.now()) == stateFresh {
			s.hits.Add(1)
			return st, true
		}
	}
	if c.rdb == nil || !c.l2Usable(cur) || !c.redisUp.Load() {
		return st, false
	}
	skey := string(key)
	e := c.l2Get(ctx, c.entryKeyAt(dealerID, gen, ep, skey), pol, false)
	if e == nil || pol.state(e, c.now()) != stateFresh {
		return st, false
	}
	if c.l1 != nil {
		c.l1.put(dealerID, skey, gen, ep, &cur.gen, e)
	}
	c.st.l2Hits.Add(1)
	c.count(Hit)
	return st, true
}

// Put stores body as the entry of key for dealerID under pol, in L1 and
// L2, under the generation and epoch of st (a Peek's): nothing is stored
// when a purge came since, or when st is the zero Stamp or pol's TTL is
// zero. It neither coalesces nor takes the fill lock: the caller's own
// Get of another key did. body is kept and must not be modified.
func (c *Cache) Put(ctx context.Context, dealerID int64, key []byte, pol Policy, st Stamp, body []byte) {
	e, cur := c.factEntry(dealerID, pol, st, body)
	if e == nil {
		return
	}
	skey := string(key)
	if c.l1 != nil {
		c.l1.put(dealerID, skey, st.gen, st.ep, &cur.gen, e)
	}
	if c.rdb != nil && c.l2Usable(cur) && c.redisUp.Load() {
		var held *heldLock
		// Not counted in the dealer's Redis budget: a fact is a few
		// hundred bytes kept for its short TTL (the remembered 404), and
		// under a flood that spent the budget it is what keeps the other
		// instances from asking the services again for the same ids.
		c.l2Set(ctx, dealerID, c.entryKeyAt(dealerID, st.gen, st.ep, skey), e, &held, false)
	}
}

// StampNow returns the dealer's generation and the purge epoch now, as
// Peek does, without a lookup: for a caller that learns a fact in a fill
// of another key and keeps it in process with PutL1 (it looks for it with
// Fresh, in L1 alone). A purge between StampNow and PutL1 leaves the fact
// unstored.
func (c *Cache) StampNow(ctx context.Context, dealerID int64) Stamp {
	ep := c.currentEpoch(ctx)
	gen, _ := c.generation(ctx, dealerID)
	return Stamp{gen: gen, ep: ep, ok: true, at: c.now()}
}

// PutL1 is Put into L1 alone: for a fact only ever looked for in L1
// (Fresh), which a write to Redis would store for nobody.
func (c *Cache) PutL1(dealerID int64, key []byte, pol Policy, st Stamp, body []byte) {
	if c.l1 == nil {
		return
	}
	if e, cur := c.factEntry(dealerID, pol, st, body); e != nil {
		c.l1.put(dealerID, string(key), st.gen, st.ep, &cur.gen, e)
	}
}

// factEntry is the entry of body that Put or PutL1 stores under st, with
// the dealer's generation state, or nil when nothing is stored: pol's TTL
// is zero, st is the zero Stamp, or a purge came since st.
func (c *Cache) factEntry(dealerID int64, pol Policy, st Stamp, body []byte) (*Entry, *genState) {
	pol = pol.normalised()
	if pol.TTL == 0 || !st.ok {
		return nil, nil
	}
	cur := c.gens.get(dealerID)
	if cur.gen.Load() != st.gen || c.epoch.gen.Load() != st.ep {
		return nil, nil
	}
	at := c.now()
	if !st.at.IsZero() && st.at.Before(at) {
		// A fact is as old as the call it was read by (its StampNow),
		// so facts compare by when their calls began
		// (TestNewerTotalNotRefusedForAnOlderOnesLateStore).
		at = st.at
	}
	e := newEntry(body, at, pol)
	e.level = c.gzipLevel
	return e, cur
}
