package aggregator

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/cache/ratelimit"
	"github.com/dealer-edge/dealer-edge/publicshape"
)

// Route names, used as cache policy keys, metric labels and log fields.
const (
	RouteInventoryListing = "inventory_listing"
	RouteInventoryDetails = "inventory_details"
	RouteContentHub       = "content_hub"
	RouteContentSearch    = "content_search"
	RouteContentListing   = "content_listing"
	RouteContentDetails   = "content_details"
	RouteOpenAPI          = "openapi"
	RouteNotFound         = "not_found"
)

// NotFoundRoutes lists the routes that remember a "not found" answer of
// the services (Settings.NotFoundTTL): the detail routes whose miss calls
// a service for the id. Content details answer an unknown slug from the
// cached view without a call, so they have nothing to remember.
var NotFoundRoutes = []string{RouteInventoryDetails}

// DefaultNotFoundTTL is the built-in NotFoundTTL of inventory_details:
// a third of the listing's TTL (30 s), so a vehicle added to the stock
// is hidden by a remembered 404 for at most 10 s, less than a cached
// listing hides it already.
const DefaultNotFoundTTL = 10 * time.Second

// CacheRoutes lists the routes that have a cache policy.
var CacheRoutes = []string{RouteInventoryListing, RouteInventoryDetails, RouteContentHub, RouteContentSearch, RouteContentListing, RouteContentDetails}

// Settings are the knobs that may change while the edge runs (config
// reload). A Server holds one *Settings at a time and swaps it atomically;
// a Settings value is never modified after it is installed.
type Settings struct {
	// Cache holds the policy per route (keys: the Route* names). A route
	// without an entry is not cached (X-Cache: BYPASS).
	Cache map[string]cache.Policy
	// ContentCache overrides the content listing/details policy per
	// content type (keys: faq, news, ...).
	ContentCache map[string]cache.Policy
	// NotFoundTTL is how long a route remembers that a dealer has no
	// record of an id (keys: the routes of NotFoundRoutes): a request for
	// it within that time is answered 404 without calling the services.
	// Zero (or no entry) turns it off; it is clamped to the route's TTL
	// (see NotFoundPolicy).
	NotFoundTTL map[string]time.Duration
	// Limits maps a key's plan to its rate limit; DefaultLimit applies to
	// plans without an entry.
	Limits       map[string]ratelimit.Limit
	DefaultLimit ratelimit.Limit
	// Costs is how many tokens of its key's bucket one request of a route
	// spends (keys: the Route* names of CacheRoutes); a route without an
	// entry costs 1. A cost above a plan's burst is charged as the burst.
	Costs map[string]int
	// Deprecation is the policy of the deprecated content types (guides,
	// glossary).
	Deprecation publicshape.DeprecationPolicy
	// RequestTimeout is the budget of one request's upstream work.
	RequestTimeout time.Duration
	// AuthTTL is how long a resolved key is trusted without asking the
	// dealers service again; AuthStale how much longer it is used when the
	// dealers service cannot answer; AuthNegativeTTL how long an unknown,
	// expired or orphaned key is remembered.
	AuthTTL, AuthStale, AuthNegativeTTL time.Duration
	// IndexInterval is how often the key index asks for changes;
	// IndexStaleAfter how old its last good sync may be before it no
	// longer decides alone (misses are then looked up under the budget,
	// hits still served for up to AuthStale more).
	IndexInterval, IndexStaleAfter time.Duration
	// LookupRate and LookupBurst are the per-instance token bucket of
	// per-key lookups at the dealers service when the index cannot decide.
	LookupRate  float64
	LookupBurst int
	// FailedAuthLimit limits authentication failures (401, 404
	// dealer_not_found) per client address (IPv4 address, IPv6 /64),
	// shared through Redis; OpenAPILimit limits requests for the OpenAPI
	// document without a known valid key, per client address.
	FailedAuthLimit, OpenAPILimit ratelimit.Limit
	// TrustedProxies are the peers whose Forwarded / X-Forwarded-For
	// headers name the client (see ClientAddr).
	TrustedProxies []netip.Prefix
	// ForwardedHeader is the one forwarding header the trusted proxies
	// write and the edge reads: "x-forwarded-for" (also when empty) or
	// "forwarded". The other is the client's to write, so it is ignored:
	// read beside it, a client behind a proxy that only appends
	// X-Forwarded-For chose its own address with a Forwarded header.
	ForwardedHeader string
	// GzipMinBytes: a cached or bypassed response body of at least this
	// many bytes goes out gzip-compressed (Content-Encoding: gzip, made
	// once per cache entry) to a client whose Accept-Encoding accepts
	// gzip. Zero turns compression off.
	GzipMinBytes int
}

