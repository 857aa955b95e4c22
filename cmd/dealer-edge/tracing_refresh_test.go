package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// TestStaleRefreshTraced: README (Tracing, span table) promises a
// `cache fill` span with `cache.refresh` for "a stale-while-revalidate
// refresh, which may end after the server span", and its upstream call
// under it. The refresh runs on a background worker with the request's
// context; every span helper asks trace.SpanFromContext(ctx).IsRecording(),
// which is false once the server span has ended, so a refresh that starts
// after the handler returned (nearly always) records nothing: the refresh
// and its upstream call are missing from every sampled stale hit's trace.
func TestStaleRefreshTraced(t *testing.T) {
	recv := startOTLPReceiver(t)
	cfgPath := t.TempDir() + "/edge.json"
	writeConfig(t, cfgPath, `{"cache": {"routes": {"inventory_listing": {"ttl": "1s", "stale_while_revalidate": "60s", "stale_if_error": "10m"}}}}`)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", recv.url)
	t.Setenv("OTEL_TRACES_SAMPLER", "always_on")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20")
	fk := fake.NewServer(fake.Options{})
	e := startEdge(t, "--config", cfgPath, "--upstream", serveUpstream(t, fk.Handler()))

	const n = 3
	for i := range n {
		if r := e.get(fmt.Sprintf("/dealer/REWIND/listing?page_size=%d", 3+i), "demo-key-alpha"); r.status != 200 {
			t.Fatalf("status %d", r.status)
		}
	}
	time.Sleep(1100 * time.Millisecond) // the entries turn stale
	for i := range n {
		id := fmt.Sprintf("tr-stale-%d", i)
		r := e.get(fmt.Sprintf("/dealer/REWIND/listing?page_size=%d", 3+i), "demo-key-alpha", "X-Request-ID", id)
		if r.status != 200 || r.header.Get("X-Cache") != "STALE" {
			t.Fatalf("%s: status %d X-Cache %q", id, r.status, r.header.Get("X-Cache"))
		}
	}
	missing := 0
	for i := range n {
		id := fmt.Sprintf("tr-stale-%d", i)
		recv.trace(t, id, func(spanTree) bool { return true })
		deadline := time.Now().Add(2 * time.Second)
		var tr spanTree
		for {
			tr = recv.trace(t, id, func(spanTree) bool { return true })
			if tr.has("cache fill") || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		ok := false
		for _, s := range tr.named("cache fill") {
			ok = ok || attr(s, "cache.refresh") == "true"
		}
		if !ok || !tr.has("GET inventory") {
			missing++
			t.Logf("%s: no refresh span in the stale hit's trace:\n%s", id, tr)
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d stale hits have no `cache fill` (cache.refresh=true) with its GET inventory in their trace", missing, n)
	}
}

// TestSpanNamesInReadmeTable: the README's span table ("Spans (a sampled
// request ...)") is the promise of what a trace holds. With the default
// configuration (auth.index on) a request whose key the index knows and
// whose dealer profile is not cached makes an `auth dealer profile` span
// (aggregator/auth.go) with its `GET dealers` call, which the table does
// not name (its example tree, "server span → auth key lookup → 2 × GET
// dealers", is what auth.index=false does). Every span name and
// cache.redis_key value a default edge emits must be in the table.
func TestSpanNamesInReadmeTable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	i := strings.Index(s, "**Spans** (a sampled request")
	j := strings.Index(s[i:], "**Never recorded**")
	table := s[i : i+j]

	recv := startOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", recv.url)
	t.Setenv("OTEL_TRACES_SAMPLER", "always_on")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20")
	fk := fake.NewServer(fake.Options{})
	e := startEdge(t, "--upstream", serveUpstream(t, fk.Handler()))
	time.Sleep(500 * time.Millisecond) // the key index loads
	ids := []string{}
	for i, key := range []string{"demo-key-alpha", "demo-key-beta", "demo-key-gamma"} {
		id := fmt.Sprintf("tr-doc-%d", i)
		ids = append(ids, id)
		if r := e.get("/dealer/NOS/listing?page_size=2", key, "X-Request-ID", id); r.status != 200 {
			t.Fatalf("%s: status %d", key, r.status)
		}
	}
	time.Sleep(300 * time.Millisecond)
	names, kinds := map[string]bool{}, map[string]bool{}
	for _, id := range ids {
		tr := recv.trace(t, id, func(spanTree) bool { return true })
		for _, sp := range tr.spans {
			if sp != tr.root {
				names[sp.Name] = true
			}
			if k := attr(sp, "cache.redis_key"); k != "" {
				kinds[k] = true
			}
		}
	}
	// Each attribute key a span carries is among those its row lists
	// (before 2026-11-29 the cache's Redis spans carried db.system.name
	// and the service calls http.request.method, which their rows did
	// not name).
	rowOf := func(sp *tracepb.Span, root bool) string {
		want := "| `" + sp.Name + "`"
		switch {
		case root:
			want = "| `GET /dealer/{service}/listing`"
		case strings.HasPrefix(sp.Name, "GET "):
			want = "| `GET <service>`"
		case strings.HasPrefix(sp.Name, "redis "):
			want = "| `redis GETEX`"
		case strings.HasPrefix(sp.Name, "hub section "), strings.HasPrefix(sp.Name, "search section "):
			want = "| `hub section <type>`"
		}
		for _, line := range strings.Split(table, "\n") {
			if strings.HasPrefix(line, want) {
				return line
			}
		}
		return ""
	}
	for _, id := range ids {
		tr := recv.trace(t, id, func(spanTree) bool { return true })
		for _, sp := range tr.spans {
			row := rowOf(sp, sp == tr.root)
			if row == "" {
				t.Errorf("span %q has no row in the README's span table", sp.Name)
				continue
			}
			for _, kv := range sp.Attributes {
				if !strings.Contains(row, "`"+kv.Key+"`") {
					t.Errorf("span %q carries attribute %s, which its README row does not list", sp.Name, kv.Key)
				}
			}
		}
	}
	for n := range names {
		if !strings.Contains(table, "`"+n+"`") && !strings.HasPrefix(n, "GET ") && !strings.HasPrefix(n, "redis ") {
			t.Errorf("span %q is emitted but not in the README's span table", n)
		}
	}
	for k := range kinds {
		if !strings.Contains(table, "`"+k+"`") {
			t.Errorf("cache.redis_key=%q is emitted but not among the table's values", k)
		}
	}
}
