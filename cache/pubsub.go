package cache

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// The purge subscription's echo check. PING alone does not prove that the
// subscription hears what is published: after a Sentinel failover
// go-redis moves its pooled connections to the new master but not the
// Pub/Sub one, which stays on the old master answering PINGs while every
// purge is published on the new one (TestSentinelFailoverResubscribes).
// So every echoEvery a token is published through the main client on an
// echo channel of this instance's own (one subscriber: no fan-out to the
// fleet), and a token that is not heard back within echoWait (or two
// redis.timeouts) marks the subscription lost: generations are polled and
// the subscription is made again, through the client's dialer, on the
// master of the moment.
//
// The echo channel is subscribed apart from the purge channel, after the
// purge channel's confirmation, so that a Redis ACL user allowed only the
// purge channel keeps its purges: its refusal turns the check off for the
// life of the instance (logged), it never costs the purge subscription.
const (
	echoEvery = 2 * time.Second
	echoWait  = time.Second
)

// errEchoLost marks a subscription whose echo did not come back.
var errEchoLost = errors.New("cache: the purge subscription did not hear its echo (the connection is on another server than the one purges are published on)")

// echoState is where the echo channel's subscription stands on the current
// connection.
type echoState uint8

const (
	echoNone  echoState = iota // not asked on this subscription
	echoAsked                  // SUBSCRIBE sent, no confirmation yet
	echoOn                     // confirmed: tokens are published
	echoOff                    // refused by Redis: the check is off for good
)

// echoCheck is the subscription loop's echo state (one goroutine).
type echoCheck struct {
	channel  string
	state    echoState
	token    string    // the token in flight; "" none
	sent     time.Time // when it was published
	next     time.Time // when the next one is due
	disabled bool      // refused once: never asked again
}

// subscribeLoop keeps the purge subscription. A confirmed (re)subscription
// marks it healthy and triggers a resync of all generations, because
// messages may have been missed while it was down. Silence is checked with a
// PING every second, hearing what is published with the echo check above.
// A subscription Redis refused (an error reply: an ACL user without the
// channel) or one that lost its echo is closed and made again.
func (c *Cache) subscribeLoop() {
	defer c.wg.Done()
	ec := echoCheck{channel: c.channel + ":echo:" + strconv.FormatUint(rand.Uint64(), 36)}
	backoff := backoffMin / 5
	for c.ctx.Err() == nil {
		ps := c.rdb.Subscribe(c.ctx, c.channel)
		c.psMu.Lock()
		c.ps = ps
		closed := c.ctx.Err() != nil
		c.psMu.Unlock()
		if closed {
			_ = ps.Close()
			return
		}
		ec.state, ec.token = echoNone, ""
		wait := c.receive(ps, &ec, &backoff)
		_ = ps.Close()
		if wait > 0 && !c.sleep(wait) {
			return
		}
	}
}

