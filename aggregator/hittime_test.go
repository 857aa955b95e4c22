package aggregator

import (
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/cache"
)

// TestHitTimeAfterAuthWait: a request that waits on its way to the L1
// lookup (here an API key looked up at the dealers service, 1.3 s) is
// judged at the end of the wait (hitTime), not at its start: the entry,
// fresh for 1 s and expired during the wait, is served STALE (and
// refreshed), not as a HIT. Judged at the start, it was a HIT.
func TestHitTimeAfterAuthWait(t *testing.T) {
	e := newViewEnv(t, func(st *Settings) {
		st.Cache[RouteInventoryListing] = cache.Policy{TTL: time.Second, StaleWhileRevalidate: time.Minute}
		st.RequestTimeout = 5 * time.Second
	})
	const uri = "/dealer/REWIND/listing?page=1&page_size=20"
	get := func(key string) (string, string) {
		t.Helper()
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI(uri)
		ctx.Request.Header.Set("X-Api-Key", key)
		e.h(&ctx)
		if sc := ctx.Response.StatusCode(); sc != 200 {
			t.Fatalf("status %d: %s", sc, ctx.Response.Body())
		}
		return string(ctx.Response.Header.Peek("X-Cache")), string(ctx.Response.Header.Peek("Cache-Control"))
	}
	if xc, _ := get("demo-key-alpha"); xc != "MISS" {
		t.Fatalf("first: %s", xc)
	}
	filled := time.Now()
	if err := e.fake.AddKey("hit-time-new-key-0001", 101, "bench", nil); err != nil {
		t.Fatal(err)
	}
	e.fake.SetLatency("dealers", 650*time.Millisecond)
	time.Sleep(800 * time.Millisecond)
	xc, cc := get("hit-time-new-key-0001") // the key's lookup: 1.3 s; the entry expires meanwhile
	if el := time.Since(filled); xc == "HIT" && el > 1100*time.Millisecond {
		t.Errorf("an entry fresh for 1 s served as HIT (%s) %v after its fill", cc, el.Round(time.Millisecond))
	}
}
