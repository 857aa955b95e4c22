package upstream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// dealerFailServer answers every inventory call 500 when failAll is set, and
// the calls of dealer 2 500 while failTwo is set; it answers the others with
// an empty page. It counts dealer 2's calls.
type dealerFailServer struct {
	addr             string
	failAll, failTwo atomic.Bool
	twoCalls         atomic.Int64
}

func newDealerFailServer(t *testing.T) *dealerFailServer {
	t.Helper()
	s := &dealerFailServer{}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		two := strings.Contains(string(ctx.Path()), "/dealers/2/")
		if strings.Contains(string(ctx.Path()), "/versions/bad/") {
			ctx.SetStatusCode(500)
			return
		}
		if two {
			s.twoCalls.Add(1)
		}
		ctx.SetContentType("application/json")
		if s.failAll.Load() || two && s.failTwo.Load() {
			ctx.SetStatusCode(500)
			ctx.SetBodyString(`{}`)
			return
		}
		ctx.SetBodyString(`{"total":0,"items":[]}`)
	}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return s
}

// TestDealerBreakerIsolatesOneDealer: the inventory service fails every call
// of dealer 2 and answers dealer 1. Dealer 2's calls open dealer 2's breaker
// at the threshold (3 here) and no further call of it reaches the service
// until the open period has passed (then one trial); the service's breaker
// stays closed and dealer 1 is served throughout. Before 2026-11-29 dealer
// 2's three failures opened the service's breaker and dealer 1's calls were
// refused. A service failing everyone still opens the service's breaker as
// soon as a second dealer's call fails.
func TestDealerBreakerIsolatesOneDealer(t *testing.T) {
	fs := newDealerFailServer(t)
	var mu sync.Mutex
	var changes, opened []string
	c, err := New(Options{BaseURL: "http://" + fs.addr,
		Breaker: BreakerSettings{ConsecutiveFailures: 3, OpenFor: time.Minute},
		OnDealerBreakerOpen: func(svc, ct string, dealer int64) {
			mu.Lock()
			opened = append(opened, fmt.Sprintf("%s%s:%d", svc, ct, dealer))
			mu.Unlock()
		},
		OnBreakerChange: func(svc, from, to string) {
			mu.Lock()
			changes = append(changes, svc+":"+from+"->"+to)
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	now := time.Now()
	var clock atomic.Int64 // nanoseconds added to now
	c.inventory.track.now = func() time.Time { return now.Add(time.Duration(clock.Load())) }
	ctx := context.Background()
	list := func(dealer int64) error {
		_, err := c.ListVehicles(ctx, dealer, VehicleQuery{Service: "REWIND"})
		return err
	}

	if err := list(1); err != nil {
		t.Fatalf("dealer 1: %v", err)
	}
	fs.failTwo.Store(true)
	for i := range 10 {
		err := list(2)
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("dealer 2 call %d: %v", i, err)
		}
		if i >= 3 && !errors.Is(err, ErrCircuitOpen) {
			t.Fatalf("dealer 2 call %d after 3 failures: %v, want its breaker's refusal", i, err)
		}
	}
	if n := fs.twoCalls.Load(); n != 3 {
		t.Errorf("dealer 2's 10 calls reached the service %d times, want 3 (its breaker's threshold)", n)
	}
	if st := c.BreakerStates()[SvcInventory]; st != BreakerClosed {
		t.Errorf("inventory breaker %s after one dealer's failures, want closed", st)
	}
	if err := list(1); err != nil {
		t.Fatalf("dealer 1 after dealer 2's failures: %v", err)
	}

	// Past the open period: one trial of dealer 2, failing, opens its
	// breaker again; healed, the next trial closes it.
	clock.Store(int64(61 * time.Second))
	if err := list(2); err == nil || errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("dealer 2's trial: %v, want the service's failure", err)
	}
	if err := list(2); !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("dealer 2 after a failed trial: %v, want refused", err)
	}
	if n := fs.twoCalls.Load(); n != 4 {
		t.Errorf("dealer 2's calls reached the service %d times, want 4", n)
	}
	fs.failTwo.Store(false)
	clock.Store(int64(122 * time.Second))
	for i := range 3 {
		if err := list(2); err != nil {
			t.Fatalf("dealer 2 healed, call %d: %v", i, err)
		}
	}

	// The service failing everyone: dealer 2's failures (its breaker opens),
	// then one of dealer 1's: the service's breaker opens.
	fs.failAll.Store(true)
	for range 3 {
		_ = list(2)
	}
	if st := c.BreakerStates()[SvcInventory]; st != BreakerClosed {
		t.Fatalf("inventory breaker %s after dealer 2's failures alone", st)
	}
	if err := list(1); err == nil || errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("dealer 1 with the service down: %v", err)
	}
	if st := c.BreakerStates()[SvcInventory]; st != BreakerOpen {
		t.Errorf("inventory breaker %s after two dealers' failures, want open", st)
	}
	if err := list(3); !errors.Is(err, ErrCircuitOpen) {
		t.Errorf("dealer 3 with the service's breaker open: %v", err)
	}
	mu.Lock()
	got := strings.Join(changes, " ")
	mu.Unlock()
	if got != "inventory:closed->open" {
		t.Errorf("changes %q, want only the service's opening", got)
	}
	// Dealer 2's breaker opened twice (the failed trial reopened it
	// without a report): once at first, once when the service failed
	// everyone.
	mu.Lock()
	got = strings.Join(opened, " ")
	mu.Unlock()
	if got != "inventory:2 inventory:2" {
		t.Errorf("dealer breaker openings %q, want \"inventory:2 inventory:2\"", got)
	}
}

