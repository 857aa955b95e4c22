package ratelimit

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/dealer-edge/dealer-edge/internal/syncbuf"
	"github.com/redis/go-redis/v9"
)

// fakeClock is a controllable clock shared by limiter instances.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// startMini starts a miniredis server and a client of it, both closed with
// the test.
func startMini(t testing.TB) (*miniredis.Miniredis, *redis.Client) {
	t.Helper()
	mr := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: mr.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return mr, c
}

// newLimiter builds a limiter closed with the test. Tests that are not
// about timeouts get a generous RedisTimeout: miniredis runs every script
// in a fresh Lua state, and a busy test machine must not trip the
// fallback.
func newLimiter(t testing.TB, o Options) *Limiter {
	t.Helper()
	if o.Redis != nil && o.RedisTimeout == 0 {
		o.RedisTimeout = 2 * time.Second
	}
	l, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// blackhole accepts TCP connections and never answers: a Redis that hangs.
func blackhole(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String()
}

// logBuffer is a goroutine-safe log sink.
type logBuffer struct{ syncbuf.Buffer }

func (b *logBuffer) count(s string) int { return b.Count(s) }

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// allowN calls Allow n times at the current time and returns how many
// were admitted.
func allowN(l *Limiter, dealer int64, key string, lim Limit, n int) int {
	ok := 0
	for range n {
		if l.Allow(context.Background(), dealer, key, lim).Allowed {
			ok++
		}
	}
	return ok
}
