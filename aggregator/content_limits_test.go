package aggregator

// Limits of the content endpoints against a misbehaving or slow content
// service: records per answer, the request's budget, call chains.

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// contentProxy forwards every call to the fake but answers the content
// calls of one type with body() when it is not nil.
func contentProxy(t *testing.T, ct string, body *atomic.Pointer[[]byte], hits *atomic.Int64) func(string) string {
	return interceptingProxy(t, func(w http.ResponseWriter, r *http.Request) bool {
		b := body.Load()
		if b == nil || !strings.HasPrefix(r.URL.Path, "/content/") || !strings.HasSuffix(r.URL.Path, "/"+ct) {
			return false
		}
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(*b)
		return true
	})
}

func reviewGet(h fasthttp.RequestHandler, uri string) (int, []byte) {
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI(uri)
	ctx.Request.Header.Set("X-Api-Key", "demo-key-alpha")
	h(&ctx)
	return ctx.Response.StatusCode(), append([]byte(nil), ctx.Response.Body()...)
}

// TestTinyRecordsMemory: a content answer within the 32 MiB body
// limit made of empty records (`{}`, 3 bytes each) must not make the edge
// allocate hundreds of times the answer's size.
func TestTinyRecordsMemory(t *testing.T) {
	const bodyBytes = 4 << 20
	n := bodyBytes / 3
	var b bytes.Buffer
	b.WriteString(`{"items":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{}`)
	}
	b.WriteString(`]}`)
	body := b.Bytes()
	var ptr atomic.Pointer[[]byte]
	var hits atomic.Int64
	s := newBenchServerVia(t, true, nil, cache.Options{}, contentProxy(t, "faq", &ptr, &hits))
	s.log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	h := s.Handler()
	if sc, out := reviewGet(h, "/dealer/content/news/listing"); sc != 200 {
		t.Fatalf("warm-up: %d %s", sc, out)
	}
	ptr.Store(&body)
	var a, z runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	sc, out := reviewGet(h, "/dealer/content/faq/listing?page_size=1")
	runtime.ReadMemStats(&z)
	alloc := z.TotalAlloc - a.TotalAlloc
	t.Logf("answer of %d MiB (%d records): %d, %d upstream hits, edge allocated %d MiB: %.200s", len(body)>>20, n, sc, hits.Load(), alloc>>20, out)
	for i := 2; i <= 3; i++ {
		runtime.GC()
		runtime.ReadMemStats(&a)
		sc2, out2 := reviewGet(h, "/dealer/content/faq/listing?page_size=1&page="+string(rune('0'+i)))
		runtime.ReadMemStats(&z)
		t.Logf("page %d: %d, %d upstream hits, edge allocated %d MiB: %.120s", i, sc2, hits.Load(), (z.TotalAlloc-a.TotalAlloc)>>20, out2)
	}
	if sc == 500 {
		t.Errorf("the first request: 500 internal_error (a bare context deadline exceeded from the view's flight)")
	}
	if alloc > 256<<20 {
		t.Errorf("a %d MiB content answer of %d empty records made the edge allocate %d MiB (%dx the answer; at the 32 MiB body limit about %d GiB per call)",
			len(body)>>20, n, alloc>>20, alloc/uint64(len(body)), alloc*8>>30)
	}
}

// TestNewsDetailChainWithinBudget: the content service answers
// every call in 700 ms, under its 800 ms timeout (upstream.timeouts.content)
// and request_timeout (2 s), which configs/README says must exceed the
// longest chain of upstream timeouts, "content" being one call. A cold
// news detail of an edition readable by slug only makes three content
// calls one after the other (the view, the slug-only slugs, the full
// read): 2.1 s, past the request's budget. With the service well within
// its own timeout, the detail must be served.
func TestNewsDetailChainWithinBudget(t *testing.T) {
	e := newViewEnv(t, nil)
	slug := archiveNewsSlug(t, e)
	e.mustGet(t, "/dealer/NOS/listing?page_size=1") // resolve the key
	e.fake.SetLatency(fake.ContentTypeService("news"), 700*time.Millisecond)
	start := time.Now()
	sc, _, body := e.get(t, "/dealer/content/news/details?slug="+slug)
	t.Logf("%d after %v, %d news calls: %.160s", sc, time.Since(start).Round(time.Millisecond), e.calls("news"), body)
	if sc != 200 {
		t.Errorf("cold detail of a readable news edition, service answering in 700 ms (timeout 800 ms): %d %s", sc, body)
	}
}

