package ratelimit

import (
	"context"
	"errors"
	"hash/maphash"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestNewOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr string // substring; "" means valid
	}{
		{"zero value is local only", Options{}, ""},
		{"prefix with hash tag", Options{Prefix: "edge:{v1}"}, "Prefix"},
		{"unknown fail mode", Options{FailMode: 9}, "FailMode"},
		{"negative timeout", Options{RedisTimeout: -1}, "RedisTimeout"},
		{"negative lease", Options{MaxLease: -1}, "MaxLease"},
		{"negative window", Options{LeaseWindow: -1}, "LeaseWindow"},
		{"negative probe", Options{ProbeInterval: -1}, "ProbeInterval"},
		{"negative keys", Options{MaxKeys: -1}, "MaxKeys"},
		{"several errors at once", Options{MaxLease: -1, MaxKeys: -1}, "MaxKeys"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := New(tt.opts)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("New error = %v, want one naming %s", err, tt.wantErr)
			case tt.wantErr == "" && (l.maxLease != DefaultMaxLease || l.prefix != DefaultPrefix || l.timeout != DefaultRedisTimeout):
				t.Fatalf("defaults not applied: %+v", l)
			}
		})
	}
}

func TestLeaseCap(t *testing.T) {
	tests := []struct {
		name     string
		lim      Limit
		maxLease int
		window   time.Duration
		want     int
	}{
		{"demo 10/s burst 10 is exact", Limit{Rate: 10, Burst: 10}, 20, 250 * time.Millisecond, 1},
		{"default 50/s burst 100", Limit{Rate: 50, Burst: 100}, 20, 250 * time.Millisecond, 6},
		{"small burst caps", Limit{Rate: 1000, Burst: 8}, 20, 250 * time.Millisecond, 2},
		{"bench limit hits MaxLease", Limit{Rate: 1e6, Burst: 1e6}, 20, 250 * time.Millisecond, 20},
		{"bench limit, default MaxLease", Limit{Rate: 1e6, Burst: 1e6}, DefaultMaxLease, 250 * time.Millisecond, DefaultMaxLease},
		{"default plan unaffected by a large MaxLease", Limit{Rate: 50, Burst: 100}, DefaultMaxLease, 250 * time.Millisecond, 6},
		{"MaxLease 1 disables leases", Limit{Rate: 1e6, Burst: 1e6}, 1, 250 * time.Millisecond, 1},
		{"slow rate", Limit{Rate: 0.5, Burst: 100}, 20, 250 * time.Millisecond, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLimiter(t, Options{MaxLease: tt.maxLease, LeaseWindow: tt.window})
			if got := l.leaseCap(tt.lim); got != tt.want {
				t.Fatalf("leaseCap(%+v) = %d, want %d", tt.lim, got, tt.want)
			}
		})
	}
}

// backend builds a limiter for a test table: local only or on miniredis.
type backend struct {
	name  string
	redis bool
}

var backends = []backend{{"local", false}, {"miniredis", true}}

func (b backend) limiter(t *testing.T, clk *fakeClock, o Options) *Limiter {
	t.Helper()
	if b.redis {
		_, c := startMini(t)
		o.Redis = c
	}
	o.Now = clk.Now
	return newLimiter(t, o)
}

// TestExactAdmissionsFixedRate drives one key at a fixed request rate on a
// controlled clock and checks the exact count: Burst at once, then one per
// emission interval.
func TestExactAdmissionsFixedRate(t *testing.T) {
	tests := []struct {
		name     string
		lim      Limit
		every    time.Duration // one request per
		duration time.Duration
		want     int
	}{
		{"10/s burst 10, hammered", Limit{Rate: 10, Burst: 10}, time.Millisecond, 2 * time.Second, 10 + 20},
		{"10/s burst 10, at 20/s", Limit{Rate: 10, Burst: 10}, 50 * time.Millisecond, 3 * time.Second, 10 + 30},
		{"10/s burst 10, under the rate", Limit{Rate: 10, Burst: 10}, 200 * time.Millisecond, 2 * time.Second, 11},
		{"4/s burst 1", Limit{Rate: 4, Burst: 1}, 10 * time.Millisecond, 3 * time.Second, 1 + 12},
		{"3/s burst 1, arrivals off the grid", Limit{Rate: 3, Burst: 1}, 10 * time.Millisecond, 3 * time.Second, 9}, // each admission lands up to 10ms late; GCRA with burst 1 keeps no credit
		{"0.5/s burst 2", Limit{Rate: 0.5, Burst: 2}, 100 * time.Millisecond, 10 * time.Second, 2 + 5},
	}
	for _, b := range backends {
		for _, tt := range tests {
			t.Run(b.name+"/"+tt.name, func(t *testing.T) {
				clk := newFakeClock()
				l := b.limiter(t, clk, Options{})
				got := 0
				for at := time.Duration(0); at <= tt.duration; at += tt.every {
					d := l.Allow(context.Background(), 7, "k", tt.lim)
					if d.Allowed {
						got++
					} else if d.RetryAfter <= 0 {
						t.Fatalf("rejected with RetryAfter %v", d.RetryAfter)
					}
					clk.Advance(tt.every)
				}
				if got != tt.want {
					t.Fatalf("admitted %d, want exactly %d", got, tt.want)
				}
			})
		}
	}
}

