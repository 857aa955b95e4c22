package ratelimit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/redis/go-redis/v9"
)

// TestRedisExactAdmissions: against a real redis-server with a controlled
// clock, unleased limits admit exactly Burst + Rate·D, leased ones at most
// that and at most k-1 fewer.
func TestRedisExactAdmissions(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client()
	tests := []struct {
		name  string
		lim   Limit
		every time.Duration
		dur   time.Duration
	}{
		{"demo 10/s burst 10", Limit{Rate: 10, Burst: 10}, time.Millisecond, 2 * time.Second},
		{"1/s burst 3", Limit{Rate: 1, Burst: 3}, 10 * time.Millisecond, 5 * time.Second},
		{"default 50/s burst 100 (k=6)", Limit{Rate: 50, Burst: 100}, time.Millisecond, 2 * time.Second},
		{"1000/s burst 100 (k=20)", Limit{Rate: 1000, Burst: 100}, 250 * time.Microsecond, time.Second},
		// Rates whose emission interval is not a whole number of
		// microseconds: Redis kept the TAT in whole microseconds and
		// rounded the interval up, so 300,000/s was enforced as 250,000/s
		// and 700,000/s as 500,000/s (the in-process fallback enforced the
		// configured rate).
		{"100k/s burst 1000 (k=250)", Limit{Rate: 1e5, Burst: 1000}, time.Microsecond, 10 * time.Millisecond},
		{"300k/s burst 1000 (k=250)", Limit{Rate: 3e5, Burst: 1000}, time.Microsecond, 10 * time.Millisecond},
		{"700k/s burst 1000 (k=250)", Limit{Rate: 7e5, Burst: 1000}, time.Microsecond, 10 * time.Millisecond},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			l := newLimiter(t, Options{Redis: c, Now: clk.Now})
			k := l.leaseCap(tt.lim)
			key := "exact" + strconv.Itoa(i)
			got := 0
			for at := time.Duration(0); at <= tt.dur; at += tt.every {
				got += allowN(l, 5, key, tt.lim, 1)
				clk.Advance(tt.every)
			}
			want := tt.lim.Burst + int(tt.lim.Rate*tt.dur.Seconds())
			if got > want || got < want-(k-1) {
				t.Fatalf("admitted %d, want %d (lease cap %d allows down to %d)", got, want, k, want-(k-1))
			}
			if k == 1 && got != want {
				t.Fatalf("unleased limit admitted %d, want exactly %d", got, want)
			}
			t.Logf("admitted %d of bound %d (k=%d), %d Redis calls for %d requests",
				got, want, k, l.Stats().RedisCalls, int(tt.dur/tt.every)+1)
		})
	}
}

