package ops

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/internal/syncbuf"
)

// syncBuffer is a log sink safe for concurrent writers.
type syncBuffer struct{ syncbuf.Buffer }

func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, ln := range strings.Split(strings.TrimSpace(s.String()), "\n") {
		if ln == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(ln), &m); err != nil {
			t.Fatalf("log line is not JSON: %q: %v", ln, err)
		}
		out = append(out, m)
	}
	return out
}

func TestAccessSampling(t *testing.T) {
	cases := []struct {
		name   string
		opts   LogOptions
		status int
		want   int // lines out of 100 requests
	}{
		{"off", LogOptions{AccessLog: false, AccessSample: 1}, 500, 0},
		{"all successes", LogOptions{AccessLog: true, AccessSample: 1}, 200, 100},
		{"no successes", LogOptions{AccessLog: true, AccessSample: 0}, 200, 0},
		{"no redirects", LogOptions{AccessLog: true, AccessSample: 0}, 304, 0},
		{"client errors always", LogOptions{AccessLog: true, AccessSample: 0}, 429, 100},
		{"server errors always", LogOptions{AccessLog: true, AccessSample: 0}, 503, 100},
		{"level does not gate access lines", LogOptions{AccessLog: true, AccessSample: 1, Level: slog.LevelError}, 200, 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf syncBuffer
			l := NewLogs(&buf, c.opts, nil)
			for range 100 {
				l.Access(&Request{Method: []byte("GET"), Route: "content_hub", Status: c.status, RequestID: []byte("r1")})
			}
			if got := len(buf.lines(t)); got != c.want {
				t.Errorf("%d lines, want %d", got, c.want)
			}
		})
	}
	t.Run("fraction", func(t *testing.T) {
		var buf syncBuffer
		l := NewLogs(&buf, LogOptions{AccessLog: true, AccessSample: 0.25}, nil)
		for range 4000 {
			l.Access(&Request{Method: []byte("GET"), Route: "content_hub", Status: 200, RequestID: []byte("r1")})
		}
		if got := len(buf.lines(t)); got < 700 || got > 1300 {
			t.Errorf("%d of 4000 lines at sample 0.25", got)
		}
	})
}

func TestAccessLineFields(t *testing.T) {
	var buf syncBuffer
	l := NewLogs(&buf, LogOptions{AccessLog: true, AccessSample: 1}, nil)
	l.Access(&Request{Method: []byte("GET"), Route: "inventory_listing", Status: 503, Code: "service_unavailable", Cache: "MISS",
		DealerID: 101, RequestID: []byte("req-1"), Duration: 1500 * time.Microsecond})
	lines := buf.lines(t)
	if len(lines) != 1 {
		t.Fatalf("%d lines", len(lines))
	}
	want := map[string]any{
		"msg": "access", "level": "ERROR", "request_id": "req-1", "method": "GET", "route": "inventory_listing",
		"status": 503.0, "duration_ms": 1.5, "cache": "MISS", "dealer_id": 101.0, "code": "service_unavailable",
	}
	for k, v := range want {
		if lines[0][k] != v {
			t.Errorf("%s = %v, want %v", k, lines[0][k], v)
		}
	}
}

func TestLineRateLimit(t *testing.T) {
	var buf syncBuffer
	m := NewMetrics(MetricsOptions{})
	l := NewLogs(&buf, LogOptions{AccessLog: true, AccessSample: 1, MaxLinesPerSec: 10, MaxEventLinesPerSec: 10}, m)
	for range 200 {
		l.Access(&Request{Method: []byte("GET"), Route: "x", Status: 500, RequestID: []byte("r")})
		l.Logger().Error("upstream failure", "service", "inventory")
	}
	got := len(buf.lines(t))
	// Each bucket holds 10 lines and refills at 10/s: a tight loop gets
	// through about 10 of each.
	if got < 20 || got > 26 {
		t.Fatalf("%d lines written from a flood of 2 x 200 with caps of 10/s each", got)
	}
	if d := metricValue(t, scrape(m), "edge_log_lines_dropped_total"); d != float64(400-got) {
		t.Errorf("edge_log_lines_dropped_total = %v, want %d", d, 400-got)
	}
	if d := metricValue(t, scrape(m), "edge_log_event_lines_dropped_total"); d < 180 || d > 190 {
		t.Errorf("edge_log_event_lines_dropped_total = %v, want about 190", d)
	}

	// Once the bucket refills, the next line is preceded by a note of
	// how many were dropped.
	ok, dropped := l.bucket.take(time.Now().Add(2 * time.Second))
	if !ok || dropped < 180 {
		t.Fatalf("after refill: ok=%v dropped=%d", ok, dropped)
	}
	l.eventBucket.dropped = 5
	time.Sleep(250 * time.Millisecond) // refill at least two tokens
	l.Logger().Warn("after the flood")
	lines := buf.lines(t)
	last2 := lines[len(lines)-2:]
	if last2[0]["msg"] != "log lines dropped" || last2[0]["dropped"] != 5.0 || last2[0]["kind"] != "event" || last2[1]["msg"] != "after the flood" {
		t.Errorf("last lines: %v", last2)
	}
}

