package fake

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// DefaultSeed is the seed used when Options.Seed is zero.
const DefaultSeed = 20240601

// Options configures a Server. The zero value is a fast, healthy fake with
// the default data.
type Options struct {
	// Seed selects the generated data: the same seed gives byte-identical
	// answers in every process. Zero selects DefaultSeed.
	Seed int64
	// Latency is added to every answer of every service (see SetLatency).
	// Zero adds none.
	Latency time.Duration
	// FailRate is the probability, 0 to 1, that any service answers 500
	// (see SetFailRate). Zero never fails; values outside [0, 1] are
	// clamped.
	FailRate float64
	// ExtraKeys adds that many active keys, LoadKey(0) .. LoadKey(n-1), to
	// the dealers service (for key index scale tests); zero adds none.
	ExtraKeys int
	// FleetDealers adds that many dealers, FleetDealerID(0) ..
	// FleetDealerID(n-1), each with Alpha Motori's inventory sizes (330
	// REWIND and 215 NOS vehicles, 64 NLT offers; their own generated
	// records) and one active key, FleetKey(i): the listing space of a
	// fleet, for benchmarks whose working set must exceed a large L1
	// (bench/run.sh, BENCH_ONLY=fleet). Zero adds none; at most
	// MaxFleetDealers.
	FleetDealers int
	// KeyLogRetention is how many changes the key change feed keeps;
	// an older cursor is answered 410. Zero selects DefaultKeyLogRetention.
	KeyLogRetention int
}

// faults is the fault injection state of one service; every field is
// atomic, so it can change while requests are being served.
type faults struct {
	latency  atomic.Int64  // nanoseconds
	failRate atomic.Uint64 // math.Float64bits
	down     atomic.Bool
	reset    atomic.Bool
	calls    atomic.Int64
}

// ContentTypeService returns the fault-injection name of one content type
// of the content service, "content:<type>" (e.g. "content:videos"). The
// Set* methods, Calls and the control endpoint accept it like a service
// name: its faults apply to the content requests of that type only, on top
// of the faults of "content", which apply to every type.
func ContentTypeService(contentType string) string {
	return upstream.SvcContent + ":" + contentType
}

// Server is the set of fake internal services (dealers, inventory,
// catalog, media, content) behind one fasthttp handler. It is safe for
// concurrent use, including the Set* methods while serving.
type Server struct {
	data *dataset
	keys *keyStore
	// keyLookups counts GET /dealers/v1/keys/{hash}.
	keyLookups atomic.Int64
	dataErr    error
	// faults has a fixed set of keys: upstream.Services and, for every
	// upstream.ContentTypes entry, ContentTypeService of it.
	faults map[string]*faults
	// typeFaults holds the same per-type entries keyed by the bare content
	// type, for the request path.
	typeFaults map[string]*faults

	rngMu sync.Mutex
	rng   *rand.Rand // fault injection draws

	// contentBodies memoises encoded content answers (contentKey ->
	// []byte); contentStored counts the stores against maxContentBodies.
	contentBodies sync.Map
	contentStored atomic.Int64

	closing   chan struct{}
	closeOnce sync.Once
	delays    delays // the injected latency's timer

	mu   sync.Mutex
	srv  *fasthttp.Server
	addr string
	done chan struct{}
}

// NewServer generates the data for opts.Seed and returns a Server that is
// not listening yet: use Handler with a listener of your own, or Start.
func NewServer(opts Options) *Server {
	seed := opts.Seed
	if seed == 0 {
		seed = DefaultSeed
	}
	s := &Server{
		faults:     map[string]*faults{},
		typeFaults: map[string]*faults{},
		rng:        rand.New(rand.NewPCG(uint64(seed), 0xFA17)),
		closing:    make(chan struct{}),
	}
	for _, svc := range upstream.Services {
		s.faults[svc] = &faults{}
	}
	for _, ct := range upstream.ContentTypes {
		f := &faults{}
		s.faults[ContentTypeService(ct)] = f
		s.typeFaults[ct] = f
	}
	fleet := min(max(opts.FleetDealers, 0), MaxFleetDealers)
	s.data, s.dataErr = generate(uint64(seed), fleet)
	s.keys = newKeyStore(opts.KeyLogRetention)
	if err := s.keys.loadDefaults(opts.ExtraKeys, fleet); err != nil && s.dataErr == nil {
		s.dataErr = err
	}
	s.SetLatency("", opts.Latency)
	s.SetFailRate("", opts.FailRate)
	return s
}

// each calls f with the faults of service, or of every service and every
// content type when service is "". Unknown services are ignored.
func (s *Server) each(service string, f func(*faults)) {
	if service == "" {
		for _, ft := range s.faults {
			f(ft)
		}
		return
	}
	if ft := s.faults[service]; ft != nil {
		f(ft)
	}
}

// FaultNames lists every name the Set* methods, Calls and the control
// endpoint accept: upstream.Services, then ContentTypeService of each
// upstream.ContentTypes entry.
func FaultNames() []string {
	out := append([]string(nil), upstream.Services...)
	for _, ct := range upstream.ContentTypes {
		out = append(out, ContentTypeService(ct))
	}
	return out
}

