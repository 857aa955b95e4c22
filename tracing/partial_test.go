package tracing

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// partialReceiver is an OTLP/HTTP traces endpoint that decodes each
// request with the collector's own message type and answers 200 with a
// partial success rejecting up to reject of its spans, as a collector
// whose processor refuses some spans does.
type partialReceiver struct {
	srv                *httptest.Server
	reject             int
	message            string
	received, rejected atomic.Int64
}

func startPartialReceiver(t *testing.T, reject int, message string) *partialReceiver {
	t.Helper()
	r := &partialReceiver{reject: reject, message: message}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var msg coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &msg); err != nil {
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		n := 0
		for _, rs := range msg.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				n += len(ss.Spans)
			}
		}
		rej := min(r.reject, n)
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{
			PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: int64(rej), ErrorMessage: r.message},
		})
		r.rejected.Add(int64(rej))
		r.received.Add(int64(n))
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// TestPartialSuccessCounted: spans a collector refuses in an OTLP partial
// success (a 200 whose ExportTraceServiceResponse has rejected_spans) are
// counted as dropped, reason rejected, and the collector's message reaches
// Options.OnError (the event log) once, however many batches it refuses
// within a minute (README, "Tracing" and the metrics table). Before
// 2026-11-27 the answer was read and thrown away: the spans were lost
// uncounted and unsaid.
func TestPartialSuccessCounted(t *testing.T) {
	r := startPartialReceiver(t, 2, "span name too long")
	var mu sync.Mutex
	var reported []error
	tr, err := New(Config{TracesEndpoint: r.srv.URL, Sampler: SamplerAlwaysOn},
		Options{BatchTimeout: 10 * time.Millisecond, OnError: func(err error) {
			mu.Lock()
			reported = append(reported, err)
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tr.Shutdown(context.Background()) }()

	// Three batches of 5 spans, each answered by rejecting 2.
	for wave := 1; wave <= 3; wave++ {
		for range 5 {
			_, sp := tr.Tracer().Start(context.Background(), "x")
			sp.End()
		}
		deadline := time.Now().Add(5 * time.Second)
		for r.received.Load() < int64(5*wave) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		// The count follows the answer: wait for the exporter to read it.
		for tr.Dropped().Rejected < uint64(r.rejected.Load()) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	if r.received.Load() != 15 {
		t.Fatalf("the collector received %d spans, want 15", r.received.Load())
	}
	want := Dropped{Rejected: uint64(r.rejected.Load())}
	if d := tr.Dropped(); d != want || want.Rejected < 6 {
		t.Errorf("dropped %+v, want %+v: every span the collector rejected (%d) counted, reason rejected", d, want, r.rejected.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 1 {
		t.Fatalf("%d reports %v, want 1: the first partial success at once, the next ones not within the minute", len(reported), reported)
	}
	if msg := reported[0].Error(); !strings.Contains(msg, "span name too long") || !strings.Contains(msg, "rejected 2 of") {
		t.Errorf("report %q, want the collector's message and count", msg)
	}
}

// TestPartialReporterRateLimited: a report says how many partial
// successes and spans went unreported since the previous one.
func TestPartialReporterRateLimited(t *testing.T) {
	var got []string
	p := partialReporter{handle: func(err error) { got = append(got, err.Error()) }, every: time.Hour}
	p.report(2, 10, "a")
	p.report(3, 10, "b")
	p.report(4, 10, "c")
	if len(got) != 1 {
		t.Fatalf("%d reports within the interval, want 1: %q", len(got), got)
	}
	p.last = time.Now().Add(-2 * time.Hour)
	p.report(1, 5, "d")
	if len(got) != 2 || !strings.Contains(got[1], `rejected 1 of 5 spans`) || !strings.Contains(got[1], `"d"`) ||
		!strings.Contains(got[1], "8 spans in 3 such answers") {
		t.Errorf("report after the interval %q, want the last answer and the 8 spans of the 3 answers since the first report", got)
	}
}

// TestParsePartialSuccess reads what the collector's own message type
// marshals, skipping fields it does not know.
func TestParsePartialSuccess(t *testing.T) {
	marshal := func(m *coltracepb.ExportTraceServiceResponse) []byte {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	unknown := protowire.AppendTag(nil, 7, protowire.BytesType)
	unknown = protowire.AppendString(unknown, "future")
	// 601 bytes whose 513th (index 512) is the second byte of an "é":
	// the message is cut before that character, not inside it.
	longOdd := "x" + strings.Repeat("é", 300)
	for _, c := range []struct {
		name  string
		body  []byte
		want  partialSuccess
		found bool
	}{
		{"empty body (full success)", nil, partialSuccess{}, false},
		{"empty response", marshal(&coltracepb.ExportTraceServiceResponse{}), partialSuccess{}, false},
		{"rejected with message", marshal(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 3, ErrorMessage: "quota"}}), partialSuccess{3, "quota"}, true},
		{"warning only", marshal(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{ErrorMessage: "slow down"}}), partialSuccess{0, "slow down"}, true},
		{"unknown field first", append(unknown, marshal(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 1}})...), partialSuccess{1, ""}, true},
		{"message cut at a character", marshal(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 1, ErrorMessage: longOdd}}), partialSuccess{1, longOdd[:511]}, true},
		{"not protobuf", []byte("<html>bad gateway</html>"), partialSuccess{}, false},
		{"cut short", marshal(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 3, ErrorMessage: "quota"}})[:4], partialSuccess{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, found := parsePartialSuccess(c.body)
			if got != c.want || found != c.found {
				t.Errorf("got %+v %v, want %+v %v", got, found, c.want, c.found)
			}
		})
	}
}

