package main

import (
	"cmp"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/dealer-edge/dealer-edge/aggregator/ops"
)

// embeddedRedis is the in-process Redis used without redis.addrs: a
// miniredis whose keys expire on the real clock and whose memory is
// bounded. miniredis alone never advances its clock (a key with a PTTL of
// 1 ms lived forever) and has no memory cap.
type embeddedRedis struct {
	mr      *miniredis.Miniredis
	db      int
	max     int64
	keys    atomic.Int64
	bytes   atomic.Int64
	evicted atomic.Uint64
	onEvict func(n int) // may be nil
	stop    chan struct{}
	done    chan struct{}
}

// embeddedTick is how often the embedded Redis expires keys and checks its
// size: keys live at most this much past their TTL, and the store can pass
// its cap by what is written in between.
const embeddedTick = 250 * time.Millisecond

// keyOverhead approximates what one key costs beyond its name and value
// (map entries, TTL entry, the string headers).
const keyOverhead = 96

// startEmbeddedRedis starts miniredis on a loopback port with a memory
// cap of maxBytes, for database db.
func startEmbeddedRedis(maxBytes int64, db int, onEvict func(n int)) (*embeddedRedis, error) {
	e, err := newEmbeddedRedis(maxBytes, db, onEvict)
	if err != nil {
		return nil, err
	}
	e.done = make(chan struct{})
	go e.run()
	return e, nil
}

// newEmbeddedRedis starts the server without its clock (tests sweep by
// hand); Close still works.
func newEmbeddedRedis(maxBytes int64, db int, onEvict func(n int)) (*embeddedRedis, error) {
	mr := miniredis.NewMiniRedis()
	if err := mr.StartAddr("127.0.0.1:0"); err != nil {
		return nil, err
	}
	e := &embeddedRedis{mr: mr, db: db, max: maxBytes, onEvict: onEvict, stop: make(chan struct{}), done: make(chan struct{})}
	close(e.done) // until run
	return e, nil
}

// Addr is the address clients connect to.
func (e *embeddedRedis) Addr() string { return e.mr.Addr() }

// Close stops the clock and the server.
func (e *embeddedRedis) Close() {
	close(e.stop)
	<-e.done
	e.mr.Close()
}

// Stats reads the counters for the metrics.
func (e *embeddedRedis) Stats() ops.EmbeddedRedisStats {
	return ops.EmbeddedRedisStats{Keys: e.keys.Load(), Bytes: e.bytes.Load(), MaxBytes: e.max}
}

func (e *embeddedRedis) run() {
	defer close(e.done)
	t := time.NewTicker(embeddedTick)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-e.stop:
			return
		case now := <-t.C:
			// TTLs count down by the real time elapsed; FastForward
			// deletes the keys that reach zero. TIME and (P)EXPIREAT
			// already read the real clock.
			e.mr.FastForward(now.Sub(last))
			last = now
			e.sweep()
		}
	}
}

// sweep measures the store and, over the cap, evicts the keys closest to
// expiry first (Redis's volatile-ttl; keys without a TTL after them, the
// rate limiters' buckets last) down to 90% of it. Writes are never
// refused: the cache and the rate limiter see no error from a full store,
// only entries that left early. A bucket expires when it is full again,
// within seconds, before any cache entry: evicted by expiry it went first,
// and every sweep over the cap (one each embeddedTick while a flood of
// fills holds the store there) gave every drained key its burst again
// (TestEmbeddedRedisKeepsRateLimitBuckets). Buckets are small and leave by
// themselves; evicting one is the last resort.
func (e *embeddedRedis) sweep() {
	db := e.mr.DB(e.db)
	type entry struct {
		key    string
		size   int64
		ttl    time.Duration
		bucket bool
	}
	keys := db.Keys()
	entries := make([]entry, 0, len(keys))
	var total int64
	for _, k := range keys {
		size := int64(len(k) + keyOverhead)
		if db.Type(k) == "string" {
			v, _ := db.Get(k)
			size += int64(len(v))
		}
		total += size
		entries = append(entries, entry{k, size, db.TTL(k), isRateLimitBucket(k)})
	}
	if total > e.max {
		slices.SortFunc(entries, func(a, b entry) int {
			switch {
			case a.bucket != b.bucket:
				if a.bucket {
					return 1
				}
				return -1
			case a.ttl == 0 && b.ttl != 0:
				return 1
			case b.ttl == 0 && a.ttl != 0:
				return -1
			}
			return cmp.Compare(a.ttl, b.ttl)
		})
		target := e.max * 9 / 10
		n := 0
		for _, en := range entries {
			if total <= target {
				break
			}
			if db.Del(en.key) {
				total -= en.size
				n++
			}
		}
		e.evicted.Add(uint64(n))
		if e.onEvict != nil && n > 0 {
			e.onEvict(n)
		}
		keys = keys[:len(keys)-n]
	}
	e.keys.Store(int64(len(keys)))
	e.bytes.Store(total)
}

// isRateLimitBucket reports whether key is a rate limiter's bucket,
// "<prefix>:{<tag>}:rl:<id>" (cache/ratelimit): the hash tag's closing
// brace, the first in the key, is followed by ":rl:". A cache key has its
// kind and generation there ("}:g1:", "}:l1:"), so no request's text in a
// cache key's tail can make it one.
func isRateLimitBucket(key string) bool {
	i := strings.IndexByte(key, '}')
	return i >= 0 && strings.HasPrefix(key[i+1:], ":rl:")
}
