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
	base, c, probe := probed(t, s, func(status int) bool { return status < 500 })
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

// TestContentTypeFaults: faults of one content type ("content:videos"),
// set in process or through the control endpoint, hit that type's content
// requests only; faults of "content" hit every type; a request is subject
// to both (the longer latency, either one down).
func TestContentTypeFaults(t *testing.T) {
	s := NewServer(Options{})
	base, c, probePath := probed(t, s, func(status int) bool { return status == 200 })
	probe := func(ct string) (string, time.Duration) {
		return probePath("/content/v1/dealers/101/" + ct + "?q=fiat")
	}
	want := func(step string, states map[string]string) {
		t.Helper()
		for _, ct := range upstream.ContentTypes {
			w := states[ct]
			if w == "" {
				w = states["*"]
			}
			if got, _ := probe(ct); got != w {
				t.Errorf("%s: %s %s, want %s", step, ct, got, w)
			}
		}
	}

	if ContentTypeService("videos") != "content:videos" {
		t.Fatalf("ContentTypeService %q", ContentTypeService("videos"))
	}
	s.SetDown("content:videos", true)
	want("SetDown(content:videos)", map[string]string{"*": "ok", "videos": "503"})
	s.SetDown("content:videos", false)
	s.SetFailRate("content:news", 1)
	want("SetFailRate(content:news)", map[string]string{"*": "ok", "news": "500"})
	s.SetFailRate("content:news", 0)
	s.SetReset("content:faq", true)
	want("SetReset(content:faq)", map[string]string{"*": "ok", "faq": "reset"})
	s.SetReset("content:faq", false)
	want("cleared in process", map[string]string{"*": "ok"})

	steps := []struct {
		query  string
		states map[string]string
	}{
		{"service=content:videos&down=true", map[string]string{"*": "ok", "videos": "503"}},
		{"service=content:podcasts&fail_rate=1", map[string]string{"*": "ok", "videos": "503", "podcasts": "500"}},
		{"service=content:videos&clear=true", map[string]string{"*": "ok", "podcasts": "500"}},
		{"service=content&down=true", map[string]string{"*": "503"}}, // content's faults hit every type
		{"service=content&clear=true", map[string]string{"*": "ok", "podcasts": "500"}},
		{"service=content:glossary&reset=true", map[string]string{"*": "ok", "podcasts": "500", "glossary": "reset"}},
		{"clear=true", map[string]string{"*": "ok"}}, // clears the types too
		{"service=content:guides&down=true", map[string]string{"*": "ok", "guides": "503"}},
		{"down=false", map[string]string{"*": "ok"}}, // "" is every service and every type
	}
	for _, st := range steps {
		if code := post(t, c, base+"/_control/faults?"+st.query); code != 200 {
			t.Fatalf("POST faults?%s: %d", st.query, code)
		}
		want("after "+st.query, st.states)
	}
	for _, q := range []string{"service=content:nope", "service=content:", "service=inventory:faq"} {
		if code := post(t, c, base+"/_control/faults?"+q+"&down=true"); code != 400 {
			t.Errorf("POST faults?%s: %d, want 400", q, code)
		}
	}
	want("after rejected queries", map[string]string{"*": "ok"})

	// Latency: "content" for every type, the type's own on top; the longer
	// one wins.
	const l = 150 * time.Millisecond
	s.SetLatency(upstream.SvcContent, l)
	s.SetLatency("content:videos", 2*l)
	if _, took := probe("faq"); took < l {
		t.Errorf("faq answered after %v, want at least %v", took, l)
	}
	if _, took := probe("videos"); took < 2*l {
		t.Errorf("videos answered after %v, want at least %v", took, 2*l)
	}
	s.SetLatency(upstream.SvcContent, 0)
	if _, took := probe("faq"); took >= l {
		t.Errorf("faq answered after %v with only videos slow", took)
	}
	if _, took := probe("videos"); took < 2*l {
		t.Errorf("videos answered after %v, want at least %v", took, 2*l)
	}
	s.SetLatency("", 0)

	// Calls count per type (and for the service, every type).
	s.ResetCalls()
	for i := 0; i < 3; i++ {
		probe("videos")
	}
	probe("faq")
	if s.Calls("content:videos") != 3 || s.Calls("content:faq") != 1 || s.Calls("content:news") != 0 || s.Calls(upstream.SvcContent) != 4 {
		t.Errorf("calls videos %d faq %d news %d content %d", s.Calls("content:videos"), s.Calls("content:faq"), s.Calls("content:news"), s.Calls(upstream.SvcContent))
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
	for _, name := range FaultNames() {
		if got, ok := calls[name]; !ok || got != s.Calls(name) {
			t.Errorf("calls[%s] %d (present %v), server counts %d", name, got, ok, s.Calls(name))
		}
	}
	s.ResetCalls()
	if s.Calls("content:videos") != 0 {
		t.Error("ResetCalls left a content type's counter")
	}
}

// probed starts s on loopback for the test and returns its base URL, a
// client without keep-alive, and a probe of a path: "ok" when healthy
// accepts the status, "reset" when the connection dropped without an
// answer, else the status code; with how long the answer took.
func probed(t *testing.T, s *Server, healthy func(status int) bool) (string, *http.Client, func(path string) (string, time.Duration)) {
	t.Helper()
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	base := "http://" + addr
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	return base, c, func(path string) (string, time.Duration) {
		start := time.Now()
		resp, err := c.Get(base + path)
		if err != nil {
			return "reset", time.Since(start)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if healthy(resp.StatusCode) {
			return "ok", time.Since(start)
		}
		return resp.Status[:3], time.Since(start)
	}
}
