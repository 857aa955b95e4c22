package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// limiterLines returns the event lines of stderr whose msg is msg, decoded.
func limiterLines(t *testing.T, stderr, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(stderr, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// byLimiter counts lines per value of their "limiter" field.
func byLimiter(ls []map[string]any) map[string]int {
	out := map[string]int{}
	for _, l := range ls {
		v, _ := l["limiter"].(string)
		out[v]++
	}
	return out
}

// TestAddressLimiterFallbackVisible: an edge started with Redis down
// falls back in both rate limiters; each says which it is in its event
// lines ("limiter": "key" or "address"), the per-address limiter's state
// is exported (edge_ratelimit_address_fallback_active, _activations_total)
// beside the key limiter's, and once Redis is back both are marked
// available again, and log it, with no request at all (background probe).
// Before 2026-11-27 the per-address limiter (failed authentications, the
// OpenAPI document) logged the same line as the key limiter, was in no
// metric (edge_ratelimit_fallback_active read 0 after its line), and
// recovered only at its next request, with no "available again" line
// until then.
func TestAddressLimiterFallbackVisible(t *testing.T) {
	mr := miniredis.NewMiniRedis()
	if err := mr.StartAddr("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	redisAddr := mr.Addr()
	mr.Close() // down at start
	defer mr.Close()
	fk := fake.NewServer(fake.Options{})
	addr, err := fk.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer fk.Close()
	e := startEdge(t, "--redis", redisAddr, "--upstream", "http://"+addr)

	// A failed authentication: the per-address limiter counts it, finds
	// Redis down and falls back; nothing has used the key limiter yet.
	if r := e.get("/dealer/REWIND/listing?page_size=1", "no-such-key"); r.status != 401 {
		t.Fatalf("unknown key: %d %s", r.status, r.body)
	}
	m := e.scrape()
	if m["edge_ratelimit_address_fallback_active"] != 1 || m["edge_ratelimit_address_fallback_activations_total"] != 1 ||
		m["edge_ratelimit_fallback_active"] != 0 {
		t.Fatalf("after a failed authentication with Redis down: address fallback %v (activations %v), key fallback %v",
			m["edge_ratelimit_address_fallback_active"], m["edge_ratelimit_address_fallback_activations_total"], m["edge_ratelimit_fallback_active"])
	}
	// A good key: the key limiter falls back too.
	if r := e.get("/dealer/REWIND/listing?page_size=1", "demo-key-alpha"); r.status != 200 {
		t.Fatalf("valid key with Redis down: %d %s", r.status, r.body)
	}
	if m := e.scrape(); m["edge_ratelimit_fallback_active"] != 1 {
		t.Fatalf("key limiter fallback %v after a keyed request with Redis down", m["edge_ratelimit_fallback_active"])
	}
	down := byLimiter(limiterLines(t, e.stderr.String(), "ratelimit: redis unavailable, falling back"))
	if down["address"] != 1 || down["key"] != 1 || len(down) != 2 {
		t.Fatalf("fall-back lines by limiter %v, want one each of address and key:\n%s", down, e.stderr.String())
	}

	// Redis comes back; no request is made.
	if err := mr.StartAddr(redisAddr); err != nil {
		t.Skipf("the Redis port was taken meanwhile: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		m := e.scrape()
		if m["edge_ratelimit_address_fallback_active"] == 0 && m["edge_ratelimit_fallback_active"] == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s after Redis came back, no request: address fallback %v, key fallback %v\n%s",
				m["edge_ratelimit_address_fallback_active"], m["edge_ratelimit_fallback_active"], e.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	up := byLimiter(limiterLines(t, e.stderr.String(), "ratelimit: redis available again, shared limits restored"))
	if up["address"] != 1 || up["key"] != 1 || len(up) != 2 {
		t.Fatalf("recovery lines by limiter %v, want one each:\n%s", up, e.stderr.String())
	}
}
