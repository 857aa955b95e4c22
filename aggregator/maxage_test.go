package aggregator

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// slowListBackend takes delay to answer a vehicle listing.
type slowListBackend struct {
	Backend
	delay time.Duration
}

func (b slowListBackend) ListVehicles(ctx context.Context, d int64, q upstream.VehicleQuery) (upstream.VehiclePage, error) {
	time.Sleep(b.delay)
	return b.Backend.ListVehicles(ctx, d, q)
}

// TestMaxAgeOfAFillIsNotPastTheTTL: the max-age of an answer the request
// waited for (a miss) is the freshness left when it is written, never the
// TTL plus the wait: it was counted from the request's start, so a fill of
// 1.2 s under a 30 s TTL said max-age=31 (found by an audit). A hit keeps
// counting from the request's start.
func TestMaxAgeOfAFillIsNotPastTheTTL(t *testing.T) {
	s := newBenchServer(t, true)
	s.backend = slowListBackend{s.backend, 1200 * time.Millisecond}
	h := s.Handler()
	get := func() (string, int) {
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI("/dealer/REWIND/listing?page_size=2")
		ctx.Request.Header.Set("X-Api-Key", "demo-key-alpha")
		h(&ctx)
		cc := string(ctx.Response.Header.Peek("Cache-Control"))
		_, v, _ := strings.Cut(cc, "max-age=")
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("Cache-Control %q", cc)
		}
		return string(ctx.Response.Header.Peek("X-Cache")), n
	}
	ttl := int(s.settings.Load().policy(RouteInventoryListing, "").TTL / time.Second)
	if xc, n := get(); xc != "MISS" || n > ttl {
		t.Errorf("miss: X-Cache %s, max-age %d, want at most the TTL (%d)", xc, n, ttl)
	}
	if xc, n := get(); xc != "HIT" || n > ttl {
		t.Errorf("hit: X-Cache %s, max-age %d, want at most the TTL (%d)", xc, n, ttl)
	}
}
