package ops

import (
	"context"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Request describes one finished public request, for the access log and
// metrics (cmd/dealer-edge copies aggregator.RequestInfo into it). It
// carries no API key and no key hash, so neither can reach a log line.
type Request struct {
	Method    []byte
	Route     string
	Status    int
	Code      string // problem code, "" on success
	Cache     string // X-Cache: HIT, MISS, STALE, BYPASS or ""
	DealerID  int64  // 0 before authentication
	RequestID []byte // only read during the call
	Duration  time.Duration
}

// LogOptions configure Logs. All of them may change while the edge runs
// (Logs.Update).
type LogOptions struct {
	// Level is the minimum level of event logs; access lines ignore it.
	Level slog.Level
	// AccessLog turns the access log on.
	AccessLog bool
	// AccessSample is the fraction (0 to 1) of 2xx and 3xx requests that
	// are logged; 4xx and 5xx requests are always logged (within
	// MaxLinesPerSec).
	AccessSample float64
	// MaxLinesPerSec caps access lines, as a token bucket holding one
	// second's worth; 0 means no cap. Dropped lines are counted
	// (edge_log_lines_dropped_total) and the next line written is
	// preceded by a "log lines dropped" warning with their number.
	MaxLinesPerSec int
	// MaxEventLinesPerSec caps event lines the same way, in a budget of
	// their own, so that no flood of access lines can hide a state change
	// (a breaker opening, the limiter falling back). Dropped event lines
	// are counted in edge_log_lines_dropped_total and
	// edge_log_event_lines_dropped_total.
	MaxEventLinesPerSec int
}

// Logs writes the edge's structured JSON logs: event logs through Logger
// and access lines through Access, each behind its own line-rate limit.
type Logs struct {
	out         slog.Handler // JSON to the writer; Handle does not check levels
	level       slog.LevelVar
	access      atomic.Bool
	sample      atomic.Uint64 // math.Float64bits of AccessSample
	bucket      lineBucket    // access lines
	eventBucket lineBucket    // event lines
	metrics     *Metrics
	event       *slog.Logger
}

// NewLogs returns logs written as JSON lines to w. m, when not nil,
// counts dropped lines.
func NewLogs(w io.Writer, o LogOptions, m *Metrics) *Logs {
	l := &Logs{metrics: m}
	l.out = slog.NewJSONHandler(w, &slog.HandlerOptions{Level: &l.level})
	l.Update(o)
	l.event = slog.New(&limitedHandler{logs: l, next: l.out})
	return l
}

// Update installs new options; lines already admitted are unaffected.
func (l *Logs) Update(o LogOptions) {
	l.level.Set(o.Level)
	l.access.Store(o.AccessLog)
	l.sample.Store(math.Float64bits(min(max(o.AccessSample, 0), 1)))
	l.bucket.setRate(o.MaxLinesPerSec)
	l.eventBucket.setRate(o.MaxEventLinesPerSec)
}

// Logger returns the event logger (JSON, rate-limited).
func (l *Logs) Logger() *slog.Logger { return l.event }

// Access writes the access line of one request, unless the access log is
// off, the request is sampled out (2xx/3xx only) or the line rate is
// exhausted. A request that is not logged costs a few atomic loads and
// allocates nothing.
func (l *Logs) Access(r *Request) {
	if !l.access.Load() {
		return
	}
	if r.Status < 400 {
		if s := math.Float64frombits(l.sample.Load()); s < 1 && (s <= 0 || rand.Float64() >= s) {
			return
		}
	}
	now := time.Now()
	if !l.admit(&l.bucket, now, false) {
		return
	}
	lvl := slog.LevelInfo
	if r.Status >= 500 {
		lvl = slog.LevelError
	}
	rec := slog.NewRecord(now, lvl, "access", 0)
	rec.AddAttrs(
		slog.String("request_id", string(r.RequestID)),
		slog.String("method", methodString(r.Method)),
		slog.String("route", r.Route),
		slog.Int("status", r.Status),
		slog.Float64("duration_ms", float64(r.Duration.Microseconds())/1000),
		slog.String("cache", r.Cache),
	)
	if r.DealerID != 0 {
		rec.AddAttrs(slog.Int64("dealer_id", r.DealerID))
	}
	if r.Code != "" {
		rec.AddAttrs(slog.String("code", r.Code))
	}
	_ = l.out.Handle(context.Background(), rec)
}

// methodString returns the method without allocating for the usual ones.
func methodString(b []byte) string {
	switch string(b) {
	case "GET":
		return "GET"
	case "HEAD":
		return "HEAD"
	case "POST":
		return "POST"
	case "PUT":
		return "PUT"
	case "DELETE":
		return "DELETE"
	case "OPTIONS":
		return "OPTIONS"
	case "PATCH":
		return "PATCH"
	}
	if len(b) > 16 {
		b = b[:16]
	}
	return string(b)
}

// admit takes a line from bucket (the access or the event budget); when
// lines of that kind were dropped before this one, it first writes how
// many.
func (l *Logs) admit(b *lineBucket, now time.Time, event bool) bool {
	ok, dropped := b.take(now)
	if !ok {
		if l.metrics != nil {
			l.metrics.LogLineDropped()
			if event {
				l.metrics.LogEventLineDropped()
			}
		}
		return false
	}
	if dropped > 0 {
		rec := slog.NewRecord(now, slog.LevelWarn, "log lines dropped", 0)
		if event {
			rec.AddAttrs(slog.Uint64("dropped", dropped), slog.String("kind", "event"), slog.String("reason", "log.max_event_lines_per_sec"))
		} else {
			rec.AddAttrs(slog.Uint64("dropped", dropped), slog.String("kind", "access"), slog.String("reason", "log.max_lines_per_sec"))
		}
		_ = l.out.Handle(context.Background(), rec)
	}
	return true
}

// limitedHandler puts event logs behind their line-rate limit.
type limitedHandler struct {
	logs *Logs
	next slog.Handler
}

func (h *limitedHandler) Enabled(ctx context.Context, lvl slog.Level) bool {
	return h.next.Enabled(ctx, lvl)
}

func (h *limitedHandler) Handle(ctx context.Context, r slog.Record) error {
	if !h.logs.admit(&h.logs.eventBucket, r.Time, true) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h *limitedHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &limitedHandler{logs: h.logs, next: h.next.WithAttrs(as)}
}

func (h *limitedHandler) WithGroup(name string) slog.Handler {
	return &limitedHandler{logs: h.logs, next: h.next.WithGroup(name)}
}

// lineBucket is a token bucket of log lines: rate per second, holding at
// most one second's worth (and at least two lines). A rate of 0 admits
// everything.
type lineBucket struct {
	rate    atomic.Int64
	mu      sync.Mutex
	tokens  float64
	last    time.Time
	dropped uint64 // since the last admitted line
}

func (b *lineBucket) setRate(perSec int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rate.Store(int64(max(perSec, 0)))
	b.tokens = min(b.tokens, float64(perSec))
}

// take admits one line at now, or counts it as dropped. When it admits,
// it also returns how many lines were dropped since the last admitted one.
func (b *lineBucket) take(now time.Time) (ok bool, dropped uint64) {
	rate := b.rate.Load()
	b.mu.Lock()
	defer b.mu.Unlock()
	if rate > 0 {
		// The "log lines dropped" notice written before the next admitted
		// line is a line too: it costs a token, so notices and lines
		// together stay within the rate (the bucket holds at least two, so
		// a rate of 1 can still write a notice and its line).
		capacity := float64(max(rate, 2))
		if b.last.IsZero() {
			b.tokens = capacity
		} else if el := now.Sub(b.last); el > 0 {
			b.tokens = min(capacity, b.tokens+el.Seconds()*float64(rate))
		}
		if now.After(b.last) {
			b.last = now
		}
		need := 1.0
		if b.dropped > 0 {
			need = 2
		}
		if b.tokens < need {
			b.dropped++
			return false, 0
		}
		b.tokens -= need
	}
	dropped, b.dropped = b.dropped, 0
	return true, dropped
}
