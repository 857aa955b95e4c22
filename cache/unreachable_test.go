package cache

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestUnreachable: the errors that mark Redis down are those that say it
// cannot serve the cache, including a refusal of the edge's credentials
// (a rotated password, a changed ACL user: every new connection fails)
// and of a command to its ACL user; a reply about one call (a missing
// script, an ERR) leaves Redis in use.
func TestUnreachable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"network", errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), true},
		{"budget", fmt.Errorf("cache: redis call exceeded 50ms: %w", context.DeadlineExceeded), true},
		{"WRONGPASS", redisErr("WRONGPASS invalid username-password pair or user is disabled."), true},
		{"NOAUTH", redisErr("NOAUTH Authentication required."), true},
		{"NOPERM", redisErr("NOPERM this user has no permissions to run the 'get' command"), true},
		{"LOADING", redisErr("LOADING Redis is loading the dataset in memory"), true},
		{"READONLY", redisErr("READONLY You can't write against a read only replica."), true},
		{"ERR", redisErr("ERR wrong number of arguments for 'get' command"), false},
		{"queue full", errBatchFull, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := unreachable(tt.err); got != tt.want {
				t.Errorf("unreachable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// redisErr is an error Redis replied with (go-redis' redis.Error).
type redisErr string

func (e redisErr) Error() string { return string(e) }
func (redisErr) RedisError()     {}
