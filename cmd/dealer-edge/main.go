// Command dealer-edge serves the public dealer API: a caching edge in front
// of the internal dealers, inventory, catalog, media and content services.
//
//	dealer-edge --demo                      # everything embedded: fake services, in-process Redis
//	dealer-edge --upstream http://127.0.0.1:9090
//	dealer-edge --config configs/example.json [--listen ADDR] [--admin-listen ADDR] [--redis A,B,C] [--upstream URL]
//	dealer-edge --check-config FILE          # validate as start-up does: exit 0, or 2 with the error
//	dealer-edge --version
//
// Flags override the config file; without --config the built-in defaults
// apply. An empty Redis address list starts an embedded in-process Redis
// (miniredis), fine for one instance; several edges share limits and cache
// only through a real Redis, Sentinel or Cluster.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/redis/go-redis/v9"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/dealer-edge/dealer-edge/aggregator"
	"github.com/dealer-edge/dealer-edge/aggregator/ops"
	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/cache/ratelimit"
	"github.com/dealer-edge/dealer-edge/configs"
	"github.com/dealer-edge/dealer-edge/internal/gcpace"
	"github.com/dealer-edge/dealer-edge/listener"
	"github.com/dealer-edge/dealer-edge/publicshape"
	"github.com/dealer-edge/dealer-edge/tracing"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, nil))
}

// flags are the command-line options.
type flags struct {
	config      string
	demo        bool
	listen      string
	adminListen string
	redis       string
	upstream    string
	redisSet    bool
	checkConfig string
	version     bool
}

func parseFlags(args []string, stderr io.Writer) (*flags, error) {
	f := &flags{}
	fs := flag.NewFlagSet("dealer-edge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.config, "config", "", "config file (JSON); built-in defaults when empty")
	fs.BoolVar(&f.demo, "demo", false, "run on embedded defaults: in-process fake internal services and Redis, demo keys")
	fs.StringVar(&f.listen, "listen", "", "public listen address (default 127.0.0.1:8080)")
	fs.StringVar(&f.adminListen, "admin-listen", "", "admin listen address for metrics, health, purge, reload (default 127.0.0.1:9091; \"off\" disables)")
	fs.StringVar(&f.redis, "redis", "", "Redis addresses, comma-separated (one: single node; several: cluster; with redis.master_name in the config: the Sentinel addresses); empty: embedded in-process Redis")
	fs.StringVar(&f.upstream, "upstream", "", "base URL of the internal services, e.g. http://127.0.0.1:9090")
	fs.StringVar(&f.checkConfig, "check-config", "", "validate this config file exactly as start-up and reload do (the other flags apply), print the result and exit: 0 valid, 2 invalid")
	fs.BoolVar(&f.version, "version", false, "print the version, commit, build time and Go version, and exit")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "dealer-edge: unexpected argument %q\n", fs.Arg(0))
		return nil, errors.New("unexpected argument")
	}
	if f.checkConfig != "" {
		if f.config != "" && f.config != f.checkConfig {
			fmt.Fprintln(stderr, "dealer-edge: --check-config names the file to check; drop --config")
			return nil, errors.New("both --config and --check-config")
		}
		f.config = f.checkConfig
	}
	fs.Visit(func(fl *flag.Flag) {
		if fl.Name == "redis" {
			f.redisSet = true
		}
	})
	return f, nil
}

// errNoUpstream refuses a config without the internal services' address.
const errNoUpstream = "upstream.base_url (or --upstream) is required; use --demo for embedded fake services"

// hooks let tests drive run in-process; main passes nil.
type hooks struct {
	ready   chan<- *app    // receives the app once both listeners serve
	signals chan os.Signal // replaces the process' signals
	getenv  func(string) string
	// beforeWatch runs after start, before the config watch begins: where
	// a file changed after the first read and before the watch's first
	// look must still reload.
	beforeWatch func()
}

// load reads the config file named by the flags, fills secrets from their
// files, lets the flags override it and validates the result: what start,
// every reload and --check-config do. The file is validated with the flags
// applied, so a flag can replace a value the file alone would fail on.
func (f *flags) load() (*configs.Config, error) {
	cfg, err := configs.Read(f.config)
	if err != nil {
		return nil, err
	}
	f.apply(cfg)
	if err := cfg.ValidateFile(f.config); err != nil {
		return nil, err
	}
	// The OTEL_* variables go over the tracing section at start: a bad
	// one fails here, like a bad field.
	if tc, err := cfg.TracingConfig().WithEnv(os.LookupEnv); err != nil {
		return nil, err
	} else if err := tc.Validate(); err != nil {
		return nil, err
	}
	// Checked once the flags are in: --redis may bring the addresses.
	if cfg.Redis.MasterName != "" && len(cfg.Redis.Addrs) == 0 {
		return nil, errors.New("redis.master_name needs the Sentinel addresses in redis.addrs (or --redis); the embedded Redis is no Sentinel")
	}
	// As start-up requires it (before 2026-11-29 only start-up did, so a
	// file the check and a reload passed failed the next start).
	if cfg.Upstream.BaseURL == "" && !f.demo {
		return nil, errors.New(errNoUpstream)
	}
	return cfg, nil
}

