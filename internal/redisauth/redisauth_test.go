package redisauth

import (
	"context"
	"errors"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/redis/go-redis/v9"
)

func TestRefusedAndCause(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		refused bool
		cause   string
	}{
		{"nil", nil, false, "unavailable"},
		{"WRONGPASS", errors.New("WRONGPASS invalid username-password pair or user is disabled."), true, "credentials refused"},
		{"NOAUTH", errors.New("NOAUTH Authentication required."), true, "credentials refused"},
		{"NOPERM", errors.New("NOPERM this user has no permissions to run the 'get' command"), true, "permission denied"},
		{"ERR", errors.New("ERR unknown command"), false, "unavailable"},
		{"LOADING", errors.New("LOADING Redis is loading the dataset in memory"), false, "unavailable"},
		{"network", errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), false, "unavailable"},
		{"deadline", context.DeadlineExceeded, false, "unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Refused(tt.err); got != tt.refused {
				t.Errorf("Refused = %v, want %v", got, tt.refused)
			}
			if tt.err == nil {
				return
			}
			if got := Cause(tt.err); got != tt.cause {
				t.Errorf("Cause = %q, want %q", got, tt.cause)
			}
		})
	}
}

// TestNewCause: a cause is news when the operator can act on it and the
// outage has not logged it last.
func TestNewCause(t *testing.T) {
	wrongpass := errors.New("WRONGPASS invalid username-password pair or user is disabled.")
	noperm := errors.New("NOPERM this user has no permissions to run the 'get' command")
	tests := []struct {
		name, last string
		err        error
		news       bool
	}{
		{"refused after a dropped connection", CauseUnavailable, wrongpass, true},
		{"refused again", "credentials refused", wrongpass, false},
		{"a permission after the credentials", "credentials refused", noperm, true},
		{"a dropped connection after a refusal", "credentials refused", errors.New("EOF"), false},
		{"a timeout", CauseUnavailable, context.DeadlineExceeded, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cause, news := NewCause(tt.last, tt.err)
			if news != tt.news || cause != Cause(tt.err) {
				t.Errorf("NewCause(%q, %v) = %q, %v; want %q, %v", tt.last, tt.err, cause, news, Cause(tt.err), tt.news)
			}
		})
	}
}

// TestCheck: against a real redis-server, Check answers what a new
// connection's handshake would, also on a pooled connection opened
// before the change, and leaves that connection's session as it was.
func TestCheck(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, "--requirepass", "pass-one")
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: "pass-one", PoolSize: 1})
	t.Cleanup(func() { _ = admin.Close() })
	if err := admin.Do(ctx, "ACL", "SETUSER", "edge", "on", ">user-pass", "~*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	client := func(user, pass string) *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: user, Password: pass, PoolSize: 1, MaxRetries: -1})
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	def, user, none := client("", "pass-one"), client("edge", "user-pass"), client("", "")
	for _, c := range []*redis.Client{def, user} {
		if err := c.Ping(ctx).Err(); err != nil { // a pooled, authenticated connection
			t.Fatal(err)
		}
	}
	steps := []struct {
		name         string
		change       []any // an admin command run first; nil: none
		def, user    bool  // Check refuses the default user's client, the ACL user's
		none         bool  // Check refuses the client without credentials
		pooledAnswer bool  // the pooled connections still answer GET
	}{
		{"as configured", nil, false, false, true, true},
		{"default password rotated", []any{"CONFIG", "SET", "requirepass", "pass-two"}, true, false, true, true},
		{"ACL user's password reset", []any{"ACL", "SETUSER", "edge", "resetpass", ">other"}, true, true, true, true},
		{"no password any more", []any{"CONFIG", "SET", "requirepass", ""}, false, true, false, true},
		{"ACL user back", []any{"ACL", "SETUSER", "edge", "resetpass", ">user-pass"}, false, false, false, true},
	}
	for _, s := range steps {
		if s.change != nil {
			if err := admin.Do(ctx, s.change...).Err(); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
		}
		for _, c := range []struct {
			name    string
			c       *redis.Client
			refused bool
		}{{"default user", def, s.def}, {"ACL user", user, s.user}, {"no credentials", none, s.none}} {
			err := Check(ctx, c.c)
			if got := err != nil; got != c.refused || (err != nil && !Refused(err)) {
				t.Errorf("%s, %s: Check = %v, want refused %v", s.name, c.name, err, c.refused)
			}
		}
		for _, c := range []*redis.Client{def, user} {
			if err := c.Get(ctx, "k").Err(); (err == nil || errors.Is(err, redis.Nil)) != s.pooledAnswer {
				t.Errorf("%s: a pooled connection answers GET with %v", s.name, err)
			}
		}
	}
}

// TestCheckCluster: on a Cluster, one master refusing the password is a
// refusal.
func TestCheckCluster(t *testing.T) {
	ctx := context.Background()
	cl := redistest.StartCluster(t)
	for _, n := range cl.Nodes {
		if err := n.Client().ConfigSet(ctx, "requirepass", "pass-one").Err(); err != nil {
			t.Fatal(err)
		}
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs(), Password: "pass-one", MaxRetries: -1})
	t.Cleanup(func() { _ = cc.Close() })
	if err := Check(ctx, cc); err != nil {
		t.Fatalf("Check with the password right: %v", err)
	}
	adm := redis.NewClient(&redis.Options{Addr: cl.Nodes[2].Addr, Password: "pass-one"})
	t.Cleanup(func() { _ = adm.Close() })
	if err := adm.ConfigSet(ctx, "requirepass", "pass-two").Err(); err != nil {
		t.Fatal(err)
	}
	if err := Check(ctx, cc); !Refused(err) {
		t.Errorf("Check with one master refusing the password: %v, want WRONGPASS", err)
	}
}

// TestCheckMiniredis: the embedded Redis (miniredis) without a password
// answers AUTH with an ERR, which is no refusal.
func TestCheckMiniredis(t *testing.T) {
	mr := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	if err := Check(context.Background(), c); err != nil {
		t.Errorf("Check on miniredis without a password: %v", err)
	}
}