// slowViewContent answers the content calls of one type only after a
// pause that ignores the caller's deadline, as decoding, ordering and
// encoding a large answer on a busy CPU does (the real client bounds the
// call, not the work after it).
type slowViewContent struct {
	Backend
	ct   string
	slow atomic.Bool
}

func (b *slowViewContent) Content(ctx context.Context, dealerID int64, ct string, f upstream.ContentFilter) ([]upstream.ContentRecord, error) {
	recs, err := b.Backend.Content(ctx, dealerID, ct, f)
	if ct == b.ct && b.slow.Load() {
		time.Sleep(2200 * time.Millisecond)
	}
	return recs, err
}

// TestSlowViewBuildIsNotInternalError: a content listing whose
// view takes longer to build than server.request_timeout (2 s) while a
// stale copy of the page is within its stale-if-error window. The fill's
// wait for the view's flight ends with a bare context.DeadlineExceeded,
// which fail() maps to 500 internal_error (logged at ERROR as "internal
// error") and ServeStaleOn does not accept, so the stale page is not
// served either. The request ran out of upstream budget: 503 (or the
// stale page), as for an upstream call cut by the same deadline.
func TestSlowViewBuildIsNotInternalError(t *testing.T) {
	s := newBenchServer(t, true)
	b := &slowViewContent{Backend: s.backend, ct: "faq"}
	s.backend = b
	st := DefaultSettings()
	st.Limits["bench"] = s.settings.Load().Limits["bench"]
	st.ContentCache["faq"] = cache.Policy{TTL: 100 * time.Millisecond, StaleWhileRevalidate: 0, StaleIfError: time.Hour}
	if err := s.UpdateSettings(st); err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	if sc, body := reviewGet(h, "/dealer/content/faq/listing"); sc != 200 {
		t.Fatalf("first fill: %d %s", sc, body)
	}
	time.Sleep(150 * time.Millisecond) // page and view expired; the page within stale-if-error
	b.slow.Store(true)
	sc, body := reviewGet(h, "/dealer/content/faq/listing")
	t.Logf("%d %.200s", sc, body)
	if sc == 500 {
		t.Errorf("a view build past request_timeout with a stale page at hand: 500 internal_error, want the stale page or 503")
	}
}

// TestDeadlineIsUnavailable: the request's deadline passing while a fill
// waited on something that is not an upstream call (a coalesced fill, a
// content view's flight) is the backends not answering in time: 503
// service_unavailable and stale-if-error, never 500 internal_error.
func TestDeadlineIsUnavailable(t *testing.T) {
	for _, err := range []error{context.DeadlineExceeded, fmt.Errorf("cache: waiting for the fill: %w", context.DeadlineExceeded)} {
		if !ServeStaleOn(err) {
			t.Errorf("ServeStaleOn(%v) = false, want a stale answer allowed", err)
		}
		s := newBenchServer(t, true)
		var ctx fasthttp.RequestCtx
		s.fail(&ctx, &reqState{}, err)
		if sc := ctx.Response.StatusCode(); sc != fasthttp.StatusServiceUnavailable {
			t.Errorf("fail(%v): %d %s, want 503", err, sc, ctx.Response.Body())
		}
	}
	if ServeStaleOn(context.Canceled) {
		t.Error("ServeStaleOn(context.Canceled): a client that left is no reason for a stale answer")
	}
}

// TestProblemDropsBodyHeaders: a problem written after an answer's headers
// (a failure late in a request) carries none that describe that answer's
// body: no coding, no partial mark, no tag, no cache state.
func TestProblemDropsBodyHeaders(t *testing.T) {
	s := newBenchServer(t, true)
	var ctx fasthttp.RequestCtx
	for _, h := range []string{"Content-Encoding", "X-Edge-Partial", "ETag", "X-Cache"} {
		ctx.Response.Header.Set(h, "x")
	}
	rs := &reqState{cache: "HIT"}
	s.fail(&ctx, rs, upstream.ErrUnavailable)
	if rs.cache != "" {
		t.Errorf("problem answer counted under cache %q", rs.cache)
	}
	for _, h := range []string{"Content-Encoding", "X-Edge-Partial", "ETag", "X-Cache"} {
		if v := ctx.Response.Header.Peek(h); len(v) > 0 {
			t.Errorf("problem answer carries %s: %s", h, v)
		}
	}
}