// DefaultSettings returns the built-in settings, used when no config file
// says otherwise.
func DefaultSettings() *Settings {
	pol := func(ttl, swr, sie time.Duration) cache.Policy {
		return cache.Policy{TTL: ttl, StaleWhileRevalidate: swr, StaleIfError: sie}
	}
	return &Settings{
		Cache: map[string]cache.Policy{
			RouteInventoryListing: pol(30*time.Second, 30*time.Second, 10*time.Minute),
			RouteInventoryDetails: pol(60*time.Second, 60*time.Second, 30*time.Minute),
			RouteContentHub:       pol(5*time.Minute, time.Minute, time.Hour),
			RouteContentSearch:    pol(2*time.Minute, time.Minute, 30*time.Minute),
			RouteContentListing:   pol(5*time.Minute, time.Minute, time.Hour),
			RouteContentDetails:   pol(10*time.Minute, time.Minute, 6*time.Hour),
		},
		ContentCache: map[string]cache.Policy{},
		NotFoundTTL:  map[string]time.Duration{RouteInventoryDetails: DefaultNotFoundTTL},
		Limits: map[string]ratelimit.Limit{
			"default": {Rate: 50, Burst: 100},
			"limited": {Rate: 10, Burst: 10},
			"bench":   {Rate: 1e6, Burst: 1e6},
		},
		DefaultLimit: ratelimit.Limit{Rate: 50, Burst: 100},
		Costs:        DefaultCosts(),
		Deprecation: publicshape.DeprecationPolicy{
			Deprecation:  time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
			Sunset:       time.Date(2027, 6, 30, 23, 59, 59, 0, time.UTC),
			SuccessorURL: "https://editorial.dealer-edge.example/",
		},
		RequestTimeout:  2 * time.Second,
		AuthTTL:         60 * time.Second,
		AuthStale:       10 * time.Minute,
		AuthNegativeTTL: 10 * time.Second,
		IndexInterval:   5 * time.Second,
		IndexStaleAfter: 30 * time.Second,
		LookupRate:      20,
		LookupBurst:     50,
		FailedAuthLimit: ratelimit.Limit{Rate: 1, Burst: 30},
		OpenAPILimit:    ratelimit.Limit{Rate: 1, Burst: 30},
		GzipMinBytes:    1024,
	}
}

