// Command dealer-edge serves the public dealer API: a caching edge in front
// of the internal dealers, inventory, catalog, media and content services.
//
//	dealer-edge --demo                      # everything embedded: fake services, in-process Redis
//	dealer-edge --upstream http://127.0.0.1:9090
//	dealer-edge --config configs/example.json [--listen ADDR] [--admin-listen ADDR] [--redis A,B,C] [--upstream URL]
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
	"strings"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/aggregator"
	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/cache/ratelimit"
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
}

func parseFlags(args []string, stderr io.Writer) (*flags, error) {
	f := &flags{}
	fs := flag.NewFlagSet("dealer-edge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.config, "config", "", "config file (JSON); built-in defaults when empty")
	fs.BoolVar(&f.demo, "demo", false, "run on embedded defaults: in-process fake internal services and Redis, demo keys")
	fs.StringVar(&f.listen, "listen", "", "public listen address (default 127.0.0.1:8080)")
	fs.StringVar(&f.adminListen, "admin-listen", "", "admin listen address for metrics, health, purge, reload (default 127.0.0.1:9091; \"off\" disables)")
	fs.StringVar(&f.redis, "redis", "", "Redis addresses, comma-separated (one: single node; several: cluster); empty: embedded in-process Redis")
	fs.StringVar(&f.upstream, "upstream", "", "base URL of the internal services, e.g. http://127.0.0.1:9090")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	fs.Visit(func(fl *flag.Flag) {
		if fl.Name == "redis" {
			f.redisSet = true
		}
	})
	return f, nil
}

// ready, when non-nil, receives the bound public address once serving
// (tests use it).
func run(args []string, stdout, stderr io.Writer, ready chan<- string) int {
	f, err := parseFlags(args, stderr)
	if err != nil {
		return 2
	}
	cfg, err := loadConfig(f.config)
	if err != nil {
		fmt.Fprintln(stderr, "dealer-edge:", err)
		return 2
	}
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
	if err := cfg.validate(); err != nil {
		fmt.Fprintln(stderr, "dealer-edge:", err)
		return 2
	}
	logger := newLogger(stderr, cfg)
	app, err := start(cfg, f, logger, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "dealer-edge:", err)
		return 1
	}
	if ready != nil {
		ready <- app.addr
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	for sig := range sigs {
		if sig == syscall.SIGHUP {
			app.reload()
			continue
		}
		logger.Info("shutting down", "signal", sig.String(), "grace", cfg.Server.ShutdownGrace.D().String())
		break
	}
	if err := app.shutdown(); err != nil {
		logger.Error("shutdown", "error", err.Error())
		return 1
	}
	logger.Info("stopped")
	return 0
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
	cfg      *Config
	flags    *flags
	log      *slog.Logger
	addr     string
	srv      *fasthttp.Server
	api      *aggregator.Server
	up       *upstream.Client
	rdb      redis.UniversalClient
	cache    *cache.Cache
	limiter  *ratelimit.Limiter
	closers  []func()
	serveErr chan error
}

func start(cfg *Config, f *flags, logger *slog.Logger, stdout io.Writer) (*app, error) {
	a := &app{cfg: cfg, flags: f, log: logger, serveErr: make(chan error, 1)}
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
		return nil, errors.New("upstream.base_url (or --upstream) is required; use --demo for embedded fake services")
	}

	if len(cfg.Redis.Addrs) == 0 {
		mr := miniredis.NewMiniRedis()
		if err := mr.StartAddr("127.0.0.1:0"); err != nil {
			return nil, fmt.Errorf("start embedded redis: %w", err)
		}
		a.closers = append(a.closers, mr.Close)
		cfg.Redis.Addrs = []string{mr.Addr()}
		logger.Info("embedded in-process redis (miniredis)", "addr", mr.Addr())
	}
	to := cfg.Redis.Timeout.D()
	a.rdb = redis.NewUniversalClient(&redis.UniversalOptions{
		Addrs:        cfg.Redis.Addrs,
		MasterName:   cfg.Redis.MasterName,
		Username:     cfg.Redis.Username,
		Password:     cfg.Redis.Password,
		DB:           cfg.Redis.DB,
		DialTimeout:  max(to, 200*time.Millisecond),
		ReadTimeout:  to,
		WriteTimeout: to,
		PoolSize:     cfg.Redis.PoolSize,
		MaxRetries:   -1,
	})
	a.closers = append(a.closers, func() { _ = a.rdb.Close() })

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
		OnBreakerChange: func(svc, from, to string) {
			logger.Warn("breaker state change", "service", svc, "from", from, "to", to)
		},
	})
	if err != nil {
		return nil, err
	}
	a.up = up
	a.closers = append(a.closers, up.Close)

	a.cache, err = cache.New(cache.Options{
		Redis:        a.rdb,
		L1MaxBytes:   cfg.Cache.L1MaxBytes,
		RedisTimeout: to,
		Logger:       logger,
		ServeStaleOn: aggregator.ServeStaleOn,
		LockTTL:      cfg.Cache.LockTTL.D(),
		LockWait:     cfg.Cache.LockWait.D(),
	})
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, func() { _ = a.cache.Close() })

	a.limiter, err = ratelimit.New(ratelimit.Options{
		Redis:        a.rdb,
		FailMode:     failMode(cfg.RateLimit.FailMode),
		RedisTimeout: to,
		MaxLease:     cfg.RateLimit.MaxLease,
		Logger:       logger,
	})
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, func() { _ = a.limiter.Close() })

	a.api, err = aggregator.New(aggregator.Options{
		Backend:          up,
		Cache:            a.cache,
		Limiter:          a.limiter,
		KeySecret:        []byte(cfg.Auth.KeyHashSecret),
		Settings:         cfg.settings(),
		ProblemBaseURL:   cfg.Server.ProblemBaseURL,
		AuthCacheEntries: cfg.Auth.MaxEntries,
		Logger:           logger,
	})
	if err != nil {
		return nil, err
	}

	a.srv = &fasthttp.Server{
		Handler:               a.api.Handler(),
		ErrorHandler:          a.api.ErrorHandler,
		Name:                  "dealer-edge",
		ReadTimeout:           cfg.Server.ReadTimeout.D(),
		WriteTimeout:          cfg.Server.WriteTimeout.D(),
		IdleTimeout:           cfg.Server.IdleTimeout.D(),
		ReadBufferSize:        cfg.Server.MaxHeaderBytes,
		MaxRequestBodySize:    cfg.Server.MaxRequestBody,
		Concurrency:           cfg.Server.Concurrency,
		MaxConnsPerIP:         cfg.Server.MaxConnsPerIP,
		ReduceMemoryUsage:     cfg.Server.ReduceMemory,
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		CloseOnShutdown:       true,
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", cfg.Listen, err)
	}
	a.addr = ln.Addr().String()
	go func() { a.serveErr <- a.srv.Serve(ln) }()

	fmt.Fprintf(stdout, "dealer-edge listening on http://%s\n", a.addr)
	if f.demo {
		printDemo(stdout, a.addr)
	}
	logger.Info("listening", "addr", a.addr, "upstream", cfg.Upstream.BaseURL, "redis", strings.Join(cfg.Redis.Addrs, ","))
	ok = true
	return a, nil
}

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

// reload re-reads the config file and installs its reloadable settings;
// an invalid file is rejected and the settings in force stay.
func (a *app) reload() error {
	cfg, err := loadConfig(a.flags.config)
	if err == nil {
		err = a.api.UpdateSettings(cfg.settings())
	}
	if err != nil {
		a.log.Error("config reload rejected; previous config stays in force", "error", err.Error())
		return err
	}
	a.log.Info("config reloaded", "file", a.flags.config)
	return nil
}

// shutdown stops accepting, lets in-flight requests finish within the
// grace period, then closes pools and embedded services.
func (a *app) shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.Server.ShutdownGrace.D())
	defer cancel()
	err := a.srv.ShutdownWithContext(ctx)
	a.closeAll()
	return err
}

func (a *app) closeAll() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
}

func newLogger(w io.Writer, cfg *Config) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(cfg.Log.Level))
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: lvl}))
}
