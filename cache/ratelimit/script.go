package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// takeScript is GCRA taking up to n tokens at once, atomically.
//
// The bucket is one string key holding the theoretical arrival time (TAT)
// as "<microseconds>.<nanoseconds>": whole microseconds since the epoch
// and the nanoseconds past them, three digits (a value without the
// fraction, as written before 2026-11-29, is read as whole microseconds).
// The script computes with the TAT relative to now, in nanoseconds, which
// a Lua number (a double) holds exactly: an absolute time in nanoseconds
// (about 1.8e18) does not, and whole microseconds could not carry an
// emission interval that is not a whole number of them (300,000/s, an
// interval of 3.33 µs, was enforced as 250,000/s: TestRedisExactAdmissions).
// A token may be taken at now when, after taking it, TAT - now <= burst*T
// (T = emission interval). The key expires when the bucket would be full
// again, so an idle key costs no memory and a missing key means a full
// bucket.
//
//	KEYS[1] bucket key
//	ARGV[1] T, emission interval in nanoseconds (integer >= 1)
//	ARGV[2] burst (integer >= 1)
//	ARGV[3] n, tokens wanted (integer >= 1)
//	ARGV[4] now in microseconds, or 0 to use the server's clock (TIME). The
//	        key expires in Redis's real time when the bucket is full again
//	        (an expired key is a full bucket); a caller's clock need not
//	        advance with it (a test holds it still), so with one the key is
//	        kept at least a second: a bucket drained at one instant of the
//	        caller's time must not vanish while real milliseconds pass.
//	ARGV[5] debt in microseconds (integer >= 0): the caller's own bucket is
//	        full again only that long from now (it admitted requests while
//	        Redis was unreachable); the bucket's TAT is moved to at least
//	        now + debt, so those admissions are paid for instead of being
//	        granted a second time (stored also when this call is refused:
//	        the caller counts its debt paid after any reply)
//	ARGV[6] least, the fewest tokens worth granting (integer in [1, n];
//	        absent means 1): the cost of the request that asks, which is
//	        admitted with all of its tokens or not at all
//
// Reply: {granted, remaining, reset_us, retry_us}: granted 0 or in
// [least, n]; remaining tokens in the bucket after the grant; reset_us the
// time until the bucket is full; retry_us, when granted is 0, the time
// until least tokens can be taken. Both times are rounded up to whole
// microseconds, so a retry after retry_us finds its tokens.
//
// Numbers are written with string.format('%d') because Redis converts Lua
// numbers to arguments in a form that can lose digits at 16 digits.
const takeScript = `
local t = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
local callerClock = now ~= nil and now > 0
if not callerClock then
  local tm = redis.call('TIME')
  now = tonumber(tm[1]) * 1000000 + tonumber(tm[2])
end
local debt = (tonumber(ARGV[5]) or 0) * 1000
local least = tonumber(ARGV[6]) or 1
if least < 1 then
  least = 1
end
-- d: the TAT less now, in nanoseconds, at least 0
local d = 0
local v = redis.call('GET', KEYS[1])
if v then
  local us, ns = string.match(v, '^(%d+)%.?(%d*)$')
  if us then
    d = (tonumber(us) - now) * 1000
    if ns ~= '' then
      d = d + tonumber(ns)
    end
  end
end
if d < 0 then
  d = 0
end
local raised = false
if debt > d then
  d = debt
  raised = true
end
local function store()
  local us = math.floor(d / 1000)
  local px = math.floor(d / 1000000) + 1
  if callerClock and px < 1000 then
    px = 1000
  end
  redis.call('SET', KEYS[1], string.format('%d.%03d', now + us, d - us * 1000), 'PX', string.format('%d', px))
end
local limit = burst * t
if d > limit then
  -- the key's limit changed (a plan change or reload) to one whose
  -- bucket refills sooner: the key is empty under it, not in debt for
  -- the old plan's longer window
  d = limit
  raised = true
end
local avail = math.floor((limit - d) / t)
if avail < 0 then
  avail = 0
end
local got = want
if got > avail then
  got = avail
end
if got >= least then
  d = d + got * t
  store()
  return {got, avail - got, math.ceil(d / 1000), 0}
end
if raised then
  store() -- the debt is paid even when this call is refused
end
return {0, avail, math.ceil(d / 1000), math.ceil((d + least * t - limit) / 1000)}
`

