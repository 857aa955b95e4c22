package aggregator

import (
	"net"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/cache/ratelimit"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// TestHitTimeAfterAuthWait: a request that waits on its way to the L1
// lookup (here an API key looked up at the dealers service, 1.3 s) is
// judged at the end of the wait (hitTime), not at its start: the entry,
// fresh for 1 s and expired during the wait, is served STALE (and
// refreshed), not as a HIT. Judged at the start, it was a HIT.
func TestHitTimeAfterAuthWait(t *testing.T) {
	fk := fake.NewServer(fake.Options{})
	addr, err := fk.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fk.Close)
	up, err := upstream.New(upstream.Options{BaseURL: "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(up.Close)
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	c, err := cache.New(cache.Options{Redis: rdb, ServeStaleOn: ServeStaleOn, DropOn: DropOn})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	lim, err := ratelimit.New(ratelimit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lim.Close() })
	st := DefaultSettings()
	st.Cache[RouteInventoryListing] = cache.Policy{TTL: time.Second, StaleWhileRevalidate: time.Minute}
	st.RequestTimeout = 5 * time.Second
	s, err := New(Options{Backend: up, Cache: c, Limiter: lim, KeySecret: []byte("bench-secret-0123456789"), Settings: st})
	if err != nil {
		t.Fatal(err)
	}
	ln := fasthttputil.NewInmemoryListener()
	srv := &fasthttp.Server{Handler: s.Handler()}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	cl := &fasthttp.Client{Dial: func(string) (net.Conn, error) { return ln.Dial() }}
	get := func(key string) (string, string) {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.SetRequestURI("http://edge/dealer/REWIND/listing?page=1&page_size=20")
		req.Header.Set("X-Api-Key", key)
		if err := cl.DoTimeout(req, resp, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode() != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode(), resp.Body())
		}
		return string(resp.Header.Peek("X-Cache")), string(resp.Header.Peek("Cache-Control"))
	}
	if xc, _ := get("bench-key-000"); xc != "MISS" {
		t.Fatalf("first: %s", xc)
	}
	filled := time.Now()
	if err := fk.AddKey("review-new-key-0001", 101, "bench", nil); err != nil {
		t.Fatal(err)
	}
	fk.SetLatency("dealers", 650*time.Millisecond)
	time.Sleep(800 * time.Millisecond)
	xc, cc := get("review-new-key-0001") // auth lookup: 1.5 s; the entry expires meanwhile
	t.Logf("served %v after the fill: X-Cache %s, %s", time.Since(filled).Round(time.Millisecond), xc, cc)
	if xc == "HIT" && time.Since(filled) > 1100*time.Millisecond {
		t.Errorf("entry with 1 s TTL served as HIT (%s) %v after its fill", cc, time.Since(filled).Round(time.Millisecond))
	}
}
