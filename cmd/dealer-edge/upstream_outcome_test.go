package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/aggregator/ops"
	"github.com/dealer-edge/dealer-edge/upstream"
)

// TestCallerBudgetIsNotAnUpstreamError: a call the caller ended (its
// request budget, server.request_timeout, ran out before the call or
// while it was in flight) is no failure of the service: the breaker
// excludes it (upstream.newBreaker's IsExcluded), and the metrics must not
// count it as outcome="error" either, or the dashboard's "Upstream error
// share by service" and the status page's error_rate blame a healthy
// service for another's slowness (and a call never sent adds its ~0 s to
// the histogram of "the calls that were made").
func TestCallerBudgetIsNotAnUpstreamError(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		time.Sleep(300 * time.Millisecond) // well within the service's 800 ms timeout
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":101,"name":"x"}`))
	}))
	defer srv.Close()

	mtr := ops.NewMetrics(ops.MetricsOptions{Services: upstream.Services})
	up, err := upstream.New(upstream.Options{
		BaseURL: srv.URL,
		// As main wires it.
		OnCall: func(svc string, d time.Duration, err error) { mtr.UpstreamCall(svc, outcome(err), d) },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()

	// 1. The budget is spent before the call: nothing is sent.
	spent, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Millisecond))
	defer cancel()
	for range 10 {
		if _, err := up.Dealer(spent, 101); err == nil {
			t.Fatal("a call with a spent budget succeeded")
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("%d requests reached the service with a spent budget", n)
	}
	// 2. The budget runs out while the call is in flight.
	for range 10 {
		short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		_, err := up.Dealer(short, 101)
		cancel()
		if err == nil {
			t.Fatal("a call cut by the caller's budget succeeded")
		}
	}
	if st := up.BreakerStates()[upstream.SvcDealers]; st != "closed" {
		t.Fatalf("breaker %s: the breaker counted the caller's budget as the service's failure", st)
	}

	var buf bytes.Buffer
	mtr.WritePrometheus(&buf)
	out := buf.String()
	for _, want := range []string{
		`edge_upstream_requests_total{service="dealers",outcome="error"} 0`,
		`edge_upstream_requests_total{service="dealers",outcome="canceled"} 20`,
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("want %s; got:\n%s", want, grepLines(out, `edge_upstream_requests_total{service="dealers"`))
		}
	}
}

func grepLines(s, prefix string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
