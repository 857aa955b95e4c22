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
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/dealer-edge/dealer-edge/contracttests/check"
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

// get sends GET path to the edge and checks the answer like the in-process
// suite does (checkGET): it fails the test on a mismatch with the OpenAPI
// document or an internal-only field or value in the body.
func (s *stack) get(t *testing.T, path string, headers ...string) *procs.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := procs.Get(ctx, client, s.edge.Base, path, headers...)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	checkGET(t, path, r)
	return r
}

// checkGET checks the answer r to GET path (path and query) with
// check.Contract.Check against the OpenAPI document the edge serves
// (publicshape.OpenAPI(), embedded in the binary built from this tree; the
// contract suite's TestOpenAPIServedIsTheValidatedDocument proves the
// served bytes are those): a documented operation's answer must match the
// document, an undocumented path must be 404, and no body may carry an
// internal-only field or value. Each problem is reported with t.Errorf
// (safe from any goroutine), at most checkReportCap per test; it reports
// whether the answer was good.
func checkGET(t testing.TB, path string, r *procs.Response) bool {
	t.Helper()
	c, err := check.Public()
	if err != nil {
		t.Errorf("load OpenAPI document: %v", err)
		return false
	}
	bad := c.Check(path, r.Status, r.Header.Get("Content-Type"), r.Body)
	if len(bad) == 0 {
		return true
	}
	n, _ := checkReports.LoadOrStore(t.Name(), new(atomic.Int64))
	switch k := n.(*atomic.Int64).Add(1); {
	case k <= checkReportCap:
		t.Errorf("GET %s: %d: %s", path, r.Status, strings.Join(bad, "\n\t"))
	case k == checkReportCap+1:
		t.Errorf("further responses failing the contract check not shown")
	}
	return false
}

const checkReportCap = 20

// checkReports counts checkGET failures per test name.
var checkReports sync.Map

var client = procs.Client(10 * time.Second)

const keyAlpha = "X-Api-Key: demo-key-alpha"