// TestTwoInstancesAccuracyBound is the proof by test of the package doc's
// bound: two instances sharing one Redis and one clock, bursty random
// demand (idle gaps let the bucket refill while leases are held), and for
// every interval [a, b] of the run:
//
//	admitted ≤ Rate·(b−a) + Burst + N·(k−1)
//	admitted ≤ Rate·(b−a+LeaseWindow) + Burst
//
// and the run as a whole admits about the limit, not twice it.
func TestTwoInstancesAccuracyBound(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client()
	const N = 2
	tests := []struct {
		lim   Limit
		wantK int
	}{
		{Limit{Rate: 10, Burst: 10}, 1}, // exact
		{Limit{Rate: 100, Burst: 20}, 5},
		{Limit{Rate: 1000, Burst: 200}, 50}, // min(MaxLease, burst/4, rate x 125ms)
	}
	for ti, tt := range tests {
		t.Run(fmt.Sprintf("%g/s burst %d", tt.lim.Rate, tt.lim.Burst), func(t *testing.T) {
			clk := newFakeClock()
			var ls [N]*Limiter
			for i := range ls {
				ls[i] = newLimiter(t, Options{Redis: c, Now: clk.Now})
			}
			k := ls[0].leaseCap(tt.lim)
			if k != tt.wantK {
				t.Fatalf("lease cap %d, want %d", k, tt.wantK)
			}
			window := time.Duration(ls[0].window)
			key := "bound" + strconv.Itoa(ti)
			const tick = time.Millisecond
			const ticks = 3000
			rng := rand.New(rand.NewPCG(1, uint64(ti)))
			perTick := make([]int, ticks) // admissions at each tick
			busy := true
			for i := range ticks {
				if i%50 == 0 { // phases of 50ms: busy or idle
					busy = rng.IntN(3) > 0
				}
				var demand [N]int
				if busy {
					for j := range demand {
						demand[j] = rng.IntN(2*k + 2)
					}
				}
				var admitted atomic.Int64
				var wg sync.WaitGroup
				for j, l := range ls {
					wg.Add(1)
					go func() {
						defer wg.Done()
						admitted.Add(int64(allowN(l, 9, key, tt.lim, demand[j])))
					}()
				}
				wg.Wait()
				perTick[i] = int(admitted.Load())
				clk.Advance(tick)
			}
			prefix := make([]int, ticks+1)
			for i, n := range perTick {
				prefix[i+1] = prefix[i] + n
			}
			worst := -1 << 30 // largest excess over the single-bucket bound
			for a := range ticks {
				for b := a; b < ticks; b++ {
					got := prefix[b+1] - prefix[a]
					span := time.Duration(b-a) * tick
					single := int(tt.lim.Rate*span.Seconds()) + tt.lim.Burst
					if got > single+N*(k-1) {
						t.Fatalf("[%v, %v]: admitted %d > Rate·L + Burst + N(k-1) = %d",
							time.Duration(a)*tick, time.Duration(b)*tick, got, single+N*(k-1))
					}
					if lim2 := int(tt.lim.Rate*(span+window).Seconds()) + tt.lim.Burst; got > lim2 {
						t.Fatalf("[%v, %v]: admitted %d > Rate·(L+W) + Burst = %d",
							time.Duration(a)*tick, time.Duration(b)*tick, got, lim2)
					}
					worst = max(worst, got-single)
				}
			}
			total := prefix[ticks]
			whole := int(tt.lim.Rate*(time.Duration(ticks-1)*tick).Seconds()) + tt.lim.Burst
			if total > whole+N*(k-1) {
				t.Fatalf("total %d over the whole-run bound %d", total, whole+N*(k-1))
			}
			if k == 1 && worst > 0 {
				t.Fatalf("unleased limit overshot a single bucket by %d", worst)
			}
			var calls uint64
			for _, l := range ls {
				calls += l.Stats().RedisCalls
			}
			t.Logf("admitted %d (single-bucket bound over the run %d); worst excess over Rate·L+Burst in any window %d (allowed N(k-1) = %d); %d Redis calls",
				total, whole, worst, N*(k-1), calls)
		})
	}
}

