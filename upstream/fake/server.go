package fake

import (
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

// Server is the set of fake internal services (dealers, inventory,
// catalog, media, content) behind one fasthttp handler. It is safe for
// concurrent use, including the Set* methods while serving.
type Server struct {
	data    *dataset
	dataErr error
	faults  map[string]*faults // fixed set of keys: upstream.Services

	rngMu sync.Mutex
	rng   *rand.Rand // fault injection draws

	// contentBodies memoises encoded content answers (contentKey ->
	// []byte); contentStored counts the stores against maxContentBodies.
	contentBodies sync.Map
	contentStored atomic.Int64

	closing   chan struct{}
	closeOnce sync.Once

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
		faults:  map[string]*faults{},
		rng:     rand.New(rand.NewPCG(uint64(seed), 0xFA17)),
		closing: make(chan struct{}),
	}
	for _, svc := range upstream.Services {
		s.faults[svc] = &faults{}
	}
	s.data, s.dataErr = generate(uint64(seed))
	s.SetLatency("", opts.Latency)
	s.SetFailRate("", opts.FailRate)
	return s
}

// each calls f with the faults of service, or of every service when
// service is "". Unknown services are ignored.
func (s *Server) each(service string, f func(*faults)) {
	if service == "" {
		for _, svc := range upstream.Services {
			f(s.faults[svc])
		}
		return
	}
	if ft := s.faults[service]; ft != nil {
		f(ft)
	}
}

// SetLatency makes service ("" for all) wait d before every answer.
// Negative d is taken as zero.
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
// those answered with an injected fault. Unknown services have none.
func (s *Server) Calls(service string) int64 {
	if f := s.faults[service]; f != nil {
		return f.calls.Load()
	}
	return 0
}

// ResetCalls sets every service's call counter to zero.
func (s *Server) ResetCalls() {
	s.each("", func(f *faults) { f.calls.Store(0) })
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
	s.closeOnce.Do(func() { close(s.closing) })
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

// inject applies the service's faults; it reports whether it answered.
func (s *Server) inject(ctx *fasthttp.RequestCtx, f *faults) bool {
	if d := time.Duration(f.latency.Load()); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-s.closing:
			t.Stop()
		}
	}
	if f.reset.Load() {
		resetConn(ctx)
		return true
	}
	if f.down.Load() {
		writeError(ctx, fasthttp.StatusServiceUnavailable, "service down")
		return true
	}
	if s.fail(math.Float64frombits(f.failRate.Load())) {
		writeError(ctx, fasthttp.StatusInternalServerError, "injected failure")
		return true
	}
	return false
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