// SetLatency makes service ("" for all) wait d before every answer.
// Negative d is taken as zero.
//
// Everywhere a service name is taken, ContentTypeService names one content
// type ("content:videos"). A content request is subject to the faults of
// "content" and of its type together: it waits the longer of the two
// latencies, fails with the higher of the two fail rates (one draw), and is
// down or reset when either is.
func (s *Server) SetLatency(service string, d time.Duration) {
	d = max(d, 0)
	s.each(service, func(f *faults) { f.latency.Store(int64(d)) })
}

// SetFailRate makes service ("" for all) answer 500 with probability f,
// clamped to [0, 1].
func (s *Server) SetFailRate(service string, f float64) {
	if math.IsNaN(f) || f < 0 {
		f = 0
	}
	f = min(f, 1)
	s.each(service, func(ft *faults) { ft.failRate.Store(math.Float64bits(f)) })
}

// SetDown makes service ("" for all) answer 503 to every request while down
// is true.
func (s *Server) SetDown(service string, down bool) {
	s.each(service, func(f *faults) { f.down.Store(down) })
}

// Calls returns the number of requests service has received, including
// those answered with an injected fault. Unknown services have none. A
// ContentTypeService name counts the GET requests of that content type.
func (s *Server) Calls(service string) int64 {
	if f := s.faults[service]; f != nil {
		return f.calls.Load()
	}
	return 0
}

// ResetCalls sets every service's (and content type's) call counter to
// zero.
func (s *Server) ResetCalls() {
	s.each("", func(f *faults) { f.calls.Store(0) })
	s.keyLookups.Store(0)
}

// Handler returns the request handler of all five services.
func (s *Server) Handler() fasthttp.RequestHandler { return s.handle }

// Start listens on addr ("127.0.0.1:0" picks a free port), serves in the
// background and returns the bound address. A Server starts at most once.
func (s *Server) Start(addr string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return "", errors.New("fake: server already started")
	}
	select {
	case <-s.closing:
		return "", errors.New("fake: server closed")
	default:
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	s.srv = &fasthttp.Server{
		Handler:                      s.handle,
		Name:                         "fake-upstream",
		ReadTimeout:                  10 * time.Second,
		IdleTimeout:                  30 * time.Second,
		CloseOnShutdown:              true,
		DisablePreParseMultipartForm: true,
	}
	s.addr = ln.Addr().String()
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s.addr, nil
}

// Addr returns the address Start bound, or "" before Start.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Close stops serving: pending injected latencies end at once, the
// listener closes and in-flight requests get up to two seconds to finish.
// It is safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.closing)
		s.delays.close()
	})
	s.mu.Lock()
	srv, done := s.srv, s.done
	s.mu.Unlock()
	if srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.ShutdownWithContext(ctx)
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// fail draws whether a request fails with probability p.
func (s *Server) fail(p float64) bool {
	if p <= 0 {
		return false
	}
	if p >= 1 {
		return true
	}
	s.rngMu.Lock()
	x := s.rng.Float64()
	s.rngMu.Unlock()
	return x < p
}

// inject applies the service's faults, and for a content request those of
// its content type too; it reports whether it answered.
func (s *Server) inject(ctx *fasthttp.RequestCtx, f *faults) bool {
	var tf *faults // the content type's faults, for a content request
	if f == s.faults[upstream.SvcContent] {
		if tf = s.typeFaults[string(contentTypeOf(ctx.URI().PathOriginal()))]; tf != nil {
			tf.calls.Add(1)
		}
	}
	d := time.Duration(f.latency.Load())
	if tf != nil {
		d = max(d, time.Duration(tf.latency.Load()))
	}
	if d > 0 {
		s.delays.wait(d, s.closing)
	}
	// The other faults are read after the wait, so that a change made
	// meanwhile applies.
	reset, down, failRate := f.reset.Load(), f.down.Load(), math.Float64frombits(f.failRate.Load())
	if tf != nil {
		reset = reset || tf.reset.Load()
		down = down || tf.down.Load()
		failRate = max(failRate, math.Float64frombits(tf.failRate.Load()))
	}
	if reset {
		resetConn(ctx)
		return true
	}
	if down {
		writeError(ctx, fasthttp.StatusServiceUnavailable, "service down")
		return true
	}
	if s.fail(failRate) {
		writeError(ctx, fasthttp.StatusInternalServerError, "injected failure")
		return true
	}
	return false
}

// contentPrefix is the path prefix of content requests:
// /content/v1/dealers/{id}/{type}.
var contentPrefix = []byte("/content/v1/dealers/")

// contentTypeOf returns the {type} segment of a content request path, or
// nil when p is not of that shape.
func contentTypeOf(p []byte) []byte {
	if bytes.IndexByte(p, '%') >= 0 {
		seg, ok := segments(p)
		if !ok || len(seg) != 5 || seg[0] != upstream.SvcContent || seg[1] != "v1" || seg[2] != "dealers" {
			return nil
		}
		return []byte(seg[4])
	}
	rest, ok := bytes.CutPrefix(p, contentPrefix)
	if !ok {
		return nil
	}
	i := bytes.IndexByte(rest, '/')
	if i < 0 || bytes.IndexByte(rest[i+1:], '/') >= 0 {
		return nil
	}
	return rest[i+1:]
}

func writeJSON(ctx *fasthttp.RequestCtx, body []byte) {
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
}

func writeError(ctx *fasthttp.RequestCtx, status int, msg string) {
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBodyString(`{"error":"` + msg + `"}`)
}