// TestPartialSuccessOnlyFromProtobuf: a 2xx that is not protobuf (a JSON
// answer, a proxy's page) is no partial success, and a rejected count over
// the batch is clamped to it.
func TestPartialSuccessOnlyFromProtobuf(t *testing.T) {
	for _, c := range []struct {
		name, ct string
		rejected int64
		want     uint64
	}{
		{"protobuf", "application/x-protobuf", 1, 1},
		{"protobuf with parameter", "application/x-protobuf; charset=binary", 1, 1},
		{"json", "application/json", 1, 0},
		{"more than sent", "application/x-protobuf", 1000, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				_, _ = io.Copy(io.Discard, req.Body)
				out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: c.rejected}})
				w.Header().Set("Content-Type", c.ct)
				_, _ = w.Write(out)
			}))
			defer srv.Close()
			e, err := newExporter(srv.URL, ExportConfig{})
			if err != nil {
				t.Fatal(err)
			}
			e.drops = &drops{}
			var reports int
			e.partial.handle = func(error) { reports++ }
			if err := e.ExportSpans(context.Background(), recorded(t)); err != nil { // 2 spans
				t.Fatal(err)
			}
			if got := e.drops.rejected.Load(); got != c.want {
				t.Errorf("rejected %d, want %d", got, c.want)
			}
			if (reports == 1) != (c.want > 0) {
				t.Errorf("%d reports", reports)
			}
		})
	}
}

// TestSpansAfterShutdownCounted: a span that ends once tracing has begun
// shutting down (here while its final flush waits on the collector) is
// counted as dropped, reason shutdown, and every span ended is either
// received by the collector or counted once. Before 2026-11-27 the batch
// processor, stopped, dropped such spans without a word.
func TestSpansAfterShutdownCounted(t *testing.T) {
	var received atomic.Int64
	arrived := make(chan struct{}, 16)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var msg coltracepb.ExportTraceServiceRequest
		if proto.Unmarshal(b, &msg) == nil {
			for _, rs := range msg.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					received.Add(int64(len(ss.Spans)))
				}
			}
		}
		arrived <- struct{}{}
		<-release // held until the test lets the flush go on
	}))
	defer srv.Close()
	var releaseOnce sync.Once
	letGo := func() { releaseOnce.Do(func() { close(release) }) }
	defer letGo() // before srv.Close, which waits for the held handler
	tr, err := New(Config{TracesEndpoint: srv.URL, Sampler: SamplerAlwaysOn}, Options{BatchTimeout: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	tracer := tr.Tracer() // taken before shutdown, as the edge's server holds it
	ended := 0
	end := func() {
		_, sp := tracer.Start(context.Background(), "x")
		sp.End()
		ended++
	}
	end()
	select {
	case <-arrived: // the batch processor is busy exporting it
	case <-time.After(5 * time.Second):
		t.Fatal("no export reached the collector")
	}
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- tr.Shutdown(ctx)
	}()
	// Spans end until the shutdown has begun (the first one counted),
	// then 3 more.
	deadline := time.Now().Add(5 * time.Second)
	for tr.Dropped().Shutdown == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d spans ended while shutting down, none counted: dropped %+v", ended, tr.Dropped())
		}
		end()
		time.Sleep(time.Millisecond)
	}
	before := tr.Dropped().Shutdown
	for range 3 {
		end()
	}
	if got := tr.Dropped().Shutdown; got != before+3 {
		t.Errorf("3 spans ended during the shutdown: shutdown count %d -> %d", before, got)
	}
	letGo()
	if err := <-done; err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
	d := tr.Dropped()
	if got := uint64(received.Load()) + d.QueueFull + d.ExportFailed + d.Rejected + d.Shutdown; got != uint64(ended) {
		t.Errorf("%d spans ended, %d received + dropped %+v = %d: some lost uncounted", ended, received.Load(), d, got)
	}
}

// TestExporterShutdownCounts: spans handed to the exporter after its
// Shutdown (which the batch processor does not do: it shuts the exporter
// down after its last export) are counted, not sent.
func TestExporterShutdownCounts(t *testing.T) {
	r := startReceiver(t)
	e, _ := newExporter(r.srv.URL, ExportConfig{})
	e.drops = &drops{}
	_ = e.Shutdown(context.Background())
	if err := e.ExportSpans(context.Background(), recorded(t)); err != nil || r.calls.Load() != 0 {
		t.Errorf("after shutdown: %v, %d calls", err, r.calls.Load())
	}
	if got := e.drops.shutdown.Load(); got != 2 {
		t.Errorf("after shutdown, 2 spans handed over: %d counted, want 2", got)
	}
}