// TestAccessFloodNeverHidesEvents: access lines far over their budget
// (a 401 flood) leave the event budget untouched: every state change is
// written, and the access lines stay within their cap.
func TestAccessFloodNeverHidesEvents(t *testing.T) {
	for _, tc := range []struct {
		name                string
		access, event, want int // caps and the event lines expected
	}{
		{"default caps", 200, 100, 20},
		{"tiny access cap", 1, 100, 20},
		{"no event cap", 5, 0, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf syncBuffer
			m := NewMetrics(MetricsOptions{})
			l := NewLogs(&buf, LogOptions{AccessLog: true, AccessSample: 1, MaxLinesPerSec: tc.access, MaxEventLinesPerSec: tc.event}, m)
			for i := range 20_000 {
				l.Access(&Request{Method: []byte("GET"), Route: "x", Status: 401, Code: "invalid_api_key", RequestID: []byte("r")})
				if i%1000 == 0 {
					l.Logger().Warn("breaker state change", "service", "dealers", "from", "closed", "to", "open", "n", i)
				}
			}
			events, access := 0, 0
			for _, line := range buf.lines(t) {
				switch line["msg"] {
				case "breaker state change":
					events++
				case "access":
					access++
				}
			}
			if events != tc.want {
				t.Errorf("%d breaker lines written, want all %d", events, tc.want)
			}
			if access > max(tc.access, 2)+tc.access {
				t.Errorf("%d access lines written with a cap of %d/s", access, tc.access)
			}
			if d := metricValue(t, scrape(m), "edge_log_event_lines_dropped_total"); d != 0 {
				t.Errorf("edge_log_event_lines_dropped_total = %v", d)
			}
		})
	}
}

func TestUpdateLevelAndSample(t *testing.T) {
	var buf syncBuffer
	l := NewLogs(&buf, LogOptions{Level: slog.LevelWarn, AccessLog: true, AccessSample: 0}, nil)
	l.Logger().Info("hidden")
	l.Access(&Request{Status: 200})
	l.Update(LogOptions{Level: slog.LevelInfo, AccessLog: true, AccessSample: 1})
	l.Logger().Info("shown")
	l.Access(&Request{Status: 200})
	lines := buf.lines(t)
	if len(lines) != 2 || lines[0]["msg"] != "shown" || lines[1]["msg"] != "access" {
		t.Errorf("lines after update: %v", lines)
	}
}

// TestLineRateLimitCountsNotices: under a sustained flood, the lines
// written, "log lines dropped" notices included, stay within the cap.
func TestLineRateLimitCountsNotices(t *testing.T) {
	for _, rate := range []int{1, 10, 200} {
		var b lineBucket
		b.setRate(rate)
		start := time.Unix(1_700_000_000, 0)
		const seconds, perSec = 5, 2000
		written := 0
		for i := range seconds * perSec {
			ok, dropped := b.take(start.Add(time.Duration(i) * time.Second / perSec))
			if ok {
				written++
				if dropped > 0 {
					written++ // the notice
				}
			}
		}
		if limit := rate*seconds + max(rate, 2); written > limit {
			t.Errorf("rate %d/s: %d lines written in %ds of flood, limit %d", rate, written, seconds, limit)
		}
		if written < rate*seconds/2 {
			t.Errorf("rate %d/s: only %d lines written in %ds", rate, written, seconds)
		}
	}
}
