package configs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"net/url"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/dealer-edge/dealer-edge/aggregator"
	"github.com/dealer-edge/dealer-edge/aggregator/ops"
	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/cache/ratelimit"
	"github.com/dealer-edge/dealer-edge/publicshape"
	"github.com/dealer-edge/dealer-edge/tracing"
	"github.com/dealer-edge/dealer-edge/upstream"
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
	if v > MaxDuration || v < -MaxDuration {
		// Durations are added to each other and to the clock (a key's
		// TTL plus its stale window, a TTL plus its grace): near the
		// int64 limit the sum wraps negative and the edge acts as if
		// the time had passed (auth.stale "2562047h" served no key stale).
		return fmt.Errorf("must be at most %s (10 years)", MaxDuration)
	}
	*d = Duration(v)
	return nil
}

// MaxDuration is the longest duration a config field takes: ten years,
// far above any sensible setting and far below where sums of two durations
// and a clock reading overflow.
const MaxDuration = 10 * 365 * 24 * time.Hour

// MarshalJSON writes the duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Policy is a cache policy in the config file. NotFoundTTL is how long a
// detail route remembers that a dealer has no such id
// (aggregator.Settings.NotFoundTTL): only routes of
// aggregator.NotFoundRoutes have one; zero elsewhere.
type Policy struct {
	TTL                  Duration `json:"ttl"`
	StaleWhileRevalidate Duration `json:"stale_while_revalidate"`
	StaleIfError         Duration `json:"stale_if_error"`
	NotFoundTTL          Duration `json:"not_found_ttl,omitempty"`
}

// Limit is a rate limit in the config file.
type Limit struct {
	Rate  float64 `json:"rate"`  // requests per second
	Burst int     `json:"burst"` // requests allowed at once
}

// DefaultRedisDealerBudget is cache.redis_dealer_budget_bytes's default,
// 32 MiB: three to six times the Redis bytes of every listing page of every
// page size of one of the fake's dealers (the bench's scale mix: about
// 5.6 MB), a third of what one key with distinct content-listing q's
// holds at the default plan without it (117 MiB).
const DefaultRedisDealerBudget = 32 << 20

// DefaultGCMinGrowth is server.gc_min_growth_bytes's default, 16 MiB: a
// heap of a few MB (a small L1 with hits read from Redis) is collected
// about once a second instead of twenty times (Go's own least goal is
// 4 MiB), and a heap above 16 MiB (the default L1 once it holds 16 MiB) is
// paced as Go paces it.
const DefaultGCMinGrowth = 16 << 20