// TestDealerBreakerAloneStillTrips: with one dealer's calls the only calls
// the service ever answered or failed, nothing says the failure is that
// dealer's: the service's breaker opens at its threshold, as before.
func TestDealerBreakerAloneStillTrips(t *testing.T) {
	fs := newDealerFailServer(t)
	fs.failAll.Store(true)
	c, err := New(Options{BaseURL: "http://" + fs.addr, Breaker: BreakerSettings{ConsecutiveFailures: 3, OpenFor: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	for range 3 {
		_, _ = c.ListVehicles(context.Background(), 2, VehicleQuery{Service: "REWIND"})
	}
	if st := c.BreakerStates()[SvcInventory]; st != BreakerOpen {
		t.Errorf("inventory breaker %s, want open", st)
	}
}

// TestCatalogBreakerPerDealer: the catalog fails on one version, which only
// dealer 2's vehicles have. Dealer 2's detail requests (each a catalog call
// for that version) open dealer 2's catalog breaker, not the catalog's:
// dealer 1's vehicles' equipment is still read. Before 2026-11-29 the
// catalog's calls were of no dealer, and three of them opened its breaker
// for every dealer's vehicle details.
func TestCatalogBreakerPerDealer(t *testing.T) {
	fs := newDealerFailServer(t)
	c, err := New(Options{BaseURL: "http://" + fs.addr, Breaker: BreakerSettings{ConsecutiveFailures: 3, OpenFor: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx := context.Background()
	if _, err := c.Equipment(ctx, 1, "good"); err != nil {
		t.Fatalf("dealer 1: %v", err)
	}
	for range 10 {
		if _, err := c.Equipment(ctx, 2, "bad"); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("dealer 2: %v", err)
		}
	}
	if st := c.BreakerStates()[SvcCatalog]; st != BreakerClosed {
		t.Errorf("catalog breaker %s after one dealer's failures, want closed", st)
	}
	if _, err := c.Equipment(ctx, 1, "good"); err != nil {
		t.Errorf("dealer 1 after dealer 2's failures: %v", err)
	}
}

// TestContentTypeBreakerPerDealer: the content service's breakers, one per
// type, are per dealer too: dealer 2's failing faq calls open dealer 2's
// faq breaker, not the faq breaker of every dealer.
func TestContentTypeBreakerPerDealer(t *testing.T) {
	fs := newDealerFailServer(t)
	var opened atomic.Int64
	c, err := New(Options{BaseURL: "http://" + fs.addr, Breaker: BreakerSettings{ConsecutiveFailures: 3, OpenFor: time.Minute},
		OnDealerBreakerOpen: func(svc, ct string, dealer int64) {
			if svc == SvcContent && ct == "faq" && dealer == 2 {
				opened.Add(1)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx := context.Background()
	if _, err := c.Content(ctx, 1, "faq", ContentFilter{}); err != nil {
		t.Fatalf("dealer 1: %v", err)
	}
	fs.failTwo.Store(true)
	for range 10 {
		if _, err := c.Content(ctx, 2, "faq", ContentFilter{}); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("dealer 2: %v", err)
		}
	}
	if n := fs.twoCalls.Load(); n != 3 {
		t.Errorf("dealer 2's 10 faq calls reached the service %d times, want 3", n)
	}
	if st := c.ContentBreakerStates()["faq"]; st != BreakerClosed {
		t.Errorf("faq breaker %s after one dealer's failures, want closed", st)
	}
	if _, err := c.Content(ctx, 1, "faq", ContentFilter{}); err != nil {
		t.Errorf("dealer 1 after dealer 2's failures: %v", err)
	}
	if opened.Load() != 1 {
		t.Errorf("OnDealerBreakerOpen for dealer 2's faq called %d times, want 1", opened.Load())
	}
}
