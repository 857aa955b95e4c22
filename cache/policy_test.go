package cache

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// listingTrace is the bench's scale mix in miniature: every page of every
// page size 1..100 of the fake's nine (dealer, service) inventories, each
// page about 450 bytes per vehicle, requested by a Zipf(s) draw over the
// pages in a seeded random order.
type listingTrace struct {
	keys  []string
	sizes []int
	reqs  []int
}

func newListingTrace(s float64, n int) *listingTrace {
	t := &listingTrace{}
	for d, total := range []int{330, 215, 64, 80, 40, 20, 60, 30, 20} {
		for ps := 1; ps <= 100; ps++ {
			for p := 1; (p-1)*ps < total; p++ {
				t.keys = append(t.keys, fmt.Sprintf("/dealer/%d/listing?page=%d&page_size=%d", d, p, ps))
				t.sizes = append(t.sizes, 150+450*min(ps, total-(p-1)*ps))
			}
		}
	}
	r := rand.New(rand.NewPCG(uint64(s*1000), 3))
	perm := r.Perm(len(t.keys))
	cdf := make([]float64, len(t.keys))
	sum := 0.0
	for k := range cdf {
		sum += 1 / math.Pow(float64(k+1), s)
		cdf[k] = sum
	}
	t.reqs = make([]int, n)
	for i := range t.reqs {
		k, _ := slices.BinarySearch(cdf, r.Float64()*sum)
		t.reqs[i] = perm[min(k, len(cdf)-1)]
	}
	return t
}

// cost is what an entry of item i counts in L1 (as l1.put counts it).
func (t *listingTrace) cost(i int) int64 { return int64(t.sizes[i]+2*len(t.keys[i])+18) + nodeOverhead }

func (t *listingTrace) workingSet() int64 {
	var ws int64
	for i := range t.keys {
		ws += t.cost(i)
	}
	return ws
}

// bestStatic is the hit ratio over reqs of the best fixed content of an L1
// of maxBytes: the items with the most requests per byte that fit.
func (t *listingTrace) bestStatic(reqs []int, maxBytes int64) float64 {
	count := make([]int64, len(t.keys))
	for _, k := range reqs {
		count[k]++
	}
	idx := make([]int, len(t.keys))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		x, y := count[a]*t.cost(b), count[b]*t.cost(a)
		switch {
		case x > y:
			return -1
		case x < y:
			return 1
		}
		return 0
	})
	var used, hits int64
	for _, i := range idx {
		if c := t.cost(i); count[i] > 0 && c <= maxBytes/8 && used+c <= maxBytes {
			used += c
			hits += count[i]
		}
	}
	return float64(hits) / float64(len(reqs))
}

// replay runs the trace through an L1 of maxBytes (lookup; put on a miss)
// and returns the hit ratio over the second half (the first warms it).
func (t *listingTrace) replay(maxBytes int64, admit bool) float64 {
	c := newL1(maxBytes)
	c.noAdmit = !admit
	body := make([]byte, slices.Max(t.sizes))
	kb := make([][]byte, len(t.keys))
	for i, k := range t.keys {
		kb[i] = []byte(k)
	}
	var gen atomic.Uint64
	hits := 0
	half := len(t.reqs) / 2
	for i, k := range t.reqs {
		if n, _ := c.lookup(1, kb[k]); n != nil {
			if i >= half {
				hits++
			}
			continue
		}
		c.put(1, t.keys[k], 0, 0, &gen, plainEntry(body[:t.sizes[k]], `"0123456789abcdef"`))
	}
	return float64(hits) / float64(len(t.reqs)-half)
}

// TestL1HitRatios replays Zipf(0.8), (1.0) and (1.2) traces of listing
// pages through L1 at 1/12 and 1/50 of the working set, with plain CLOCK
// (the policy before TinyLFU admission) and with TinyLFU admission, against
// the best static content. TinyLFU must beat CLOCK on every trace and reach
// at least 95% of the best static hit ratio (the scale issue's target).
func TestL1HitRatios(t *testing.T) {
	if raceEnabled {
		t.Skip("a policy measurement (12 replays of 400,000 requests), not a locking test; TestLargeL1Concurrent covers L1 under -race")
	}
	n := 400_000
	if testing.Short() {
		n = 100_000
	}
	for _, s := range []float64{0.8, 1.0, 1.2} {
		tr := newListingTrace(s, n)
		ws := tr.workingSet()
		for _, frac := range []int64{12, 50} {
			t.Run(fmt.Sprintf("zipf=%.1f/l1=1/%d", s, frac), func(t *testing.T) {
				l1 := ws / frac
				clock := tr.replay(l1, false)
				tiny := tr.replay(l1, true)
				best := tr.bestStatic(tr.reqs[len(tr.reqs)/2:], l1)
				t.Logf("%d pages, %.1f MB; L1 %.2f MB: CLOCK %.3f (%.0f%% of static), TinyLFU %.3f (%.0f%%), best static %.3f",
					len(tr.keys), float64(ws)/1e6, float64(l1)/1e6, clock, 100*clock/best, tiny, 100*tiny/best, best)
				if tiny <= clock {
					t.Errorf("TinyLFU %.3f does not beat CLOCK %.3f", tiny, clock)
				}
				if tiny < 0.95*best {
					t.Errorf("TinyLFU %.3f is %.0f%% of the best static %.3f (target >= 95%%)", tiny, 100*tiny/best, best)
				}
			})
		}
	}
}