// TestRetryAfterExact: a retry exactly RetryAfter later succeeds, a retry a
// microsecond earlier does not, and so does a retry after the rounded-up
// Retry-After header value.
func TestRetryAfterExact(t *testing.T) {
	lims := []Limit{{Rate: 10, Burst: 10}, {Rate: 0.3, Burst: 2}, {Rate: 1000, Burst: 40}}
	for _, b := range backends {
		for _, lim := range lims {
			t.Run(b.name+"/"+strconv.FormatFloat(lim.Rate, 'g', -1, 64), func(t *testing.T) {
				clk := newFakeClock()
				l := b.limiter(t, clk, Options{})
				ctx := context.Background()
				if n := allowN(l, 1, "k", lim, lim.Burst); n != lim.Burst {
					t.Fatalf("burst: admitted %d of %d", n, lim.Burst)
				}
				d := l.Allow(ctx, 1, "k", lim)
				if d.Allowed || d.RetryAfter <= 0 {
					t.Fatalf("after burst: %+v", d)
				}
				if want := time.Duration(lim.interval(1e6)) * time.Microsecond; d.RetryAfter > want {
					t.Fatalf("RetryAfter %v longer than one interval %v", d.RetryAfter, want)
				}
				ra := d.RetryAfter
				clk.Advance(ra - time.Microsecond)
				if d := l.Allow(ctx, 1, "k", lim); d.Allowed || d.RetryAfter != time.Microsecond {
					t.Fatalf("1µs early: %+v", d)
				}
				clk.Advance(time.Microsecond)
				if d := l.Allow(ctx, 1, "k", lim); !d.Allowed {
					t.Fatalf("at RetryAfter: %+v", d)
				}
				d = l.Allow(ctx, 1, "k", lim)
				if d.Allowed {
					t.Fatalf("second request at RetryAfter allowed: %+v", d)
				}
				clk.Advance(time.Duration(d.RetryAfterSeconds()) * time.Second)
				if d := l.Allow(ctx, 1, "k", lim); !d.Allowed {
					t.Fatalf("after Retry-After header seconds: %+v", d)
				}
			})
		}
	}
}

func TestDecisionFields(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			clk := newFakeClock()
			l := b.limiter(t, clk, Options{})
			lim := Limit{Rate: 10, Burst: 10}
			d := l.Allow(context.Background(), 1, "k", lim)
			if !d.Allowed || d.Remaining != 9 || d.Reset != 100*time.Millisecond || d.Limit != lim || d.RetryAfter != 0 {
				t.Fatalf("first: %+v", d)
			}
			allowN(l, 1, "k", lim, 9)
			d = l.Allow(context.Background(), 1, "k", lim)
			if d.Allowed || d.Remaining != 0 || d.Reset != time.Second || d.RetryAfter != 100*time.Millisecond {
				t.Fatalf("rejected: %+v", d)
			}
			first, again := SourceLocal, SourceLocal
			if b.redis {
				first, again = SourceRedis, SourceLease // the second is the cached rejection
			}
			if d.Source != first {
				t.Fatalf("source %q, want %q", d.Source, first)
			}
			if d := l.Allow(context.Background(), 1, "k", lim); d.Source != again || d.Allowed || d.RetryAfter != 100*time.Millisecond {
				t.Fatalf("again: %+v, want source %q", d, again)
			}
		})
	}
}