// Config is the whole config file. configs/README.md documents every field;
// configs/example.json shows every knob with its default.
type Config struct {
	Listen      string `json:"listen"`
	AdminListen string `json:"admin_listen"`
	AdminToken  string `json:"admin_token"`
	// AdminTokenFile names a file holding the admin token (a mounted
	// Kubernetes Secret, a systemd credential); see ReadSecrets.
	AdminTokenFile string `json:"admin_token_file"`
	// WatchInterval is how often the config file and the files it names
	// are checked for changes (a changed one reloads, as SIGHUP); 0
	// turns the watch off.
	WatchInterval Duration `json:"watch_interval"`

	Server struct {
		// TrustedProxies are CIDRs (or single addresses) of the proxies
		// whose Forwarded / X-Forwarded-For headers name the client.
		TrustedProxies []string `json:"trusted_proxies"`
		// ForwardedHeader is the header the trusted proxies write:
		// "x-forwarded-for" or "forwarded" (RFC 7239); the other one is
		// the client's and never read.
		ForwardedHeader string   `json:"forwarded_header"`
		ReadTimeout     Duration `json:"read_timeout"`
		WriteTimeout    Duration `json:"write_timeout"`
		IdleTimeout     Duration `json:"idle_timeout"`
		MaxHeaderBytes  int      `json:"max_header_bytes"`
		WriteBuffer     int      `json:"write_buffer_bytes"`
		MaxRequestBody  int      `json:"max_request_body"`
		Concurrency     int      `json:"concurrency"`
		RequestTimeout  Duration `json:"request_timeout"`
		ShutdownGrace   Duration `json:"shutdown_grace"`
		ProblemBaseURL  string   `json:"problem_base_url"`
		MaxConnsPerIP   int      `json:"max_conns_per_ip"`
		ReduceMemory    bool     `json:"reduce_memory"`
		GzipMinBytes    int      `json:"gzip_min_bytes"`
		// GCMinGrowth is the least the heap may grow by between two
		// garbage collections (internal/gcpace), at most half-way to the
		// memory limit; a heap whose default growth (GOGC=100) is larger
		// is paced as by default. 0 keeps Go's default pacing; a GOGC in
		// the environment wins over it.
		GCMinGrowth int64 `json:"gc_min_growth_bytes"`
		// IdleTimeoutBusy replaces IdleTimeout (and caps every read
		// deadline) while 4,096 connections, or half of the concurrency
		// if lower, are open.
		IdleTimeoutBusy Duration `json:"idle_timeout_busy"`
		// ParkIdleAfter parks a keep-alive connection that has waited
		// this long for its next request, while more than ParkAbove
		// connections are open: it waits without a goroutine (0: never).
		ParkIdleAfter Duration `json:"park_idle_after"`
		ParkAbove     int      `json:"park_above"`
		// ProxyProtocol makes the public listener read a PROXY protocol
		// (v1 or v2) header on each connection: from every source when
		// ProxyProtocolFrom is empty, else from those CIDRs only.
		ProxyProtocol     bool     `json:"proxy_protocol"`
		ProxyProtocolFrom []string `json:"proxy_protocol_from"`
	} `json:"server"`

	// TLS turns TLS on at the public listener when both files are set.
	TLS struct {
		CertFile string `json:"cert_file"`
		KeyFile  string `json:"key_file"`
	} `json:"tls"`

	Upstream struct {
		BaseURL         string              `json:"base_url"`
		Timeouts        map[string]Duration `json:"timeouts"`
		MaxConnsPerHost int                 `json:"max_conns_per_host"`
		BreakerFailures uint32              `json:"breaker_failures"`
		BreakerOpenFor  Duration            `json:"breaker_open_for"`
		BreakerHalfOpen uint32              `json:"breaker_half_open_requests"`
	} `json:"upstream"`

	Redis struct {
		Addrs            []string `json:"addrs"`
		MasterName       string   `json:"master_name"`
		SentinelUsername string   `json:"sentinel_username"`
		SentinelPassword string   `json:"sentinel_password"`
		// SentinelPasswordFile names a file holding SentinelPassword.
		SentinelPasswordFile string `json:"sentinel_password_file"`
		Username             string `json:"username"`
		Password             string `json:"password"`
		// PasswordFile names a file holding Password.
		PasswordFile string   `json:"password_file"`
		DB           int      `json:"db"`
		Timeout      Duration `json:"timeout"`
		PoolSize     int      `json:"pool_size"`
		// EmbeddedMaxBytes caps the embedded in-process Redis (used when
		// Addrs is empty).
		EmbeddedMaxBytes int64 `json:"embedded_max_bytes"`
	} `json:"redis"`

	Auth struct {
		KeyHashSecret string `json:"key_hash_secret"`
		// KeyHashSecretFile names a file holding KeyHashSecret.
		KeyHashSecretFile string   `json:"key_hash_secret_file"`
		TTL               Duration `json:"ttl"`
		Stale             Duration `json:"stale"`
		NegativeTTL       Duration `json:"negative_ttl"`
		MaxEntries        int      `json:"max_entries"`
		// NegativeEntries bounds the separate cache of keys that resolved
		// invalid, so that invalid keys never evict valid ones.
		NegativeEntries int `json:"negative_entries"`
		// Index turns the local key index on (synchronised from the
		// dealers service's key feed).
		Index           bool     `json:"index"`
		IndexInterval   Duration `json:"index_interval"`
		IndexStaleAfter Duration `json:"index_stale_after"`
		// LookupRate and LookupBurst: the per-instance token bucket of
		// per-key lookups when the index cannot decide.
		LookupRate  float64 `json:"lookup_rate"`
		LookupBurst int     `json:"lookup_burst"`
	} `json:"auth"`

	Cache struct {
		L1MaxBytes int64 `json:"l1_max_bytes"`
		// L1HotBytes is the hot (Go heap) tier's share of L1MaxBytes; the
		// rest is the off-heap bulk tier. 0: automatic (cache.L1Tiers),
		// negative: one tier.
		L1HotBytes   int64             `json:"l1_hot_bytes"`
		Routes       MergedMap[Policy] `json:"routes"`
		ContentTypes MergedMap[Policy] `json:"content_types"`
		LockTTL      Duration          `json:"lock_ttl"`
		LockWait     Duration          `json:"lock_wait"`
		// AutoPipeline sends the entry reads and writes of concurrent
		// requests to Redis in shared round trips (see cache.Options).
		AutoPipeline bool `json:"redis_auto_pipeline"`
		// GzipLevel is how cached bodies are compressed: 0 (the default,
		// cache.DefaultGzipLevel) with the shared Huffman code of
		// internal/deflate, 1-9 with klauspost's compressor at that level.
		GzipLevel int `json:"gzip_level"`
		// MaxRefreshes bounds the background (stale-while-revalidate)
		// refreshes under way at once in the instance (positive; see
		// cache.Options.MaxRefreshes). Reloadable.
		MaxRefreshes int `json:"max_refreshes"`
		// RedisDealerBudget bounds the bytes of one dealer's entries this
		// instance adds to Redis and Redis still keeps (0: no bound; see
		// cache.Options.RedisDealerBudget). Reloadable.
		RedisDealerBudget int64 `json:"redis_dealer_budget_bytes"`
	} `json:"cache"`

	RateLimit struct {
		FailMode string           `json:"fail_mode"` // local, open, closed
		Default  Limit            `json:"default"`
		Plans    MergedMap[Limit] `json:"plans"`
		Costs    map[string]int   `json:"costs"` // tokens per request, by route
		MaxLease int              `json:"max_lease"`
		// FailedAuth limits authentication failures per client address;
		// OpenAPI requests for the OpenAPI document without a known key.
		FailedAuth Limit `json:"failed_auth"`
		OpenAPI    Limit `json:"openapi"`
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
		MaxLinesPerSec int     `json:"max_lines_per_sec"` // cap of access lines per second
		// MaxEventLinesPerSec caps event lines, in a budget of their own.
		MaxEventLinesPerSec int `json:"max_event_lines_per_sec"`
	} `json:"log"`

	// Tracing mirrors the OpenTelemetry environment variables; a variable
	// that is set wins over its field (TracingConfig, tracing.Config.WithEnv).
	Tracing struct {
		Disabled           bool              `json:"disabled"`            // OTEL_SDK_DISABLED
		Endpoint           string            `json:"endpoint"`            // OTEL_EXPORTER_OTLP_ENDPOINT
		TracesEndpoint     string            `json:"traces_endpoint"`     // OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
		Sampler            string            `json:"sampler"`             // OTEL_TRACES_SAMPLER
		SamplerArg         float64           `json:"sampler_arg"`         // OTEL_TRACES_SAMPLER_ARG
		ServiceName        string            `json:"service_name"`        // OTEL_SERVICE_NAME
		ResourceAttributes map[string]string `json:"resource_attributes"` // OTEL_RESOURCE_ATTRIBUTES
		// ClientSampledPerSecond bounds the requests a second traced
		// because a client's traceparent asked (-1: no bound).
		ClientSampledPerSecond float64 `json:"client_sampled_per_second"`
	} `json:"tracing"`
}

