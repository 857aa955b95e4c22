package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/dealer-edge/dealer-edge/aggregator"
	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/cache/ratelimit"
	"github.com/dealer-edge/dealer-edge/publicshape"
)

// Duration is a time.Duration written in JSON as a Go duration string
// ("250ms", "30s", "10m").
type Duration time.Duration

// UnmarshalJSON parses a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New("must be a duration string such as \"30s\"")
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("must be a duration string such as \"30s\": %v", err)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Policy is a cache policy in the config file.
type Policy struct {
	TTL                  Duration `json:"ttl"`
	StaleWhileRevalidate Duration `json:"stale_while_revalidate"`
	StaleIfError         Duration `json:"stale_if_error"`
}

// Limit is a rate limit in the config file.
type Limit struct {
	Rate  float64 `json:"rate"`  // requests per second
	Burst int     `json:"burst"` // requests allowed at once
}

// Config is the whole config file. configs/README.md documents every field;
// configs/example.json shows every knob with its default.
type Config struct {
	Listen      string `json:"listen"`
	AdminListen string `json:"admin_listen"`
	AdminToken  string `json:"admin_token"`

	Server struct {
		ReadTimeout    Duration `json:"read_timeout"`
		WriteTimeout   Duration `json:"write_timeout"`
		IdleTimeout    Duration `json:"idle_timeout"`
		MaxHeaderBytes int      `json:"max_header_bytes"`
		MaxRequestBody int      `json:"max_request_body"`
		Concurrency    int      `json:"concurrency"`
		RequestTimeout Duration `json:"request_timeout"`
		ShutdownGrace  Duration `json:"shutdown_grace"`
		ProblemBaseURL string   `json:"problem_base_url"`
		MaxConnsPerIP  int      `json:"max_conns_per_ip"`
		ReduceMemory   bool     `json:"reduce_memory"`
	} `json:"server"`

	Upstream struct {
		BaseURL         string              `json:"base_url"`
		Timeouts        map[string]Duration `json:"timeouts"`
		MaxConnsPerHost int                 `json:"max_conns_per_host"`
		BreakerFailures uint32              `json:"breaker_failures"`
		BreakerOpenFor  Duration            `json:"breaker_open_for"`
		BreakerHalfOpen uint32              `json:"breaker_half_open_requests"`
	} `json:"upstream"`

	Redis struct {
		Addrs      []string `json:"addrs"`
		MasterName string   `json:"master_name"`
		Username   string   `json:"username"`
		Password   string   `json:"password"`
		DB         int      `json:"db"`
		Timeout    Duration `json:"timeout"`
		PoolSize   int      `json:"pool_size"`
	} `json:"redis"`

	Auth struct {
		KeyHashSecret string   `json:"key_hash_secret"`
		TTL           Duration `json:"ttl"`
		Stale         Duration `json:"stale"`
		NegativeTTL   Duration `json:"negative_ttl"`
		MaxEntries    int      `json:"max_entries"`
	} `json:"auth"`

	Cache struct {
		L1MaxBytes   int64             `json:"l1_max_bytes"`
		Routes       map[string]Policy `json:"routes"`
		ContentTypes map[string]Policy `json:"content_types"`
		LockTTL      Duration          `json:"lock_ttl"`
		LockWait     Duration          `json:"lock_wait"`
	} `json:"cache"`

	RateLimit struct {
		FailMode string           `json:"fail_mode"` // local, open, closed
		Default  Limit            `json:"default"`
		Plans    map[string]Limit `json:"plans"`
		MaxLease int              `json:"max_lease"`
	} `json:"rate_limit"`

	Deprecation struct {
		Deprecation   time.Time `json:"deprecation"`
		Sunset        time.Time `json:"sunset"`
		SuccessorURL  string    `json:"successor_url"`
		SunsetInfoURL string    `json:"sunset_info_url"`
	} `json:"deprecation"`

	Log struct {
		Level          string  `json:"level"` // debug, info, warn, error
		AccessLog      bool    `json:"access_log"`
		AccessSample   float64 `json:"access_sample"`     // fraction of successful requests logged
		MaxLinesPerSec int     `json:"max_lines_per_sec"` // cap of log lines per second
	} `json:"log"`
}

