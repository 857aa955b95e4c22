package cache

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// fakeClock is a manually advanced clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

func (f *fakeClock) Advance(d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
}

// logRecorder is a slog handler that keeps messages, to check that state
// changes are logged once.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.msgs = append(l.msgs, r.Message)
	l.mu.Unlock()
	return nil
}
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

func (l *logRecorder) count(sub string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		if strings.Contains(m, sub) {
			n++
		}
	}
	return n
}

// filler is a FillFunc that counts calls and returns a configurable body or
// error.
type filler struct {
	calls atomic.Int64
	mu    sync.Mutex
	body  string
	err   error
}

func newFiller(body string) *filler { return &filler{body: body} }

func (f *filler) set(body string, err error) {
	f.mu.Lock()
	f.body, f.err = body, err
	f.mu.Unlock()
}

func (f *filler) fill(context.Context) ([]byte, error) {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	return []byte(f.body), nil
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func newCache(t testing.TB, opts Options) *Cache {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	if opts.RedisTimeout == 0 {
		// Generous: the race detector and a busy CI box make a first dial
		// slow; tests of the budget set their own.
		opts.RedisTimeout = time.Second
	}
	c, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// newMiniRedis starts miniredis and returns a client with the timeouts an
// edge would use.
func newMiniRedis(t testing.TB) (*miniredis.Miniredis, *redis.Client) {
	t.Helper()
	mr := miniredis.RunT(t)
	return mr, newClient(t, mr.Addr())
}

func newClient(t testing.TB, addr string) *redis.Client {
	rc := redis.NewClient(&redis.Options{
		Addr:                  addr,
		ContextTimeoutEnabled: true,
		DialTimeout:           100 * time.Millisecond,
		// The socket timeouts are newCache's generous budget: at 200 ms a
		// reply delayed by a loaded CI box (the race detector beside other
		// packages' tests) failed the call, marked Redis down and dropped
		// what a test had stored. Tests of the budget set a shorter one,
		// which the context deadline applies.
		ReadTimeout:   time.Second,
		WriteTimeout:  time.Second,
		MaxRetries:    1,
		DialerRetries: 1,
	})
	t.Cleanup(func() { _ = rc.Close() })
	return rc
}

// waitFor polls cond for up to 2s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// waitRefreshes waits until no background refresh is running.
func waitRefreshes(t testing.TB, c *Cache) {
	t.Helper()
	waitFor(t, "background refreshes", func() bool {
		busy := false
		c.refreshing.Range(func(any, any) bool { busy = true; return false })
		return !busy
	})
}

func mustGet(t testing.TB, c *Cache, dealer int64, key string, pol Policy, fill FillFunc) (*Entry, Result) {
	t.Helper()
	e, res, err := c.Get(context.Background(), dealer, []byte(key), pol, fill)
	if err != nil {
		t.Fatalf("Get(%d, %q): %v", dealer, key, err)
	}
	return e, res
}

func slogNew(h slog.Handler) *slog.Logger { return slog.New(h) }

// newClientSlow is a client with default (long) socket timeouts and no
// context timeouts, as a careless caller might configure it.
func newClientSlow(t testing.TB, addr string) *redis.Client {
	rc := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = rc.Close() })
	return rc
}

// entryKey is the key of an entry under gen and the current purge epoch.
func (c *Cache) entryKey(dealer int64, gen uint64, key string) string {
	return c.entryKeyAt(dealer, gen, c.epoch.gen.Load(), key)
}

// lockKey is the fill lock's key under gen and the current purge epoch.
func (c *Cache) lockKey(dealer int64, gen uint64, key string) string {
	return c.lockKeyAt(dealer, gen, c.epoch.gen.Load(), key)
}

// purgeTaken is the wait for a purge made on a to have reached b: b has
// adopted a's generation and its L1 holds no node of key under an older
// one. The generation alone is not enough: applyGen stores it before
// dropDealer walks L1's shards, so for a few microseconds b's generation
// is a's while the key's shard still holds the pre-purge entry (a CI run
// of TestLoadingIsDownThenUp caught that window).
func purgeTaken(t testing.TB, a, b *Cache, dealer int64, key string) bool {
	g := mustGen(t, a, dealer)
	if mustGen(t, b, dealer) != g {
		return false
	}
	n := b.l1.lookupString(dealer, key)
	return n == nil || n.gen == g
}