// Default returns the built-in defaults; a config file overrides
// what it sets.
func Default() *Config {
	c := &Config{Listen: "127.0.0.1:8080", AdminListen: "127.0.0.1:9091", WatchInterval: Duration(2 * time.Second)}
	c.Server.ReadTimeout = Duration(5 * time.Second)
	c.Server.WriteTimeout = Duration(10 * time.Second)
	c.Server.IdleTimeout = Duration(60 * time.Second)
	c.Server.MaxHeaderBytes = 8 << 10
	c.Server.WriteBuffer = 0 // WriteBufferBytes: by server.reduce_memory
	c.Server.MaxRequestBody = 1024
	c.Server.Concurrency = 0 // derived from the file-descriptor limit at start
	c.Server.MaxConnsPerIP = 1024
	c.Server.IdleTimeoutBusy = Duration(5 * time.Second)
	c.Server.ReduceMemory = true
	c.Server.GCMinGrowth = DefaultGCMinGrowth
	c.Server.ParkIdleAfter = Duration(time.Second)
	c.Server.ParkAbove = 128
	c.Server.ProxyProtocolFrom = []string{}
	c.Server.ShutdownGrace = Duration(15 * time.Second)
	c.Server.ProblemBaseURL = publicshape.DefaultProblemBase
	def := aggregator.DefaultSettings()
	c.Server.RequestTimeout = Duration(def.RequestTimeout)
	c.Server.GzipMinBytes = def.GzipMinBytes
	c.Upstream.BaseURL = ""
	c.Upstream.Timeouts = map[string]Duration{}
	for _, svc := range upstream.Services {
		d := upstream.DefaultTimeout
		if svc == upstream.SvcCatalog || svc == upstream.SvcMedia {
			d = upstream.DefaultQuickTimeout
		}
		c.Upstream.Timeouts[svc] = Duration(d)
	}
	c.Upstream.MaxConnsPerHost = upstream.DefaultMaxConnsPerHost
	c.Upstream.BreakerFailures = upstream.DefaultBreakerFailures
	c.Upstream.BreakerOpenFor = Duration(upstream.DefaultBreakerOpenFor)
	c.Upstream.BreakerHalfOpen = upstream.DefaultBreakerHalfOpen
	c.Redis.Addrs = []string{}
	c.Redis.Timeout = Duration(50 * time.Millisecond)
	c.Redis.EmbeddedMaxBytes = 64 << 20
	c.Auth.KeyHashSecret = "dealer-edge-dev-secret-change-me"
	c.Auth.TTL = Duration(def.AuthTTL)
	c.Auth.Stale = Duration(def.AuthStale)
	c.Auth.NegativeTTL = Duration(def.AuthNegativeTTL)
	c.Auth.MaxEntries = 100000
	c.Auth.NegativeEntries = 100000
	c.Auth.Index = true
	c.Auth.IndexInterval = Duration(def.IndexInterval)
	c.Auth.IndexStaleAfter = Duration(def.IndexStaleAfter)
	c.Auth.LookupRate = def.LookupRate
	c.Auth.LookupBurst = def.LookupBurst
	c.Cache.L1MaxBytes = 64 << 20
	c.Cache.Routes = map[string]Policy{}
	for name, p := range def.Cache {
		c.Cache.Routes[name] = Policy{Duration(p.TTL), Duration(p.StaleWhileRevalidate), Duration(p.StaleIfError), Duration(def.NotFoundTTL[name])}
	}
	c.Cache.ContentTypes = map[string]Policy{}
	c.Cache.LockTTL = Duration(2 * time.Second)
	c.Cache.LockWait = Duration(250 * time.Millisecond)
	c.Cache.AutoPipeline = true
	c.Cache.MaxRefreshes = cache.DefaultMaxRefreshes
	c.Cache.RedisDealerBudget = DefaultRedisDealerBudget
	c.RateLimit.FailMode = "local"
	c.RateLimit.Default = Limit{def.DefaultLimit.Rate, def.DefaultLimit.Burst}
	c.RateLimit.Plans = map[string]Limit{}
	for name, l := range def.Limits {
		c.RateLimit.Plans[name] = Limit{l.Rate, l.Burst}
	}
	c.RateLimit.Costs = map[string]int{}
	for route, n := range def.Costs {
		c.RateLimit.Costs[route] = n
	}
	c.RateLimit.MaxLease = 256
	c.RateLimit.FailedAuth = Limit{def.FailedAuthLimit.Rate, def.FailedAuthLimit.Burst}
	c.RateLimit.OpenAPI = Limit{def.OpenAPILimit.Rate, def.OpenAPILimit.Burst}
	c.Server.TrustedProxies = []string{}
	c.Server.ForwardedHeader = "x-forwarded-for"
	c.Deprecation.Deprecation = def.Deprecation.Deprecation
	c.Deprecation.Sunset = def.Deprecation.Sunset
	c.Deprecation.SuccessorURL = def.Deprecation.SuccessorURL
	c.Log.Level = "info"
	c.Log.AccessLog = true
	c.Log.AccessSample = 1
	c.Log.MaxLinesPerSec = 200
	c.Log.MaxEventLinesPerSec = 100
	c.Tracing.Sampler = tracing.DefaultSampler
	c.Tracing.SamplerArg = tracing.DefaultSamplerArg
	c.Tracing.ServiceName = tracing.DefaultServiceName
	c.Tracing.ResourceAttributes = map[string]string{}
	c.Tracing.ClientSampledPerSecond = tracing.DefaultClientSampledPerSecond
	return c
}

// Load reads a config file over the defaults and validates it. Unknown
// fields are errors, so a typo cannot silently leave a knob at its default.
func Load(path string) (*Config, error) {
	c, err := Read(path)
	if err != nil {
		return nil, err
	}
	if err := c.ValidateFile(path); err != nil {
		if path == "" {
			return c, err
		}
		return nil, err
	}
	return c, nil
}

// ValidateFile is Validate with the error naming the file the config was
// read from (path; none when empty).
func (c *Config) ValidateFile(path string) error {
	err := c.Validate()
	if err != nil && path != "" {
		err = fmt.Errorf("config %s: %w", path, err)
	}
	return err
}