// defaultConfig returns the built-in defaults; a config file overrides
// what it sets.
func defaultConfig() *Config {
	c := &Config{Listen: "127.0.0.1:8080", AdminListen: "127.0.0.1:9091"}
	c.Server.ReadTimeout = Duration(5 * time.Second)
	c.Server.WriteTimeout = Duration(10 * time.Second)
	c.Server.IdleTimeout = Duration(60 * time.Second)
	c.Server.MaxHeaderBytes = 8 << 10
	c.Server.MaxRequestBody = 1024
	c.Server.Concurrency = 256 * 1024
	c.Server.ShutdownGrace = Duration(15 * time.Second)
	c.Server.ProblemBaseURL = publicshape.DefaultProblemBase
	def := aggregator.DefaultSettings()
	c.Server.RequestTimeout = Duration(def.RequestTimeout)
	c.Upstream.BaseURL = ""
	c.Upstream.BreakerFailures = 5
	c.Upstream.BreakerOpenFor = Duration(5 * time.Second)
	c.Upstream.BreakerHalfOpen = 1
	c.Redis.Timeout = Duration(50 * time.Millisecond)
	c.Auth.KeyHashSecret = "dealer-edge-dev-secret-change-me"
	c.Auth.TTL = Duration(def.AuthTTL)
	c.Auth.Stale = Duration(def.AuthStale)
	c.Auth.NegativeTTL = Duration(def.AuthNegativeTTL)
	c.Auth.MaxEntries = 100000
	c.Cache.L1MaxBytes = 64 << 20
	c.Cache.Routes = map[string]Policy{}
	for name, p := range def.Cache {
		c.Cache.Routes[name] = Policy{Duration(p.TTL), Duration(p.StaleWhileRevalidate), Duration(p.StaleIfError)}
	}
	c.Cache.ContentTypes = map[string]Policy{}
	c.Cache.LockTTL = Duration(2 * time.Second)
	c.Cache.LockWait = Duration(250 * time.Millisecond)
	c.RateLimit.FailMode = "local"
	c.RateLimit.Default = Limit{def.DefaultLimit.Rate, def.DefaultLimit.Burst}
	c.RateLimit.Plans = map[string]Limit{}
	for name, l := range def.Limits {
		c.RateLimit.Plans[name] = Limit{l.Rate, l.Burst}
	}
	c.RateLimit.MaxLease = 20
	c.Deprecation.Deprecation = def.Deprecation.Deprecation
	c.Deprecation.Sunset = def.Deprecation.Sunset
	c.Deprecation.SuccessorURL = def.Deprecation.SuccessorURL
	c.Log.Level = "info"
	c.Log.AccessLog = true
	c.Log.AccessSample = 1
	c.Log.MaxLinesPerSec = 200
	return c
}

// loadConfig reads a config file over the defaults. Unknown fields are
// errors, so a typo cannot silently leave a knob at its default.
func loadConfig(path string) (*Config, error) {
	c := defaultConfig()
	if path == "" {
		return c, c.validate()
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(c); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// validate checks the config; errors name the bad field.
func (c *Config) validate() error {
	var errs []error
	bad := func(field, msg string) { errs = append(errs, fmt.Errorf("%s: %s", field, msg)) }
	if c.Listen == "" {
		bad("listen", "must not be empty")
	}
	if c.Server.ReadTimeout <= 0 || c.Server.WriteTimeout <= 0 || c.Server.IdleTimeout <= 0 {
		bad("server", "read_timeout, write_timeout and idle_timeout must be positive")
	}
	if c.Server.MaxHeaderBytes < 1024 {
		bad("server.max_header_bytes", "must be at least 1024")
	}
	if c.Server.ShutdownGrace < 0 {
		bad("server.shutdown_grace", "must not be negative")
	}
	if len(c.Auth.KeyHashSecret) < 16 {
		bad("auth.key_hash_secret", "must be at least 16 characters")
	}
	for name := range c.Cache.Routes {
		if !contains(aggregator.CacheRoutes, name) {
			bad("cache.routes."+name, "unknown route (known: "+strings.Join(aggregator.CacheRoutes, ", ")+")")
		}
	}
	if c.Cache.L1MaxBytes < 0 {
		bad("cache.l1_max_bytes", "must not be negative")
	}
	switch c.RateLimit.FailMode {
	case "local", "open", "closed":
	default:
		bad("rate_limit.fail_mode", "must be local, open or closed")
	}
	if c.Redis.Timeout <= 0 {
		bad("redis.timeout", "must be positive")
	}
	switch strings.ToLower(c.Log.Level) {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level", "must be debug, info, warn or error")
	}
	if c.Log.AccessSample < 0 || c.Log.AccessSample > 1 {
		bad("log.access_sample", "must be between 0 and 1")
	}
	if err := c.settings().Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// settings maps the reloadable part of the config to aggregator settings.
func (c *Config) settings() *aggregator.Settings {
	s := &aggregator.Settings{
		Cache:        map[string]cache.Policy{},
		ContentCache: map[string]cache.Policy{},
		Limits:       map[string]ratelimit.Limit{},
		DefaultLimit: ratelimit.Limit{Rate: c.RateLimit.Default.Rate, Burst: c.RateLimit.Default.Burst},
		Deprecation: publicshape.DeprecationPolicy{
			Deprecation:   c.Deprecation.Deprecation,
			Sunset:        c.Deprecation.Sunset,
			SuccessorURL:  c.Deprecation.SuccessorURL,
			SunsetInfoURL: c.Deprecation.SunsetInfoURL,
		},
		RequestTimeout:  c.Server.RequestTimeout.D(),
		AuthTTL:         c.Auth.TTL.D(),
		AuthStale:       c.Auth.Stale.D(),
		AuthNegativeTTL: c.Auth.NegativeTTL.D(),
	}
	for name, p := range c.Cache.Routes {
		s.Cache[name] = cache.Policy{TTL: p.TTL.D(), StaleWhileRevalidate: p.StaleWhileRevalidate.D(), StaleIfError: p.StaleIfError.D()}
	}
	for name, p := range c.Cache.ContentTypes {
		s.ContentCache[name] = cache.Policy{TTL: p.TTL.D(), StaleWhileRevalidate: p.StaleWhileRevalidate.D(), StaleIfError: p.StaleIfError.D()}
	}
	for name, l := range c.RateLimit.Plans {
		s.Limits[name] = ratelimit.Limit{Rate: l.Rate, Burst: l.Burst}
	}
	return s
}