// TestLargeL1Concurrent runs an L1 of thousands of entries (the whole
// listing trace: 41 MB into 24 MiB, so admission and eviction are busy)
// under concurrent Gets, purges and gzip variants; run with -race it checks
// the locking. Afterwards the byte and entry counts must match what the
// shards hold.
func TestLargeL1Concurrent(t *testing.T) {
	const maxBytes = 24 << 20
	c := newCache(t, Options{L1MaxBytes: maxBytes})
	tr := newListingTrace(0.8, 16_000)
	bodies := make([][]byte, len(tr.keys))
	for i := range bodies {
		bodies[i] = append(fmt.Appendf(nil, "%d:", i), bytes.Repeat([]byte("{\"make\":\"Fiat\"}"), tr.sizes[i]/16)...)
	}
	pol := Policy{TTL: time.Hour}
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(tr.reqs); i += 16 {
				k := tr.reqs[i]
				d := int64(k%7 + (i%4)*10)
				e, _, err := c.Get(context.Background(), d, []byte(tr.keys[k]), pol, func(context.Context) ([]byte, error) { return bodies[k], nil })
				if err != nil || !bytes.Equal(e.Body(), bodies[k]) {
					t.Errorf("get %s: %v", tr.keys[k], err)
					return
				}
				if i%3 == 0 {
					e.Gzip()
				}
				if i%5000 == 0 {
					_ = c.PurgeDealer(context.Background(), d)
				}
			}
		}()
	}
	wg.Wait()
	var bytesHeld, entries int64
	for i := range c.l1.shards {
		s := &c.l1.shards[i]
		s.mu.Lock()
		n := 0
		for _, dm := range s.m {
			n += len(dm)
		}
		if n != len(s.ring) {
			t.Errorf("shard %d: %d in maps, %d in ring", i, n, len(s.ring))
		}
		for _, nd := range s.ring {
			bytesHeld += nd.cost()
			entries++
		}
		s.mu.Unlock()
	}
	st := c.Stats()
	if st.L1Bytes != bytesHeld || st.L1Entries != entries {
		t.Fatalf("stats say %d bytes in %d entries, shards hold %d in %d", st.L1Bytes, st.L1Entries, bytesHeld, entries)
	}
	if st.L1Bytes > maxBytes+maxBytes/8 {
		t.Fatalf("L1 holds %d bytes of %d", st.L1Bytes, maxBytes)
	}
	t.Logf("%d entries, %.1f MB; %d evictions, %d not admitted", entries, float64(bytesHeld)/1e6, st.Evictions, st.L1Rejected)
}

// BenchmarkL1Policy replays a Zipf(1.0) listing trace through an L1 of 1/12
// of the working set (lookup, put on a miss), with plain CLOCK and with
// TinyLFU admission: ns per request and the hit ratio reached.
func BenchmarkL1Policy(b *testing.B) {
	tr := newListingTrace(1.0, 200_000)
	l1 := tr.workingSet() / 12
	body := make([]byte, slices.Max(tr.sizes))
	kb := make([][]byte, len(tr.keys))
	for i, k := range tr.keys {
		kb[i] = []byte(k)
	}
	for _, admit := range []bool{false, true} {
		name := "clock"
		if admit {
			name = "tinylfu"
		}
		b.Run(name, func(b *testing.B) {
			c := newL1(l1)
			c.noAdmit = !admit
			var gen atomic.Uint64
			hits := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := tr.reqs[i%len(tr.reqs)]
				if n, _ := c.lookup(1, kb[k]); n != nil {
					hits++
					continue
				}
				c.put(1, tr.keys[k], 0, 0, &gen, plainEntry(body[:tr.sizes[k]], ""))
			}
			b.ReportMetric(float64(hits)/float64(b.N), "hit-ratio")
		})
	}
}

// plainEntry is an entry of body with the given tag, made without hashing
// (the policy replays make millions).
func plainEntry(body []byte, etag string) *Entry {
	e := &Entry{ETag: etag, plainLen: len(body)}
	e.plain.Store(&variant{body: body})
	return e
}