// Read is Load without the validation: the file over the defaults, its
// secrets read from their files, for a caller that changes fields (the
// command line's flags) before it validates the result.
func Read(path string) (*Config, error) {
	c := Default()
	if path == "" {
		return c, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if err := checkStrict(b, reflect.TypeFor[Config]()); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(c); err != nil {
		var raw any
		if json.Unmarshal(b, &raw) == nil {
			if field := badField(raw, reflect.TypeFor[Config](), ""); field != "" {
				err = fmt.Errorf("%s: %w", field, err)
			}
		}
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if err := c.ReadSecrets(); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// badField returns the path of the first value in raw (a decoded JSON
// document) that does not decode into its field of t, or "". It names the
// field when a value's own UnmarshalJSON (durations, times) rejected it,
// which encoding/json reports without the field.
func badField(raw any, t reflect.Type, prefix string) string {
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	obj, isObj := raw.(map[string]any)
	switch {
	case isObj && t.Kind() == reflect.Struct && t != reflect.TypeFor[time.Time]():
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if v, ok := obj[name]; ok {
				if p := badField(v, f.Type, join(name)); p != "" {
					return p
				}
			}
		}
		return ""
	case isObj && t.Kind() == reflect.Map:
		for k, v := range obj {
			if p := badField(v, t.Elem(), join(k)); p != "" {
				return p
			}
		}
		return ""
	}
	b, _ := json.Marshal(raw)
	if json.Unmarshal(b, reflect.New(t).Interface()) != nil {
		return prefix
	}
	return ""
}

// Validate checks the config; errors name the bad field as it is spelled
// in the file.
func (c *Config) Validate() error {
	var errs []error
	bad := func(field, msg string) { errs = append(errs, fmt.Errorf("%s: %s", field, msg)) }
	pubHost, pubPort, pubErr := listenAddr(c.Listen)
	if pubErr != nil {
		bad("listen", "must be host:port, e.g. 127.0.0.1:8080: "+pubErr.Error())
	}
	if c.AdminListen != "off" {
		if host, port, err := listenAddr(c.AdminListen); err != nil {
			bad("admin_listen", `must be host:port, e.g. 127.0.0.1:9091, or "off": `+err.Error())
		} else {
			if c.AdminToken == "" && !ops.IsLoopback(c.AdminListen) {
				bad("admin_token", "is required when admin_listen ("+c.AdminListen+") is not a loopback address")
			}
			if pubErr == nil && port != 0 && port == pubPort && bindsOverlap(pubHost, host) {
				// Start-up binds the public listener first; this one
				// then failed with "address already in use"
				// (TestListenAddressesAsStartBindsThem).
				bad("admin_listen", "must not take the public listener's port on an address it binds too (listen "+c.Listen+"; localhost is 127.0.0.1 and ::1, and 0.0.0.0, :: or an empty host take the port on every address): the second bind fails")
			}
		}
	}
	if c.AdminToken != "" && len(c.AdminToken) < 16 {
		bad("admin_token", "must be at least 16 characters")
	}
	if tok := c.AdminToken; strings.TrimSpace(tok) != tok || strings.ContainsFunc(tok, unicode.IsControl) {
		// A header cannot carry it: HTTP drops the whitespace around a
		// value, and control characters end or break the header, so no
		// request could ever present the token.
		bad("admin_token", "must not begin or end with whitespace, nor hold control characters (no Authorization header can carry it)")
	}
	for name, d := range map[string]Duration{"read_timeout": c.Server.ReadTimeout, "write_timeout": c.Server.WriteTimeout, "idle_timeout": c.Server.IdleTimeout, "request_timeout": c.Server.RequestTimeout} {
		if d <= 0 {
			bad("server."+name, "must be positive")
		}
	}
	if c.WatchInterval < 0 || c.WatchInterval > 0 && c.WatchInterval < Duration(10*time.Millisecond) {
		bad("watch_interval", "must be 0 (the watch off) or at least 10ms (each check hashes the config and every secret file)")
	}
	if g := c.Server.GCMinGrowth; g != 0 && (g < 1<<20 || g > 1<<30) {
		bad("server.gc_min_growth_bytes", "must be 0 (Go's default pacing) or between 1048576 and 1073741824")
	}
	if wb := c.Server.WriteBuffer; wb != 0 && (wb < 4096 || wb > 1<<20) {
		bad("server.write_buffer_bytes", "must be 0 (chosen by server.reduce_memory) or between 4096 and 1048576")
	}
	// The header bound is the read buffer of every connection (fasthttp's
	// ReadBufferSize): a value far above any real header block would be
	// allocated per connection.
	if u, err := url.Parse(c.Server.ProblemBaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("server.problem_base_url", "must be an absolute http(s) URL (it prefixes the type URI of every problem)")
	} else if strings.ContainsFunc(c.Server.ProblemBaseURL, notURIChar) {
		// It reaches every client's problem type as written.
		bad("server.problem_base_url", "must be a URI: ASCII, no spaces, quotes or angle brackets (percent-encode other characters)")
	} else if u.User != nil || u.RawQuery != "" || u.ForceQuery || strings.Contains(c.Server.ProblemBaseURL, "#") {
		// "#" itself, not u.Fragment: a bare "#" is an empty fragment,
		// which net/url does not report (TestProblemBaseURLMakesURIs).
		// The code is appended to it: after a query or fragment it
		// would not be in the path, and userinfo is sent to clients.
		bad("server.problem_base_url", "must have no userinfo, query or fragment (the problem code is appended to its path; the value is not shown)")
	}
	if c.Server.MaxHeaderBytes < 1024 || c.Server.MaxHeaderBytes > 1<<20 {
		bad("server.max_header_bytes", "must be between 1024 and 1048576")
	}
	if c.Server.GzipMinBytes < 0 {
		bad("server.gzip_min_bytes", "must not be negative (0 turns compression off)")
	}
	// fasthttp reads 0 as its default of 4 MiB, not as "no body".
	if c.Server.MaxRequestBody < 1 {
		bad("server.max_request_body", "must be at least 1 (0 is not \"no body\": the server would take its 4 MiB default)")
	}
	if c.Server.Concurrency < 0 {
		bad("server.concurrency", "must not be negative")
	}
	if c.Server.MaxConnsPerIP < 0 {
		bad("server.max_conns_per_ip", "must not be negative")
	}
	if c.Server.ShutdownGrace < 0 {
		bad("server.shutdown_grace", "must not be negative")
	}
	if c.Server.IdleTimeoutBusy < 0 {
		bad("server.idle_timeout_busy", "must not be negative (0 keeps server.idle_timeout under pressure)")
	}
	if c.Server.ParkIdleAfter < 0 {
		bad("server.park_idle_after", "must not be negative (0 turns parking off)")
	}
	if c.Server.ParkAbove < 0 {
		bad("server.park_above", "must not be negative")
	}
	for _, p := range c.Server.ProxyProtocolFrom {
		if _, err := netip.ParsePrefix(p); err != nil {
			// The listener parses with net.ParseIP, which
			// takes no IPv6 zone.
			if a, err := netip.ParseAddr(p); err != nil || a.Zone() != "" {
				bad("server.proxy_protocol_from", fmt.Sprintf("%q is not a CIDR (10.0.0.0/8) or an address", p))
			}
		}
	}
	if len(c.Server.ProxyProtocolFrom) > 0 && !c.Server.ProxyProtocol {
		bad("server.proxy_protocol_from", "is only used with server.proxy_protocol: true")
	}
	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		bad("tls", "cert_file and key_file are set together (both for TLS, neither for plain HTTP)")
	}
	if c.Redis.EmbeddedMaxBytes < 64<<10 {
		bad("redis.embedded_max_bytes", "must be at least 65536")
	}
	if c.Redis.DB < 0 {
		bad("redis.db", "must not be negative")
	} else if c.Redis.DB != 0 && len(c.Redis.Addrs) > 1 && c.Redis.MasterName == "" {
		// Several addresses without master_name are a Redis Cluster,
		// which has database 0 only: the client drops the number.
		bad("redis.db", "must be 0 with several redis.addrs (Redis Cluster has no database number; set redis.master_name for Sentinel)")
	}
	if c.Log.MaxEventLinesPerSec < 0 {
		bad("log.max_event_lines_per_sec", "must not be negative (0 means no cap)")
	}
	if c.Upstream.BaseURL != "" { // required unless --demo brings the fake (cmd/dealer-edge)
		if _, err := upstream.ParseBaseURL(c.Upstream.BaseURL); err != nil {
			var ue *url.Error
			if errors.As(err, &ue) {
				// url.Error quotes the whole value, userinfo
				// password included.
				err = fmt.Errorf("is not a URL: %v (the value is not shown: it may hold credentials)", ue.Err)
			}
			bad("upstream.base_url", err.Error())
		}
	}
	if err := CheckRequestBudget(c.Server.RequestTimeout, c.Upstream.Timeouts); err != nil {
		errs = append(errs, err)
	}
	for svc, d := range c.Upstream.Timeouts {
		switch {
		case !slices.Contains(upstream.Services, svc):
			bad("upstream.timeouts."+svc, "unknown service (known: "+strings.Join(upstream.Services, ", ")+")")
		case d < 0:
			bad("upstream.timeouts."+svc, "must not be negative")
		}
	}
	if c.Upstream.MaxConnsPerHost < 0 {
		bad("upstream.max_conns_per_host", "must not be negative")
	}
	// An open breaker makes no call for breaker_open_for, so it refuses
	// or opens only while requests need its service. Within
	// ops.BreakerQuietAfter of its opening it is what /readyz, the status
	// page and the EdgeUpstreamBreakerOpen alert all count as trouble;
	// open longer, it would stay degraded in /readyz with no request
	// refused and no alert, and the service's recovery would go untested
	// for that long.
	switch {
	case c.Upstream.BreakerOpenFor < 0:
		bad("upstream.breaker_open_for", "must not be negative")
	case c.Upstream.BreakerOpenFor.D() > ops.BreakerQuietAfter:
		bad("upstream.breaker_open_for", "must be at most "+ops.BreakerQuietAfter.String()+" (the window of /readyz's and EdgeUpstreamBreakerOpen's breaker evidence)")
	}
	if c.Redis.Timeout <= 0 {
		bad("redis.timeout", "must be positive")
	}
	if c.Redis.PoolSize < 0 || c.Redis.PoolSize > maxRedisPool {
		// go-redis allocates per pool slot up front (a 1e8 pool ran the
		// start out of memory, above MaxInt32 it panicked).
		bad("redis.pool_size", "must be between 0 (the default) and "+strconv.Itoa(maxRedisPool))
	}
	seen := map[string]bool{}
	for _, a := range c.Redis.Addrs {
		// An address without a port, an empty one (go-redis dials
		// localhost:6379) or one given twice (Cluster mode) used to pass.
		host, port, err := net.SplitHostPort(a)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 || strings.Contains(a, "@") {
			shown := strconv.Quote(a)
			if strings.Contains(a, "@") {
				shown = "an entry with userinfo (not shown: it may hold a password)"
			}
			bad("redis.addrs", shown+" is not host:port")
		} else if seen[a] {
			bad("redis.addrs", fmt.Sprintf("%q is listed twice", a))
		}
		seen[a] = true
	}
	// The Sentinel credentials authenticate to the Sentinels themselves
	// (username/password are for the master); they mean nothing without
	// Sentinel mode, and an ACL user name needs its password.
	if c.Redis.MasterName == "" {
		if c.Redis.SentinelUsername != "" {
			bad("redis.sentinel_username", "is only used in Sentinel mode: set redis.master_name too")
		}
		if c.Redis.SentinelPassword != "" {
			bad("redis.sentinel_password", "is only used in Sentinel mode: set redis.master_name too")
		}
	} else if c.Redis.SentinelUsername != "" && c.Redis.SentinelPassword == "" {
		bad("redis.sentinel_username", "needs redis.sentinel_password (ACL authentication to the Sentinels)")
	}
	if c.Redis.Username != "" && c.Redis.Password == "" {
		// go-redis authenticates only with a password: a user name
		// alone sent no credentials and ran as the "default" user.
		bad("redis.username", "needs redis.password (or redis.password_file): without a password no credentials are sent and the edge runs as Redis's default user")
	}
	if len(c.Auth.KeyHashSecret) < 16 {
		bad("auth.key_hash_secret", "must be at least 16 characters")
	}
	if c.Auth.TTL <= 0 {
		bad("auth.ttl", "must be positive")
	}
	if c.Auth.Stale < 0 {
		bad("auth.stale", "must not be negative")
	}
	if c.Auth.NegativeTTL <= 0 {
		bad("auth.negative_ttl", "must be positive")
	}
	if c.Auth.MaxEntries < 0 {
		bad("auth.max_entries", "must not be negative")
	}
	if c.Auth.NegativeEntries < 0 {
		bad("auth.negative_entries", "must not be negative")
	}
	if c.Auth.IndexInterval < Duration(minIndexInterval) {
		// 1ns or 1us made the key index sync back to back.
		bad("auth.index_interval", "must be at least "+minIndexInterval.String())
	}
	if c.Auth.IndexStaleAfter < c.Auth.IndexInterval {
		bad("auth.index_stale_after", "must be at least auth.index_interval")
	}
	if !(c.Auth.LookupRate > 0) || c.Auth.LookupRate > 1e6 {
		bad("auth.lookup_rate", "must be positive and at most 1e6")
	}
	if c.Auth.LookupBurst < 1 {
		bad("auth.lookup_burst", "must be at least 1")
	}
	if c.Cache.L1MaxBytes <= 0 || c.Cache.L1MaxBytes > 1<<40 {
		bad("cache.l1_max_bytes", "must be positive and at most 1 TiB (1099511627776)")
	}
	if c.Cache.GzipLevel < 0 || c.Cache.GzipLevel > 9 {
		bad("cache.gzip_level", "must be 0 (the default, the shared code) or 1-9")
	}
	if c.Cache.MaxRefreshes <= 0 {
		// Zero would silently become the cache package's own default, a
		// negative value its "no bound".
		bad("cache.max_refreshes", "must be positive (background refreshes under way at once)")
	} else if c.Upstream.MaxConnsPerHost >= 0 {
		if err := CheckRefreshBound(c.Cache.MaxRefreshes, c.Upstream.MaxConnsPerHost); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Cache.RedisDealerBudget < 0 {
		bad("cache.redis_dealer_budget_bytes", "must not be negative (0 turns the per-dealer Redis budget off)")
	}
	if c.Cache.L1HotBytes > 0 && c.Cache.L1HotBytes > c.Cache.L1MaxBytes {
		bad("cache.l1_hot_bytes", "must not exceed cache.l1_max_bytes (0: automatic, negative: no bulk tier)")
	}
	policy := func(field string, p Policy) {
		if p.TTL < 0 || p.StaleWhileRevalidate < 0 || p.StaleIfError < 0 {
			bad(field, "ttl, stale_while_revalidate and stale_if_error must not be negative")
		}
	}
	for name, p := range c.Cache.Routes {
		if !slices.Contains(aggregator.CacheRoutes, name) {
			bad("cache.routes."+name, "unknown route (known: "+strings.Join(aggregator.CacheRoutes, ", ")+")")
		}
		policy("cache.routes."+name, p)
		switch {
		case p.NotFoundTTL < 0:
			bad("cache.routes."+name+".not_found_ttl", "must not be negative (0s turns it off)")
		case p.NotFoundTTL > 0 && !slices.Contains(aggregator.NotFoundRoutes, name):
			bad("cache.routes."+name+".not_found_ttl", "only "+strings.Join(aggregator.NotFoundRoutes, ", ")+" remember not found answers")
		}
	}
	for name, p := range c.Cache.ContentTypes {
		if !slices.Contains(ContentTypes, name) {
			bad("cache.content_types."+name, "unknown content type (known: "+strings.Join(ContentTypes, ", ")+")")
		}
		policy("cache.content_types."+name, p)
		if p.TTL == 0 && (p.StaleWhileRevalidate > 0 || p.StaleIfError > 0) {
			// No default under the entry: a ttl left out is 0s, which
			// turns the type's caching off, stale windows included.
			bad("cache.content_types."+name+".ttl", "is 0s (an entry has no defaults: a field left out is 0), which turns caching off for the type and leaves its stale windows unused: set ttl, or drop the stale windows to turn caching off")
		}
		if p.NotFoundTTL != 0 {
			bad("cache.content_types."+name+".not_found_ttl", "content details answer an unknown slug from the cached view; only "+strings.Join(aggregator.NotFoundRoutes, ", ")+" remember not found answers")
		}
	}
	if c.Cache.LockTTL < Duration(time.Millisecond) { // PX is in whole ms; PX 0 is refused
		// Zero would silently become the cache package's own default.
		bad("cache.lock_ttl", "must be at least 1ms")
	} else if c.Cache.LockWait > 0 && c.Cache.LockTTL < c.Cache.LockWait {
		// A waiter takes a lock that is gone for a fill that ended
		// without an entry and fills at once: an expired lock ended
		// every wait at lock_ttl.
		bad("cache.lock_ttl", "must be at least cache.lock_wait ("+c.Cache.LockWait.D().String()+"): a lock that expires ends the other instances' wait, and they fill at once")
	}
	if c.Cache.LockWait < 0 {
		bad("cache.lock_wait", "must not be negative (0 disables the cross-instance fill lock)")
	}
	switch c.RateLimit.FailMode {
	case "local", "open", "closed":
	default:
		bad("rate_limit.fail_mode", "must be local, open or closed")
	}
	limit := func(field string, l Limit) {
		if err := (ratelimit.Limit{Rate: l.Rate, Burst: l.Burst}).Validate(); err != nil {
			bad(field, strings.TrimPrefix(err.Error(), "ratelimit: "))
		}
	}
	limit("rate_limit.default", c.RateLimit.Default)
	limit("rate_limit.failed_auth", c.RateLimit.FailedAuth)
	limit("rate_limit.openapi", c.RateLimit.OpenAPI)
	if trusted, err := ParsePrefixes(c.Server.TrustedProxies); err != nil {
		bad("server.trusted_proxies", err.Error())
	} else {
		for i, p := range trusted {
			if p.Addr().Is4() && p.Bits() > 0 && p.Bits() < 8 || !p.Addr().Is4() && p.Bits() > 0 && p.Bits() < 7 {
				// Wider than any private range (10.0.0.0/8, fc00::/7):
				// no proxy fleet needs it, and a few of them trust every
				// peer as /0 does (0.0.0.0/1 and 128.0.0.0/1), which the
				// /0 check alone let through.
				widest := 8
				if !p.Addr().Is4() {
					widest = 7
				}
				bad("server.trusted_proxies", fmt.Sprintf("%q is wider than /%d: it trusts a large share of all peers as proxies (0.0.0.0/1 and 128.0.0.0/1 together trust every one), so clients could name their own address in %s; list your proxies' addresses or networks (e.g. 10.0.0.0/8, fc00::/7)", c.Server.TrustedProxies[i], widest, c.Server.ForwardedHeader))
			}
			if p.Bits() == 0 {
				// Every peer is a trusted proxy: each client names its
				// own address in the forwarding header, a new one per
				// request, past the per-address limits
				// (TestTrustedProxiesEveryAddressRefused).
				family := "IPv6"
				if p.Addr().Is4() {
					family = "IPv4"
				}
				bad("server.trusted_proxies", fmt.Sprintf("%q trusts every %s peer: any client could name its own address in %s and pass rate_limit.failed_auth and rate_limit.openapi with a new one per request; list your proxies' addresses or networks (e.g. 10.0.0.0/8, fc00::/7)", c.Server.TrustedProxies[i], family, c.Server.ForwardedHeader))
			}
		}
	}
	if h := c.Server.ForwardedHeader; h != "x-forwarded-for" && h != "forwarded" {
		bad("server.forwarded_header", `must be "x-forwarded-for" or "forwarded" (the header the trusted proxies write)`)
	}
	for name, l := range c.RateLimit.Plans {
		limit("rate_limit.plans."+name, l)
	}
	for route, n := range c.RateLimit.Costs {
		if !slices.Contains(aggregator.CacheRoutes, route) {
			bad("rate_limit.costs."+route, "unknown route (known: "+strings.Join(aggregator.CacheRoutes, ", ")+")")
		}
		if n < 1 || n > aggregator.MaxCost {
			bad("rate_limit.costs."+route, "must be between 1 and "+strconv.Itoa(aggregator.MaxCost))
		}
	}
	if c.RateLimit.MaxLease < 0 {
		bad("rate_limit.max_lease", "must not be negative")
	}
	switch strings.ToLower(c.Log.Level) {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level", "must be debug, info, warn or error")
	}
	if c.Log.AccessSample < 0 || c.Log.AccessSample > 1 {
		bad("log.access_sample", "must be between 0 and 1")
	}
	if c.Log.MaxLinesPerSec < 0 {
		bad("log.max_lines_per_sec", "must not be negative (0 means no cap)")
	}
	if r := c.Tracing.ClientSampledPerSecond; r <= 0 && r != -1 {
		bad("tracing.client_sampled_per_second", "must be positive, or -1 for no bound")
	}
	if err := c.TracingConfig().Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		// The aggregator's own check (its field names) catches anything
		// the checks above do not cover, the deprecation policy for one.
		if err := c.Settings().Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return errors.Join(errs...)
}

// listenAddr splits a listener address as net.Listen("tcp", addr) reads
// it: a port number in 0-65535 (empty is 0) or a service name it knows.
func listenAddr(addr string) (host string, port int, err error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		var ae *net.AddrError
		if errors.As(err, &ae) {
			return "", 0, errors.New(ae.Err)
		}
		return "", 0, err
	}
	port, err = net.LookupPort("tcp", p)
	if err != nil {
		return "", 0, fmt.Errorf("port %q is not a number in 0-65535 (or a known service name)", p)
	}
	return host, port, nil
}

// notURIChar reports a character that cannot be in a URI (RFC 3986:
// unreserved, reserved and '%' only).
func notURIChar(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return false
	}
	return !strings.ContainsRune("-._~:/?#[]@!$&'()*+,;=%", r)
}