var gcra = redis.NewScript(takeScript)

// takeResult is the parsed reply of takeScript; durations in microseconds.
type takeResult struct {
	granted   int64
	remaining int64
	resetUS   int64
	retryUS   int64
}

// take runs the script (EVALSHA, falling back to EVAL after NOSCRIPT).
// nowUS is 0 to let Redis use its own clock; debtUS is ARGV[5]; least is
// ARGV[6].
func take(ctx context.Context, c redis.Scripter, key string, lim Limit, n, least, nowUS, debtUS int64) (takeResult, error) {
	v, err := runOnce(ctx, c, []string{key},
		lim.interval(1e9), lim.Burst, n, nowUS, max(debtUS, 0), least)
	if err != nil {
		return takeResult{}, err
	}
	return parseTake(v)
}

// processor is a client that sends a command it is given: every go-redis
// client.
type processor interface {
	Process(ctx context.Context, cmd redis.Cmder) error
}

// runOnce is gcra.Run with commands go-redis sends once (noRetryCmd): the
// script charges tokens, and go-redis's Cluster client sent a command
// again after an error that may come after Redis ran it (EOF: the
// connection dropped before the reply was read; a read timeout) whatever
// MaxRetries says, in its redirect loop (MaxRedirects): one request was
// charged twice (TestClusterChargeNotReplayedAfterCut). A Scripter that
// cannot take a command (none of go-redis's) runs gcra.Run.
func runOnce(ctx context.Context, c redis.Scripter, keys []string, args ...any) (any, error) {
	p, ok := c.(processor)
	if !ok {
		return gcra.Run(ctx, c, keys, args...).Result()
	}
	cmd := scriptCmd(ctx, "evalsha", gcra.Hash(), keys, args)
	err := p.Process(ctx, cmd)
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		cmd = scriptCmd(ctx, "eval", takeScript, keys, args)
		err = p.Process(ctx, cmd)
	}
	if err != nil {
		return nil, err
	}
	return cmd.Val(), nil
}

func scriptCmd(ctx context.Context, name, script string, keys []string, args []any) noRetryCmd {
	a := make([]any, 0, 3+len(keys)+len(args))
	a = append(a, name, script, len(keys))
	for _, k := range keys {
		a = append(a, k)
	}
	return noRetryCmd{redis.NewCmd(ctx, append(a, args...)...)}
}

// noRetryCmd is a command whose NoRetry is true: go-redis sends it once
// (following a Cluster's MOVED and ASK). Its result is the embedded
// command's.
type noRetryCmd struct{ *redis.Cmd }

func (noRetryCmd) NoRetry() bool { return true }

func parseTake(v any) (takeResult, error) {
	a, ok := v.([]any)
	if !ok || len(a) != 4 {
		return takeResult{}, fmt.Errorf("ratelimit: unexpected script reply %T", v)
	}
	var out [4]int64
	for i, x := range a {
		switch x := x.(type) {
		case int64:
			out[i] = x
		case string: // RESP3 or a proxy may hand numbers back as text
			n, err := strconv.ParseInt(x, 10, 64)
			if err != nil {
				return takeResult{}, fmt.Errorf("ratelimit: script reply field %d: %w", i, err)
			}
			out[i] = n
		default:
			return takeResult{}, fmt.Errorf("ratelimit: script reply field %d is %T", i, x)
		}
	}
	r := takeResult{granted: out[0], remaining: out[1], resetUS: out[2], retryUS: out[3]}
	if r.granted < 0 || r.remaining < 0 || r.resetUS < 0 || r.retryUS < 0 {
		return takeResult{}, errors.New("ratelimit: negative value in script reply")
	}
	return r, nil
}