// replayTiers runs the trace, its keys spread over dealers copies (dealer
// d asks for key k as item k of dealer d), through a Cache whose L1 of
// maxBytes is split in a hot tier of hot bytes and a bulk tier, with Get
// (the hot tier, the bulk tier, then the fill), and returns the hit ratio
// of the two tiers together and of the bulk tier alone over the second
// half. Without Redis the bulk tier keeps bodies as they are (plain), so
// the budget counts the same bytes as the best static content's.
func (t *listingTrace) replayTiers(tb testing.TB, dealers int, reqs []int, maxBytes, hot int64, policy int) (all, bulk float64) {
	c := newCache(tb, Options{L1MaxBytes: maxBytes, L1HotBytes: hot})
	if hot > 0 && c.bulk == nil {
		tb.Fatalf("no bulk tier for %d/%d", maxBytes, hot)
	}
	if c.bulk != nil {
		c.bulk.policy = policy
	}
	body := make([]byte, slices.Max(t.sizes))
	kb := make([][]byte, len(t.keys))
	for i, k := range t.keys {
		kb[i] = []byte(k)
	}
	pol := Policy{TTL: time.Hour}
	half := len(reqs) / 2
	var st0 Stats
	for i, r := range reqs {
		if i == half {
			st0 = c.Stats()
		}
		k, d := r%len(t.keys), r/len(t.keys)
		if _, _, err := c.Get(context.Background(), int64(d), kb[k], pol, func(context.Context) ([]byte, error) { return body[:t.sizes[k]], nil }); err != nil {
			tb.Fatal(err)
		}
	}
	st := c.Stats()
	n := float64(len(reqs) - half)
	return float64(st.Hits-st0.Hits) / n, float64(st.BulkHits-st0.BulkHits) / n
}

// TestTieredHitRatios replays Zipf(0.8), (1.0) and (1.2) traces through L1
// split in tiers (a hot tier of 1/16, the bulk tier for the rest, as the
// automatic split makes 64 MiB of 1 GiB) at 1/12 and 1/50 of the working
// set, against the same budget in one tier and the best static content,
// with the bulk tier admitting every entry and with its TinyLFU admission.
// The listing trace is too small for a bulk tier (fastcache's minimum is
// 32 MiB), so its pages are repeated for 48 dealers (1.9 GB of pages), each
// dealer's copy asked for as a Zipf draw over all of them. It takes a few
// minutes: set TIERED_HIT_RATIOS=1 to run it.
func TestTieredHitRatios(t *testing.T) {
	if os.Getenv("TIERED_HIT_RATIOS") == "" {
		t.Skip("a policy measurement of a few minutes; TIERED_HIT_RATIOS=1 runs it")
	}
	const dealers = 48
	n := 800_000
	for _, s := range []float64{0.8, 1.0, 1.2} {
		tr := newListingTrace(s, 1)
		// Items of all dealers: item d*len(keys)+k, ranked by a seeded
		// permutation as in newListingTrace.
		items := dealers * len(tr.keys)
		r := rand.New(rand.NewPCG(uint64(s*1000), 5))
		perm := r.Perm(items)
		cdf := make([]float64, items)
		sum := 0.0
		for k := range cdf {
			sum += 1 / math.Pow(float64(k+1), s)
			cdf[k] = sum
		}
		reqs := make([]int, n)
		for i := range reqs {
			k, _ := slices.BinarySearch(cdf, r.Float64()*sum)
			reqs[i] = perm[min(k, items-1)]
		}
		big := &listingTrace{}
		for d := 0; d < dealers; d++ {
			big.keys = append(big.keys, tr.keys...)
			big.sizes = append(big.sizes, tr.sizes...)
		}
		ws := big.workingSet()
		for _, frac := range []int64{12, 50} {
			t.Run(fmt.Sprintf("zipf=%.1f/l1=1/%d", s, frac), func(t *testing.T) {
				l1 := ws / frac
				best := big.bestStatic(reqs[len(reqs)/2:], l1)
				one, _ := tr.replayTiers(t, dealers, reqs, l1, -1, 0)
				all, _ := tr.replayTiers(t, dealers, reqs, l1, l1/16, bulkAdmitAll)
				two, bulk := tr.replayTiers(t, dealers, reqs, l1, l1/16, bulkAdmitLFU)
				t.Logf("%.0f MB, L1 %.1f MB: one tier %.3f (%.0f%% of static); hot 1/16 + bulk admitting all %.3f (%.0f%%), TinyLFU %.3f (%.0f%%; bulk %.3f); best static %.3f",
					float64(ws)/1e6, float64(l1)/1e6, one, 100*one/best, all, 100*all/best, two, 100*two/best, bulk, best)
				// A regression guard at the level measured (see README),
				// not the one-tier target: with plain bodies the tiers hold
				// what one tier holds, in a ring instead of CLOCK.
				if two < 0.85*one {
					t.Errorf("tiers %.3f under 85%% of one tier %.3f", two, one)
				}
			})
		}
	}
}
