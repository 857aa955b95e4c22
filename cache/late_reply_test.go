package cache

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/redis/go-redis/v9"
)

// TestLateReplyNotReadByNextCommand: a Redis that answers after the
// redis.timeout budget (stalled: SIGSTOP) sends the late answer on the
// connection the command went out on. go-redis must not hand that
// connection to the next command (it removes a connection whose read
// timed out), or the next command would read the late answer as its own:
// another key's entry served for this one. One connection in the pool, so
// a reused one would be the same; for the batcher's single command
// (Process), its pipeline, and the unpipelined call (redisCall), on one
// server and on a Cluster (its master of the keys stalled). The client is
// the edge's (ClientOptions); nothing else dials through it.
func TestLateReplyNotReadByNextCommand(t *testing.T) {
	t.Run("server", func(t *testing.T) {
		srv := redistest.Start(t)
		lateReplyRounds(t, []string{srv.Addr}, srv, srv.Client())
	})
	t.Run("cluster", func(t *testing.T) {
		cl := redistest.StartCluster(t)
		admin := cl.Client(t)
		m, err := admin.MasterForKey(context.Background(), "{late}")
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range cl.Nodes {
			if n.Addr == m.Options().Addr {
				lateReplyRounds(t, cl.Addrs(), n, admin)
				return
			}
		}
		t.Fatalf("no node at %s", m.Options().Addr)
	})
}

// lateReplyRounds runs the rounds of TestLateReplyNotReadByNextCommand
// with the edge's client of addrs, stalling node (which holds the keys);
// admin is a client of its own.
func lateReplyRounds(t *testing.T, addrs []string, node *redistest.Server, admin redis.UniversalClient) {
	ctx := context.Background()
	const budget = 100 * time.Millisecond
	for k, v := range map[string]string{"{late}:1": "one", "{late}:2": "two", "{late}:3": "three"} {
		if err := admin.Set(ctx, k, v, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	var dials atomic.Int64
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr == node.Addr {
			dials.Add(1)
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	rc := redis.NewUniversalClient(ClientOptions(&redis.UniversalOptions{Addrs: addrs, PoolSize: 1, Dialer: dial}, budget))
	t.Cleanup(func() { _ = rc.Close() })
	b := newBatcher(rc, maxQueuedCommands, budget)
	unpipelined := func(cmds ...redis.Cmder) {
		for _, cmd := range cmds {
			// As redisCall runs it (which stops waiting at the budget too).
			cctx, cancel := context.WithTimeout(ctx, budget)
			_ = rc.Process(cctx, cmd)
			cancel()
		}
	}
	batched := func(cmds ...redis.Cmder) {
		var batch []*batchCall
		for _, cmd := range cmds {
			batch = append(batch, &batchCall{cmd: cmd})
		}
		b.exec(batch)
	}
	gets := func(n int, key string) []redis.Cmder {
		return []redis.Cmder{redis.NewStringCmd(ctx, "get", key), redis.NewStringCmd(ctx, "get", key)}[:n]
	}
	for _, tc := range []struct {
		name string
		run  func(...redis.Cmder)
		n    int // commands a round
	}{
		{"batch of one", batched, 1},
		{"batch of two", batched, 2},
		{"unpipelined", unpipelined, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The one connection this kind of round uses, open (go-redis
			// may keep pipelines on a pool of their own).
			warm := gets(tc.n, "{late}:3")
			tc.run(warm...)
			for _, cmd := range warm {
				if cmd.Err() != nil {
					t.Fatal(cmd.Err())
				}
			}
			before := dials.Load()
			late := gets(tc.n, "{late}:1")
			node.Pause()
			tc.run(late...)
			node.Resume()
			if err := admin.Ping(ctx).Err(); err != nil { // Redis has run the late commands
				t.Fatal(err)
			}
			for _, cmd := range late {
				if cmd.Err() == nil {
					t.Fatalf("%v answered within the budget while Redis was stopped", cmd.Args())
				}
			}
			next := gets(tc.n, "{late}:2")
			tc.run(next...)
			// A Cluster client also reads the slots again after the
			// error, on connections of its own: at least one new one.
			if n := dials.Load() - before; n < 1 {
				t.Errorf("no connection dialled after the late answer: the late one was used again")
			}
			for _, cmd := range next {
				if v, err := cmd.(*redis.StringCmd).Result(); err != nil || v != "two" {
					t.Errorf("GET {late}:2 after a late answer: %q %v, want \"two\"", v, err)
				}
			}
		})
	}
}
