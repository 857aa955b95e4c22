package cache

import (
	"sync"
	"sync/atomic"
	"time"
)

// The per-dealer Redis byte budget (Options.RedisDealerBudget).
//
// Every cacheable URL variant is an entry of its own, and the rate limit
// bounds how many a key can make a second, not how many bytes they keep in
// Redis: one key asking for distinct searches, filters or page sizes of
// 100 items fills Redis with entries nobody asks for again (tens of MiB
// per key at the default plan), and under maxmemory Redis then evicts other
// dealers' entries to make room. The budget bounds what one dealer's new
// entries hold in Redis, as this instance wrote them: a write that adds
// an entry Redis did not have (the fill followed a lookup that found
// nothing) is counted with its size until the entry's Redis TTL ends; a
// dealer whose count would pass the budget has its new entries kept out of
// Redis (they are still answered and kept in L1 as its admission
// decides). Rewrites of entries Redis holds (refreshes, revalidations)
// are never refused and not counted again: they add nothing, and they
// are a dealer's hot entries. The count is an estimate per instance: N
// instances let a dealer hold up to N budgets.

// budgetBuckets is the number of expiry buckets per dealer, budgetSlot
// the time each covers: an entry is counted until the end of the bucket
// its expiry falls in (up to a minute longer than Redis keeps it), and at
// most budgetBuckets-1 buckets ahead (an entry kept longer than 63
// minutes is counted for 63).
const (
	budgetBuckets = 64
	budgetSlot    = int64(time.Minute)
)

// budgetLogEvery is how often one dealer over its budget is logged.
const budgetLogEvery = 10 // budget slots (minutes)

// redisBudget holds the budget and each dealer's count.
type redisBudget struct {
	limit   atomic.Int64 // bytes; 0: no budget
	mu      sync.Mutex
	dealers map[int64]*dealerBytes
	swept   int64 // the slot of the last sweep of idle dealers
}

// dealerBytes is one dealer's count: bytes[s] are the bytes of new
// entries whose Redis expiry falls in slot at[s]; total their sum.
type dealerBytes struct {
	total  int64
	swept  int64 // slots up to this one are taken off total
	logged int64 // the slot of the last log line about this dealer
	at     [budgetBuckets]int64
	bytes  [budgetBuckets]int64
}

// sweep takes the buckets that ended by slot now off d's total.
func (d *dealerBytes) sweep(now int64) {
	if now <= d.swept {
		return
	}
	if now-d.swept >= budgetBuckets {
		*d = dealerBytes{swept: now, logged: d.logged}
		return
	}
	for m := d.swept + 1; m <= now; m++ {
		s := m % budgetBuckets
		if d.at[s] == m {
			d.total -= d.bytes[s]
			d.bytes[s], d.at[s] = 0, 0
		}
	}
	d.swept = now
}

// admit counts size bytes of a new entry of dealer that Redis keeps until
// expires, and reports whether it fits the budget (nothing is counted
// when it does not); held is the dealer's count, and warn whether a line
// about the dealer is due.
func (b *redisBudget) admit(dealer int64, size int64, now, expires time.Time) (ok bool, held int64, warn bool, charge budgetCharge) {
	limit := b.limit.Load()
	if limit <= 0 {
		return true, 0, false, budgetCharge{}
	}
	nowSlot := now.UnixNano() / budgetSlot
	exp := (expires.UnixNano() + budgetSlot - 1) / budgetSlot
	exp = max(exp, nowSlot+1)
	exp = min(exp, nowSlot+budgetBuckets-1)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dealers == nil {
		b.dealers = map[int64]*dealerBytes{}
	}
	if nowSlot > b.swept {
		// Once a slot: forget the dealers whose entries have all expired.
		b.swept = nowSlot
		for id, d := range b.dealers {
			if d.sweep(nowSlot); d.total == 0 && nowSlot-d.logged >= budgetLogEvery {
				delete(b.dealers, id)
			}
		}
	}
	d := b.dealers[dealer]
	if d == nil {
		d = &dealerBytes{swept: nowSlot, logged: -budgetLogEvery}
		b.dealers[dealer] = d
	}
	d.sweep(nowSlot)
	if d.total+size > limit {
		warn = nowSlot-d.logged >= budgetLogEvery
		if warn {
			d.logged = nowSlot
		}
		return false, d.total, warn, budgetCharge{}
	}
	s := exp % budgetBuckets
	if d.at[s] != exp {
		d.at[s], d.bytes[s] = exp, 0
	}
	d.bytes[s] += size
	d.total += size
	return true, d.total, false, budgetCharge{dealer: dealer, size: size, slot: exp}
}

// budgetCharge is what admit counted for one write: refund takes it back
// when the write fails.
type budgetCharge struct {
	dealer int64
	size   int64 // 0: nothing was counted
	slot   int64
}

// refund takes a failed write's bytes off its dealer's count, unless its
// bucket ended (or was reused) meanwhile. A write that timed out may still
// have been made by Redis; the count then errs towards admitting, as it does
// for an entry Redis evicts.
func (b *redisBudget) refund(ch budgetCharge) {
	if ch.size == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	d := b.dealers[ch.dealer]
	if d == nil {
		return
	}
	s := ch.slot % budgetBuckets
	if d.at[s] != ch.slot || d.bytes[s] < ch.size {
		return
	}
	d.bytes[s] -= ch.size
	d.total -= ch.size
}

// SetRedisDealerBudget sets the per-dealer Redis byte budget
// (Options.RedisDealerBudget) at run time; 0 or less removes it. The
// counts made so far are kept.
func (c *Cache) SetRedisDealerBudget(n int64) { c.budget.limit.Store(max(n, 0)) }

// admitL2 reports whether a write of buf (the encoded entry e, for rkey)
// may go to Redis: always for a rewrite of an entry Redis holds (fresh
// false), else as dealer's budget decides; the charge is what was counted,
// for budget.refund when the write fails.
func (c *Cache) admitL2(dealer int64, rkey string, buf []byte, e *Entry, fresh bool) (budgetCharge, bool) {
	if !fresh {
		return budgetCharge{}, true
	}
	now := c.now()
	ok, held, warn, charge := c.budget.admit(dealer, int64(len(rkey)+len(buf)), now, e.l2WriteUntil())
	if !ok {
		c.st.budgetSkips.Add(1)
		if warn {
			c.log.Warn("cache: dealer over its Redis byte budget; its new entries are kept out of Redis (answered and kept in L1 all the same)",
				"dealer_id", dealer, "budget_bytes", c.budget.limit.Load(), "held_bytes", held)
		}
	}
	return charge, ok
}