// TestTwoInstancesRealClock: two instances hammering one key from many
// goroutines on real time (Redis's clock) admit the global limit, not
// twice it.
func TestTwoInstancesRealClock(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client()
	calls := &callLog{}
	c.AddHook(calls)
	lim := Limit{Rate: 1000, Burst: 100}
	a := newLimiter(t, Options{Redis: c})
	b := newLimiter(t, Options{Redis: c})
	ctx := context.Background()
	var admitted, total atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	calls.start = start
	stop := start.Add(time.Second)
	for g := range 16 {
		l := a
		if g%2 == 1 {
			l = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				total.Add(1)
				if l.Allow(ctx, 3, "realclock", lim).Allowed {
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	// Every token was granted by Redis during the run and none was held
	// before it, so even the single-bucket bound holds (plus the last
	// in-flight round trips).
	upper := int64(lim.Rate*(elapsed+5*time.Millisecond).Seconds()) + int64(lim.Burst)
	// Below it, the run may forfeit tokens only where demand stopped:
	// while no call reached Redis for longer than the bucket takes to
	// fill (the test process or redis-server descheduled on a busy
	// machine), what the full bucket earned is lost; that is measured
	// from the calls, not guessed. Besides that, the two leases may end
	// the run unspent, and 5% is left for the last round trips.
	granted, lost := calls.account(lim)
	k := int64(a.leaseCap(lim))
	lower := int64(lim.Rate*stop.Sub(start).Seconds()*0.95) + int64(lim.Burst) - lost - 2*(k-1)
	got := admitted.Load()
	if got > upper || got < lower {
		t.Fatalf("admitted %d in %v, want between %d and %d (twice would be %d; Redis granted %d, the bucket forfeited at most %d while idle)",
			got, elapsed, lower, upper, 2*upper, granted, lost)
	}
	if got > granted {
		t.Fatalf("admitted %d, more than the %d tokens Redis granted", got, granted)
	}
	sa, sb := a.Stats(), b.Stats()
	t.Logf("admitted %d of %d requests in %v (bounds %d, %d; forfeited while idle at most %d); Redis calls %d (%.2f%% of requests)",
		got, total.Load(), elapsed, lower, upper, lost, sa.RedisCalls+sb.RedisCalls,
		100*float64(sa.RedisCalls+sb.RedisCalls)/float64(total.Load()))
	if sa.FallbackActive || sb.FallbackActive || sa.RedisErrors+sb.RedisErrors > 0 {
		t.Fatalf("fallback during the run: %+v %+v", sa, sb)
	}
}

// TestRedisKilledAndBack: Redis killed -> the fallback engages without an
// error, enforcing the limit locally; Redis back -> the shared limit
// again, across instances.
func TestRedisKilledAndBack(t *testing.T) {
	srv := redistest.Start(t)
	clk := newFakeClock()
	var logs logBuffer
	opts := Options{Redis: srv.Client(), Now: clk.Now, ProbeInterval: time.Second, RedisTimeout: 500 * time.Millisecond, Logger: logs.logger()}
	a := newLimiter(t, opts)
	b := newLimiter(t, opts)
	ctx := context.Background()
	lim := Limit{Rate: 10, Burst: 10}

	for range 3 {
		if d := a.Allow(ctx, 1, "k", lim); !d.Allowed || d.Source != SourceRedis {
			t.Fatalf("up: %+v", d)
		}
	}

	srv.Stop()
	// The local bucket continues from Redis's last word: 7 left.
	for i := range 12 {
		d := a.Allow(ctx, 1, "k", lim)
		if d.Source != SourceLocal || d.Allowed != (i < 7) {
			t.Fatalf("down, request %d: %+v", i, d)
		}
	}
	if st := a.Stats(); !st.FallbackActive || st.FallbackActivations != 1 {
		t.Fatalf("down: %+v", st)
	}

	srv.Restart() // empty: buckets start full
	clk.Advance(time.Second)
	if d := a.Allow(ctx, 1, "k", lim); !d.Allowed || d.Source != SourceRedis {
		t.Fatalf("after probe: %+v", d)
	}
	if st := a.Stats(); st.FallbackActive {
		t.Fatalf("still in fallback: %+v", st)
	}
	// Shared again: a and b together get the 9 tokens left, not 9 each.
	got := 0
	for range 10 {
		got += allowN(a, 1, "k", lim, 1) + allowN(b, 1, "k", lim, 1)
	}
	if got != 9 {
		t.Fatalf("two instances after recovery admitted %d, want 9", got)
	}
	if logs.count("redis unavailable") != 1 || logs.count("redis available again") != 1 {
		t.Fatalf("want one log line per state change:\n%s", logs.String())
	}
}

// TestRedisKilledUnderLoad kills and restarts Redis while goroutines keep
// calling Allow on real time: every call returns a decision, the fallback
// engages, and the limiter returns to Redis by itself.
func TestRedisKilledUnderLoad(t *testing.T) {
	srv := redistest.Start(t)
	l := newLimiter(t, Options{Redis: srv.Client(), ProbeInterval: 100 * time.Millisecond, RedisTimeout: 200 * time.Millisecond})
	lim := Limit{Rate: 500, Burst: 50}
	ctx := context.Background()
	var stop atomic.Bool
	var sources sync.Map
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				d := l.Allow(ctx, int64(g%2), "load"+strconv.Itoa(g%4), lim)
				sources.Store(d.Source, true)
				time.Sleep(100 * time.Microsecond)
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	srv.Stop()
	time.Sleep(300 * time.Millisecond)
	if st := l.Stats(); !st.FallbackActive {
		t.Errorf("Redis down for 300ms, fallback not active: %+v", st)
	}
	srv.Restart()
	deadline := time.Now().Add(3 * time.Second)
	for l.Stats().FallbackActive && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	st := l.Stats()
	if st.FallbackActive || st.FallbackActivations < 1 {
		t.Fatalf("did not recover: %+v", st)
	}
	for _, s := range []string{SourceRedis, SourceLocal} {
		if _, ok := sources.Load(s); !ok {
			t.Errorf("no decision from %q", s)
		}
	}
	if d := l.Allow(ctx, 9, "fresh", lim); d.Source != SourceRedis {
		t.Fatalf("after recovery: %+v", d)
	}
	t.Logf("%+v", st)
}

// TestRedisCluster: the limiter on a three-master Redis Cluster. Each
// dealer's keys hash to the dealer's slot, dealers spread over the
// masters, and limits are exact.
func TestRedisCluster(t *testing.T) {
	cl := redistest.StartCluster(t)
	c := cl.Client(t)
	ctx := context.Background()
	clk := newFakeClock()
	l := newLimiter(t, Options{Redis: c, Now: clk.Now})
	l2 := newLimiter(t, Options{Redis: c, Now: clk.Now})
	lim := Limit{Rate: 10, Burst: 10}

	masters := map[string]bool{}
	for dealer := int64(1); dealer <= 12; dealer++ {
		key := "edge:v1:{d" + strconv.FormatInt(dealer, 10) + "}:rl:abc"
		slot, err := c.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		tag, err := c.ClusterKeySlot(ctx, "d"+strconv.FormatInt(dealer, 10)).Result()
		if err != nil {
			t.Fatal(err)
		}
		if slot != tag {
			t.Fatalf("key %s in slot %d, its dealer tag in %d", key, slot, tag)
		}
		masters[strconv.Itoa(int(slot)*3/16384)] = true
	}
	if len(masters) < 2 {
		t.Fatalf("dealers all on one master: %v", masters)
	}

	counts := make([]int, 13)
	for range 200 { // 2s in 10ms steps, two instances
		for dealer := int64(1); dealer <= 12; dealer++ {
			counts[dealer] += allowN(l, dealer, "abc", lim, 1) + allowN(l2, dealer, "abc", lim, 1)
		}
		clk.Advance(10 * time.Millisecond)
	}
	for dealer := 1; dealer <= 12; dealer++ {
		if counts[dealer] != 10+19 {
			t.Errorf("dealer %d admitted %d, want exactly 29", dealer, counts[dealer])
		}
	}
	// The lease path on a cluster.
	hot := Limit{Rate: 1e6, Burst: 1e6}
	if n := allowN(l, 5, "hot", hot, 1000); n != 1000 {
		t.Fatalf("hot key admitted %d", n)
	}
	if st := l.Stats(); st.RedisErrors != 0 || st.FallbackActive {
		t.Fatalf("stats %+v", st)
	}
}

// TestOvershootWorstCase builds the worst case of the bound on purpose and
// shows it is tight: both instances hold a full lease (k-1 unspent tokens
// each) while the shared bucket refills to Burst inside the lease window;
// then, in one instant, they admit Burst + N·(k-1), and not one more.
func TestOvershootWorstCase(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client()
	clk := newFakeClock()
	lim := Limit{Rate: 100, Burst: 20} // k = 5, refill 200ms < LeaseWindow 250ms
	a := newLimiter(t, Options{Redis: c, Now: clk.Now})
	b := newLimiter(t, Options{Redis: c, Now: clk.Now})
	k := a.leaseCap(lim)
	refill := time.Duration(float64(lim.Burst) / lim.Rate * float64(time.Second))
	// Grow both leases to k: hammer in one instant (each lease runs out at
	// once, so the next one doubles).
	for _, l := range []*Limiter{a, b} {
		allowN(l, 1, "worst", lim, lim.Burst)
		clk.Advance(refill)
	}
	for _, l := range []*Limiter{a, b} {
		if _, e := l.entry(1, "worst", l.now()); e.size != k {
			t.Fatalf("lease size %d, want %d", e.size, k)
		}
	}
	// Each takes a lease of k and spends one token of it.
	clk.Advance(refill)
	for _, l := range []*Limiter{a, b} {
		if d := l.Allow(context.Background(), 1, "worst", lim); !d.Allowed || d.Source != SourceRedis {
			t.Fatalf("lease: %+v", d)
		}
	}
	// The bucket refills while the leases are still valid.
	clk.Advance(refill)
	got := allowN(a, 1, "worst", lim, 100) + allowN(b, 1, "worst", lim, 100)
	if want := lim.Burst + 2*(k-1); got != want {
		t.Fatalf("admitted %d in one instant, want the bound Burst + N(k-1) = %d", got, want)
	}
	// Over the 2·refill interval since the leases, the total still fits
	// Rate·L + Burst + N(k-1): the overshoot does not accumulate.
	if total, bound := got+2, int(lim.Rate*(refill).Seconds())+lim.Burst+2*(k-1); total > bound {
		t.Fatalf("interval total %d > %d", total, bound)
	}
	// With MaxLease 1 the same scenario admits exactly Burst.
	c2 := newLimiter(t, Options{Redis: c, Now: clk.Now, MaxLease: 1})
	d2 := newLimiter(t, Options{Redis: c, Now: clk.Now, MaxLease: 1})
	clk.Advance(time.Minute)
	for _, l := range []*Limiter{c2, d2} {
		allowN(l, 1, "exact", lim, 1)
	}
	clk.Advance(refill)
	if got := allowN(c2, 1, "exact", lim, 100) + allowN(d2, 1, "exact", lim, 100); got != lim.Burst {
		t.Fatalf("MaxLease 1 admitted %d, want exactly Burst %d", got, lim.Burst)
	}
}

// TestRedisRetryAfter: against a real redis-server on a controlled clock,
// the RetryAfter of a rejection is exact. A fresh instance, which holds no
// cached rejection and so asks Redis itself, is still rejected by the
// script 1ms and 1µs before RetryAfter has passed (and is told exactly the
// time left); exactly RetryAfter later one request is admitted, and only
// one. Limits with and without leases, rejections at and off the emission
// grid.
func TestRedisRetryAfter(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client()
	ctx := context.Background()
	tests := []struct {
		name string
		lim  Limit
		gap  time.Duration // clock advance between draining and the rejection
	}{
		{"demo 10/s burst 10", Limit{Rate: 10, Burst: 10}, 0},
		{"3/s burst 2, off the grid", Limit{Rate: 3, Burst: 2}, 100 * time.Millisecond},
		{"0.3/s burst 2", Limit{Rate: 0.3, Burst: 2}, 1500 * time.Millisecond},
		{"1000/s burst 40, leased", Limit{Rate: 1000, Burst: 40}, 0},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			a := newLimiter(t, Options{Redis: c, Now: clk.Now})
			// fresh is another instance on the same Redis and clock with no
			// local state for the key, so its answer is the script's.
			fresh := func() *Limiter { return newLimiter(t, Options{Redis: c, Now: clk.Now}) }
			key := "retry-after-" + strconv.Itoa(i)
			// Drain the bucket in one instant (leases included: a hammered
			// key grows its lease, and a's unspent tokens are spent too).
			if n := allowN(a, 4, key, tt.lim, 2*tt.lim.Burst); n != tt.lim.Burst {
				t.Fatalf("drain: admitted %d, want the burst %d", n, tt.lim.Burst)
			}
			clk.Advance(tt.gap)
			// The gap refilled part of a token at most: still rejected.
			var rej Decision
			for range 3 * tt.lim.Burst { // spend what a lease may still hold
				if rej = a.Allow(ctx, 4, key, tt.lim); !rej.Allowed {
					break
				}
			}
			if rej.Allowed || rej.RetryAfter <= 0 {
				t.Fatalf("no rejection after the drain: %+v", rej)
			}
			// The script keeps the TAT to the nanosecond and answers times
			// rounded up to whole microseconds.
			interval := time.Duration(tt.lim.interval(1e9))
			if want := (interval - tt.gap%interval).Round(time.Microsecond); rej.RetryAfter < interval-tt.gap%interval || rej.RetryAfter != want && rej.RetryAfter != want+time.Microsecond {
				t.Fatalf("RetryAfter %v, want %v (one emission interval %v less the %v gap)", rej.RetryAfter, want, interval, tt.gap)
			}
			ra := rej.RetryAfter

			clk.Advance(ra - time.Millisecond)
			if d := fresh().Allow(ctx, 4, key, tt.lim); d.Allowed || d.Source != SourceRedis || d.RetryAfter != time.Millisecond {
				t.Fatalf("1ms before RetryAfter, asking Redis: %+v, want a Redis rejection with 1ms left", d)
			}
			if d := a.Allow(ctx, 4, key, tt.lim); d.Allowed || d.RetryAfter != time.Millisecond {
				t.Fatalf("1ms before RetryAfter, the rejecting instance: %+v", d)
			}
			clk.Advance(time.Millisecond - time.Microsecond)
			if d := fresh().Allow(ctx, 4, key, tt.lim); d.Allowed || d.Source != SourceRedis || d.RetryAfter != time.Microsecond {
				t.Fatalf("1µs before RetryAfter, asking Redis: %+v, want a Redis rejection with 1µs left", d)
			}

			clk.Advance(time.Microsecond) // exactly RetryAfter after the rejection
			if d := a.Allow(ctx, 4, key, tt.lim); !d.Allowed || d.Source != SourceRedis {
				t.Fatalf("at RetryAfter: %+v, want admitted by Redis", d)
			}
			// The next token is one interval after the one just taken, which
			// came at most 1µs (the rounding of RetryAfter) before now.
			if d := fresh().Allow(ctx, 4, key, tt.lim); d.Allowed || d.Source != SourceRedis || d.RetryAfter <= interval-time.Microsecond || d.RetryAfter > interval+time.Microsecond-1 {
				t.Fatalf("second request at RetryAfter: %+v, want rejected by Redis for one interval %v", d, interval)
			}
			if st := a.Stats(); st.RedisErrors != 0 || st.FallbackActive {
				t.Fatalf("fallback during the test: %+v", st)
			}
		})
	}
}

// callLog records every script call of a client: when it was sent, when
// its answer came back, and the answer.
type callLog struct {
	start time.Time
	mu    sync.Mutex
	calls []loggedCall
}

type loggedCall struct {
	sent, recv         time.Time
	granted, remaining int64
}

func (cl *callLog) DialHook(next redis.DialHook) redis.DialHook { return next }
func (cl *callLog) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (cl *callLog) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		sent := time.Now()
		err := next(ctx, cmd)
		recv := time.Now()
		if c, ok := cmd.(interface{ Val() any }); ok && err == nil { // the script's command (noRetryCmd)
			if r, perr := parseTake(c.Val()); perr == nil {
				cl.mu.Lock()
				cl.calls = append(cl.calls, loggedCall{sent, recv, r.granted, r.remaining})
				cl.mu.Unlock()
			}
		}
		return err
	}
}

