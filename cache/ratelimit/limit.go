package ratelimit

import (
	"errors"
	"math"
	"strconv"
	"time"
)

// Limit is one rate limit: Burst requests at once, refilled at Rate
// requests per second (a token bucket of size Burst, evaluated as GCRA).
type Limit struct {
	// Rate is the sustained rate in requests per second. It must be
	// positive and at most MaxRate.
	Rate float64
	// Burst is the bucket size: how many requests a key with a full
	// bucket may make at once. It must be at least 1 and at most MaxBurst.
	Burst int
}

// Bounds of a valid Limit. The emission interval is a whole number of
// nanoseconds, rounded up (1,000 at MaxRate; 3,334 for 300,000/s, enforced
// as 299,940/s); MaxRefill bounds Burst/Rate so the arithmetic cannot
// overflow, in process and in the Redis script's Lua numbers.
const (
	MaxRate   = 1e6
	MaxBurst  = 1 << 30
	MaxRefill = 7 * 24 * time.Hour
)

// Validate reports whether l can be enforced: Rate in (0, MaxRate], Burst
// in [1, MaxBurst], and a full refill (Burst/Rate) of at most MaxRefill.
// The errors are comparable with errors.Is: ErrRate, ErrBurst, ErrRefill.
func (l Limit) Validate() error {
	switch {
	case math.IsNaN(l.Rate) || l.Rate <= 0 || l.Rate > MaxRate:
		return ErrRate
	case l.Burst < 1 || l.Burst > MaxBurst:
		return ErrBurst
	case float64(l.Burst)/l.Rate > MaxRefill.Seconds():
		return ErrRefill
	}
	return nil
}

// Errors of Limit.Validate.
var (
	ErrRate   = errors.New("ratelimit: rate must be positive and at most 1e6 per second")
	ErrBurst  = errors.New("ratelimit: burst must be between 1 and 2^30")
	ErrRefill = errors.New("ratelimit: burst/rate (time to refill) must be at most 7 days")
)

// interval returns the emission interval 1/Rate in the unit given by
// perSecond (1e6 for microseconds, 1e9 for nanoseconds), rounded up so
// that rounding never admits more than Rate.
func (l Limit) interval(perSecond float64) int64 {
	return max(1, int64(math.Ceil(perSecond/l.Rate)))
}

// Window is the period of the quota policy advertised in RateLimit-Policy:
// the time a drained bucket needs to refill, Burst/Rate, rounded up to
// whole seconds (at least 1).
func (l Limit) Window() time.Duration {
	if l.Rate <= 0 {
		return time.Second
	}
	return time.Duration(ceilSeconds(time.Duration(float64(l.Burst)/l.Rate*float64(time.Second)))) * time.Second
}

// FailMode says what the limiter does while Redis is unavailable.
type FailMode int

const (
	// FallbackLocal (the default) enforces the same Limit per instance with
	// an in-process GCRA; N instances then admit up to N times the limit.
	FallbackLocal FailMode = iota
	// FailOpen admits every request.
	FailOpen
	// FailClosed rejects every request, with Retry-After set to the time
	// until Redis is probed again.
	FailClosed
)

// String returns "local", "open" or "closed".
func (m FailMode) String() string {
	switch m {
	case FailOpen:
		return "open"
	case FailClosed:
		return "closed"
	case FallbackLocal:
		return "local"
	}
	return "FailMode(" + strconv.Itoa(int(m)) + ")"
}

// Decision sources: where an answer came from.
const (
	// SourceRedis: this request made the Redis round trip.
	SourceRedis = "redis"
	// SourceLease: answered in process from tokens leased from Redis, or
	// rejected in process because Redis said no token exists before a time
	// that has not come yet. Exact, no round trip.
	SourceLease = "lease"
	// SourceLocal: the in-process GCRA (no Redis configured, or Redis
	// unavailable with FallbackLocal).
	SourceLocal = "local"
	// SourceFailOpen: admitted because Redis is unavailable and the
	// FailMode is FailOpen.
	SourceFailOpen = "fail-open"
	// SourceFailClosed: rejected because Redis is unavailable and the
	// FailMode is FailClosed.
	SourceFailClosed = "fail-closed"
	// SourceInvalid: rejected because the Limit does not Validate.
	SourceInvalid = "invalid-limit"
)

