package cache

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/dealer-edge/dealer-edge/internal/syncbuf"
	"github.com/redis/go-redis/v9"
)

// TestProbeNamesRefusedCredentials: an outage that began with a dropped
// connection (a password rotation's CLIENT KILL landing on a call in
// flight) is logged with cause "unavailable"; the probes after it are
// refused the edge's password (WRONGPASS), and one line says so, naming
// "credentials refused" and not the password. Before it, nothing named
// the cause the operator must fix (CI of 2026-11-28, stop 35: the edge's
// test of a rotation found no line with the cause when the kill won).
func TestProbeNamesRefusedCredentials(t *testing.T) {
	const pass1, pass2 = "first-pass-0123456789", "rotated-pass-9876543210"
	srv := redistest.Start(t, "--requirepass", pass1)
	ctx := context.Background()
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: pass1, PoolSize: 1})
	t.Cleanup(func() { _ = admin.Close() })
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: pass1, MaxRetries: -1})
	t.Cleanup(func() { _ = rc.Close() })
	var log syncbuf.Buffer
	c := newCache(t, Options{Redis: rc, Logger: slog.New(slog.NewJSONHandler(&log, nil))})
	if !c.Stats().RedisUp {
		t.Fatal("Redis not up with the password right")
	}

	// The call the kill cuts marks the outage first: the cache's own
	// background calls (the pool re-dialling the killed connections) would
	// otherwise meet WRONGPASS and could begin the outage as "credentials
	// refused" before it (seen once in CI). Marked down, the cache makes no
	// Redis call but its probe, whose first comes 500 ms later (backoffMin),
	// long after the rotation below.
	c.markDown(io.ErrUnexpectedEOF)
	if err := admin.ConfigSet(ctx, "requirepass", pass2).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Do(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	const still = `"msg":"cache: redis still unavailable","cause":"credentials refused"`
	deadline := time.Now().Add(3 * time.Second)
	for log.Count(still) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no line names the refused credentials within 3 s:\n%s", log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := log.Count(`"msg":"cache: redis unavailable, serving from L1 and fill","cause":"unavailable"`); n != 1 {
		t.Errorf("%d lines for the outage's start, want 1:\n%s", n, log.String())
	}
	time.Sleep(1600 * time.Millisecond) // the next probe (backoff 1 s) is refused too
	if n := log.Count(`"msg":"cache: redis still unavailable"`); n != 1 {
		t.Errorf("%d lines name the cause, want 1 (one per change of cause):\n%s", n, log.String())
	}

	if err := admin.ConfigSet(ctx, "requirepass", pass1).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "Redis up once the password is restored", func() bool { return c.Stats().RedisUp })
	if log.Count(pass1)+log.Count(pass2) != 0 {
		t.Error("a password reached the log")
	}
}