// bindsOverlap reports whether listeners on hosts a and b with the same
// port conflict, as net.Listen("tcp") binds them on Linux: the same host
// name (case-insensitive), one of them a wildcard (an empty host or any
// unspecified address: Go listens on a wildcard, "0.0.0.0" included, with
// one dual-stack socket on [::], which takes the port of every IPv4 and
// IPv6 address), or an address both resolve to without the network
// (bindAddrs). A name other than localhost is not resolved and conflicts
// only with itself: the start reports that bind.
func bindsOverlap(a, b string) bool {
	if strings.EqualFold(a, b) {
		return true
	}
	as, aAny := bindAddrs(a)
	bs, bAny := bindAddrs(b)
	if aAny || bAny {
		return true
	}
	for _, x := range as {
		if slices.Contains(bs, x) {
			return true
		}
	}
	return false
}

// bindAddrs returns the addresses a listener on host binds that can be
// known without the network: a literal address (an IPv4-mapped one is its
// IPv4 address, as Go binds it), or for "localhost" both loopback
// addresses (Go binds the first IPv4 address the hosts file gives, ::1 on
// a host with none). every reports a wildcard host.
func bindAddrs(host string) (addrs []netip.Addr, every bool) {
	if host == "" {
		return nil, true
	}
	if strings.EqualFold(host, "localhost") {
		return []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}, false
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return nil, false
	}
	ip = ip.Unmap()
	if ip.IsUnspecified() {
		return nil, true
	}
	return []netip.Addr{ip}, false
}