// Decision is the answer for one request. The caller writes the response
// from it: 429 with Retry-After when !Allowed, and the RateLimit header
// fields (AppendHeaders) on every response.
type Decision struct {
	// Allowed reports whether the request may proceed.
	Allowed bool
	// Limit is the limit the decision was made under.
	Limit Limit
	// Remaining is how many more requests the key may make now. On the
	// lease path it is what Redis reported at lease time plus this
	// instance's unspent lease, so it can lag by up to LeaseWindow.
	Remaining int
	// RetryAfter is, when !Allowed, the time until one request will be
	// admitted (exact for the shared limit); zero when Allowed.
	RetryAfter time.Duration
	// Reset is the time until the bucket is full again (Remaining ==
	// Burst) if no more requests arrive.
	Reset time.Duration
	// Source is one of the Source constants.
	Source string
	// Cost is how many tokens the request spends (AllowN's cost after
	// clamping; 1 for Allow). Remaining, RetryAfter and the headers count
	// tokens.
	Cost int
}

// RetryAfterSeconds returns RetryAfter in whole seconds rounded up, at
// least 1 when the request was rejected and 0 when it was allowed: the
// value of the Retry-After header.
func (d Decision) RetryAfterSeconds() int {
	if d.Allowed {
		return 0
	}
	return max(1, int(ceilSeconds(d.RetryAfter)))
}

// AppendHeaders appends the values of the two header fields of the IETF
// RateLimit draft (draft-ietf-httpapi-ratelimit-headers, structured-field
// form) to dst and returns them as two sub-slices of the result, without
// allocating when dst has room:
//
//	RateLimit-Policy: "<name>";q=<Burst>;w=<Limit.Window seconds>[;edge-cost=<Cost>]
//	RateLimit:        "<name>";r=<Remaining>;t=<Reset seconds, rounded up>
//
// The policy says "Burst quota units per refill window"; a request spends
// one unit unless the policy carries edge-cost (a service-specific
// parameter, as the draft lets a server add), written when Cost is above
// 1; t is the time until the bucket is full again. name is written as a structured-field string:
// '"' and '\' are escaped, bytes outside printable ASCII dropped, and an
// empty name becomes "default". The returned slices alias dst's array (or
// a grown copy of it); copy them before dst is reused.
func (d Decision) AppendHeaders(dst []byte, name string) (policy, current []byte) {
	start := len(dst)
	dst = appendSFString(dst, name)
	dst = append(dst, ";q="...)
	dst = strconv.AppendInt(dst, int64(d.Limit.Burst), 10)
	dst = append(dst, ";w="...)
	dst = strconv.AppendInt(dst, int64(d.Limit.Window()/time.Second), 10)
	if d.Cost > 1 {
		dst = append(dst, ";edge-cost="...)
		dst = strconv.AppendInt(dst, int64(d.Cost), 10)
	}
	mid := len(dst)
	dst = appendSFString(dst, name)
	dst = append(dst, ";r="...)
	dst = strconv.AppendInt(dst, int64(max(0, d.Remaining)), 10)
	dst = append(dst, ";t="...)
	dst = strconv.AppendInt(dst, ceilSeconds(d.Reset), 10)
	return dst[start:mid:mid], dst[mid:]
}

func appendSFString(dst []byte, s string) []byte {
	if s == "" {
		s = "default"
	}
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c >= 0x20 && c < 0x7f:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// ceilSeconds rounds d up to whole seconds; negative durations give 0.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}