func run(args []string, stdout, stderr io.Writer, h *hooks) int {
	f, err := parseFlags(args, stderr)
	if err != nil {
		return 2
	}
	id := identity()
	if f.version {
		fmt.Fprintln(stdout, id)
		return 0
	}
	// The config file and the files it names, fingerprinted before the
	// first read: the watch counts changes from these, so a file changed
	// after this read and before the watch starts reloads (a reload, too,
	// fingerprints before it reads). A file unreadable here fails the
	// load below.
	var loadedFiles map[string][32]byte
	if f.config != "" && f.checkConfig == "" {
		loadedFiles = fingerprints(configs.NamedFiles(f.config))
	}
	cfg, err := f.load()
	if f.checkConfig != "" {
		if err == nil && cfg.TLS.CertFile != "" {
			// Start-up loads the pair; so does the check.
			if _, cerr := listener.LoadCertificate(cfg.TLS.CertFile, cfg.TLS.KeyFile); cerr != nil {
				err = fmt.Errorf("tls: %w", cerr)
			}
		}
		if err == nil {
			// Start-up loads the exporter's certificate files too.
			if tc, terr := cfg.TracingConfig().WithEnv(os.LookupEnv); terr == nil {
				err = tc.CheckFiles()
			}
		}
		if err != nil {
			fmt.Fprintln(stderr, "dealer-edge: config invalid:", err)
			return 2
		}
		fmt.Fprintf(stdout, "dealer-edge: config %s is valid\n", f.checkConfig)
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "dealer-edge:", err)
		return 2
	}
	getenv := os.Getenv
	if h != nil && h.getenv != nil {
		getenv = h.getenv
	}
	sd := newNotifier(getenv)

	// Signals are caught before anything starts, so a SIGTERM during
	// startup is a clean shutdown too.
	// SIGHUP has a channel of its own: package signal drops a signal its
	// channel has no room for, and SIGHUPs queued behind a reload once
	// filled the shared one, so that a SIGTERM right after them was lost.
	// One pending SIGHUP stands for any number (the reload reads the
	// files as they are then).
	sigs := make(chan os.Signal, 4)
	hups := make(chan os.Signal, 1)
	if h != nil && h.signals != nil {
		sigs = h.signals
	} else {
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
		signal.Notify(hups, syscall.SIGHUP)
		defer signal.Stop(sigs)
		defer signal.Stop(hups)
		// A log reader that went away (a broken pipe on standard error)
		// makes writes fail with EPIPE instead of killing the process
		// undrained with SIGPIPE.
		signal.Ignore(syscall.SIGPIPE)
	}

	// The metrics exposition carries TYPE lines (process-wide switch of
	// the metrics library; main owns process-wide state).
	metrics.ExposeMetadata(true)
	mtr := ops.NewMetrics(ops.MetricsOptions{
		Routes:         append(slices.Clone(aggregator.CacheRoutes), aggregator.RouteOpenAPI, aggregator.RouteNotFound),
		Services:       upstream.Services,
		TypeBreakers:   map[string][]string{upstream.SvcContent: upstream.ContentTypes},
		ProcessMetrics: true,
		Build:          ops.BuildInfo{Version: id.Version, Commit: id.Commit, GoVersion: id.GoVersion},
	})
	logs := ops.NewLogs(stderr, cfg.LogOptions(), mtr)
	logger := logs.Logger()
	// go-redis logs pool trouble through a process-wide logger; route it
	// into the structured, rate-limited event log.
	redis.SetLogger(redisLogger{logger})
	// GODEBUG as the runtime read it at start (the shipped artefacts set
	// one: README, "Runtime settings"), so an operator sees whether it took.
	logger.Info("starting", "version", id.Version, "commit", id.Commit, "build_time", id.BuildTime, "go_version", id.GoVersion,
		"godebug", os.Getenv("GODEBUG"))
	// A soft memory limit sized from L1's hot tier (the bulk tier is
	// off-heap), so a large cache does not let the heap grow to twice its
	// size between collections (cache.MemoryLimitFor); GOMEMLIMIT, when
	// set, is the operator's and wins.
	if os.Getenv("GOMEMLIMIT") == "" && (h == nil || h.getenv == nil) { // empty is unset for the runtime (TestEmptyRuntimeVariables)
		limit := cache.MemoryLimitFor(cfg.Cache.L1MaxBytes, cfg.Cache.L1HotBytes)
		debug.SetMemoryLimit(limit)
		hot, bulk := cache.L1Tiers(cfg.Cache.L1MaxBytes, cfg.Cache.L1HotBytes)
		logger.Info("memory limit", "bytes", limit, "from", "cache.l1_max_bytes", "l1_hot_bytes", hot, "l1_bulk_bytes", bulk)
	}
	// The collector kept from collecting a small heap many times a second
	// (server.gc_min_growth_bytes); GOGC, when set, is the operator's and
	// wins. Process-wide, like the limit: not in a test run through hooks.
	if h == nil || h.getenv == nil {
		gogcSet := os.Getenv("GOGC") != "" // empty is unset for the runtime (GOGC=100)
		switch {
		case gogcSet:
			logger.Info("gc pacing", "by", "GOGC", "gogc", os.Getenv("GOGC"))
		case cfg.Server.GCMinGrowth > 0:
			pacer := gcpace.Start(uint64(cfg.Server.GCMinGrowth))
			defer pacer.Stop()
			logger.Info("gc pacing", "by", "server.gc_min_growth_bytes", "bytes", cfg.Server.GCMinGrowth, "gogc", pacer.Percent())
		default:
			logger.Info("gc pacing", "by", "go default")
		}
	}
	mtr.Set().NewGauge("edge_gc_percent", func() float64 { return float64(gcpace.Current()) })
	app, err := start(cfg, f, logger, logs, mtr, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "dealer-edge:", err)
		return 1
	}
	if h != nil && h.beforeWatch != nil {
		h.beforeWatch()
	}
	var watch *fileWatch
	if cfg.WatchInterval > 0 && f.config != "" {
		watch = startWatch(cfg.WatchInterval.D(), app.watchedFiles, app.readFiles, loadedFiles, func() {
			app.log.Info("config file changed; reloading", "file", f.config)
			_ = app.reload()
		})
	}
	if err := sd.notify("READY=1", "STATUS=serving on "+app.addr); err != nil {
		logger.Warn("sd_notify failed", "error", err.Error())
	}
	if h != nil && h.ready != nil {
		h.ready <- app
	}
	var sig os.Signal
	status := 0
