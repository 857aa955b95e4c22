package aggregator

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// panicOneType panics in Content for one content type only (a mapping or
// decoding bug that one type's data triggers).
type panicOneType struct {
	Backend
	ct string
}

func (b panicOneType) Content(ctx context.Context, d int64, ct string, f upstream.ContentFilter) ([]upstream.ContentRecord, error) {
	if ct == b.ct {
		panic("boom in section " + ct)
	}
	return b.Backend.Content(ctx, d, ct, f)
}

// TestHubSectionPanicLogged: README, Reliability: "a panic in a fill
// or a fan-out goroutine: ... stack logged once, process keeps serving";
// guard's doc: "the request's failure path logs the stack once". A panic in
// one hub section makes a partial hub (200, X-Edge-Partial), and the
// partial path logs nothing: the panic, repeated on every hub request, is
// invisible to the operator.
func TestHubSectionPanicLogged(t *testing.T) {
	s := newBenchServer(t, true)
	s.backend = panicOneType{Backend: s.backend, ct: "podcasts"}
	var logs lockedBuffer
	s.log = slog.New(slog.NewJSONHandler(&logs, nil))
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI("/dealer/content/hub")
	ctx.Request.Header.Set("X-Api-Key", "demo-key-alpha")
	s.Handler()(&ctx)
	if ctx.Response.StatusCode() != 200 || string(ctx.Response.Header.Peek("X-Edge-Partial")) != "true" {
		t.Fatalf("hub: %d partial %q", ctx.Response.StatusCode(), ctx.Response.Header.Peek("X-Edge-Partial"))
	}
	if !strings.Contains(logs.String(), "boom in section podcasts") {
		t.Errorf("a hub section panicked and was served partial, but no log line names the panic:\n%.1500s", logs.String())
	}
}
