package main

import (
	"compress/gzip"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/dealer-edge/dealer-edge/configs"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// otlpReceiver is an OTLP/HTTP traces endpoint: it decodes every
// ExportTraceServiceRequest (protobuf, plain or gzip) it is sent and keeps
// the spans with their resource's attributes.
type otlpReceiver struct {
	url      string
	mu       sync.Mutex
	spans    []*tracepb.Span
	resource []*commonpb.KeyValue
	bad      []string // requests that did not decode
}

func startOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, err := io.ReadAll(body)
		var msg coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(b, &msg)
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if err != nil || req.Header.Get("Content-Type") != "application/x-protobuf" {
			r.bad = append(r.bad, fmt.Sprintf("%s: %v", req.Header.Get("Content-Type"), err))
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		for _, rs := range msg.ResourceSpans {
			r.resource = rs.GetResource().GetAttributes()
			for _, ss := range rs.ScopeSpans {
				r.spans = append(r.spans, ss.Spans...)
			}
		}
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	})
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	r.url = "http://" + ln.Addr().String() + "/v1/traces"
	return r
}

// trace waits for the spans of the trace whose server span has the given
// request id until pred accepts them, and returns them.
func (r *otlpReceiver) trace(t *testing.T, requestID string, pred func(spanTree) bool) spanTree {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.mu.Lock()
		var tree spanTree
		for _, s := range r.spans {
			if attr(s, "edge.request_id") == requestID {
				tree.root = s
			}
		}
		if tree.root != nil {
			for _, s := range r.spans {
				if string(s.TraceId) == string(tree.root.TraceId) {
					tree.spans = append(tree.spans, s)
				}
			}
		}
		bad := slices.Clone(r.bad)
		r.mu.Unlock()
		if len(bad) > 0 {
			t.Fatalf("receiver could not decode exports: %v", bad)
		}
		if tree.root != nil && pred(tree) {
			return tree
		}
		if time.Now().After(deadline) {
			t.Fatalf("request %s: spans never matched; got:\n%s", requestID, tree)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// spanTree is the spans of one trace and its server span.
type spanTree struct {
	root  *tracepb.Span
	spans []*tracepb.Span
}

// children returns the spans whose parent is p, by name.
func (tr spanTree) children(p *tracepb.Span) []*tracepb.Span {
	var out []*tracepb.Span
	for _, s := range tr.spans {
		if string(s.ParentSpanId) == string(p.SpanId) {
			out = append(out, s)
		}
	}
	return out
}

// named returns the spans of the tree called name.
func (tr spanTree) named(name string) []*tracepb.Span {
	var out []*tracepb.Span
	for _, s := range tr.spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

func (tr spanTree) has(name string) bool { return len(tr.named(name)) > 0 }

func (tr spanTree) String() string {
	if tr.root == nil {
		return "(no server span)"
	}
	var b strings.Builder
	var walk func(s *tracepb.Span, depth int)
	walk = func(s *tracepb.Span, depth int) {
		fmt.Fprintf(&b, "%s%s [%s] %v\n", strings.Repeat("  ", depth), s.Name, s.GetStatus().GetCode(), attrs(s))
		for _, c := range tr.children(s) {
			walk(c, depth+1)
		}
	}
	walk(tr.root, 0)
	return b.String()
}

func attrs(s *tracepb.Span) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes {
		m[kv.Key] = anyString(kv.Value)
	}
	return m
}

func anyString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	}
	return v.String()
}

func attr(s *tracepb.Span, key string) string { return attrs(s)[key] }

// parentOf finds the parent span of s in the tree.
func (tr spanTree) parentOf(s *tracepb.Span) *tracepb.Span {
	for _, p := range tr.spans {
		if string(p.SpanId) == string(s.ParentSpanId) {
			return p
		}
	}
	return nil
}

// under reports whether s descends from the span called ancestor.
func (tr spanTree) under(s *tracepb.Span, ancestor string) bool {
	for p := tr.parentOf(s); p != nil; p = tr.parentOf(p) {
		if p.Name == ancestor {
			return true
		}
	}
	return false
}