wait:
	for {
		select {
		case <-hups:
			_ = app.reload()
			continue
		case sig = <-sigs:
			if sig == syscall.SIGHUP { // a test's signals (hooks)
				_ = app.reload()
				continue
			}
			break wait
		case le := <-app.serveErr:
			// A listener that stopped for good: not ready from now on,
			// and a non-zero exit so that an orchestrator restarts the
			// edge instead of keeping a process whose port is dead.
			app.ready.Store(false)
			msg := "none"
			if le.err != nil {
				msg = le.err.Error()
			}
			logger.Error("listener stopped; shutting down to be restarted", "listener", le.name, "error", msg)
			sig, status = syscall.SIGTERM, 1
			break wait
		}
	}
	logger.Info("shutting down", "signal", sig.String(), "grace_s", cfg.Server.ShutdownGrace.D().Seconds())
	_ = sd.notify("STOPPING=1", "STATUS=draining")
	if watch != nil {
		watch.close()
	}
	// A second SIGINT/SIGTERM ends the grace period at once.
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Server.ShutdownGrace.D())
	defer cancel()
	go func() {
		for {
			select {
			case s := <-sigs:
				if s != syscall.SIGHUP {
					logger.Warn("second signal: not waiting for in-flight requests", "signal", s.String())
					cancel()
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	if err := app.shutdown(ctx); err != nil {
		logger.Error("shutdown: in-flight requests did not finish within the grace period", "error", err.Error())
		return 1
	}
	logger.Info("stopped", "status", status)
	return status
}

// redisLogger writes go-redis' internal messages as warnings.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, "redis client", "message", fmt.Sprintf(format, v...))
}

// httpLogger takes the HTTP servers' own messages (fasthttp.Server.Logger,
// whose default writes plain text to standard error). fasthttp's message
// for a connection that ended in error quotes the request it could not
// parse, header values included (API keys, the admin token), even with
// SecureErrorLogMessage; so that one becomes a debug event line with the
// kind of error only (the client already got its 400/408/413/431 problem
// from the ErrorHandler). The other messages (connection limits, accept
// errors) carry no request data and are warnings.
type httpLogger struct{ log *slog.Logger }

func (l httpLogger) Printf(format string, args ...any) {
	if strings.HasPrefix(format, "error when serving connection") {
		kind := "malformed"
		if len(args) > 0 {
			if err, ok := args[len(args)-1].(error); ok {
				kind = connErrorKind(err)
			}
		}
		l.log.Debug("connection closed on a request error", "kind", kind)
		return
	}
	l.log.Warn("http server", "message", fmt.Sprintf(format, args...))
}

// connErrorKind names the class of a connection error without its text.
func connErrorKind(err error) string {
	var small *fasthttp.ErrSmallBuffer
	var ne net.Error
	switch {
	case errors.As(err, &small):
		return "header_too_large"
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		return "body_too_large"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	}
	return "malformed"
}

// apply lets the flags override the config file.
func (f *flags) apply(cfg *configs.Config) {
	if f.listen != "" {
		cfg.Listen = f.listen
	}
	if f.adminListen != "" {
		cfg.AdminListen = f.adminListen
	}
	if f.redisSet {
		cfg.Redis.Addrs = splitList(f.redis)
	}
	if f.upstream != "" {
		cfg.Upstream.BaseURL = f.upstream
	}
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// app is a running edge with everything it started.
type app struct {
	// redisCheck is pingRedis shared by its callers (ops.SharedCheck).
	redisCheck func(context.Context) error
	cfg        *configs.Config // as started (embedded addresses filled in)
	// embeddedRedis: the Redis is the in-process one (cfg's address is
	// its): both ends of its connections are this process's descriptors.
	embeddedRedis bool
	fileCfg       *configs.Config // as loaded and overridden by flags: what a reload compares with
	flags         *flags
	log           *slog.Logger
	logs          *ops.Logs
	metrics       *ops.Metrics
	addr          string
	adminAddr     string // "" when the admin listener is off
	srv           *fasthttp.Server
	adminSrv      *fasthttp.Server
	ready         atomic.Bool // /readyz: listeners up, not shutting down (see isReady)
	public        *listener.Stack
	cert          *listener.Certificate // nil without TLS
	stopping      atomic.Bool           // shutdown began: a listener ending is expected
	reloadMu      sync.Mutex
	loaded        atomic.Pointer[configs.Config] // the last config that loaded and validated
	// named are the files the config file named at the last reload,
	// rejected or not (configs.NamedFiles): watched beside the loaded
	// config's, so that a *_file that was missing reloads when it comes.
	named atomic.Pointer[[]string]
	// read are the fingerprints of named as the last reload found them
	// before reading them (readFiles).
	read atomic.Pointer[map[string][32]byte]
	// reloadHooks run on every reload with the new, validated config,
	// before its settings are installed; each either applies its part in
	// full or returns an error and changes nothing, and an error rejects
	// the reload (counted and logged like a validation error). For parts
	// wired outside the aggregator.
	reloadHooks []func(*configs.Config) error
	api         *aggregator.Server
	up          *upstream.Client
	rdb         redis.UniversalClient
	cache       *cache.Cache
	limiter     *ratelimit.Limiter
	closers     []func()
	serveErr    chan listenerErr
}

// listenerErr is a listener's Serve that returned.
type listenerErr struct {
	name string
	err  error
}

func start(cfg *configs.Config, f *flags, logger *slog.Logger, logs *ops.Logs, mtr *ops.Metrics, stdout io.Writer) (*app, error) {
	a := &app{cfg: cfg, fileCfg: cfg.Clone(), flags: f, log: logger, logs: logs, metrics: mtr, serveErr: make(chan listenerErr, 2)}
	a.loaded.Store(a.fileCfg)
	ok := false
	defer func() {
		if !ok {
			a.closeAll()
		}
	}()

	if f.demo && cfg.Upstream.BaseURL == "" {
		fk := fake.NewServer(fake.Options{})
		addr, err := fk.Start("127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("start embedded fake services: %w", err)
		}
		a.closers = append(a.closers, fk.Close)
		cfg.Upstream.BaseURL = "http://" + addr
		logger.Info("embedded fake internal services", "addr", addr)
	}
	if cfg.Upstream.BaseURL == "" {
		return nil, errors.New(errNoUpstream)
	}
	if !f.demo && cfg.Auth.KeyHashSecret == configs.Default().Auth.KeyHashSecret {
		// Published in the README and example.json: the HMAC keying the
		// auth cache and the rate limits in Redis would be a public one.
		logger.Warn("auth.key_hash_secret is the built-in placeholder: set auth.key_hash_secret_file (or auth.key_hash_secret) to a random secret of your own, the same on every edge sharing a Redis")
	}

	if len(cfg.Redis.Addrs) == 0 {
		er, err := startEmbeddedRedis(cfg.Redis.EmbeddedMaxBytes, cfg.Redis.DB, mtr.EmbeddedRedisEvicted)
		if err != nil {
			return nil, fmt.Errorf("start embedded redis: %w", err)
		}
		a.closers = append(a.closers, er.Close)
		cfg.Redis.Addrs = []string{er.Addr()}
		a.embeddedRedis = true
		mtr.SetEmbeddedRedisSource(er.Stats)
		logger.Info("embedded in-process redis (miniredis)", "addr", er.Addr(), "max_bytes", cfg.Redis.EmbeddedMaxBytes)
		if !f.demo {
			logger.Warn("embedded in-process redis in use: it is this instance's alone (no shared rate limits, cache or purges with other instances) and empty after a restart; set redis.addrs or --redis in production")
		}
	}
	to := cfg.Redis.Timeout.D()
	// Timeouts, no retries, one dial, no retry backoff: cache.ClientOptions.
	a.rdb = redis.NewUniversalClient(cache.ClientOptions(&redis.UniversalOptions{
		Addrs:            cfg.Redis.Addrs,
		MasterName:       cfg.Redis.MasterName,
		SentinelUsername: cfg.Redis.SentinelUsername,
		SentinelPassword: cfg.Redis.SentinelPassword,
		Username:         cfg.Redis.Username,
		Password:         cfg.Redis.Password,
		DB:               cfg.Redis.DB,
		PoolSize:         cfg.Redis.PoolSize,
	}, to))
	a.closers = append(a.closers, func() { _ = a.rdb.Close() })

	// Tracing: the config's section with the OTEL_* variables over it.
	// closeAll runs the closers in reverse order once the listeners have
	// finished their requests: the tracer's flushes those requests' spans
	// before the Redis client (registered before it) and the embedded
	// services close.
	var tp trace.TracerProvider
	tcfg, err := cfg.TracingConfig().WithEnv(os.LookupEnv)
	if err != nil {
		return nil, err
	}
	tr, err := tracing.New(tcfg, tracing.Options{
		// Export failures become event lines (JSON, rate-limited).
		OnError: func(err error) { logger.Warn("tracing: export failed", "error", err.Error()) },
	})
	if err != nil {
		return nil, err
	}
	if tr != nil {
		tp = tr.TracerProvider()
		a.closers = append(a.closers, func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := tr.Shutdown(ctx); err != nil {
				logger.Warn("tracing: spans not flushed at shutdown", "error", err.Error())
			}
			// The admin listener is closed by now: no scrape sees these.
			if n := tr.Dropped().Shutdown; n > 0 {
				logger.Warn("tracing: spans ended during shutdown were dropped", "spans", n)
			}
		})
		logger.Info("tracing on", "endpoint", tr.URL(), "sampler", tr.Sampler())
	}

	timeouts := map[string]time.Duration{}
	for svc, d := range cfg.Upstream.Timeouts {
		timeouts[svc] = d.D()
	}
	up, err := upstream.New(upstream.Options{
		BaseURL:         cfg.Upstream.BaseURL,
		Timeouts:        timeouts,
		MaxConnsPerHost: cfg.Upstream.MaxConnsPerHost,
		Breaker: upstream.BreakerSettings{
			ConsecutiveFailures: cfg.Upstream.BreakerFailures,
			OpenFor:             cfg.Upstream.BreakerOpenFor.D(),
			HalfOpenRequests:    cfg.Upstream.BreakerHalfOpen,
		},
		OnCall: func(svc string, d time.Duration, err error) {
			mtr.UpstreamCall(svc, outcome(err), d)
		},
		OnBreakerChange: func(svc, from, to string) {
			mtr.BreakerChange(svc, from, to)
			logger.Warn("breaker state change", "service", svc, "from", from, "to", to)
		},
		OnContentTypeBreakerChange: func(contentType, from, to string) {
			mtr.TypeBreakerChange(upstream.SvcContent, contentType, from, to)
			logger.Warn("breaker state change", "service", upstream.SvcContent, "content_type", contentType, "from", from, "to", to)
		},
		OnDealerBreakerOpen: func(svc, contentType string, dealerID int64) {
			mtr.DealerBreakerOpen(svc, contentType)
			if contentType != "" {
				logger.Warn("dealer breaker open", "service", svc, "content_type", contentType, "dealer_id", dealerID, "open_for_s", cfg.Upstream.BreakerOpenFor.D().Seconds())
				return
			}
			logger.Warn("dealer breaker open", "service", svc, "dealer_id", dealerID, "open_for_s", cfg.Upstream.BreakerOpenFor.D().Seconds())
		},
		TracerProvider: tp,
	})
	if err != nil {
		return nil, err
	}
	a.up = up
	a.closers = append(a.closers, up.Close)

	a.cache, err = cache.New(cache.Options{
		Redis:        a.rdb,
		Prefix:       cachePrefix,
		PurgePrefix:  cachePurgePrefix,
		L1MaxBytes:   cfg.Cache.L1MaxBytes,
		L1HotBytes:   cfg.Cache.L1HotBytes,
		RedisTimeout: to,
		Logger:       logger,
		ServeStaleOn: aggregator.ServeStaleOn,
		DropOn:       aggregator.DropOn,
		LockTTL:      cfg.Cache.LockTTL.D(),
		LockWait:     cfg.Cache.LockWait.D(),
		// The limiter's Redis calls are rare (leases); only the cache's
		// per-request calls are pipelined (cache.batcher).
		NoAutoPipeline: !cfg.Cache.AutoPipeline,
		GzipLevel:      cfg.Cache.GzipLevel,
		MaxRefreshes:   cfg.Cache.MaxRefreshes,
		RefreshTimeout: refreshTimeout(cfg.Server.RequestTimeout.D()),
		TracerProvider: tp,
		// Refused writes are counted (edge_cache_redis_budget_skips_total).
		RedisDealerBudget: cfg.Cache.RedisDealerBudget,
	})
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, func() { _ = a.cache.Close() })
	// A body the server never compresses goes to Redis plain (reloaded
	// with the setting).
	a.cache.SetPlainBelow(cfg.Server.GzipMinBytes)

	// Both limiters log their Redis state changes with "limiter" ("key",
	// "address"), and probe Redis in the background while it is down: the
	// per-address one decides failed authentications only, and without
	// the probe it stayed marked down, with no "available again" line,
	// until its next such request.
	a.limiter, err = ratelimit.New(ratelimit.Options{
		Redis:           a.rdb,
		FailMode:        failMode(cfg.RateLimit.FailMode),
		RedisTimeout:    to,
		MaxLease:        cfg.RateLimit.MaxLease,
		BackgroundProbe: true,
		Logger:          logger.With("limiter", "key"),
		TracerProvider:  tp,
	})
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, func() { _ = a.limiter.Close() })

	// The per-client-address limits (failed authentications, the OpenAPI
	// document) share the Redis client with the key limiter, under their
	// own prefix; small leases keep the counts close to exact across
	// instances (these limits are low).
	addrLimiter, err := ratelimit.New(ratelimit.Options{
		Redis:           a.rdb,
		Prefix:          ratelimit.DefaultPrefix + ":addr",
		FailMode:        ratelimit.FallbackLocal,
		RedisTimeout:    to,
		MaxLease:        4,
		BackgroundProbe: true,
		Logger:          logger.With("limiter", "address"),
	})
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, func() { _ = addrLimiter.Close() })

	var keyFeed aggregator.KeyFeed
	if cfg.Auth.Index {
		keyFeed = up
	}
	a.api, err = aggregator.New(aggregator.Options{
		Backend:              up,
		Cache:                a.cache,
		Limiter:              a.limiter,
		KeySecret:            []byte(cfg.Auth.KeyHashSecret),
		Settings:             cfg.Settings(),
		ProblemBaseURL:       cfg.Server.ProblemBaseURL,
		AuthCacheEntries:     cfg.Auth.MaxEntries,
		NegativeCacheEntries: cfg.Auth.NegativeEntries,
		KeyFeed:              keyFeed,
		AddrLimiter:          addrLimiter,
		Logger:               logger,
		Tracing:              tr,
		OnRequest: func(ri *aggregator.RequestInfo) {
			mtr.Request(ri.Route, ri.Status, ri.Cache, ri.Duration)
			mtr.Body(ri.BodyBytes, ri.Gzip)
			logs.Access(&ops.Request{
				Method: ri.Method, Route: ri.Route, Status: ri.Status, Code: ri.Code, Cache: ri.Cache,
				DealerID: ri.DealerID, RequestID: ri.RequestID, Duration: ri.Duration,
			})
		},
	})
	if err != nil {
		return nil, err
	}
	ixCtx, ixStop := context.WithCancel(context.Background())
	ixDone := make(chan struct{})
	go func() { defer close(ixDone); a.api.RunKeyIndex(ixCtx) }()
	a.closers = append(a.closers, func() { ixStop(); <-ixDone })

	// Connections beyond the cap are answered 503 by the server; the cap
	// stays below the file-descriptor limit (logged) so that a flood
	// meets that answer rather than a process out of descriptors.
	fds := fdLimit()
	rs := redisServers{embedded: a.embeddedRedis}
	if fds > 0 && cfg.Server.Concurrency == 0 && !a.embeddedRedis {
		// A Cluster's pools are per master found, not per seed listed.
		rs = findRedisServers(a.rdb, max(to, 200*time.Millisecond))
	}
	conc, concNote := concurrency(cfg, fds, len(upstream.Services), rs)
	logger.Info("connection limits", "fd_limit", fds, "concurrency", conc, "concurrency_source", concNote,
		"max_conns_per_ip", cfg.Server.MaxConnsPerIP, "proxy_protocol", cfg.Server.ProxyProtocol, "tls", cfg.TLS.CertFile != "")
	a.srv = &fasthttp.Server{
		Handler: lingerRefusals(a.api.Handler()),
		ErrorHandler: func(ctx *fasthttp.RequestCtx, err error) {
			if listener.IsRefusal(err) {
				return // answered (or closed) by the listener: not a request
			}
			// The server closes the connection after this answer, maybe
			// with the rest of the request unread: a lingering close, so
			// that the client reads the answer, not a reset
			// (TestRefusedRequestAnswerSurvivesUnreadBytes).
			listener.LingerOnClose(ctx.Conn())
			a.api.ErrorHandler(ctx, err)
		},
		HeaderReceived:        a.api.HeaderReceived,
		Name:                  "dealer-edge",
		ReadTimeout:           cfg.Server.ReadTimeout.D(),
		WriteTimeout:          cfg.Server.WriteTimeout.D(),
		IdleTimeout:           cfg.Server.IdleTimeout.D(),
		ReadBufferSize:        cfg.Server.MaxHeaderBytes,
		WriteBufferSize:       cfg.WriteBufferBytes(),
		MaxRequestBodySize:    cfg.Server.MaxRequestBody,
		Concurrency:           conc,
		ReduceMemoryUsage:     cfg.Server.ReduceMemory,
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		CloseOnShutdown:       true,
		// A worker whose connection was parked (or closed) ends after 2 s
		// idle rather than fasthttp's 10 s, so its stack is given back
		// soon after a wave of idle connections (the parker's memory
		// release is timed on it).
		MaxIdleWorkerDuration: listener.WorkerIdle,
		Logger:                httpLogger{logger},
		SecureErrorLogMessage: true,
	}
	var tracingStats func() ops.TracingStats
	if tr != nil {
		tracingStats = func() ops.TracingStats {
			d := tr.Dropped()
			return ops.TracingStats{SpansDropped: map[string]uint64{
				tracing.DropQueueFull: d.QueueFull, tracing.DropExportFailed: d.ExportFailed,
				tracing.DropRejected: d.Rejected, tracing.DropShutdown: d.Shutdown,
			}, ClientSampledCapped: tr.ClientSampledCapped()}
		}
	}
	// One Redis check at a time answers /readyz, the status page and the
	// scrape, its result reused for a second (ops.RedisCheckReuse).
	a.redisCheck = ops.SharedCheck(a.pingRedis, ops.RedisCheckTimeout, ops.RedisCheckReuse)
	mtr.SetSources(ops.Sources{
		Cache: func() ops.CacheStats { return cacheStats(a.cache.Stats()) },
		Limiter: func() ops.LimiterStats {
			s := limiterStats(a.limiter.Stats())
			s.FailMode = cfg.RateLimit.FailMode
			as := addrLimiter.Stats()
			s.Address = &ops.LimiterFallback{Activations: as.FallbackActivations, Active: as.FallbackActive, RedisErrors: as.RedisErrors}
			return s
		},
		Auth:          func() ops.AuthStats { return authStats(a.api.AuthStats()) },
		Breakers:      up.BreakerStates,
		Redis:         a.redisCheck,
		CachePolicies: a.cachePolicies,
		Tracing:       tracingStats,
	})
	if err := a.listenPublic(cfg, conc); err != nil {
		return nil, err
	}
	// A parked connection that became readable is served again as a new
	// one (listener.LimitOptions.ParkAfter).
	srv := a.srv
	a.public.Limits.ServeParked(func(c net.Conn) { _ = srv.ServeConn(c) })
	mtr.SetListenerSource(func() ops.ListenerStats {
		return ops.ListenerStats{Accepting: a.public.Retry.Accepting(), Open: a.public.Limits.Open(), Parked: a.public.Limits.Parked(), Concurrency: conc, FDLimit: fds}
	})
	if cfg.AdminListen != "off" {
		if err := a.startAdmin(); err != nil {
			_ = a.public.Close()
			return nil, err
		}
	}
	go a.serve("public", a.srv, a.public)
	a.ready.Store(true)

	scheme := "http"
	if a.cert != nil {
		scheme = "https"
	}
	fmt.Fprintf(stdout, "dealer-edge listening on %s://%s\n", scheme, a.addr)
	if a.adminAddr != "" {
		fmt.Fprintf(stdout, "dealer-edge admin on http://%s\n", a.adminAddr)
	}
	if f.demo {
		printDemo(stdout, a.addr)
	}
	logger.Info("listening", "addr", a.addr, "admin", a.adminAddr, "upstream", cfg.Upstream.BaseURL, "redis", strings.Join(cfg.Redis.Addrs, ","))
	ok = true
	return a, nil
}

