package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// TestFailClosedOutageAnswer: with rate_limit.fail_mode closed and the
// real redis-server gone, a keyed request of a key far under its quota is
// 429 rate_limited with Retry-After: 1 (the time until the limiter tries
// Redis again, rounded up) and a detail that says the limit could not be
// checked, not that the key exceeded it; once Redis is back the same key
// is admitted again with no restart. Before 2026-11-29 the detail was
// "rate limit exceeded", which sent a dealer's support hunting for a
// quota the key had not used, and the README promised that a retry after
// Retry-After succeeds, which it does not while Redis is down.
func TestFailClosedOutageAnswer(t *testing.T) {
	srv := redistest.Start(t)
	fk := fake.NewServer(fake.Options{})
	up, err := fk.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer fk.Close()
	cfg := filepath.Join(t.TempDir(), "edge.json")
	writeConfig(t, cfg, `{"watch_interval": "0s", "rate_limit": {"fail_mode": "closed"}}`)
	e := startEdge(t, "--config", cfg, "--redis", srv.Addr, "--upstream", "http://"+up)
	const path = "/dealer/REWIND/listing?page_size=1"
	if r := e.get(path, "demo-key-alpha"); r.status != 200 {
		t.Fatalf("Redis up: %d %s", r.status, r.body)
	}

	srv.Stop()
	r := e.get(path, "demo-key-alpha")
	var p struct {
		Code, Detail string
	}
	if err := json.Unmarshal(r.body, &p); err != nil || r.status != 429 || p.Code != "rate_limited" {
		t.Fatalf("Redis down, fail_mode closed: %d %s; want 429 rate_limited", r.status, r.body)
	}
	if ra := r.header.Get("Retry-After"); ra != "1" {
		t.Errorf("Retry-After %q, want 1 (the limiter tries Redis again within a second)", ra)
	}
	if strings.Contains(p.Detail, "exceeded") || !strings.Contains(p.Detail, "cannot be checked") {
		t.Errorf("detail %q: the key is under its quota; want one saying the limit cannot be checked now", p.Detail)
	}
	if strings.Contains(string(r.body), srv.Addr) || strings.Contains(strings.ToLower(string(r.body)), "redis") {
		t.Errorf("the answer names the internal store: %s", r.body)
	}

	srv.Restart()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := e.get(path, "demo-key-alpha")
		if r.status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s after Redis came back: %d %s", r.status, r.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
