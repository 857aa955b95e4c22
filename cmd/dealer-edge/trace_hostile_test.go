package main

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// TestHostileTraceContext sends a real edge (tracing on,
// parentbased_always_off: only a client's sampled flag samples) the
// hostile trace-context headers of the W3C test suite and a few more, and
// checks what README "Propagation" promises: every request is answered
// 200 (never a 400, a 500 or a panic), an invalid traceparent is dropped
// with its tracestate (the inventory call carries neither), a valid one is
// passed on as version 00 with the sampled flag only, and a tracestate
// with a byte outside printable ASCII is not passed on, nor one over 512
// characters whole (over 512 it is cut by list members: before 2026-11-29 it was
// dropped: the three "over 512" cases failed).
func TestHostileTraceContext(t *testing.T) {
	recv := startOTLPReceiver(t)
	fk := fake.NewServer(fake.Options{})
	type seen struct{ tp, ts string }
	var mu sync.Mutex
	calls := map[string]seen{} // inventory calls by page size
	up := serveUpstream(t, func(ctx *fasthttp.RequestCtx) {
		if strings.HasPrefix(string(ctx.Path()), "/inventory/") {
			mu.Lock()
			calls[string(ctx.QueryArgs().Peek("page_size"))] = seen{string(ctx.Request.Header.Peek("traceparent")), string(ctx.Request.Header.Peek("tracestate"))}
			mu.Unlock()
		}
		fk.Handler()(ctx)
	})
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", recv.url)
	t.Setenv("OTEL_TRACES_SAMPLER", "parentbased_always_off")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20")
	e := startEdge(t, "--upstream", up)

	const tid, sid = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	// 685 characters: a member over 128 (removed first), four of 120
	// (kept: 483 with their commas), one more of 120 (removed from the end).
	mem := func(key string, n int) string { return key + "=" + strings.Repeat("v", n-len(key)-1) }
	kept := strings.Join([]string{mem("a", 120), mem("b", 120), mem("c", 120), mem("d", 120)}, ",")
	long := mem("big", 200) + "," + kept + "," + mem("e", 120)
	// 40 short members (well within 512 characters): W3C Trace Context
	// allows 32; before 2026-11-29 all 40 were passed on, a list the
	// services refuse whole (aggregator.TestTracestateMembersBounded).
	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf("k%d=v", i))
	}
	first32 := strings.Join(many[:32], ",")
	for i, c := range []struct {
		name   string
		tp     []string
		ts     []string
		wantTP string // "": none passed on; "own": the edge's own span, in the client's trace
		wantTS string
	}{
		{"uppercase", []string{"00-" + strings.ToUpper(tid) + "-" + sid + "-01"}, []string{"a=1"}, "", ""},
		{"version ff", []string{"ff-" + tid + "-" + sid + "-01"}, []string{"a=1"}, "", ""},
		{"zero trace id", []string{"00-" + strings.Repeat("0", 32) + "-" + sid + "-01"}, []string{"a=1"}, "", ""},
		{"zero parent id", []string{"00-" + tid + "-" + strings.Repeat("0", 16) + "-01"}, []string{"a=1"}, "", ""},
		{"garbage", []string{"\xff\xfe-garbage"}, []string{"a=1"}, "", ""},
		{"too short", []string{"00-" + tid + "-" + sid + "-1"}, nil, "", ""},
		{"version 00 too long", []string{"00-" + tid + "-" + sid + "-01-" + strings.Repeat("x", 4000)}, nil, "", ""},
		{"duplicated", []string{"00-" + tid + "-" + sid + "-01", "00-" + tid + "-" + sid + "-00"}, []string{"a=1"}, "", ""},
		{"future version, long", []string{"cc-" + tid + "-" + sid + "-ff-" + strings.Repeat("x", 4000)}, []string{"a=1"}, "own", "a=1"},
		{"unsampled, undefined flags", []string{"00-" + tid + "-" + sid + "-fe"}, []string{"a=1"}, "00-" + tid + "-" + sid + "-00", "a=1"},
		// Cut by members (W3C Trace Context 3.3.1.5), not dropped whole
		// as before 2026-11-29 (aggregator.TestTracestateTruncated).
		{"unsampled, tracestate over 512", []string{"00-" + tid + "-" + sid + "-00"}, []string{long}, "00-" + tid + "-" + sid + "-00", kept},
		{"sampled, tracestate over 512", []string{"00-" + tid + "-" + sid + "-01"}, []string{long}, "own", kept},
		{"sampled, tracestate over 512 in two lines", []string{"00-" + tid + "-" + sid + "-01"}, []string{mem("big", 200) + "," + kept, mem("e", 120)}, "own", kept},
		{"unsampled, 40 short members", []string{"00-" + tid + "-" + sid + "-00"}, []string{strings.Join(many, ",")}, "00-" + tid + "-" + sid + "-00", first32},
		{"sampled, 40 short members", []string{"00-" + tid + "-" + sid + "-01"}, []string{strings.Join(many, ",")}, "own", first32},
		{"unsampled, tracestate not ASCII", []string{"00-" + tid + "-" + sid + "-00"}, []string{"a=\xff"}, "00-" + tid + "-" + sid + "-00", ""},
		{"sampled, tracestate not a list", []string{"00-" + tid + "-" + sid + "-01"}, []string{"=,=,@@"}, "own", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ps := fmt.Sprint(i + 1)
			req, err := http.NewRequest("GET", e.base+"/dealer/REWIND/listing?page_size="+ps, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Api-Key", "demo-key-alpha")
			req.Header["Traceparent"] = c.tp
			if c.ts != nil {
				req.Header["Tracestate"] = c.ts
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			mu.Lock()
			got, ok := calls[ps]
			mu.Unlock()
			if !ok {
				t.Fatal("no inventory call")
			}
			switch c.wantTP {
			case "own":
				if !strings.HasPrefix(got.tp, "00-"+tid+"-") || strings.Contains(got.tp, sid) || !strings.HasSuffix(got.tp, "-01") || len(got.tp) != 55 {
					t.Errorf("traceparent %q, want the edge's own span in the client's trace, sampled", got.tp)
				}
			default:
				if got.tp != c.wantTP {
					t.Errorf("traceparent %q, want %q", got.tp, c.wantTP)
				}
			}
			if got.ts != c.wantTS {
				t.Errorf("tracestate %q, want %q", got.ts, c.wantTS)
			}
		})
	}
}
