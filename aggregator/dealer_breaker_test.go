package aggregator

import (
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
	"github.com/valyala/fasthttp"
)

// failingDealerFront is a relay in front of the fake internal services that
// answers 500 to every inventory call of one dealer (a record of that dealer
// the inventory service cannot serve, its shard down, a query of that
// dealer's that times the service out) and relays every other call. It
// counts the calls of that dealer it refused.
type failingDealerFront struct {
	addr  string
	calls atomic.Int64 // inventory calls of the failing dealer
}

func newFailingDealerFront(t *testing.T, fakeAddr string, dealer int64) *failingDealerFront {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &failingDealerFront{addr: ln.Addr().String()}
	prefix := fmt.Sprintf("/inventory/v1/dealers/%d/", dealer)
	hc := &fasthttp.HostClient{Addr: fakeAddr}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		if strings.HasPrefix(string(ctx.Path()), prefix) {
			f.calls.Add(1)
			ctx.SetStatusCode(500)
			ctx.SetBodyString(`{"error":"internal"}`)
			return
		}
		var resp fasthttp.Response
		if err := hc.DoTimeout(&ctx.Request, &resp, 5*time.Second); err != nil {
			ctx.SetStatusCode(502)
			return
		}
		resp.CopyTo(&ctx.Response)
	}}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return f
}

// TestOneDealersFailuresKeepOtherDealersServed: the inventory service fails
// every call of dealer 102 (and only of it) while it serves dealer 101.
// Dealer 102's key asks for 20 listing pages (20 misses, 20 failed calls
// without a breaker): each is a 503, and after the breaker's threshold
// (upstream.breaker_failures, 5) its calls stop reaching the service. Then
// dealer 101, whose calls the service answers, asks for a listing of its own
// that is not cached: it must be served (200), not refused by a breaker that
// dealer 102's failures opened for every dealer. Until 2026-11-29 each service
// had one breaker for all dealers: five failed calls of one dealer (a key
// asking for five distinct pages) opened it, and every dealer's misses on
// the service were 503 for upstream.breaker_open_for; a key of the failing
// dealer kept it open by asking again at every trial.
func TestOneDealersFailuresKeepOtherDealersServed(t *testing.T) {
	fk := fake.NewServer(fake.Options{})
	addr, err := fk.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fk.Close)
	front := newFailingDealerFront(t, addr, 102)
	up, err := upstream.New(upstream.Options{BaseURL: "http://" + front.addr, Breaker: upstream.BreakerSettings{ConsecutiveFailures: 5, OpenFor: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(up.Close)
	c, err := cache.New(cache.Options{ServeStaleOn: ServeStaleOn})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	e := &indexEdge{fk: fk}
	e.s, err = New(Options{Backend: up, Cache: c, KeySecret: []byte("index-test-secret-0123"), Settings: DefaultSettings()})
	if err != nil {
		t.Fatal(err)
	}
	// Dealer 101 served once first: the service answers it.
	if st, body := e.body(t, "/dealer/REWIND/listing?page_size=2", "demo-key-alpha"); st != 200 {
		t.Fatalf("alpha before: %d %s", st, body)
	}
	const n = 20
	for i := range n {
		uri := fmt.Sprintf("/dealer/REWIND/listing?page=%d", i+1)
		if st, body := e.body(t, uri, "demo-key-beta"); st != 503 {
			t.Fatalf("beta %s: %d %s, want 503", uri, st, body)
		}
	}
	if c := front.calls.Load(); c > 5 {
		t.Errorf("dealer 102's %d failing requests made %d inventory calls; its breaker should refuse them after 5", n, c)
	}
	st, body := e.body(t, "/dealer/REWIND/listing?page_size=3", "demo-key-alpha")
	if st != 200 {
		t.Fatalf("dealer 101's listing after dealer 102's failures: %d %s; one dealer's failures must not open the inventory breaker for every dealer", st, body)
	}
	if st, body := e.body(t, "/dealer/NLT/listing?page_size=3", "demo-key-alpha"); st != 200 {
		t.Fatalf("dealer 101's NLT listing: %d %s", st, body)
	}
}