// WriteBufferBytes is the response write buffer of a connection:
// server.write_buffer_bytes, or when that is 0, 64 KiB with
// server.reduce_memory (the buffer is the server's, lent to one response
// at a time, so its size costs memory per response being written, not
// per connection, and a listing up to 100 vehicles leaves in one write)
// and 16 KiB without it (each connection keeps its buffer).
func (c *Config) WriteBufferBytes() int {
	switch {
	case c.Server.WriteBuffer != 0:
		return c.Server.WriteBuffer
	case c.Server.ReduceMemory:
		return 64 << 10
	default:
		return 16 << 10
	}
}

// TracingConfig maps the tracing section to the tracer's config, before the
// OTEL_* variables are applied over it (tracing.Config.WithEnv).
func (c *Config) TracingConfig() tracing.Config {
	return tracing.Config{
		Disabled:               c.Tracing.Disabled,
		Endpoint:               c.Tracing.Endpoint,
		TracesEndpoint:         c.Tracing.TracesEndpoint,
		Sampler:                c.Tracing.Sampler,
		SamplerArg:             c.Tracing.SamplerArg,
		ServiceName:            c.Tracing.ServiceName,
		ResourceAttributes:     c.Tracing.ResourceAttributes,
		ClientSampledPerSecond: c.Tracing.ClientSampledPerSecond,
	}
}

