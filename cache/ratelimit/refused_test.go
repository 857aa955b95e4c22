package ratelimit

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/redis/go-redis/v9"
)

// TestRefusedCredentialsEndOnlyByTheProbe: a Redis that refuses the
// limiter's credentials (WRONGPASS: a password rotated with CONFIG SET
// requirepass) puts the limiter on its fallback with a log line that names
// the cause and not the password, and the outage lasts until the
// credentials are accepted again. The connections opened before the
// rotation still run the script, so a request's probe through one of them
// used to end the outage at once, and the next new connection began
// another: a line per ProbeInterval, and shared limits in and out. Only
// the background probe, which asks Redis whether the credentials hold
// (AUTH), ends it, once the password is restored.
func TestRefusedCredentialsEndOnlyByTheProbe(t *testing.T) {
	ctx := context.Background()
	admin, l, log := passwordLimiter(t)
	lim := Limit{Rate: 1000, Burst: 1000}

	// The rotation; the limiter's one connection keeps its session, and
	// a new connection is refused.
	if err := admin.ConfigSet(ctx, "requirepass", pass2).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Do(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	if d := l.Allow(ctx, 1, "k", lim); d.Source == SourceRedis {
		t.Fatalf("with the credentials refused: source %v, want the fallback", d.Source)
	}
	if !l.Stats().FallbackActive {
		t.Fatal("a WRONGPASS did not put the limiter on its fallback")
	}

	// A connection that still has its session (opened before the
	// rotation) answers requests' probes: it must not end the outage.
	if err := admin.ConfigSet(ctx, "requirepass", pass1).Err(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool { return !l.Stats().FallbackActive })
	if d := l.Allow(ctx, 1, "k", lim); d.Source != SourceRedis { // c's connection, authenticated
		t.Fatalf("after the restore: source %v, want redis", d.Source)
	}
	if err := admin.ConfigSet(ctx, "requirepass", pass2).Err(); err != nil {
		t.Fatal(err)
	}
	l.markDown(errors.New("WRONGPASS invalid username-password pair or user is disabled."), l.now())
	end := time.Now().Add(10 * probe)
	for time.Now().Before(end) {
		if d := l.Allow(ctx, 1, "k", lim); d.Source == SourceRedis || !l.Stats().FallbackActive {
			t.Fatalf("the refused credentials' outage ended while Redis still refuses them (source %v)", d.Source)
		}
		time.Sleep(probe / 4)
	}

	if err := admin.ConfigSet(ctx, "requirepass", pass1).Err(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool { return !l.Stats().FallbackActive })

	if log.count(`cause="credentials refused"`) == 0 {
		t.Errorf("no line names the cause")
	}
	if log.count(pass1)+log.count(pass2) != 0 {
		t.Errorf("a password reached the log")
	}
}

// The passwords of passwordLimiter's Redis: pass1 at the start, pass2 for
// a rotation. probe is the limiter's ProbeInterval.
const (
	pass1, pass2 = "first-pass-0123456789", "rotated-pass-9876543210"
	probe        = 20 * time.Millisecond
)

// passwordLimiter starts a redis-server that requires pass1 and a limiter
// on one connection to it (a background probe every probe), which has
// taken one decision from Redis; it returns an admin client, the limiter
// and its log.
func passwordLimiter(t *testing.T) (*redis.Client, *Limiter, *logBuffer) {
	t.Helper()
	srv := redistest.Start(t, "--requirepass", pass1)
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: pass1, PoolSize: 1})
	t.Cleanup(func() { _ = admin.Close() })
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: pass1, MaxRetries: -1, PoolSize: 1})
	t.Cleanup(func() { _ = c.Close() })
	log := new(logBuffer)
	l := newLimiter(t, Options{Redis: c, MaxLease: 1, ProbeInterval: probe, BackgroundProbe: true, Logger: log.logger()})
	if d := l.Allow(context.Background(), 1, "k", Limit{Rate: 1000, Burst: 1000}); d.Source != SourceRedis {
		t.Fatalf("before the rotation: source %v, want redis", d.Source)
	}
	return admin, l, log
}

// waitUntil waits up to 5 s for cond.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestProbeNamesRefusedCredentials: an outage that began with a dropped
// connection (a password rotation's CLIENT KILL landing on a call in
// flight) is logged with cause "unavailable"; the background probes after
// it are refused the limiter's password, and one line names "credentials
// refused" (not the password). From then on the outage is a refused one:
// a request's call through a connection that kept its session does not
// end it, only the probe does once the password is restored.
func TestProbeNamesRefusedCredentials(t *testing.T) {
	ctx := context.Background()
	admin, l, log := passwordLimiter(t)
	lim := Limit{Rate: 1000, Burst: 1000}

	// The rotation; the limiter's one connection keeps its session.
	if err := admin.ConfigSet(ctx, "requirepass", pass2).Err(); err != nil {
		t.Fatal(err)
	}
	l.markDown(io.ErrUnexpectedEOF, l.now()) // a call the kill cut
	waitUntil(t, func() bool {
		return log.count(`msg="ratelimit: redis still unavailable" cause="credentials refused"`) == 1
	})
	if n := log.count(`msg="ratelimit: redis unavailable, falling back"`); n != 1 {
		t.Errorf("%d lines for the outage's start, want 1", n)
	}
	end := time.Now().Add(10 * probe)
	for time.Now().Before(end) {
		if d := l.Allow(ctx, 1, "k", lim); d.Source == SourceRedis || !l.Stats().FallbackActive {
			t.Fatalf("the outage ended while Redis refuses the credentials (source %v)", d.Source)
		}
		time.Sleep(probe / 4)
	}
	if n := log.count(`msg="ratelimit: redis still unavailable"`); n != 1 {
		t.Errorf("%d lines name the cause, want 1 (one per change of cause)", n)
	}

	if err := admin.ConfigSet(ctx, "requirepass", pass1).Err(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool { return !l.Stats().FallbackActive })
	if log.count(pass1)+log.count(pass2) != 0 {
		t.Errorf("a password reached the log")
	}
}
