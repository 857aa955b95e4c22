package cache

import (
	"github.com/dealer-edge/dealer-edge/internal/syncbuf"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2/server"
)

// TestEchoCheckSurvivesTransientPublishError: one echo PUBLISH answered
// with a transient error reply (here Redis' "max number of clients
// reached", which go-redis itself retries as transient; a BUSY script, a
// NOPERM during an ACL edit, a WRONGPASS on a new pool connection during
// a password rotation are alike) must not turn the echo check off for the
// life of the instance. Afterwards the subscription goes deaf (its echo
// tokens are published where it does not listen, as after a Sentinel
// failover): the check must notice it and remake the subscription.
func TestEchoCheckSurvivesTransientPublishError(t *testing.T) {
	mr, rc := newMiniRedis(t)
	var mode atomic.Int32 // 0 pass, 1 error reply, 2 deliver nowhere
	var echoes, refused atomic.Int32
	mr.Server().SetPreHook(func(p *server.Peer, cmd string, args ...string) bool {
		if cmd != "PUBLISH" || len(args) < 1 || !strings.Contains(args[0], ":echo:") {
			return false
		}
		echoes.Add(1)
		switch mode.Load() {
		case 1:
			if refused.Add(1) >= 2 { // the publish and go-redis' retry of it
				mode.Store(0)
			}
			p.WriteError("ERR max number of clients reached")
			return true
		case 2:
			p.WriteInt(0) // published, heard by nobody
			return true
		}
		return false
	})
	var logs syncbuf.Buffer
	c := newCache(t, Options{Redis: rc, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	waitWithin(t, 10*time.Second, "the subscription", func() bool { return c.Stats().PubSubUp })
	waitWithin(t, 3*echoEvery, "a first echo", func() bool { return echoes.Load() > 0 })
	mode.Store(1)
	waitWithin(t, 3*echoEvery, "the transient refusal", func() bool { return mode.Load() == 0 })
	time.Sleep(echoEvery + 200*time.Millisecond)
	mode.Store(2) // the subscription no longer hears what is published
	lost := false
	deadline := time.Now().Add(3*echoEvery + echoWait)
	for time.Now().Before(deadline) && !lost {
		time.Sleep(50 * time.Millisecond)
		lost = strings.Contains(logs.String(), "purge subscription lost")
	}
	if !lost {
		t.Fatalf("a deaf subscription was never noticed after one transient PUBLISH error (echo publishes %d):\n%s", echoes.Load(), logs.String())
	}
}
