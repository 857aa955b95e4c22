// Package redisauth tells a Redis that refuses the edge's credentials from
// one that answers: after a password rotation or an ACL change, the
// connections the client opened before keep their session (Redis checks
// credentials when a connection authenticates, not on each command), while
// every connection the client opens from then on fails its handshake with
// WRONGPASS. A PING on a pooled connection still passes, so the cache's
// probe, /readyz and edge_redis_up ask Redis with Check whether the
// credentials still hold.
package redisauth

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Refused reports whether err is Redis refusing the client's credentials
// (WRONGPASS, NOAUTH) or a command to the client's ACL user (NOPERM): for
// the edge, a Redis it cannot use, as one it cannot reach.
func Refused(err error) bool {
	return err != nil && (redis.IsAuthError(err) || redis.IsPermissionError(err))
}

// Check asks Redis whether it accepts the credentials rdb authenticates
// new connections with: AUTH with rdb's user ("default" without one) and
// password, on one of its pooled connections (a refused AUTH leaves that
// connection's session as it was), on every master of a Cluster. It
// returns the refusal (WRONGPASS) or the error that kept the question from
// being answered; any other reply counts as accepted (a server without
// ACLs, before Redis 6, answers the two-argument AUTH with an ERR). A
// client of another kind, or one with a credentials provider, is not
// checked.
func Check(ctx context.Context, rdb redis.UniversalClient) error {
	switch c := rdb.(type) {
	case *redis.Client:
		return check(ctx, c)
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, check)
	}
	return nil
}

func check(ctx context.Context, c *redis.Client) error {
	o := c.Options()
	if o.CredentialsProvider != nil || o.CredentialsProviderContext != nil || o.StreamingCredentialsProvider != nil {
		return nil
	}
	user := o.Username
	if user == "" {
		user = "default"
	}
	err := c.Do(ctx, "AUTH", user, o.Password).Err()
	var rerr redis.Error
	if err != nil && errors.As(err, &rerr) && !Refused(err) {
		return nil
	}
	return err
}

// Cause names why Redis was marked unavailable, for the log line that
// says so: "credentials refused" (WRONGPASS, NOAUTH: the configured
// password or user no longer holds), "permission denied" (NOPERM: the ACL
// user may not run a command the edge uses) or "unavailable" (anything
// else: unreachable, a timeout, a node loading). Redis' error texts never
// carry the password the client sent.
func Cause(err error) string {
	switch {
	case redis.IsAuthError(err):
		return "credentials refused"
	case redis.IsPermissionError(err):
		return "permission denied"
	}
	return CauseUnavailable
}

// CauseUnavailable is Cause of an error that names nothing the operator
// can act on: a dropped connection, a timeout, a node loading.
const CauseUnavailable = "unavailable"

// NewCause returns Cause(err) and whether it is news after last, the cause
// already logged for an outage: a cause the operator can act on
// (credentials, permissions) other than last. The cache and the rate
// limiter log such a cause as "redis still unavailable".
func NewCause(last string, err error) (string, bool) {
	c := Cause(err)
	return c, c != CauseUnavailable && c != last
}

// Command is one command CheckCommands runs: its arguments, with Key
// standing for the probe key it is run on.
type Command []any

// Key stands for the probe key in a Command's arguments.
const Key = "\x00key"

// CheckCommands asks Redis whether the client's ACL user may run the
// commands (each with Key replaced by key) on key: it runs them in one
// pipeline and returns the first refusal (NOPERM: a command or a key
// pattern the user lacks). Any other reply counts as permitted (a
// NOSCRIPT, an OOM of a full Redis, a wrong type: Redis checked the
// permission before it answered so). An error that kept the question from
// being answered (a timeout, a dead connection) is returned as it is. A
// PING and AUTH pass for a user that lost a data command (every pooled
// connection runs PING), so a cache that marked Redis down for a NOPERM
// asks this before it uses Redis again, and the checks behind /readyz and
// edge_redis_up do too.
func CheckCommands(ctx context.Context, rdb redis.UniversalClient, key string, cmds []Command) error {
	pipe := rdb.Pipeline()
	out := make([]*redis.Cmd, len(cmds))
	for i, c := range cmds {
		args := make([]any, len(c))
		for j, a := range c {
			if a == Key {
				a = key
			}
			args[j] = a
		}
		out[i] = pipe.Do(ctx, args...)
	}
	_, err := pipe.Exec(ctx)
	for _, c := range out {
		if e := c.Err(); Refused(e) {
			return e
		}
	}
	var rerr redis.Error
	if err != nil && !errors.Is(err, redis.Nil) && !errors.As(err, &rerr) {
		return err
	}
	return nil
}

// ProbeTTL bounds the life of a value CheckCommands' commands store.
const ProbeTTL = 5 * time.Second
