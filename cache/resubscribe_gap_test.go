package cache

import (
	"context"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
)

// TestPurgeInSubscriptionGapApplied: a purge published while an
// instance's subscription is down and being made again (its connection
// dropped; an unanswered PING or a lost echo take the same way back)
// reaches nobody there, yet the instance takes it: the purge is an INCR in
// Redis before it is published, and the confirmation of the new
// subscription re-reads every known generation (resync). The generation
// poll is off (an hour), so only that re-read can bring it. The gap is
// made certain with the ACL: a's user loses the channels (Redis drops its
// subscription and refuses a new one) until after the purge.
// Real redis-server.
func TestPurgeInSubscriptionGapApplied(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	pol := Policy{TTL: time.Hour}
	a := newCache(t, Options{Redis: aclClient(t, srv, "edge-a", "allchannels"), GenerationPoll: time.Hour})
	b := newCache(t, Options{Redis: newClient(t, srv.Addr), GenerationPoll: time.Hour})
	waitFor(t, "subscriptions", func() bool { return a.Stats().PubSubUp && b.Stats().PubSubUp })
	mustGet(t, a, 4, "/k", pol, newFiller("pre-purge").fill)
	_, _ = b.generation(ctx, 4)
	admin := srv.Client()
	if err := admin.Do(ctx, "acl", "setuser", "edge-a", "resetchannels").Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a's subscription lost", func() bool { return !a.Stats().PubSubUp })
	before := mustGen(t, a, 4)
	if err := b.PurgeDealer(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if n := admin.PubSubNumSub(ctx, a.channel).Val()[a.channel]; n != 1 || mustGen(t, a, 4) != before {
		t.Fatalf("the purge reached a on the channel (%d subscribers): no gap", n)
	}
	if err := admin.Do(ctx, "acl", "setuser", "edge-a", "allchannels").Err(); err != nil {
		t.Fatal(err)
	}
	waitWithin(t, 10*time.Second, "a's subscription back", func() bool { return a.Stats().PubSubUp })
	waitFor(t, "a takes the purge made in the gap", func() bool { return purgeTaken(t, b, a, 4, "/k") })
	e, _ := mustGet(t, a, 4, "/k", pol, newFiller("post-purge").fill)
	if string(e.Body()) != "post-purge" {
		t.Fatalf("after a purge made while its subscription was down, a answered %q", e.Body())
	}
}
