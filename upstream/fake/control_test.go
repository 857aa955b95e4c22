package fake

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// TestControlEndpoint drives the fault-control endpoint over a real
// listener, as the reliability suite does with cmd/fake-upstream: each
// step posts a fault query and checks what a client of two services then
// sees (an answer below 500 is a healthy service; "reset" is a connection
// dropped without an answer).
func TestControlEndpoint(t *testing.T) {
	s := NewServer(Options{})
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	base := "http://" + addr
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	probe := func(path string) (string, time.Duration) {
		start := time.Now()
		resp, err := c.Get(base + path)
		if err != nil {
			return "reset", time.Since(start)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode < 500 {
			return "ok", time.Since(start)
		}
		return resp.Status[:3], time.Since(start)
	}
	const (
		dealers = "/dealers/v1/dealers/101"
		catalog = "/catalog/v1/versions/NOPE/equipment" // a 404: healthy
	)
	steps := []struct {
		query            string
		dealers, catalog string
		slow             time.Duration // catalog answers no sooner
	}{
		{"", "ok", "ok", 0},
		{"service=catalog&down=true", "ok", "503", 0},
		{"service=catalog&fail_rate=1&down=false", "ok", "500", 0},
		{"service=catalog&clear=true", "ok", "ok", 0},
		{"fail_rate=1", "500", "500", 0},
		{"service=catalog&clear=true", "500", "ok", 0}, // a service's clear leaves the others
		{"clear=true&service=dealers", "ok", "ok", 0},
		{"service=catalog&latency=150ms", "ok", "ok", 150 * time.Millisecond},
		{"service=catalog&reset=true&latency=0s", "ok", "reset", 0},
		{"clear=true", "ok", "ok", 0},
	}
	for _, st := range steps {
		if st.query != "" {
			if code := post(t, c, base+"/_control/faults?"+st.query); code != 200 {
				t.Fatalf("POST faults?%s: %d", st.query, code)
			}
		}
		if got, _ := probe(dealers); got != st.dealers {
			t.Errorf("after %q: dealers %s, want %s", st.query, got, st.dealers)
		}
		got, took := probe(catalog)
		if got != st.catalog {
			t.Errorf("after %q: catalog %s, want %s", st.query, got, st.catalog)
		}
		if took < st.slow {
			t.Errorf("after %q: catalog answered after %v, want at least %v", st.query, took, st.slow)
		}
	}

	for _, q := range []string{"service=nope", "latency=soon", "fail_rate=high"} {
		if code := post(t, c, base+"/_control/faults?"+q); code != 400 {
			t.Errorf("POST faults?%s: %d, want 400", q, code)
		}
	}
	for _, p := range []string{"/_control/faults", "/_control/other"} {
		resp, err := c.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Errorf("GET %s: %d, want 404", p, resp.StatusCode)
		}
	}

	resp, err := c.Get(base + "/_control/calls")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	calls := map[string]int64{}
	if err := json.NewDecoder(resp.Body).Decode(&calls); err != nil {
		t.Fatal(err)
	}
	for _, svc := range upstream.Services {
		if calls[svc] != s.Calls(svc) {
			t.Errorf("calls[%s] %d, server counts %d", svc, calls[svc], s.Calls(svc))
		}
	}
	// Every probe counts, faulted or reset; the control endpoint does not.
	if want := int64(len(steps)); calls[upstream.SvcDealers] != want || calls[upstream.SvcCatalog] != want {
		t.Errorf("calls %v, want %d dealers and catalog", calls, want)
	}
}

func post(t *testing.T, c *http.Client, url string) int {
	t.Helper()
	resp, err := c.Post(url, "text/plain", strings.NewReader(""))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}