// ContentTypes are the keys of cache.content_types.
var ContentTypes = []string{"faq", "news", "glossary", "guides", "videos", "podcasts"}

// LogOptions maps the log section to the log handler's options.
func (c *Config) LogOptions() ops.LogOptions {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(c.Log.Level))
	return ops.LogOptions{
		Level:               lvl,
		AccessLog:           c.Log.AccessLog,
		AccessSample:        c.Log.AccessSample,
		MaxLinesPerSec:      c.Log.MaxLinesPerSec,
		MaxEventLinesPerSec: c.Log.MaxEventLinesPerSec,
	}
}

// Clone returns a deep copy of c.
func (c *Config) Clone() *Config {
	n := &Config{}
	b, err := json.Marshal(c)
	if err == nil {
		err = json.Unmarshal(b, n)
	}
	if err != nil {
		panic("config: clone: " + err.Error()) // plain data: cannot happen
	}
	return n
}

// Flatten returns every leaf of c as dotted JSON path -> JSON value.
func (c *Config) Flatten() map[string]string {
	b, _ := json.Marshal(c)
	var v any
	_ = json.Unmarshal(b, &v)
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			for k, c := range m {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, c)
			}
			return
		}
		b, _ := json.Marshal(v)
		out[prefix] = string(b)
	}
	walk("", v)
	return out
}