func TestKeysAreIndependent(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			clk := newFakeClock()
			l := b.limiter(t, clk, Options{})
			lim := Limit{Rate: 1, Burst: 3}
			if n := allowN(l, 1, "a", lim, 10); n != 3 {
				t.Fatalf("a: %d", n)
			}
			if n := allowN(l, 1, "b", lim, 10); n != 3 {
				t.Fatalf("b: %d", n)
			}
			if n := allowN(l, 2, "a", lim, 10); n != 3 {
				t.Fatalf("same key id, other dealer: %d", n)
			}
		})
	}
}

func TestLimitChangeTakesEffect(t *testing.T) {
	clk := newFakeClock()
	l := backend{redis: true}.limiter(t, clk, Options{})
	low, high := Limit{Rate: 1, Burst: 2}, Limit{Rate: 1, Burst: 5}
	if n := allowN(l, 1, "k", low, 5); n != 2 {
		t.Fatalf("low: %d", n)
	}
	// The cached rejection was for the old limit; a larger burst admits
	// the difference at once.
	if n := allowN(l, 1, "k", high, 5); n != 3 {
		t.Fatalf("raised burst: %d", n)
	}
}

func TestInvalidLimitRejected(t *testing.T) {
	l := newLimiter(t, Options{})
	d := l.Allow(context.Background(), 1, "k", Limit{})
	if d.Allowed || d.Source != SourceInvalid || d.RetryAfterSeconds() < 1 {
		t.Fatalf("%+v", d)
	}
}

func TestRedisKeyLayout(t *testing.T) {
	mr, c := startMini(t)
	clk := newFakeClock()
	l := newLimiter(t, Options{Redis: c, Now: clk.Now, Prefix: "edge:v9"})
	l.Allow(context.Background(), 42, "ab12", Limit{Rate: 1, Burst: 5})
	keys := mr.Keys()
	if len(keys) != 1 || keys[0] != "edge:v9:{d42}:rl:ab12" {
		t.Fatalf("keys %q", keys)
	}
	if ttl := mr.TTL(keys[0]); ttl <= 0 || ttl > 2*time.Second {
		t.Fatalf("ttl %v, want about the 1s until the bucket is full", ttl)
	}
}

