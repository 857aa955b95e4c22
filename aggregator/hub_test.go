package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// failingContent fails the content service for one content type only.
type failingContent struct {
	Backend
	failType string
}

func (f failingContent) Content(ctx context.Context, dealerID int64, ct string, flt upstream.ContentFilter) ([]upstream.ContentRecord, error) {
	if ct == f.failType {
		return nil, fmt.Errorf("test: %w", upstream.ErrUnavailable)
	}
	return f.Backend.Content(ctx, dealerID, ct, flt)
}

// TestHubDegradesWithoutOneSection: a failing section is left out, the
// hub is marked partial and not cached.
func TestHubDegradesWithoutOneSection(t *testing.T) {
	s := newBenchServer(t, true)
	s.backend = failingContent{Backend: s.backend, failType: "videos"}
	h := s.Handler()
	checkHubWithoutVideos(t, h)
	// Search is all-or-nothing.
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI("/dealer/content/search?q=fiat")
	ctx.Request.Header.Set("X-Api-Key", "demo-key-alpha")
	h(&ctx)
	if ctx.Response.StatusCode() != 503 {
		t.Errorf("search with a failing type: %d", ctx.Response.StatusCode())
	}
}

// checkHubWithoutVideos asks for the hub twice with the videos section
// failing: both answers are 200, partial, not cached, and hold the other
// five sections.
func checkHubWithoutVideos(t *testing.T, h fasthttp.RequestHandler) {
	t.Helper()
	for i := 0; i < 2; i++ {
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI("/dealer/content/hub")
		ctx.Request.Header.Set("X-Api-Key", "demo-key-alpha")
		h(&ctx)
		if ctx.Response.StatusCode() != 200 || string(ctx.Response.Header.Peek("X-Edge-Partial")) != "true" || string(ctx.Response.Header.Peek("X-Cache")) != "BYPASS" {
			t.Fatalf("status %d partial %q cache %q: %s", ctx.Response.StatusCode(), ctx.Response.Header.Peek("X-Edge-Partial"), ctx.Response.Header.Peek("X-Cache"), ctx.Response.Body())
		}
		var hub struct {
			Sections map[string]json.RawMessage `json:"sections"`
		}
		if err := json.Unmarshal(ctx.Response.Body(), &hub); err != nil {
			t.Fatal(err)
		}
		if _, ok := hub.Sections["videos"]; ok || len(hub.Sections) != 5 {
			t.Errorf("sections: %d, videos present %v", len(hub.Sections), ok)
		}
	}
}
