package aggregator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/internal/syncbuf"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// lockedBuf is a goroutine-safe log sink of JSON lines.
type lockedBuf struct{ syncbuf.Buffer }

// lines returns the logged lines whose msg is msg, decoded.
func (b *lockedBuf) lines(t *testing.T, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(b.String(), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line not JSON: %s", l)
		}
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// TestIndexSyncFailureLoggedWhileLoading: with the dealers service down
// at start the index stays "loading" (no state change) and every keyed
// request is answered 503; the sync's failure is logged at once, with its
// kind, and not again for every failed sync; the first good sync is
// logged too. Before 2026-11-27 nothing was logged until the service came
// back (TestIndexSyncFailureLogRate has the rate limit's steps).
func TestIndexSyncFailureLoggedWhileLoading(t *testing.T) {
	var logs lockedBuf
	e := newIndexEdge(t, fake.Options{}, func(s *Settings) { s.IndexInterval = 20 * time.Millisecond; s.IndexStaleAfter = time.Second }, true,
		func(o *Options) { o.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) })
	e.fk.SetDown(upstream.SvcDealers, true)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.s.RunKeyIndex(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for end := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("%s: not within 10 s; logs:\n%s", what, logs.String())
			}
		}
	}
	waitFor("a failing sync logged", func() bool { return len(logs.lines(t, "key index sync failing")) > 0 })
	// Ten more failed syncs: still one line.
	n := e.s.AuthStats().IndexErrors
	waitFor("10 more failed syncs", func() bool { return e.s.AuthStats().IndexErrors >= n+10 })
	fails := logs.lines(t, "key index sync failing")
	if len(fails) != 1 {
		t.Fatalf("%d \"key index sync failing\" lines for %d failed syncs, want 1 (rate-limited):\n%s", len(fails), e.s.AuthStats().IndexErrors, logs.String())
	}
	if l := fails[0]; l["level"] != "WARN" || l["state"] != IndexLoading || l["error_kind"] == "" || l["error_kind"] == nil || l["failures"] != 1.0 {
		t.Fatalf("failure line %v", l)
	}
	if st := e.s.AuthStats(); st.IndexState != IndexLoading {
		t.Fatalf("state %q with the service down", st.IndexState)
	}

	e.fk.SetDown(upstream.SvcDealers, false)
	waitFor("the recovery logged", func() bool { return len(logs.lines(t, "key index sync recovered")) > 0 })
	rec := logs.lines(t, "key index sync recovered")[0]
	if rec["state"] != IndexFresh || rec["failures"].(float64) < 11 {
		t.Fatalf("recovery line %v", rec)
	}
	if sl := logs.lines(t, "key index state"); len(sl) != 1 || sl[0]["from"] != IndexLoading || sl[0]["to"] != IndexFresh {
		t.Fatalf("state lines %v", sl)
	}
}

// TestIndexSyncFailureLogRate: a run of failing syncs logs its first, a
// change of error kind, and then one line per syncErrorLogEvery; a state
// change that carries the error counts as its line.
func TestIndexSyncFailureLogRate(t *testing.T) {
	var logs lockedBuf
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	now := t0
	ix := newKeyIndex(nil, slog.New(slog.NewJSONHandler(&logs, nil)), func() time.Time { return now })
	st := DefaultSettings()
	st.IndexInterval, st.IndexStaleAfter, st.AuthStale = 5*time.Second, 20*time.Second, 10*time.Second
	refused := fmt.Errorf("upstream dealers: %w: dial tcp4 10.1.2.3:9090: connect: connection refused", upstream.ErrUnavailable)
	status := fmt.Errorf("upstream dealers: %w: status 503", upstream.ErrUnavailable)
	breaker := fmt.Errorf("upstream dealers: %w: %w", upstream.ErrUnavailable, upstream.ErrCircuitOpen)
	for _, c := range []struct {
		name     string
		at       time.Duration // since t0
		err      error
		wantLine string // "" for none; else the msg of the line logged
		wantKind string
	}{
		{"first failure", 0, refused, "key index sync failing", "connection_refused"},
		{"same kind 5 s later", 5 * time.Second, refused, "", ""},
		{"same kind 55 s later", 55 * time.Second, refused, "", ""},
		{"new kind", 56 * time.Second, status, "key index sync failing", "status_5xx"},
		{"breaker opens", 57 * time.Second, breaker, "key index sync failing", "breaker_open"},
		{"same kind within the minute", 116 * time.Second, breaker, "", ""},
		{"same kind a minute after its line", 117 * time.Second, breaker, "key index sync failing", "breaker_open"},
		{"good sync", 120 * time.Second, nil, "key index sync recovered", ""},
		{"a new run starts with a line", 125 * time.Second, refused, "key index sync failing", "connection_refused"},
	} {
		now = t0.Add(c.at)
		before := len(logs.lines(t, "key index sync failing")) + len(logs.lines(t, "key index sync recovered"))
		if c.err == nil {
			// A good sync needs a table to count as one.
			ix.tab.Store(newIXTable(0))
			ix.lastGood.Store(now.UnixNano())
		}
		ix.report(c.err, now, st)
		fails, recs := logs.lines(t, "key index sync failing"), logs.lines(t, "key index sync recovered")
		got := len(fails) + len(recs) - before
		switch {
		case c.wantLine == "" && got != 0:
			t.Fatalf("%s: %d line(s) logged, want none:\n%s", c.name, got, logs.String())
		case c.wantLine != "" && got != 1:
			t.Fatalf("%s: %d line(s) logged, want one %q:\n%s", c.name, got, c.wantLine, logs.String())
		case c.wantLine == "key index sync failing" && fails[len(fails)-1]["error_kind"] != c.wantKind:
			t.Fatalf("%s: error_kind %v, want %s", c.name, fails[len(fails)-1]["error_kind"], c.wantKind)
		}
	}
	if l := logs.lines(t, "key index sync failing")[3]; l["not_logged"] != 1.0 || l["failures"] != 7.0 || l["failing_for_s"] != 117.0 {
		t.Fatalf("the line a minute later: %v", l)
	}
	if l := logs.lines(t, "key index sync recovered")[0]; l["failures"] != 7.0 || l["failing_for_s"] != 120.0 {
		t.Fatalf("recovery line: %v", l)
	}
}

func TestSyncErrorKind(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"refused", fmt.Errorf("upstream dealers: %w: dial tcp4 10.1.2.3:9090: connect: connection refused", upstream.ErrUnavailable), "connection_refused"},
		{"service timeout", fmt.Errorf("upstream dealers: %w: timeout after 2s", upstream.ErrUnavailable), "timeout"},
		{"deadline", fmt.Errorf("upstream dealers: %w: %w", upstream.ErrUnavailable, context.DeadlineExceeded), "timeout"},
		{"breaker", fmt.Errorf("upstream dealers: %w: %w", upstream.ErrUnavailable, upstream.ErrCircuitOpen), "breaker_open"},
		{"503", fmt.Errorf("upstream dealers: %w: status 503", upstream.ErrUnavailable), "status_5xx"},
		{"400", fmt.Errorf("upstream dealers: %w: status 400", upstream.ErrUnavailable), "status_4xx"},
		{"cursor", fmt.Errorf("upstream dealers: %w", upstream.ErrCursorExpired), "cursor_expired"},
		{"decode", fmt.Errorf("upstream dealers: %w: decode body: malformed key index page: x at byte 3", upstream.ErrUnavailable), "malformed"},
		{"no last page", errors.New("key index snapshot: ended without a last page"), "malformed"},
		{"other", errors.New("boom"), "error"},
	} {
		if got := syncErrorKind(c.err); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