// ancestorSection is the name of the nearest ancestor of s that is a hub
// or search section, or "".
func ancestorSection(tr spanTree, s *tracepb.Span) string {
	for p := tr.parentOf(s); p != nil; p = tr.parentOf(p) {
		if strings.HasPrefix(p.Name, "hub section ") || strings.HasPrefix(p.Name, "search section ") {
			return p.Name
		}
	}
	return ""
}

// TestTracingSpanTrees runs the edge with tracing on (the OTEL_* variables,
// over a config file that says otherwise) against a real redis-server and
// the fake services behind a recorder, and checks in an OTLP/HTTP receiver
// the span trees of a miss, a hit, a hub and failed upstream calls, that a
// client's trace is continued and passed on, and that no attribute holds
// an API key or a hash of one.
func TestTracingSpanTrees(t *testing.T) {
	recv := startOTLPReceiver(t)
	rds := redistest.Start(t)
	fk := fake.NewServer(fake.Options{})
	type seen struct{ path, traceparent, tracestate string }
	var mu sync.Mutex
	var calls []seen
	up := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		mu.Lock()
		calls = append(calls, seen{string(ctx.Path()), string(ctx.Request.Header.Peek("traceparent")), string(ctx.Request.Header.Peek("tracestate"))})
		mu.Unlock()
		fk.Handler()(ctx)
	}}
	ln, err := netListen()
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = up.Serve(ln) }()
	defer func() { _ = up.Shutdown() }()

	cfgPath := t.TempDir() + "/edge.json"
	// Generous timeouts: the test checks span trees, not the budgets (a
	// slow run, such as under -race, must not open a breaker, nor mark
	// Redis down: at the default redis.timeout, 50 ms, a busy box did, and
	// the miss's tree had no cache Redis call at all). auth.index off:
	// keys are looked up one by one, so the span tree has the key lookup
	// (with the index, only the dealer profile is fetched).
	writeConfig(t, cfgPath, `{"auth": {"index": false}, "server": {"request_timeout": "15s"}, "redis": {"timeout": "2s"}, "upstream": {"timeouts": {"dealers": "5s", "inventory": "5s", "content": "5s"}}, "tracing": {"sampler": "always_off", "service_name": "from-file", "resource_attributes": {"deployment.environment.name": "test", "team": "file"}}}`)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", recv.url)
	t.Setenv("OTEL_TRACES_SAMPLER", "parentbased_always_on")
	t.Setenv("OTEL_SERVICE_NAME", "edge-under-test")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "team=edge%20team")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20")
	e := startEdge(t, "--config", cfgPath, "--redis", rds.Addr, "--upstream", "http://"+ln.Addr().String())

	get := func(path, key, reqID string, hdr ...string) reply {
		t.Helper()
		return e.get(path, key, append([]string{"X-Request-ID", reqID}, hdr...)...)
	}
	statusError := tracepb.Status_STATUS_CODE_ERROR

	// The purge epoch is read from Redis once, by the subscription's
	// resync or by the first request that needs it, whichever comes first:
	// a request of another dealer and key (103, a key no subtest uses)
	// reads it now, so that the miss's tree holds the miss's own Redis
	// calls. On a loaded box the subscription came late and the miss read
	// the epoch itself (an extra "redis SETNX+GET epoch").
	if r := get("/dealer/REWIND/listing?page_size=1", fake.BenchKey(5), "tr-warm"); r.status != 200 {
		t.Fatalf("the first request: %d %s", r.status, r.body)
	}

	t.Run("miss", func(t *testing.T) {
		r := get("/dealer/REWIND/listing?page_size=3", "demo-key-alpha", "tr-miss")
		if r.status != 200 || r.header.Get("X-Cache") != "MISS" {
			t.Fatalf("status %d X-Cache %q", r.status, r.header.Get("X-Cache"))
		}
		tr := recv.trace(t, "tr-miss", func(tr spanTree) bool { return tr.has("GET inventory") && tr.has("GET dealers") })
		root := tr.root
		want := map[string]string{
			"http.route": "/dealer/{service}/listing", "http.response.status_code": "200", "edge.cache": "MISS",
			"edge.dealer_id": "101", "edge.request_id": "tr-miss", "http.request.method": "GET",
		}
		for k, v := range want {
			if got := attr(root, k); got != v {
				t.Errorf("server span %s = %q, want %q", k, got, v)
			}
		}
		if root.Name != "GET /dealer/{service}/listing" || root.Kind != tracepb.Span_SPAN_KIND_SERVER || len(root.ParentSpanId) != 0 {
			t.Errorf("server span %q kind %v parent %x", root.Name, root.Kind, root.ParentSpanId)
		}
		for _, c := range []struct{ span, under string }{
			{"auth key lookup", root.Name},
			{"GET dealers", "auth key lookup"},
			{"ratelimit redis EVALSHA", root.Name},
			{"cache fill", root.Name},
			{"GET inventory", "cache fill"},
			// The listing keeps stale-if-error beyond stale-while-revalidate:
			// its L2 read is a GETEX ("How long Redis keeps an entry").
			{"redis GETEX", root.Name},
			{"redis SET", root.Name},
			{"redis EVALSHA", root.Name},
		} {
			s := tr.named(c.span)
			if len(s) == 0 || !tr.under(s[0], c.under) {
				t.Errorf("want %q under %q in:\n%s", c.span, c.under, tr)
			}
		}
		var kinds []string
		for _, s := range tr.spans {
			// The first script a fresh redis-server is sent is not known
			// to it yet: EVALSHA's NOSCRIPT is followed by EVAL.
			if strings.HasPrefix(s.Name, "redis ") && s.Name != "redis EVAL" {
				kinds = append(kinds, s.Name+" "+attr(s, "cache.redis_key"))
			}
		}
		slices.Sort(kinds)
		if want := []string{"redis EVALSHA entry", "redis GETEX entry", "redis SET lock", "redis SETNX+GET generation"}; !slices.Equal(kinds, want) {
			t.Errorf("cache Redis calls %v, want %v", kinds, want)
		}
		if n := len(tr.named("GET dealers")); n != 2 {
			t.Errorf("%d dealers calls, want the key and the dealer profile", n)
		}
		inv := tr.named("GET inventory")[0]
		if attr(inv, "upstream.service") != "inventory" || attr(inv, "http.response.status_code") != "200" || inv.Kind != tracepb.Span_SPAN_KIND_CLIENT {
			t.Errorf("inventory span %v kind %v", attrs(inv), inv.Kind)
		}
		// The inventory call carried the traceparent of its own span.
		wantTP := fmt.Sprintf("00-%x-%x-01", inv.TraceId, inv.SpanId)
		mu.Lock()
		found := false
		for _, c := range calls {
			found = found || (strings.HasPrefix(c.path, "/inventory/") && c.traceparent == wantTP)
		}
		mu.Unlock()
		if !found {
			t.Errorf("no inventory call with traceparent %s", wantTP)
		}
	})

	t.Run("hit", func(t *testing.T) {
		r := get("/dealer/REWIND/listing?page_size=3", "demo-key-alpha", "tr-hit")
		if r.status != 200 || r.header.Get("X-Cache") != "HIT" {
			t.Fatalf("status %d X-Cache %q", r.status, r.header.Get("X-Cache"))
		}
		tr := recv.trace(t, "tr-hit", func(spanTree) bool { return true })
		if attr(tr.root, "edge.cache") != "HIT" || attr(tr.root, "edge.dealer_id") != "101" {
			t.Errorf("server span %v", attrs(tr.root))
		}
		for _, s := range tr.spans {
			if s != tr.root && s.Name != "ratelimit redis EVALSHA" {
				t.Errorf("a hit did %q:\n%s", s.Name, tr)
			}
		}
	})

	t.Run("hub", func(t *testing.T) {
		r := get("/dealer/content/hub?page_size=2", "demo-key-alpha", "tr-hub")
		if r.status != 200 {
			t.Fatalf("status %d", r.status)
		}
		tr := recv.trace(t, "tr-hub", func(tr spanTree) bool { return len(tr.named("GET content")) >= 6 })
		var fill []*tracepb.Span
		for _, s := range tr.children(tr.root) {
			if s.Name == "cache fill" {
				fill = append(fill, s)
			}
		}
		if len(fill) != 1 {
			t.Fatalf("want one fill of the hub in:\n%s", tr)
		}
		var sections []string
		for _, s := range tr.children(fill[0]) {
			if strings.HasPrefix(s.Name, "hub section ") {
				sections = append(sections, attr(s, "edge.section"))
			}
		}
		// Each section made its content call (through the dealer's view
		// of the type, a cache entry of its own).
		for _, c := range tr.named("GET content") {
			if p := tr.parentOf(c); p == nil || p.Name != "cache fill" || !strings.HasPrefix(tr.parentOf(p).Name, "hub section ") {
				t.Errorf("content call outside a section's fill:\n%s", tr)
			}
		}
		slices.Sort(sections)
		if want := []string{"faq", "glossary", "guides", "news", "podcasts", "videos"}; !slices.Equal(sections, want) {
			t.Errorf("hub sections %v, want %v:\n%s", sections, want, tr)
		}
	})

	t.Run("search", func(t *testing.T) {
		r := get("/dealer/content/search?q=noleggio", "demo-key-alpha", "tr-search")
		if r.status != 200 {
			t.Fatalf("status %d", r.status)
		}
		tr := recv.trace(t, "tr-search", func(tr spanTree) bool { return len(tr.named("GET content")) >= 6 })
		var sections []string
		for _, s := range tr.spans {
			if strings.HasPrefix(s.Name, "search section ") {
				sections = append(sections, attr(s, "edge.section"))
				if p := tr.parentOf(s); p == nil || p.Name != "cache fill" {
					t.Errorf("%s not under the search's fill:\n%s", s.Name, tr)
				}
			}
		}
		slices.Sort(sections)
		if want := []string{"faq", "glossary", "guides", "news", "podcasts", "videos"}; !slices.Equal(sections, want) {
			t.Errorf("search sections %v, want %v:\n%s", sections, want, tr)
		}
		for _, c := range tr.named("GET content") {
			if !strings.HasPrefix(ancestorSection(tr, c), "search section ") {
				t.Errorf("content call outside a search section:\n%s", tr)
			}
		}
	})

	t.Run("unknown path", func(t *testing.T) {
		r := e.do("GET", e.base+"/dealer/"+strings.Repeat("x", 2000), "X-Request-ID", "tr-404")
		if r.status != 404 {
			t.Fatalf("status %d", r.status)
		}
		tr := recv.trace(t, "tr-404", func(spanTree) bool { return true })
		a := attrs(tr.root)
		if tr.root.Name != "GET" || a["http.route"] != "" || len(a["url.path"]) != 256 || a["edge.problem_code"] != "not_found" || a["http.response.status_code"] != "404" {
			t.Errorf("server span %q %v", tr.root.Name, a)
		}
	})

	t.Run("failed upstream and breaker refusal", func(t *testing.T) {
		fk.SetDown("inventory", true)
		defer fk.SetDown("inventory", false)
		var last spanTree
		for i := range 7 {
			id := fmt.Sprintf("tr-fail-%d", i)
			r := get(fmt.Sprintf("/dealer/NOS/listing?page_size=%d", 10+i), "demo-key-alpha", id)
			if r.status != 503 {
				t.Fatalf("%s: status %d, want 503", id, r.status)
			}
			tr := recv.trace(t, id, func(tr spanTree) bool { return tr.has("GET inventory") })
			if tr.root.GetStatus().GetCode() != statusError || attr(tr.root, "http.response.status_code") != "503" {
				t.Errorf("%s: server span status %v attrs %v", id, tr.root.GetStatus(), attrs(tr.root))
			}
			inv := tr.named("GET inventory")[0]
			if inv.GetStatus().GetCode() != statusError {
				t.Errorf("%s: inventory span not failed: %v", id, attrs(inv))
			}
			if i == 0 && (attr(inv, "http.response.status_code") != "503" || attr(inv, "error.type") != "unavailable") {
				t.Errorf("first failed call: %v", attrs(inv))
			}
			last = tr
		}
		// By now the breaker is open: the last call was refused without a request.
		inv := last.named("GET inventory")[0]
		if attr(inv, "upstream.breaker_refused") != "true" || attr(inv, "http.response.status_code") != "" {
			t.Errorf("last call not a breaker refusal: %v", attrs(inv))
		}
	})

	t.Run("client trace kept", func(t *testing.T) {
		const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
		const parent = "00f067aa0ba902b7"
		mu.Lock()
		calls = nil
		mu.Unlock()
		r := get("/dealer/content/faq/listing?page_size=2", "demo-key-beta", "tr-client",
			"traceparent", "00-"+traceID+"-"+parent+"-01", "tracestate", "vendor=abc,other=x")
		if r.status != 200 {
			t.Fatalf("status %d", r.status)
		}
		tr := recv.trace(t, "tr-client", func(tr spanTree) bool { return tr.has("GET content") })
		if hex.EncodeToString(tr.root.TraceId) != traceID || hex.EncodeToString(tr.root.ParentSpanId) != parent {
			t.Errorf("server span trace %x parent %x, want %s %s", tr.root.TraceId, tr.root.ParentSpanId, traceID, parent)
		}
		if tr.root.TraceState != "vendor=abc,other=x" {
			t.Errorf("server span tracestate %q", tr.root.TraceState)
		}
		mu.Lock()
		got := calls
		calls = nil
		mu.Unlock()
		if len(got) == 0 {
			t.Fatal("no upstream call")
		}
		for _, c := range got {
			if !strings.HasPrefix(c.traceparent, "00-"+traceID+"-") || c.traceparent == "00-"+traceID+"-"+parent+"-01" || c.tracestate != "vendor=abc,other=x" {
				t.Errorf("%s: traceparent %q tracestate %q", c.path, c.traceparent, c.tracestate)
			}
		}

		// A client's unsampled trace is not traced, and still passed on.
		r = get("/dealer/content/news/listing?page_size=2", "demo-key-beta", "tr-unsampled",
			"traceparent", "00-"+traceID+"-"+parent+"-00", "tracestate", "vendor=abc")
		mu.Lock()
		got = calls
		mu.Unlock()
		if r.status != 200 || len(got) == 0 {
			t.Fatalf("status %d, %d calls", r.status, len(got))
		}
		for _, c := range got {
			if c.traceparent != "00-"+traceID+"-"+parent+"-00" || c.tracestate != "vendor=abc" {
				t.Errorf("unsampled: %s: traceparent %q tracestate %q", c.path, c.traceparent, c.tracestate)
			}
		}
	})

	// W3C Trace Context 3.2.4: a traceparent of a later version is parsed
	// at version 00's positions and continued as version 00; 3.2.2.5:
	// flags other than sampled are set to zero, in the spans and in the
	// calls' traceparent (README, "Propagation"). Before 2026-11-27 such a
	// request started a new trace, and a version-00 client's undefined
	// flag bits were copied into its spans and passed on.
	t.Run("future version continued as 00", func(t *testing.T) {
		const traceID = "5bf92f3577b34da6a3ce929d0e0e4737"
		const parent = "10f067aa0ba902b8"
		// Keys not used before: each request looks its key up (GET dealers).
		for _, c := range []struct{ name, key, reqID, tp string }{
			{"version cc with a field more", "demo-key-gamma", "tr-future", "cc-" + traceID + "-" + parent + "-0b-" + "future-field"},
			{"version 00, undefined flags", "bench-key-007", "tr-flags", "00-" + traceID + "-" + parent + "-ff"},
		} {
			mu.Lock()
			calls = nil
			mu.Unlock()
			r := get("/dealer/content/faq/listing?page_size=3", c.key, c.reqID, "traceparent", c.tp, "tracestate", "vendor=abc")
			if r.status != 200 {
				t.Fatalf("%s: status %d", c.name, r.status)
			}
			tr := recv.trace(t, c.reqID, func(tr spanTree) bool { return tr.has("GET dealers") })
			if hex.EncodeToString(tr.root.TraceId) != traceID || hex.EncodeToString(tr.root.ParentSpanId) != parent {
				t.Errorf("%s: server span trace %x parent %x, want the client's %s %s", c.name, tr.root.TraceId, tr.root.ParentSpanId, traceID, parent)
			}
			for _, sp := range append([]*tracepb.Span{tr.root}, tr.children(tr.root)...) {
				if f := sp.Flags & 0xff; f != 0x01 {
					t.Errorf("%s: span %q trace flags %#02x, want 0x01 (sampled only)", c.name, sp.Name, f)
				}
			}
			mu.Lock()
			got := calls
			mu.Unlock()
			if len(got) == 0 {
				t.Fatalf("%s: no upstream call", c.name)
			}
			for _, u := range got {
				if !strings.HasPrefix(u.traceparent, "00-"+traceID+"-") || !strings.HasSuffix(u.traceparent, "-01") || len(u.traceparent) != 55 || u.tracestate != "vendor=abc" {
					t.Errorf("%s: %s: traceparent %q tracestate %q, want version 00 of the client's trace, flags 01", c.name, u.path, u.traceparent, u.tracestate)
				}
			}
		}
	})

	// Resource: the variables won over the file, key by key.
	recv.mu.Lock()
	res := map[string]string{}
	for _, kv := range recv.resource {
		res[kv.Key] = anyString(kv.Value)
	}
	spans := slices.Clone(recv.spans)
	recv.mu.Unlock()
	if res["service.name"] != "edge-under-test" || res["team"] != "edge team" || res["deployment.environment.name"] != "test" {
		t.Errorf("resource %v", res)
	}

	// No API key, nor a hash of one, in any attribute.
	secret := []byte(configs.Default().Auth.KeyHashSecret)
	var needles []string
	for _, key := range []string{"demo-key-alpha", "demo-key-beta"} {
		sum := sha256.Sum256([]byte(key))
		m := hmac.New(sha256.New, secret)
		m.Write([]byte(key))
		mac := m.Sum(nil)
		needles = append(needles, key, hex.EncodeToString(sum[:])[:16], hex.EncodeToString(mac)[:16],
			base64.StdEncoding.EncodeToString(sum[:])[:16], base64.StdEncoding.EncodeToString(mac)[:16])
	}
	for _, s := range spans {
		for k, v := range attrs(s) {
			for _, n := range needles {
				if strings.Contains(strings.ToLower(v), strings.ToLower(n)) {
					t.Errorf("span %s attribute %s holds a key or key hash: %q", s.Name, k, v)
				}
			}
		}
		for _, ev := range s.Events {
			t.Errorf("span %s has an event %q (errors are recorded by class, not text)", s.Name, ev.Name)
		}
	}
}