// TestLeaseSavesRoundTrips: a hot key on one instance is served mostly
// from leases, and the lease grows to the cap.
func TestLeaseSavesRoundTrips(t *testing.T) {
	clk := newFakeClock()
	l := backend{redis: true}.limiter(t, clk, Options{MaxLease: 20})
	lim := Limit{Rate: 1e6, Burst: 1e6} // cap MaxLease = 20
	const n = 2000
	if got := allowN(l, 1, "hot", lim, n); got != n {
		t.Fatalf("admitted %d of %d", got, n)
	}
	st := l.Stats()
	// 1+2+4+8+16 while growing, then n/20.
	if max := uint64(5 + n/20 + 1); st.RedisCalls > max {
		t.Fatalf("%d Redis calls for %d requests, want at most %d", st.RedisCalls, n, max)
	}
	if st.Admitted != n || st.Rejected != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestLeaseGrowsForCostlyRequests: a hot key whose requests cost several
// tokens (a hub spends 3, a search 5) is served mostly from leases too,
// one request at a time (one connection) as well as the lease grows to
// the cap; the lease used to stay at 2 with 1 token left, below the cost,
// so every request made a Redis round trip.
func TestLeaseGrowsForCostlyRequests(t *testing.T) {
	for _, cost := range []int{2, 3, 5} {
		t.Run(strconv.Itoa(cost), func(t *testing.T) {
			clk := newFakeClock()
			l := backend{redis: true}.limiter(t, clk, Options{MaxLease: 20})
			lim := Limit{Rate: 1e6, Burst: 1e6} // cap MaxLease = 20
			ctx := context.Background()
			const n = 600
			for i := range n {
				clk.Advance(time.Millisecond)
				if !l.AllowN(ctx, 1, "hot", lim, cost).Allowed {
					t.Fatalf("request %d rejected", i)
				}
			}
			// Each lease holds 20+cost-1 tokens once grown, enough for
			// (20+cost-1)/cost requests: n divided by that refills, plus
			// the growth (600 before, one per request).
			if max := uint64(8 + n/((20+cost-1)/cost)); l.Stats().RedisCalls > max {
				t.Fatalf("%d Redis calls for %d requests of cost %d, want at most %d", l.Stats().RedisCalls, n, cost, max)
			}
		})
	}
}

// TestLeaseAdaptsToDemand: an instance that sees a key less often than
// leases last takes one token at a time, so it wastes none.
func TestLeaseAdaptsToDemand(t *testing.T) {
	mr, c := startMini(t)
	clk := newFakeClock()
	l := newLimiter(t, Options{Redis: c, Now: clk.Now, MaxLease: 20})
	lim := Limit{Rate: 1000, Burst: 1000} // cap 20
	ctx := context.Background()
	// Hot: the lease grows to the cap.
	allowN(l, 1, "k", lim, 200)
	_, e := l.entry(1, "k", l.now())
	if e.size != 20 {
		t.Fatalf("hot lease size %d, want 20", e.size)
	}
	// Sparse (one request per 400ms, longer than LeaseWindow): the lease
	// shrinks to 1 and stays there.
	for range 6 {
		clk.Advance(400 * time.Millisecond)
		if !l.Allow(ctx, 1, "k", lim).Allowed {
			t.Fatal("sparse request rejected")
		}
	}
	if e.size != 1 {
		t.Fatalf("sparse lease size %d, want 1", e.size)
	}
	// With size 1 nothing is held back: Redis's TAT is exactly one
	// interval (1ms) ahead of now.
	v, err := mr.Get("edge:v1:{d1}:rl:k")
	if err != nil {
		t.Fatal(err)
	}
	// "<µs>.<ns>" (script.go)
	tat, _ := strconv.ParseInt(strings.TrimSuffix(v, ".000"), 10, 64)
	if want := l.now()/1000 + 1000; tat != want || !strings.HasSuffix(v, ".000") {
		t.Fatalf("TAT %d, want now+1ms = %d", tat, want)
	}
}

// TestDemoLimitExact: 10/s burst 10 behaves exactly as one bucket even
// with leasing enabled, on two instances: no lease, no overshoot.
func TestDemoLimitExact(t *testing.T) {
	_, c := startMini(t)
	clk := newFakeClock()
	a := newLimiter(t, Options{Redis: c, Now: clk.Now})
	b := newLimiter(t, Options{Redis: c, Now: clk.Now})
	lim := Limit{Rate: 10, Burst: 10}
	got := 0
	for step := range 1000 { // 2s in 2ms steps, alternating instances
		l := a
		if step%2 == 1 {
			l = b
		}
		got += allowN(l, 3, "demo", lim, 3)
		clk.Advance(2 * time.Millisecond)
	}
	if got != 10+19 { // burst + one per 100ms over 1.998s
		t.Fatalf("admitted %d, want exactly 29", got)
	}
}

func TestFailModes(t *testing.T) {
	tests := []struct {
		mode    FailMode
		allowed int // of 20 requests with burst 5
		source  string
	}{
		{FallbackLocal, 5, SourceLocal},
		{FailOpen, 20, SourceFailOpen},
		{FailClosed, 0, SourceFailClosed},
	}
	for _, tt := range tests {
		t.Run(tt.mode.String(), func(t *testing.T) {
			var logs logBuffer
			c := redis.NewClient(&redis.Options{Addr: blackhole(t), MaxRetries: -1})
			t.Cleanup(func() { _ = c.Close() })
			l := newLimiter(t, Options{Redis: c, FailMode: tt.mode, RedisTimeout: 20 * time.Millisecond, Logger: logs.logger()})
			lim := Limit{Rate: 1, Burst: 5}
			start := time.Now()
			allowed := 0
			for range 20 {
				d := l.Allow(context.Background(), 1, "k", lim)
				if d.Source != tt.source {
					t.Fatalf("source %q, want %q", d.Source, tt.source)
				}
				if d.Allowed {
					allowed++
				} else if d.RetryAfter <= 0 {
					t.Fatalf("rejected without RetryAfter: %+v", d)
				}
			}
			if allowed != tt.allowed {
				t.Fatalf("allowed %d, want %d", allowed, tt.allowed)
			}
			// Only the first request waited for the timeout; the rest
			// skipped Redis until the probe.
			if el := time.Since(start); el > 900*time.Millisecond { // under the 1 s probe interval, with room for a loaded VM
				t.Fatalf("20 requests took %v", el)
			}
			st := l.Stats()
			if !st.FallbackActive || st.FallbackActivations != 1 || st.RedisCalls != 1 || st.RedisErrors != 1 {
				t.Fatalf("stats %+v", st)
			}
			if n := logs.count("redis unavailable"); n != 1 {
				t.Fatalf("%d unavailable log lines, want 1", n)
			}
		})
	}
}

// TestFallbackAndRecoveryMiniredis: Redis gone -> local limiter, one probe
// per ProbeInterval, Redis back -> shared limit again, logged once each.
func TestFallbackAndRecoveryMiniredis(t *testing.T) {
	mr, c := startMini(t)
	clk := newFakeClock()
	var logs logBuffer
	l := newLimiter(t, Options{Redis: c, Now: clk.Now, Logger: logs.logger(), ProbeInterval: time.Second})
	lim := Limit{Rate: 10, Burst: 10}
	ctx := context.Background()
	if d := l.Allow(ctx, 1, "k", lim); d.Source != SourceRedis {
		t.Fatalf("up: %+v", d)
	}
	mr.Close()
	// The local bucket continues from Redis's last word (1 token taken):
	// 9 left, not a fresh burst of 10.
	for i := range 12 {
		d := l.Allow(ctx, 1, "k", lim)
		if d.Source != SourceLocal || d.Allowed != (i < 9) {
			t.Fatalf("down, request %d: %+v", i, d)
		}
	}
	if err := mr.Restart(); err != nil {
		t.Fatal(err)
	}
	clk.Advance(500 * time.Millisecond) // before the probe: still local
	if d := l.Allow(ctx, 1, "k", lim); d.Source != SourceLocal {
		t.Fatalf("before probe: %+v", d)
	}
	clk.Advance(500 * time.Millisecond)
	if d := l.Allow(ctx, 1, "k", lim); d.Source != SourceRedis || !d.Allowed {
		t.Fatalf("after probe: %+v", d)
	}
	st := l.Stats()
	if st.FallbackActive || st.FallbackActivations != 1 {
		t.Fatalf("stats %+v", st)
	}
	if logs.count("redis unavailable") != 1 || logs.count("redis available again") != 1 {
		t.Fatalf("logs:\n%s", logs.String())
	}
}

func TestCallerCancelDoesNotMarkDown(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: blackhole(t), MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	l := newLimiter(t, Options{Redis: c, RedisTimeout: time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	d := l.Allow(ctx, 1, "k", Limit{Rate: 1, Burst: 1})
	if d.Source != SourceLocal || !d.Allowed {
		t.Fatalf("%+v", d)
	}
	if st := l.Stats(); st.FallbackActive {
		t.Fatalf("caller cancellation marked Redis down: %+v", st)
	}
}

// TestKeyTableBounded: a flood of distinct keys cannot grow local state
// beyond MaxKeys; idle keys are swept, busy ones evicted.
func TestKeyTableBounded(t *testing.T) {
	clk := newFakeClock()
	l := newLimiter(t, Options{Now: clk.Now, MaxKeys: 256})
	lim := Limit{Rate: 1, Burst: 2}
	for i := range 20000 {
		l.Allow(context.Background(), int64(i%7), strconv.Itoa(i), lim)
	}
	st := l.Stats()
	if st.Keys > 256 || st.Evictions == 0 {
		t.Fatalf("busy flood: %+v", st)
	}
	// Once the buckets are full again the entries carry no state and are
	// swept rather than evicted.
	clk.Advance(time.Minute)
	ev := st.Evictions
	for i := range 20000 {
		l.Allow(context.Background(), 1, "x"+strconv.Itoa(i), lim)
		clk.Advance(3 * time.Second)
	}
	if st := l.Stats(); st.Keys > 256 || st.Evictions != ev {
		t.Fatalf("idle flood: %+v (evictions before %d)", st, ev)
	}
}

// TestConcurrentSameKey: many goroutines on one key and two instances
// stay within the bound, with the race detector watching the lease path.
func TestConcurrentSameKey(t *testing.T) {
	_, c := startMini(t)
	clk := newFakeClock()
	lim := Limit{Rate: 1000, Burst: 100} // cap min(20, 25, 125) = 20
	var logs logBuffer
	ls := []*Limiter{
		newLimiter(t, Options{Redis: c, Now: clk.Now, Logger: logs.logger(), MaxLease: 20}),
		newLimiter(t, Options{Redis: c, Now: clk.Now, Logger: logs.logger(), MaxLease: 20}),
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted := 0
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			for range 500 {
				if ls[g%2].Allow(context.Background(), 1, "k", lim).Allowed {
					n++
				}
			}
			mu.Lock()
			admitted += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	// The clock stood still, so exactly Burst tokens ever existed; leases
	// can move them between instances but not multiply them, and with
	// this much demand none is left unspent.
	if admitted != lim.Burst {
		t.Fatalf("admitted %d, want exactly the burst %d; %+v %+v\n%s", admitted, lim.Burst, ls[0].Stats(), ls[1].Stats(), logs.String())
	}
}

func TestAllowZeroAllocsFromLease(t *testing.T) {
	_, c := startMini(t)
	clk := newFakeClock()
	l := newLimiter(t, Options{Redis: c, Now: clk.Now, MaxLease: 1 << 20, LeaseWindow: time.Hour})
	ctx := context.Background()
	lim := Limit{Rate: 1e6, Burst: 1 << 29}
	allowN(l, 1, "k", lim, 1<<17) // grow the lease
	calls := l.Stats().RedisCalls
	if n := testing.AllocsPerRun(1000, func() {
		if d := l.Allow(ctx, 1, "k", lim); d.Source != SourceLease {
			t.Fatalf("not from lease: %+v", d)
		}
	}); n != 0 {
		t.Fatalf("lease path allocates %v times", n)
	}
	// The cached rejection path does not allocate either.
	small := Limit{Rate: 1, Burst: 1}
	allowN(l, 1, "r", small, 2)
	if n := testing.AllocsPerRun(1000, func() {
		if d := l.Allow(ctx, 1, "r", small); d.Source != SourceLease || d.Allowed {
			t.Fatalf("not a cached rejection: %+v", d)
		}
	}); n != 0 {
		t.Fatalf("cached rejection allocates %v times", n)
	}
	if got := l.Stats().RedisCalls - calls; got != 2 {
		t.Fatalf("%d Redis calls, want 2 (the small key's first two)", got)
	}
}

func TestCloseGoesLocal(t *testing.T) {
	_, c := startMini(t)
	l := newLimiter(t, Options{Redis: c})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if d := l.Allow(context.Background(), 1, "k", Limit{Rate: 1, Burst: 1}); d.Source != SourceLocal {
		t.Fatalf("%+v", d)
	}
}

// TestRedisClockMode: with Options.Now nil the script uses Redis TIME.
func TestRedisClockMode(t *testing.T) {
	_, c := startMini(t)
	l := newLimiter(t, Options{Redis: c})
	lim := Limit{Rate: 1, Burst: 3}
	if n := allowN(l, 1, "k", lim, 10); n != 3 {
		t.Fatalf("admitted %d, want 3", n)
	}
	d := l.Allow(context.Background(), 1, "k", lim)
	if d.Allowed || d.RetryAfter <= 0 || d.RetryAfter > time.Second {
		t.Fatalf("%+v", d)
	}
}

// TestHashCollision plants another key under the hash of "a" and checks
// both keys keep separate state.
func TestHashCollision(t *testing.T) {
	clk := newFakeClock()
	l := newLimiter(t, Options{Now: clk.Now})
	h := maphash.String(l.seed, "a") ^ uint64(1)*0x9e3779b97f4a7c15
	sh := &l.shards[(h^h>>32)%numShards]
	squatter := &entry{dealer: 2, keyID: "squatter"}
	squatter.ltat.Store(l.now() + int64(time.Second)) // not idle: the sweep keeps it
	sh.m[h] = squatter
	_, e := l.entry(1, "a", l.now())
	if e == squatter || e.dealer != 1 || e.keyID != "a" || len(sh.more) != 1 {
		t.Fatalf("collision not separated: %+v, more %d", e, len(sh.more))
	}
	if _, again := l.entry(1, "a", l.now()); again != e {
		t.Fatal("collided key not found again")
	}
	lim := Limit{Rate: 1, Burst: 2}
	if n := allowN(l, 1, "a", lim, 5); n != 2 {
		t.Fatalf("a admitted %d", n)
	}
	if d := local(l, squatter, lim); !d.Allowed || d.Remaining != 0 {
		t.Fatalf("squatter's bucket touched by a: %+v", d)
	}
	if st := l.Stats(); st.Keys != 2 {
		t.Fatalf("keys %d", st.Keys)
	}
}

func local(l *Limiter, e *entry, lim Limit) Decision { return l.local(e, lim, 1, l.now()) }

// TestFallbackChargedToRedisOnReturn: what the fallback admitted while
// Redis was out is charged to the shared bucket when Redis is back (the
// script's debt argument), so an outage does not hand out a second burst.
func TestFallbackChargedToRedisOnReturn(t *testing.T) {
	mr, c := startMini(t)
	clk := newFakeClock()
	l := newLimiter(t, Options{Redis: c, Now: clk.Now, ProbeInterval: time.Second})
	lim := Limit{Rate: 1, Burst: 10} // one token a second
	ctx := context.Background()
	if d := l.Allow(ctx, 1, "k", lim); d.Source != SourceRedis || !d.Allowed {
		t.Fatalf("up: %+v", d)
	}
	mr.Close()
	local := 0
	for range 12 {
		if d := l.Allow(ctx, 1, "k", lim); d.Allowed {
			local++
		}
	}
	if local != 9 {
		t.Fatalf("fallback admitted %d, want the 9 left", local)
	}
	if err := mr.Restart(); err != nil { // empty: Redis alone would grant a full burst
		t.Fatal(err)
	}
	clk.Advance(time.Second) // the probe, and one token earned
	after := 0
	for range 12 {
		d := l.Allow(ctx, 1, "k", lim)
		if d.Source == SourceLocal {
			t.Fatalf("still local after the probe: %+v", d)
		}
		if d.Allowed {
			after++
		}
	}
	if after != 1 {
		t.Fatalf("after Redis returned: %d admitted, want 1 (the token earned in the second that passed)", after)
	}
}

// TestDownForIsThisOutages: a markUp that runs while markDown is marking
// a new outage logs the new outage's length as down_for_s, after the
// outage's "unavailable" line. Before 2026-11-27 markDown swapped the down
// flag before it stored the outage's start, so a markUp in between read
// the previous outage's start (an outage of 56 ms, 2 s after the last
// one, was logged as down_for=2.056s, now down_for_s) and logged its line before the
// outage's own. The hook runs markUp on another goroutine at that very
// point and gives it up to 200 ms (run with -race).
func TestDownForIsThisOutages(t *testing.T) {
	clk := newFakeClock()
	var logs logBuffer
	l := newLimiter(t, Options{Now: clk.Now, Logger: logs.logger()})
	now := func() int64 { return clk.Now().UnixNano() }
	errDown := errors.New("connection refused")

	// An earlier outage of 10 ms.
	l.markDown(errDown, now())
	clk.Advance(10 * time.Millisecond)
	l.markUp(now())

	// 2 s later, a new one; a call that answers 56 ms after its start
	// marks Redis up while markDown is still under way.
	clk.Advance(2 * time.Second)
	start := now()
	done := make(chan struct{})
	l.testHookMarkedDown = func() {
		go func() { defer close(done); l.markUp(start + int64(56*time.Millisecond)) }()
		select {
		case <-done:
		case <-time.After(200 * time.Millisecond):
		}
	}
	l.markDown(errDown, start)
	<-done
	l.testHookMarkedDown = nil

	out := logs.String()
	if n := logs.count("down_for_s=0.056"); n != 1 {
		t.Fatalf("want one line with down_for_s=0.056 (this outage), got %d:\n%s", n, out)
	}
	if i, j := strings.LastIndex(out, "redis unavailable"), strings.Index(out, "down_for_s=0.056"); i > j {
		t.Fatalf("the outage's end is logged before its start:\n%s", out)
	}
	if st := l.Stats(); st.FallbackActive || st.FallbackActivations != 2 {
		t.Fatalf("stats after the outage ended: %+v", st)
	}
}

// TestBackgroundProbeRecoversWithoutRequests: with BackgroundProbe a
// limiter that sees no request after an outage finds Redis back by itself
// (Stats, and its "available again" line) within a few ProbeIntervals;
// without it, it stays marked unavailable until its next request, as the
// per-address limiter did (it decides failed authentications only), so
// its fallback was reported and logged with no end.
func TestBackgroundProbeRecoversWithoutRequests(t *testing.T) {
	for _, tt := range []struct {
		name      string
		bg        bool
		wantUpper bool // marked available again without a request
	}{
		{"background probe", true, true},
		{"requests only", false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mr, c := startMini(t)
			var logs logBuffer
			l := newLimiter(t, Options{Redis: c, Logger: logs.logger(), ProbeInterval: 20 * time.Millisecond,
				RedisTimeout: time.Second, BackgroundProbe: tt.bg})
			lim := Limit{Rate: 10, Burst: 10}
			ctx := context.Background()
			if d := l.Allow(ctx, 1, "k", lim); d.Source != SourceRedis {
				t.Fatalf("up: %+v", d)
			}
			mr.Close()
			if d := l.Allow(ctx, 1, "k", lim); d.Source != SourceLocal {
				t.Fatalf("down: %+v", d)
			}
			// While Redis stays down the probe keeps it marked down.
			time.Sleep(100 * time.Millisecond)
			if st := l.Stats(); !st.FallbackActive || st.FallbackActivations != 1 {
				t.Fatalf("Redis still down: %+v", st)
			}
			if err := mr.Restart(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(2 * time.Second)
			for l.Stats().FallbackActive && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if got := !l.Stats().FallbackActive; got != tt.wantUpper {
				t.Fatalf("2 s after Redis came back, no request: available %v, want %v\n%s", got, tt.wantUpper, logs.String())
			}
			if got := logs.count("redis available again"); got != map[bool]int{true: 1}[tt.wantUpper] {
				t.Fatalf("%d recovery lines:\n%s", got, logs.String())
			}
			if tt.wantUpper {
				if d := l.Allow(ctx, 1, "k", lim); d.Source != SourceRedis {
					t.Fatalf("after the probe: %+v", d)
				}
			}
			start := time.Now()
			_ = l.Close()
			if d := time.Since(start); d > 500*time.Millisecond {
				t.Fatalf("Close took %v", d)
			}
		})
	}
}

// TestBackgroundProbeStopsAtClose: Close ends a probe that is waiting on
// a Redis that never answers and stops probing.
func TestBackgroundProbeStopsAtClose(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: blackhole(t), MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	l, err := New(Options{Redis: c, RedisTimeout: 50 * time.Millisecond, ProbeInterval: 10 * time.Millisecond, BackgroundProbe: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := l.Allow(context.Background(), 1, "k", Limit{Rate: 1, Burst: 1}); d.Source != SourceLocal {
		t.Fatalf("%+v", d)
	}
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	_ = l.Close()
	if d := time.Since(start); d > 200*time.Millisecond {
		t.Fatalf("Close took %v with a probe waiting on Redis", d)
	}
	calls := l.Stats().RedisCalls
	time.Sleep(50 * time.Millisecond)
	if n := l.Stats().RedisCalls; n != calls {
		t.Fatalf("%d Redis calls after Close", n-calls)
	}
}

// TestOutageLinesWriteSeconds: the fall-back and recovery lines write
// their durations as seconds in *_s fields (probe_in_s, down_for_s), as
// the other event lines do (failing_for_s), in the JSON the edge logs.
// Before, slog wrote the time.Duration values as integer nanoseconds
// ("probe_in":1000000000), which operators misread.
func TestOutageLinesWriteSeconds(t *testing.T) {
	for _, tc := range []struct {
		name  string
		probe time.Duration
		down  time.Duration
		want  []string // substrings of the JSON lines
	}{
		{"default probe, 1.5 s outage", 0, 1500 * time.Millisecond, []string{`"probe_in_s":1,`, `"down_for_s":1.5}`}},
		{"250 ms probe, 56 ms outage", 250 * time.Millisecond, 56 * time.Millisecond, []string{`"probe_in_s":0.25,`, `"down_for_s":0.056}`}},
		{"outage rounded to the millisecond", 0, 4004479718, []string{`"probe_in_s":1,`, `"down_for_s":4.004}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock()
			var logs logBuffer
			l := newLimiter(t, Options{Now: clk.Now, ProbeInterval: tc.probe, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
			l.markDown(errors.New("connection refused"), clk.Now().UnixNano())
			clk.Advance(tc.down)
			l.markUp(clk.Now().UnixNano())
			out := logs.String()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("no %s in:\n%s", w, out)
				}
			}
			for _, bad := range []string{`"probe_in":`, `"down_for":`} {
				if strings.Contains(out, bad) {
					t.Errorf("%s (nanoseconds) in:\n%s", bad, out)
				}
			}
		})
	}
}
