// Package reliability is the reliability and security suite: the real
// binaries (dealer-edge, fake-upstream) and a real redis-server, started as
// separate processes on loopback ports, under injected faults, hostile
// input and sustained load. See the README's reliability table for what
// each test proves.
package reliability

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/dealer-edge/dealer-edge/contracttests/procs"
)

func TestMain(m *testing.M) {
	code := m.Run()
	// Suite-wide: no dealer-edge process started by any test may have
	// written an API key or a hash of one (secrets_test.go).
	if leaks := suiteSecretLeaks(procs.Started()); len(leaks) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: API keys or their hashes were written by dealer-edge processes of this suite:\n  %s\n", strings.Join(leaks, "\n  "))
		code = 1
	}
	procs.Cleanup()
	os.Exit(code)
}

// stack is one edge in front of its own fake-upstream and redis-server.
type stack struct {
	redis *redistest.Server
	fake  *procs.Fake
	edge  *procs.Edge
}

// startStack starts redis-server, fake-upstream (with fakeArgs) and
// dealer-edge with config (a partial config document).
func startStack(t *testing.T, config map[string]any, fakeArgs ...string) *stack {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the real binaries")
	}
	s := &stack{redis: redistest.Start(t)}
	s.fake = procs.StartFake(t, fakeArgs...)
	s.edge = procs.StartEdge(t, config, "--upstream", s.fake.URL(), "--redis", s.redis.Addr)
	return s
}

func (s *stack) get(t *testing.T, path string, headers ...string) *procs.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := procs.Get(ctx, client, s.edge.Base, path, headers...)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return r
}

var client = procs.Client(10 * time.Second)

const keyAlpha = "X-Api-Key: demo-key-alpha"
