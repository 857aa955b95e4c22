package ops

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// a purge whose query repeats a parameter with conflicting values
// is ambiguous; the admin takes the first value and purges. With
// all=true&all=false (a script appending its own default, a proxy adding
// a parameter) every dealer's cache is dropped although the README says
// "422 for any other value of all"; with dealer_id=101&dealer_id=102
// dealer 101 is purged and 102, which the caller also named, is not.
func TestPurgeRefusesRepeatedParameters(t *testing.T) {
	var all, dealer atomic.Int64
	c := adminServer(t, AdminOptions{
		Purge:    func(context.Context, int64) error { dealer.Add(1); return nil },
		PurgeAll: func(context.Context) error { all.Add(1); return nil },
	})
	for _, uri := range []string{
		"/admin/purge?all=true&all=false",
		"/admin/purge?dealer_id=101&dealer_id=102",
	} {
		a := call(t, c, "POST", uri, "")
		if a.status != 422 {
			t.Errorf("POST %s: %d %s, want 422", uri, a.status, a.raw)
		}
	}
	if n := all.Load(); n != 0 {
		t.Errorf("PurgeAll called %d times for an ambiguous all parameter", n)
	}
	if n := dealer.Load(); n != 0 {
		t.Errorf("Purge called %d times for an ambiguous dealer_id", n)
	}
}

// edge_redis_up (the EdgeRedisDown alert) and /readyz (and the
// status page) report the same check, cache.Cache.Ping (PING, AUTH, ROLE
// and two pipelined command checks: five round trips), but with different
// deadlines: 250 ms at a scrape, 1 s for /readyz and /admin/status. A
// Redis whose check takes 300 ms (60 ms per round trip, a redis.timeout of
// 100 ms: the cache works) reads 0 in edge_redis_up, so EdgeRedisDown
// fires, while /readyz says "redis":"up" and the status page "up".
func TestRedisUpAgreesWithReadyz(t *testing.T) {
	slow := func(ctx context.Context) error {
		select {
		case <-time.After(300 * time.Millisecond):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	m := NewMetrics(MetricsOptions{Routes: []string{"content_hub"}})
	m.SetSources(Sources{Redis: slow})
	c := adminServer(t, AdminOptions{Metrics: m, Redis: slow})
	rd := call(t, c, "GET", "/readyz", "")
	var buf bytes.Buffer
	m.WritePrometheus(&buf)
	up := ""
	for _, ln := range strings.Split(buf.String(), "\n") {
		if v, ok := strings.CutPrefix(ln, "edge_redis_up "); ok {
			up = v
		}
	}
	if rd.body["redis"] == "up" && up != "1" {
		t.Errorf("/readyz says redis %v, edge_redis_up %q: the alert and the probe disagree about the same Redis", rd.body["redis"], up)
	}
}