// refreshTimeout is the cache's bound of a shared fill (every fill of a
// cached route: requests carry no deadline of their own) and of a
// background refresh, for a request budget of requestTimeout: the whole
// budget (each fill's upstream calls stop at it) and a second for the
// lock and the entry's store, never under the cache's default. Before
// 2026-11-29 it was that default, 5 s, whatever server.request_timeout
// said: a longer budget was cut at 5 s (TestSharedFillsGetTheWholeRequestBudget).
func refreshTimeout(requestTimeout time.Duration) time.Duration {
	return max(cache.DefaultRefreshTimeout, requestTimeout+time.Second)
}

// cachePrefix starts every Redis key of the response cache: the contract
// version is part of it, so a new contract version never reads entries
// shaped by an older one.
const cachePrefix = "edge:c" + publicshape.ContractVersion

// cachePurgePrefix starts the dealers' generation keys and the purge
// channel. It is the cachePrefix of contract version 1.2.0, frozen: every
// release since shares it whatever contract version it serves, so during a
// rolling deploy that changes the contract version a purge made on either
// release reaches both (their entries stay apart under cachePrefix). It
// must never change: a release with another one would not see, nor make
// seen, the purges of the releases it runs beside.
const cachePurgePrefix = "edge:c1.2.0"

func failMode(s string) ratelimit.FailMode {
	switch s {
	case "open":
		return ratelimit.FailOpen
	case "closed":
		return ratelimit.FailClosed
	}
	return ratelimit.FallbackLocal
}