// account returns the tokens Redis granted in the logged calls and an
// upper bound of the tokens the bucket forfeited by being full. A reply
// whose granted + remaining is the burst found the bucket full: it had
// been full since some time after the previous evaluation of the script,
// which came after the sending of every call answered before this one was
// sent (or after start). So it forfeited at most Rate times the time from
// the latest such sending to this call's answer.
func (cl *callLog) account(lim Limit) (granted, lost int64) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	var lostNS int64
	for _, c := range cl.calls {
		granted += c.granted
		if c.granted+c.remaining < int64(lim.Burst) {
			continue
		}
		prev := cl.start
		for _, d := range cl.calls {
			if d.recv.Before(c.sent) && d.sent.After(prev) {
				prev = d.sent
			}
		}
		lostNS += int64(c.recv.Sub(prev))
	}
	return granted, int64(lim.Rate * time.Duration(lostNS).Seconds())
}

// TestTATWrittenBeforeNanoseconds: a bucket written by the script before
// it kept nanoseconds (the TAT as whole microseconds, no fraction), as an
// instance of the previous release writes it during a rolling upgrade, is
// read as that TAT; the script answers it and writes "<µs>.<ns>".
func TestTATWrittenBeforeNanoseconds(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client()
	ctx := context.Background()
	clk := newFakeClock()
	l := newLimiter(t, Options{Redis: c, Now: clk.Now, MaxLease: 1})
	lim := Limit{Rate: 10, Burst: 10}
	key := "edge:v1:{d3}:rl:old"
	// 3 tokens spent: the TAT is 300ms ahead of now.
	nowUS := clk.Now().UnixNano() / 1000
	if err := c.Set(ctx, key, strconv.FormatInt(nowUS+300_000, 10), time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	d := l.Allow(ctx, 3, "old", lim)
	if !d.Allowed || d.Remaining != 6 || d.Reset != 400*time.Millisecond {
		t.Fatalf("on a TAT of whole microseconds: %+v, want admitted with 6 left, full in 400ms", d)
	}
	v, err := c.Get(ctx, key).Result()
	if want := strconv.FormatInt(nowUS+400_000, 10) + ".000"; err != nil || v != want {
		t.Fatalf("stored %q %v, want %q", v, err, want)
	}
}

// previousTakeScript is takeScript as released before 2026-11-29 (the TAT
// in whole microseconds): the script an instance of the previous release
// runs on the same buckets during a rolling upgrade.
const previousTakeScript = `
local t = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
local callerClock = now ~= nil and now > 0
if not callerClock then
  local tm = redis.call('TIME')
  now = tonumber(tm[1]) * 1000000 + tonumber(tm[2])
end
local debt = tonumber(ARGV[5]) or 0
local least = tonumber(ARGV[6]) or 1
if least < 1 then
  least = 1
end
local tat = tonumber(redis.call('GET', KEYS[1]))
if tat == nil or tat < now then
  tat = now
end
local raised = false
if now + debt > tat then
  tat = now + debt
  raised = true
end
local function store()
  local px = math.floor((tat - now) / 1000) + 1
  if callerClock and px < 1000 then
    px = 1000
  end
  redis.call('SET', KEYS[1], string.format('%d', tat), 'PX', string.format('%d', px))
end
local limit = now + burst * t
if tat > limit then
  -- the key's limit changed (a plan change or reload) to one whose
  -- bucket refills sooner: the key is empty under it, not in debt for
  -- the old plan's longer window
  tat = limit
  raised = true
end
local avail = math.floor((limit - tat) / t)
if avail < 0 then
  avail = 0
end
local got = want
if got > avail then
  got = avail
end
if got >= least then
  tat = tat + got * t
  store()
  return {got, avail - got, tat - now, 0}
end
if raised then
  store() -- the debt is paid even when this call is refused
end
return {0, avail, tat - now, tat + least * t - limit}
`

// TestPreviousScriptReadsNanoseconds: the previous release's script reads
// a bucket this one wrote ("<µs>.<ns>") as that TAT, give or take the
// nanoseconds, during a rolling upgrade.
func TestPreviousScriptReadsNanoseconds(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client()
	ctx := context.Background()
	clk := newFakeClock()
	l := newLimiter(t, Options{Redis: c, Now: clk.Now, MaxLease: 1})
	lim := Limit{Rate: 3, Burst: 10} // an interval of 333,333,334 ns
	for range 3 {
		if !l.Allow(ctx, 3, "mixed", lim).Allowed {
			t.Fatal("refused within the burst")
		}
	}
	key := "edge:v1:{d3}:rl:mixed"
	if v := c.Get(ctx, key).Val(); !strings.HasSuffix(v, ".002") {
		t.Fatalf("stored %q, want the TAT 1,000,000,002 ns ahead", v)
	}
	nowUS := clk.Now().UnixNano() / 1000
	v, err := redis.NewScript(previousTakeScript).Run(ctx, c, []string{key},
		lim.interval(1e6), lim.Burst, 1, nowUS, 0, 1).Int64Slice()
	if err != nil {
		t.Fatal(err)
	}
	// The old interval is 333,334 µs: one more token taken, 6 left, full
	// in 1,000,000 + 333,334 µs (the nanoseconds dropped).
	if want := []int64{1, 6, 1_333_334, 0}; !slices.Equal(v, want) {
		t.Fatalf("previous script's reply %v, want %v", v, want)
	}
}