// TestCheckConfigTracingEnv: --check-config (and start-up) validate the
// OTEL_* variables with the tracing section, naming the bad one.
func TestCheckConfigTracingEnv(t *testing.T) {
	for _, c := range []struct {
		name, key, value, want string
		code                   int
	}{
		{"valid", "OTEL_TRACES_SAMPLER", "always_on", "", 0},
		{"ratio not a number", "OTEL_TRACES_SAMPLER_ARG", "half", "OTEL_TRACES_SAMPLER_ARG", 2},
		{"ratio out of range", "OTEL_TRACES_SAMPLER_ARG", "2", "OTEL_TRACES_SAMPLER_ARG", 2},
		{"unknown sampler", "OTEL_TRACES_SAMPLER", "jaeger_remote", "OTEL_TRACES_SAMPLER", 2},
		{"endpoint not a URL", "OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318", "OTEL_EXPORTER_OTLP_ENDPOINT", 2},
		{"bad resource attributes", "OTEL_RESOURCE_ATTRIBUTES", "novalue", "OTEL_RESOURCE_ATTRIBUTES", 2},
		{"exporter timeout not milliseconds", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "10s", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", 2},
		{"unknown compression", "OTEL_EXPORTER_OTLP_COMPRESSION", "zstd", "OTEL_EXPORTER_OTLP_COMPRESSION", 2},
		{"valid headers", "OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20x", "", 0},
		// With tracing off (configs/example.json has no endpoint) the
		// sampler variables of other SDKs do not stop the start
		// (tracing.TestSamplerVariablesIgnoredWhenTracingOff).
		{"jaeger sampler, tracing off", "OTEL_TRACES_SAMPLER", "parentbased_jaeger_remote", "", 0},
		{"jaeger sampler argument, tracing off", "OTEL_TRACES_SAMPLER_ARG", "endpoint=http://jaeger:5778,pollingIntervalMs=5000", "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.HasSuffix(c.name, "tracing off") {
				// Tracing on, so the tracing variables all count.
				t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
			}
			t.Setenv(c.key, c.value)
			var stderr strings.Builder
			code := run([]string{"--check-config", "../../configs/example.json", "--upstream", "http://127.0.0.1:9"}, io.Discard, &stderr, nil)
			if code != c.code || !strings.Contains(stderr.String(), c.want) {
				t.Errorf("exit %d, stderr %q; want %d naming %q", code, stderr.String(), c.code, c.want)
			}
		})
	}
}