func printDemo(w io.Writer, addr string) {
	fmt.Fprintln(w, "demo keys (send as X-Api-Key or Authorization: Bearer):")
	for _, k := range fake.DemoKeys {
		fmt.Fprintf(w, "  %-20s %s\n", k.Key, k.Description)
	}
	fmt.Fprintf(w, "try: curl -s -H 'X-Api-Key: demo-key-alpha' 'http://%s/dealer/REWIND/listing?page_size=2'\n", addr)
}

// adminReadBuffer is the admin server's read buffer, so the most a request
// line and header block may take (fasthttp's default): told to the
// listener so that it can tell a request line too long (414) from
// headers too large (431).
const adminReadBuffer = 4096

// adminMaxUnanswered is the most bytes an admin connection may send
// between two of the server's answers (listener.LimitOptions
// .MaxUnansweredBytes): 64 read buffers, as the public listener's is
// (there at least 4 MiB).
const adminMaxUnanswered = 64 * adminReadBuffer

// adminPerIP caps the admin listener's connections per client address
// beyond loopback (see startAdmin).
const adminPerIP = 32

// adminConnsPerIP is the admin listener's cap of connections per client
// address: none on loopback (every client is the same address there, and
// only local processes reach it), adminPerIP beyond it.
func adminConnsPerIP(listen string) int {
	if ops.IsLoopback(listen) {
		return 0
	}
	return adminPerIP
}

