package aggregator

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/contracttests/procs"
	"github.com/dealer-edge/dealer-edge/upstream"
)

// panickyBackend panics in the methods named in panics.
type panickyBackend struct {
	Backend
	panics sync.Map // method name -> struct{}
}

func (b *panickyBackend) maybe(method string) {
	if _, ok := b.panics.Load(method); ok {
		panic("boom in " + method)
	}
}

func (b *panickyBackend) ListVehicles(ctx context.Context, d int64, q upstream.VehicleQuery) (upstream.VehiclePage, error) {
	b.maybe("ListVehicles")
	return b.Backend.ListVehicles(ctx, d, q)
}

func (b *panickyBackend) Vehicle(ctx context.Context, d int64, svc, id string) (upstream.Vehicle, error) {
	b.maybe("Vehicle")
	return b.Backend.Vehicle(ctx, d, svc, id)
}

func (b *panickyBackend) VehicleMedia(ctx context.Context, d int64, id string) (upstream.Media, error) {
	b.maybe("VehicleMedia")
	return b.Backend.VehicleMedia(ctx, d, id)
}

func (b *panickyBackend) Content(ctx context.Context, d int64, ct string, f upstream.ContentFilter) ([]upstream.ContentRecord, error) {
	b.maybe("Content")
	return b.Backend.Content(ctx, d, ct, f)
}

// lockedBuffer collects log output for concurrent readers.
type lockedBuffer = procs.Buffer

// TestPanicsInFillsAndFanOut: a panic on a goroutine of the request path
// (the shared fill of the cache, a fan-out branch, the media call) is a
// 500 internal_error with no internals in the body and its stack in the
// log, and the process keeps serving. Without the guards the test binary
// itself would crash.
func TestPanicsInFillsAndFanOut(t *testing.T) {
	s := newBenchServer(t, true)
	pb := &panickyBackend{Backend: s.backend}
	s.backend = pb
	var logs lockedBuffer
	s.log = slog.New(slog.NewJSONHandler(&logs, nil))
	h := s.Handler()
	get := func(uri string) (int, string, []byte) {
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI(uri)
		ctx.Request.Header.Set("X-Api-Key", "bench-key-000")
		h(&ctx)
		return ctx.Response.StatusCode(), string(ctx.Response.Header.Peek("X-Edge-Partial")), append([]byte(nil), ctx.Response.Body()...)
	}
	st, _, body := get("/dealer/REWIND/listing?page_size=1")
	if st != 200 {
		t.Fatalf("listing: %d %s", st, body)
	}
	var page struct {
		Items []struct {
			IDAuto string `json:"id_auto"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &page); err != nil || len(page.Items) != 1 {
		t.Fatalf("listing body: %v %s", err, body)
	}
	id := page.Items[0].IDAuto

	cases := []struct {
		name, method, uri string
		status            int
		partial           bool
	}{
		{"cache fill (singleflight goroutine)", "ListVehicles", "/dealer/REWIND/listing?page=9", 500, false},
		{"hub fan-out branches", "Content", "/dealer/content/hub?page_size=4", 500, false},
		{"search fan-out branches", "Content", "/dealer/content/search?q=auto", 500, false},
		{"vehicle detail, inventory branch", "Vehicle", "/dealer/REWIND/details?id_auto=" + id, 500, false},
		{"vehicle detail, media goroutine (optional part)", "VehicleMedia", "/dealer/REWIND/details?id_auto=" + id, 200, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pb.panics.Store(c.method, struct{}{})
			defer pb.panics.Delete(c.method)
			st, partial, body := get(c.uri)
			if c.partial {
				// The media call is optional: a panic there is a failed
				// part, so the detail is served partial - never a crash.
				if st != 200 || partial != "true" {
					t.Fatalf("status %d, X-Edge-Partial %q: %s", st, partial, body)
				}
				// Served partial, and the panic logged all the same (it
				// was not: no failure path runs for a partial answer).
				if !strings.Contains(logs.String(), "boom in "+c.method) {
					t.Errorf("the %s panic was served partial and not logged:\n%.2000s", c.method, logs.String())
				}
				return
			}
			if st != c.status {
				t.Fatalf("status %d, want %d: %s", st, c.status, body)
			}
			var p struct {
				Code   string `json:"code"`
				Detail string `json:"detail"`
			}
			if err := json.Unmarshal(body, &p); err != nil || p.Code != codeInternal {
				t.Fatalf("problem %s (%v)", body, err)
			}
			for _, leak := range []string{"boom", "goroutine", ".go:", "panic"} {
				if strings.Contains(string(body), leak) {
					t.Errorf("body leaks %q: %s", leak, body)
				}
			}
		})
	}
	if !strings.Contains(logs.String(), `"msg":"panic"`) || !strings.Contains(logs.String(), "boom in") {
		t.Errorf("no panic log line with the value:\n%.2000s", logs.String())
	}
	if st, _, body := get("/dealer/REWIND/listing?page_size=1"); st != 200 {
		t.Fatalf("after the panics: %d %s", st, body)
	}
}