// ChangedFields returns the sorted paths whose values differ in a and b.
func ChangedFields(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// reloadable are the config paths (and path prefixes) that a reload
// installs; every other field is read once at start.
var reloadable = []string{
	"server.request_timeout", "server.gzip_min_bytes", "auth.ttl", "auth.stale", "auth.negative_ttl",
	"auth.index_interval", "auth.index_stale_after", "auth.lookup_rate", "auth.lookup_burst",
	"server.trusted_proxies", "server.forwarded_header", "rate_limit.failed_auth", "rate_limit.openapi",
	"cache.routes", "cache.content_types", "cache.max_refreshes", "cache.redis_dealer_budget_bytes", "rate_limit.default", "rate_limit.plans",
	"rate_limit.costs",
	"deprecation", "log",
}

// RestartOnly keeps the paths that a reload does not install.
func RestartOnly(paths []string) []string {
	var out []string
	for _, p := range paths {
		live := false
		for _, r := range reloadable {
			if p == r || strings.HasPrefix(p, r+".") {
				live = true
				break
			}
		}
		if !live {
			out = append(out, p)
		}
	}
	return out
}

// Settings maps the reloadable part of the config to aggregator settings.
func (c *Config) Settings() *aggregator.Settings {
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
		IndexInterval:   c.Auth.IndexInterval.D(),
		IndexStaleAfter: c.Auth.IndexStaleAfter.D(),
		LookupRate:      c.Auth.LookupRate,
		LookupBurst:     c.Auth.LookupBurst,
		FailedAuthLimit: ratelimit.Limit{Rate: c.RateLimit.FailedAuth.Rate, Burst: c.RateLimit.FailedAuth.Burst},
		OpenAPILimit:    ratelimit.Limit{Rate: c.RateLimit.OpenAPI.Rate, Burst: c.RateLimit.OpenAPI.Burst},
		GzipMinBytes:    c.Server.GzipMinBytes,
	}
	s.NotFoundTTL = map[string]time.Duration{}
	for name, p := range c.Cache.Routes {
		s.Cache[name] = cache.Policy{TTL: p.TTL.D(), StaleWhileRevalidate: p.StaleWhileRevalidate.D(), StaleIfError: p.StaleIfError.D()}
		if p.NotFoundTTL > 0 {
			s.NotFoundTTL[name] = p.NotFoundTTL.D()
		}
	}
	for name, p := range c.Cache.ContentTypes {
		s.ContentCache[name] = cache.Policy{TTL: p.TTL.D(), StaleWhileRevalidate: p.StaleWhileRevalidate.D(), StaleIfError: p.StaleIfError.D()}
	}
	for name, l := range c.RateLimit.Plans {
		s.Limits[name] = ratelimit.Limit{Rate: l.Rate, Burst: l.Burst}
	}
	s.Costs = map[string]int{}
	for route, n := range c.RateLimit.Costs {
		s.Costs[route] = n
	}
	s.TrustedProxies, _ = ParsePrefixes(c.Server.TrustedProxies) // validated
	s.ForwardedHeader = c.Server.ForwardedHeader
	return s
}

// ParsePrefixes parses CIDRs ("10.0.0.0/8", "2001:db8::/32") and single
// addresses (taken as /32 or /128).
func ParsePrefixes(list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for _, v := range list {
		if strings.Contains(v, "/") {
			p, err := netip.ParsePrefix(v)
			if err != nil {
				return nil, fmt.Errorf("%q is not a CIDR", v)
			}
			if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
				// An IPv4-mapped CIDR is its IPv4 one: peers are unmapped
				// before the check, and an IPv6 prefix never holds an IPv4
				// address (TestTrustedProxyMappedCIDR).
				p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(v)
		if err != nil {
			return nil, fmt.Errorf("%q is not an address or CIDR", v)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// UpstreamChain is the longest run of upstream calls one public request
// makes one after another, by the services' timeouts (0: the default): a
// key lookup (the dealers service twice: the key, then its dealer), a
// vehicle detail (inventory and media at once, then catalog), or a content
// call.
func UpstreamChain(timeouts map[string]Duration) time.Duration {
	t := func(svc string) time.Duration {
		if d := timeouts[svc].D(); d > 0 {
			return d
		}
		if svc == upstream.SvcCatalog || svc == upstream.SvcMedia {
			return upstream.DefaultQuickTimeout
		}
		return upstream.DefaultTimeout
	}
	// Saturating, so that huge timeouts cannot wrap the chain negative and
	// pass CheckRequestBudget.
	add := func(a, b time.Duration) time.Duration {
		if a > math.MaxInt64-b {
			return math.MaxInt64
		}
		return a + b
	}
	return max(add(t(upstream.SvcDealers), t(upstream.SvcDealers)),
		add(max(t(upstream.SvcInventory), t(upstream.SvcMedia)), t(upstream.SvcCatalog)),
		t(upstream.SvcContent))
}

// MaxRefreshesFor is the most cache.max_refreshes an upstream pool of
// maxConnsPerHost connections per service (0: the default) takes: half of
// it (at least 1), as the default 128 is of the default 256.
func MaxRefreshesFor(maxConnsPerHost int) int {
	if maxConnsPerHost == 0 {
		maxConnsPerHost = upstream.DefaultMaxConnsPerHost
	}
	return max(maxConnsPerHost/2, 1)
}

// CheckRefreshBound reports cache.max_refreshes above half of the
// connections of each upstream service (upstream.max_conns_per_host,
// MaxRefreshesFor). A refresh holds a connection of a service for each call
// it makes, and a call waits for a free connection until its deadline:
// with refreshes allowed every connection of a slow service (max_refreshes
// 1000 beside the default 256 passed the check before 2026-11-29), a burst
// of stale hits could leave the misses of every client waiting for their
// deadline while the stale keys were served anyway
// (TestRefreshBoundWithinUpstreamPool). Refreshes hold a Redis connection
// only for each command (no pinned connection; with
// cache.redis_auto_pipeline, a share of a pipeline), so redis.pool_size
// is not a bound of theirs. A reload checks it against the pool in force
// (read only at start).
func CheckRefreshBound(maxRefreshes, maxConnsPerHost int) error {
	if limit := MaxRefreshesFor(maxConnsPerHost); maxRefreshes > limit {
		pool := maxConnsPerHost
		if pool == 0 {
			pool = upstream.DefaultMaxConnsPerHost
		}
		return fmt.Errorf("cache.max_refreshes: must be at most %d, half of upstream.max_conns_per_host (%d connections per service): more background refreshes could hold every connection of a slow service and leave misses waiting for their deadline; lower it or raise upstream.max_conns_per_host", limit, pool)
	}
	return nil
}

// Bounds of redis.pool_size and auth.index_interval.
const (
	maxRedisPool     = 65536
	minIndexInterval = 10 * time.Millisecond
)

// CheckRequestBudget reports server.request_timeout at most the longest
// chain of upstream timeouts (UpstreamChain): a call cut by the request's
// deadline before its own timeout is not counted by its service's breaker
// (the caller gave up; the service may be fine), so with such a budget a
// hung service would never open its breaker and every request would wait
// the whole budget. A reload checks it against the timeouts in force
// (they are read only at start).
func CheckRequestBudget(requestTimeout Duration, timeouts map[string]Duration) error {
	if requestTimeout <= 0 {
		return nil // reported as not positive
	}
	if chain := UpstreamChain(timeouts); requestTimeout.D() <= chain {
		return fmt.Errorf("server.request_timeout: must be longer than the longest chain of upstream timeouts, %v (upstream.timeouts: two dealers calls, or inventory or media then catalog, or content), so that a hung service trips its breaker", chain)
	}
	return nil
}