// startAdmin starts the admin listener (metrics, health, purge, reload).
func (a *app) startAdmin() error {
	adm, err := ops.NewAdmin(ops.AdminOptions{
		Token:    a.cfg.AdminToken,
		Metrics:  a.metrics,
		Ready:    a.isReady,
		Redis:    a.redisCheck,
		Breakers: a.up.BreakerStates,
		Purge:    a.cache.PurgeDealer,
		PurgeAll: a.cache.PurgeAll,
		Reload:   a.reload,
		Logger:   a.log,
	})
	if err != nil {
		return err
	}
	a.adminSrv = &fasthttp.Server{
		Handler: adminFraming(adm.Handler()),
		ErrorHandler: func(ctx *fasthttp.RequestCtx, err error) {
			if listener.IsRefusal(err) {
				return // answered by the listener: not a request
			}
			listener.LingerOnClose(ctx.Conn()) // as the public server's
			ops.ErrorHandler(ctx, err)
		},
		// A path longer than any endpoint's is not normalised
		// (quadratic in its length): answered 404 at once.
		HeaderReceived: ops.HeaderReceived,
		Name:           "dealer-edge-admin",
		ReadTimeout:    5 * time.Second,
		WriteTimeout:   10 * time.Second,
		// Idle keep-alive connections count against Concurrency: with 64
		// and a 60 s idle timeout, 64 connections left idle after one
		// /healthz each (it needs no token) made every probe and scrape a
		// 503 (TestAdminProbesSurviveIdleConnections). Now 256 and 15 s,
		// and beyond loopback at most 32 connections per client address
		// (the kubelet and Prometheus need a few), counted by the
		// listener's limit below: fasthttp's MaxConnsPerIP counts IPv4
		// peers only.
		IdleTimeout:           15 * time.Second,
		ReadBufferSize:        adminReadBuffer,
		MaxRequestBodySize:    1024,
		Concurrency:           adminConcurrency,
		NoDefaultServerHeader: true,
		CloseOnShutdown:       true,
		Logger:                httpLogger{a.log},
		SecureErrorLogMessage: true,
	}
	tcp, err := net.Listen("tcp", a.cfg.AdminListen)
	if err != nil {
		return fmt.Errorf("admin listen %s: %w", a.cfg.AdminListen, err)
	}
	a.adminAddr = tcp.Addr().String()
	ln := listener.Retry(tcp, listener.RetryOptions{Name: "admin", Logger: a.log, OnError: func(kind string) { a.metrics.AcceptError("admin", kind) }})
	// Off loopback at most adminConnsPerIP per client address (an IPv6
	// one by its /64), answered 429 and closed over the cap; the refusal
	// is the listener's answer, not a request's error (the ErrorHandler
	// above). On every address the listener follows the request line, so
	// that one longer than the server's read buffer is 414, not 431
	// (TestAdminURITooLong; before 2026-11-29 the admin listener was
	// wrapped for the per-address cap only, and never told the two apart).
	lim := listener.Limit(ln, listener.LimitOptions{
		MaxConnsPerIP:  adminConnsPerIP(a.cfg.AdminListen),
		RejectResponse: tooManyConns(""),
		// Beyond the server's Concurrency: a 503 problem, not fasthttp's
		// text/plain one (TestAdminOverloadIsProblem).
		OverloadResponse: overloaded(""),
		ReadBufferSize:   adminReadBuffer,
		// A request's head and 1 KiB body, or a few pipelined ones, with
		// room to spare: fasthttp reads a chunk-size line (its
		// extensions) without a bound, and the admin port reads a body
		// before any token check (TestAdminChunkExtensionBounded).
		MaxUnansweredBytes: adminMaxUnanswered,
	})
	go a.serve("admin", a.adminSrv, lim)
	return nil
}

