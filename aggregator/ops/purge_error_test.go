package ops

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestPurgeFailureHidesTheRedisError: a purge Redis could not take is 503
// with a detail that says what happens to it (README, Admin endpoints),
// never the error's text, which names the Redis addresses and ports of the
// internal network; the event log keeps the text. Before 2026-11-27 the
// detail was the error's text.
func TestPurgeFailureHidesTheRedisError(t *testing.T) {
	const secretish = "dial tcp 10.20.30.40:6379: connect: connection refused"
	c := adminServer(t, AdminOptions{
		Token: "s3cret-admin-token",
		Purge: func(context.Context, int64) error { return errors.New(secretish) },
	})
	a := call(t, c, "POST", "/admin/purge?dealer_id=101", "s3cret-admin-token")
	if a.status != 503 || a.ctype != "application/problem+json" {
		t.Fatalf("got %d %q, want 503 problem: %s", a.status, a.ctype, a.raw)
	}
	if strings.Contains(a.raw, "10.20.30.40") || strings.Contains(a.raw, "6379") {
		t.Errorf("the answer names the Redis address: %s", a.raw)
	}
	if d, _ := a.body["detail"].(string); !strings.Contains(d, "this instance") {
		t.Errorf("detail %q does not say what happens to the purge", d)
	}
}