// Validate checks a Settings value; errors name the bad field.
func (s *Settings) Validate() error {
	var errs []error
	for name, p := range s.Cache {
		errs = append(errs, validPolicy("cache."+name, p))
	}
	for name, p := range s.ContentCache {
		if !isContentType(name) {
			errs = append(errs, fmt.Errorf("content_cache.%s: unknown content type", name))
		}
		errs = append(errs, validPolicy("content_cache."+name, p))
	}
	for route, d := range s.NotFoundTTL {
		if !slices.Contains(NotFoundRoutes, route) && d != 0 {
			errs = append(errs, fmt.Errorf("not_found_ttl.%s: only %s remember not found answers", route, strings.Join(NotFoundRoutes, ", ")))
		}
		if d < 0 {
			errs = append(errs, fmt.Errorf("not_found_ttl.%s: must not be negative", route))
		}
	}
	for name, l := range s.Limits {
		errs = append(errs, validLimit("limits."+name, l))
	}
	errs = append(errs, validLimit("default_limit", s.DefaultLimit))
	for route, c := range s.Costs {
		if !slices.Contains(CacheRoutes, route) {
			errs = append(errs, fmt.Errorf("costs.%s: unknown route", route))
		}
		if c < 1 || c > MaxCost {
			errs = append(errs, fmt.Errorf("costs.%s: must be between 1 and %d", route, MaxCost))
		}
	}
	if err := s.Deprecation.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("deprecation: %w", err))
	}
	if s.RequestTimeout <= 0 {
		errs = append(errs, errors.New("request_timeout: must be positive"))
	}
	if s.GzipMinBytes < 0 {
		errs = append(errs, errors.New("gzip_min_bytes: must not be negative"))
	}
	if s.AuthTTL <= 0 || s.AuthStale < 0 || s.AuthNegativeTTL <= 0 {
		errs = append(errs, errors.New("auth: ttl and negative_ttl must be positive, stale not negative"))
	}
	if s.IndexInterval <= 0 {
		errs = append(errs, errors.New("auth.index_interval: must be positive"))
	}
	if s.IndexStaleAfter < s.IndexInterval {
		errs = append(errs, errors.New("auth.index_stale_after: must be at least auth.index_interval"))
	}
	if !(s.LookupRate > 0) || s.LookupRate > 1e6 {
		errs = append(errs, errors.New("auth.lookup_rate: must be positive and at most 1e6"))
	}
	if s.LookupBurst < 1 {
		errs = append(errs, errors.New("auth.lookup_burst: must be at least 1"))
	}
	errs = append(errs, validLimit("rate_limit.failed_auth", s.FailedAuthLimit), validLimit("rate_limit.openapi", s.OpenAPILimit))
	return errors.Join(errs...)
}

func validPolicy(field string, p cache.Policy) error {
	if p.TTL < 0 || p.StaleWhileRevalidate < 0 || p.StaleIfError < 0 {
		return fmt.Errorf("%s: durations must not be negative", field)
	}
	return nil
}

// validLimit refuses a limit the limiter cannot enforce (ratelimit.Limit's
// Validate): one it refuses at every request, as SourceInvalid, so that
// every request of the plan would be a 429 with Retry-After 1 for as long
// as the settings stood (rate above 1e6/s, burst above 2^30, a refill of
// over 7 days; until 2026-11-29 only rate > 0 and burst >= 1 were checked
// here, and only the configs package's stricter check kept them out).
func validLimit(field string, l ratelimit.Limit) error {
	if err := l.Validate(); err != nil {
		return fmt.Errorf("%s: %s", field, strings.TrimPrefix(err.Error(), "ratelimit: "))
	}
	return nil
}

func (s *Settings) policy(route, contentType string) cache.Policy {
	if contentType != "" {
		if p, ok := s.ContentCache[contentType]; ok {
			return p
		}
	}
	return s.Cache[route]
}

// NotFoundPolicy is the cache policy of a route's remembered "not found"
// answers: fresh for NotFoundTTL, at most the route's own TTL (a route
// whose cache is off remembers nothing either), with no stale windows (a
// remembered 404 is never served past its TTL, nor kept for errors).
func (s *Settings) NotFoundPolicy(route string) cache.Policy {
	return cache.Policy{TTL: min(s.NotFoundTTL[route], s.Cache[route].TTL)}
}

// MaxCost bounds a route's cost.
const MaxCost = 1000

// DefaultCosts returns the built-in route costs: a search fans out to 12
// content-service calls on a miss (6 types, each filtered and whole) and
// holds a large entry, a hub 6 to 12; listings and details 1 or 2. A
// search spends 5 tokens, a hub 3, everything else 1, so the default plan
// (50/s, burst 100) sustains 10 searches a second.
func DefaultCosts() map[string]int {
	return map[string]int{RouteContentSearch: 5, RouteContentHub: 3}
}

// cost is the number of tokens a request of route spends.
func (s *Settings) cost(route string) int {
	if c, ok := s.Costs[route]; ok {
		return c
	}
	return 1
}

func (s *Settings) limit(plan string) ratelimit.Limit {
	if l, ok := s.Limits[plan]; ok {
		return l
	}
	return s.DefaultLimit
}