// serve runs srv on ln; when Serve returns before shutdown began, the
// listener is dead for good and run ends the process.
func (a *app) serve(name string, srv *fasthttp.Server, ln net.Listener) {
	err := srv.Serve(ln)
	if a.stopping.Load() {
		return
	}
	if err == nil {
		err = errListenerStopped
	}
	a.serveErr <- listenerErr{name, err}
}

// isReady is /readyz's readiness: started, not shutting down, and the
// public listener accepting (not out of file descriptors).
func (a *app) isReady() bool {
	return a.ready.Load() && (a.public == nil || a.public.Retry.Accepting())
}

// pingRedis reports whether Redis can serve the edge now: what the
// cache's probe asks before it uses Redis again (cache.Cache.Ping: every
// master of a Cluster, no replica, the credentials accepted, and the
// commands the cache sends permitted to the edge's ACL user).
func (a *app) pingRedis(ctx context.Context) error {
	if a.cache != nil {
		return a.cache.Ping(ctx)
	}
	return cache.PingRedis(ctx, a.rdb)
}

// reload re-reads the config file and installs its reloadable settings;
// an invalid file is rejected and the settings in force stay. Fields that
// only take effect at start are named in a warning when they differ.
func (a *app) reload() error {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	// The files the config names, fingerprinted before they are read: a
	// rejected reload for a file not there yet is retried by the watch
	// when that file arrives, also when it arrives right after this read.
	named := configs.NamedFiles(a.flags.config)
	read := fingerprints(named)
	cfg, err := a.flags.load()
	a.named.Store(&named)
	a.read.Store(&read)
	if err == nil {
		// The upstream timeouts in force are the start's.
		err = configs.CheckRequestBudget(cfg.Server.RequestTimeout, a.fileCfg.Upstream.Timeouts)
	}
	if err == nil {
		// So is the upstream pool (TestReloadRefreshBoundAgainstPoolInForce).
		err = configs.CheckRefreshBound(cfg.Cache.MaxRefreshes, a.fileCfg.Upstream.MaxConnsPerHost)
	}
	for _, hook := range a.reloadHooks {
		if err != nil {
			break
		}
		err = hook(cfg)
	}
	if err == nil {
		err = a.api.UpdateSettings(cfg.Settings())
	}
	a.metrics.ConfigReload(err)
	if err != nil {
		a.log.Error("config reload rejected; previous config stays in force", "file", a.flags.config, "error", err.Error())
		// The TLS files' paths are the start's, whatever the
		// rejected file says: a renewed pair is installed all the same
		// (its own failure is logged and counted by certReloaded).
		_ = a.reloadCertificate()
		return err
	}
	a.loaded.Store(cfg)
	a.logs.Update(cfg.LogOptions())
	// Validated above (positive), so it cannot fail: installed with the
	// settings, not before them in a hook a later failure would not undo.
	a.cache.SetMaxRefreshes(cfg.Cache.MaxRefreshes)
	a.cache.SetRedisDealerBudget(cfg.Cache.RedisDealerBudget)
	a.cache.SetPlainBelow(cfg.Server.GzipMinBytes)
	a.cache.SetRefreshTimeout(refreshTimeout(cfg.Server.RequestTimeout.D()))
	a.log.Info("config reloaded", "file", a.flags.config)
	if changed := configs.RestartOnly(configs.ChangedFields(a.fileCfg.Flatten(), cfg.Flatten())); len(changed) > 0 {
		a.log.Warn("config fields changed that take effect only at restart", "fields", strings.Join(changed, ","))
	}
	// The TLS files are read again too (their paths are fixed at start).
	if err := a.reloadCertificate(); err != nil {
		return fmt.Errorf("config reloaded, but %w (the one in force stays): %w", ops.ErrCertificateNotReloaded, err)
	}
	return nil
}