// sleep waits d or until the cache closes (false).
func (c *Cache) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// receive serves one subscription until the cache closes or the
// subscription must be made again; it returns how long to wait before
// making it again.
func (c *Cache) receive(ps *redis.PubSub, ec *echoCheck, backoff *time.Duration) time.Duration {
	pingPending := false
	for c.ctx.Err() == nil {
		if c.echoLost(ec) {
			c.setPubSub(false, errEchoLost)
			return 0
		}
		msg, err := ps.ReceiveTimeout(c.ctx, time.Second)
		if err != nil {
			if c.ctx.Err() != nil {
				return 0
			}
			var rerr redis.Error
			if errors.As(err, &rerr) {
				// An error reply on a subscription answers a SUBSCRIBE:
				// the echo channel's while it is asked (turn the check
				// off), else the purge channel's (or both, resubscribed
				// together by go-redis after a reconnect). Either way the
				// subscription may not hold the purge channel: make it
				// again, without the echo channel if it was refused.
				if ec.state == echoAsked && echoRefused(err) {
					ec.disabled = true
					c.log.Warn("cache: Redis refused the purge subscription's echo channel; the echo check is off (after a Sentinel failover this instance may miss purges until restarted): allow the channel pattern in the ACL user", "channel", ec.channel, "err", err)
					return 0
				}
				c.setPubSub(false, err)
				d := *backoff
				*backoff = min(2**backoff, backoffMax)
				return d
			}
			if isTimeout(err) && !pingPending {
				if perr := ps.Ping(c.ctx); perr == nil {
					pingPending = true
					continue
				}
			}
			lostPing := pingPending && isTimeout(err)
			pingPending = false
			c.setPubSub(false, err)
			if lostPing && c.redisUp.Load() {
				// The PING went unanswered while the cache's own
				// check finds every master answering: this connection
				// is on a server that froze or was failed over (a
				// Cluster master SIGSTOPped, a black-holed host). Its
				// TCP connection never closes and no echo token goes
				// out while the subscription is down, so make it again
				// on the master of the moment
				// (TestClusterFrozenSubscriptionNodeResubscribes).
				d := *backoff
				*backoff = min(2**backoff, backoffMax)
				return d
			}
			if !c.sleep(*backoff) {
				return 0
			}
			*backoff = min(2**backoff, backoffMax)
			continue
		}
		*backoff = backoffMin / 5
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind != "subscribe" {
				continue
			}
			if m.Channel == ec.channel {
				if ec.state == echoAsked {
					ec.state = echoOn
				}
				continue
			}
			c.setPubSub(true, nil)
			c.resync(c.ctx)
			// Asked again on every confirmation of the purge channel (a
			// reconnect by go-redis resubscribes both; Redis confirms a
			// repeated SUBSCRIBE again).
			if !ec.disabled {
				if err := ps.Subscribe(c.ctx, ec.channel); err == nil {
					ec.state, ec.token = echoAsked, ""
				}
			}
		case *redis.Pong:
			pingPending = false
			c.subscriptionAnswered()
		case *redis.Message:
			pingPending = false
			if m.Channel == ec.channel {
				if m.Payload == ec.token {
					ec.token = ""
				}
				continue
			}
			c.subscriptionAnswered()
			c.handlePurgeMessage(m.Payload)
		}
	}
	return 0
}

// echoLost publishes the next echo token when one is due and reports
// whether the one in flight is overdue. Tokens go out only while the
// subscription and Redis are up: a Redis that is down is judged by the
// PING, and by the cache's own health checks.
func (c *Cache) echoLost(ec *echoCheck) bool {
	if ec.state != echoOn {
		return false
	}
	now := time.Now()
	if ec.token != "" {
		return now.Sub(ec.sent) > max(echoWait, 2*c.redisTimeout)
	}
	if now.Before(ec.next) || !c.pubsubUp.Load() || !c.redisUp.Load() {
		return false
	}
	ec.next = now.Add(echoEvery)
	tok := strconv.FormatUint(rand.Uint64(), 36)
	ctx, cancel := context.WithTimeout(c.ctx, max(c.redisTimeout, 100*time.Millisecond))
	err := c.rdb.Publish(ctx, ec.channel, tok).Err()
	cancel()
	var rerr redis.Error
	switch {
	case err == nil:
		ec.token, ec.sent = tok, now
	case errors.As(err, &rerr) && echoRefused(err):
		ec.disabled, ec.state = true, echoOff
		c.log.Warn("cache: Redis refused to publish the purge subscription's echo; the echo check is off (after a Sentinel failover this instance may miss purges until restarted): allow the channel pattern in the ACL user", "channel", ec.channel, "err", err)
	}
	return false
}

// echoRefused tells the ACL's refusal of the echo channel (for good) from
// a transient error reply (a full maxclients, a BUSY script, a WRONGPASS
// of a new connection during a password rotation): only the former turns
// the echo check off; after the latter the next token is sent as usual.
func echoRefused(err error) bool { return redis.HasErrorPrefix(err, "NOPERM") }
