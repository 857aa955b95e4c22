package redistest

import (
	"context"
	"fmt"
	"testing"
)

func TestStartRestart(t *testing.T) {
	s := Start(t)
	c := s.Client()
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s.Restart()
	if v, err := c.Get(ctx, "k").Result(); err == nil {
		t.Fatalf("data survived a restart without persistence: %q", v)
	}
}

func TestCluster(t *testing.T) {
	cl := StartCluster(t)
	c := cl.Client(t)
	ctx := context.Background()
	// Keys spread over all masters must all be writable through one client.
	for i := 0; i < 50; i++ {
		if err := c.Set(ctx, fmt.Sprintf("key-%d", i), i, 0).Err(); err != nil {
			t.Fatalf("set key-%d: %v", i, err)
		}
	}
	// Hash-tagged keys share a slot, so multi-key commands work.
	if err := c.MSet(ctx, "{d1}:a", 1, "{d1}:b", 2).Err(); err != nil {
		t.Fatalf("mset hash-tagged: %v", err)
	}
}