// readFiles are the fingerprints the last reload took of the files the
// config file named, before reading them (nil before any reload).
func (a *app) readFiles() map[string][32]byte {
	if r := a.read.Load(); r != nil {
		return *r
	}
	return nil
}

// watchedFiles are the files whose change reloads: the config file, the
// files the last good config names and those the file named at the last
// reload (a rejected one's too).
func (a *app) watchedFiles() []string {
	files := a.loaded.Load().WatchedFiles(a.flags.config)
	// The TLS files in force are the start's (restart-only
	// paths); a reloaded config naming others must not stop their watch.
	if a.cert != nil {
		cf, kf := a.cert.Files()
		for _, p := range []string{filepath.Clean(cf), filepath.Clean(kf)} {
			if !slices.Contains(files, p) {
				files = append(files, p)
			}
		}
	}
	if named := a.named.Load(); named != nil {
		for _, p := range *named {
			if !slices.Contains(files, p) {
				files = append(files, p)
			}
		}
	}
	return files
}

// shutdown marks the edge not ready, stops accepting, lets in-flight
// requests finish until ctx ends, then closes the admin listener, pools
// and embedded services. It returns ctx's error when the grace period ran
// out first.
func (a *app) shutdown(ctx context.Context) error {
	a.stopping.Store(true)
	a.ready.Store(false)
	// The server waits 5 s before it counts a connection that never sent a
	// byte as idle; until the shutdown ends, such connections are closed
	// here, at once and then every 100 ms (one accepted just before the
	// listener closed included).
	silentDone := make(chan struct{})
	go func() {
		if a.public == nil {
			return
		}
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			a.public.Limits.CloseSilent()
			select {
			case <-silentDone:
				return
			case <-tick.C:
			}
		}
	}()
	err := a.srv.ShutdownWithContext(ctx)
	if err != nil && a.public != nil {
		// The server looks at its open connections at once and then every
		// 100 ms: a grace shorter than that (0s is valid) ended before it
		// saw the idle keep-alive connections it had just closed go, and
		// the edge exited 1 with nothing in flight. No public connection
		// open means none in flight; one in a lingering close after an
		// error answer is the server's no longer
		// (TestShortGraceLingeringExitsZero).
		served := func() int64 { return a.public.Limits.Open() - a.public.Limits.Lingering() }
		for end := time.Now().Add(100 * time.Millisecond); served() > 0 && time.Now().Before(end); {
			time.Sleep(5 * time.Millisecond)
		}
		if served() <= 0 {
			err = nil
		}
	}
	close(silentDone)
	if a.adminSrv != nil {
		actx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = a.adminSrv.ShutdownWithContext(actx)
		cancel()
	}
	a.closeAll()
	return err
}

// outcome classifies an upstream call's result for metrics.
func outcome(err error) string {
	switch {
	case err == nil, errors.Is(err, upstream.ErrUnchanged):
		return ops.OutcomeOK
	case errors.Is(err, upstream.ErrNotFound):
		return ops.OutcomeNotFound
	case errors.Is(err, upstream.ErrCircuitOpen):
		return ops.OutcomeBreakerOpen
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		// The caller ended the call (its request budget ran out before
		// or during it): no failure of the service, which the breaker
		// excludes too. A service's own timeout is no context error.
		return ops.OutcomeCanceled
	}
	return ops.OutcomeError
}

func cacheStats(s cache.Stats) ops.CacheStats {
	return ops.CacheStats{
		Hits: s.Hits, Misses: s.Misses, StaleServed: s.Stale, Bypass: s.Bypass, L1Hits: s.L1Hits,
		StaleOnError: s.StaleOnError, Fills: s.Fills, FillErrors: s.FillErrors, FillsUnchanged: s.FillsUnchanged,
		FillsRevalidated: s.FillsRevalidated,
		Dropped:          s.Dropped,
		RedisBudgetSkips: s.RedisBudgetSkips,
		Coalesced:        s.Coalesced,
		L1Evictions:      s.Evictions, L1Bytes: s.L1Bytes, L1Entries: s.L1Entries, RedisErrors: s.L2Errors,
		BulkHits: s.BulkHits, BulkBytes: s.BulkBytes, BulkEntries: s.BulkEntries,
		Refreshes: s.Refreshes, RefreshesSkipped: s.RefreshesSkipped,
		RefreshesInFlight: s.RefreshesInFlight, MaxRefreshes: s.MaxRefreshes,
	}
}

func authStats(s aggregator.AuthStats) ops.AuthStats {
	out := ops.AuthStats{
		IndexState: s.IndexState, IndexKeys: s.IndexKeys, IndexAge: s.IndexAge,
		IndexSyncs: s.IndexSyncs, IndexSyncErrors: s.IndexErrors, IndexResyncs: s.IndexResync, IndexMisses: s.IndexMisses,
		Results: s.Results, Lookups: map[string]uint64{}, AddrLimited: s.AddrLimited,
		LookupBudgetExceeded: s.Lookups[aggregator.LookupBudgetExceeded],
	}
	for cause, n := range s.Lookups {
		if cause != aggregator.LookupBudgetExceeded {
			out.Lookups[cause] = n
		}
	}
	return out
}

func limiterStats(s ratelimit.Stats) ops.LimiterStats {
	return ops.LimiterStats{
		Admitted: s.Admitted, Rejected: s.Rejected, FallbackActivations: s.FallbackActivations,
		FallbackActive: s.FallbackActive, RedisErrors: s.RedisErrors,
	}
}

// cachePolicies returns the cache policy in force per route (it changes
// on reload).
func (a *app) cachePolicies() map[string]ops.CachePolicy {
	st := a.api.Settings()
	out := make(map[string]ops.CachePolicy, len(st.Cache))
	for r, p := range st.Cache {
		out[r] = ops.CachePolicy{TTL: p.TTL, StaleWhileRevalidate: p.StaleWhileRevalidate, StaleIfError: p.StaleIfError, NotFoundTTL: st.NotFoundPolicy(r).TTL}
	}
	return out
}

func (a *app) closeAll() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
}
