package main

import (
	"net"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestShortGraceIdleExitsZero: server.shutdown_grace may be 0s
// ("must not be negative"); README "Graceful shutdown" step 5: exit 1
// only "when the grace period ran out with requests still in flight".
// With a keep-alive client idle (no request in flight), fasthttp closes
// the idle connection but looks at its count of open connections at
// once and then only every 100 ms; a grace shorter than that has ended
// by the second look, and the edge exits 1 although nothing was in
// flight (with 0s it also races Serve's own count with no client at all).
func TestShortGraceIdleExitsZero(t *testing.T) {
	for _, grace := range []string{"0s", "50ms"} {
		t.Run(grace, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "edge.json")
			writeConfig(t, cfg, `{"watch_interval": "0s", "server": {"shutdown_grace": "`+grace+`"}}`)
			e := startEdge(t, "--demo", "--config", cfg)
			if r := e.get("/dealer/NOS/listing?page_size=1", "demo-key-alpha"); r.status != 200 { // keep-alive, now idle
				t.Fatalf("before the shutdown: %d", r.status)
			}
			time.Sleep(50 * time.Millisecond)
			e.signals <- syscall.SIGTERM
			code := <-e.exit
			e.exit <- 0 // for the cleanup
			if code != 0 {
				t.Fatalf("exit %d with one idle keep-alive connection and shutdown_grace %s, want 0\n%s", code, grace, lastLine(e.stderr.String()))
			}
		})
	}
}

// TestSilentConnectionWithoutBusyCap: README "Graceful shutdown" step
// 2 closes the connections that have not sent a byte at once. With
// server.idle_timeout_busy 0s (documented: "keeps idle_timeout under
// pressure") the listener keeps no list of its connections, CloseSilent
// sees none, and one silent connection holds the shutdown for the
// server's 5 s: past a 2 s grace the edge exits 1 with nothing in flight.
func TestSilentConnectionWithoutBusyCap(t *testing.T) {
	for _, server := range []string{
		`"idle_timeout_busy": "0s"`,
		`"concurrency": 1`,
	} {
		t.Run(server, func(t *testing.T) {
			e := startSilentEdge(t, `"shutdown_grace": "2s", "read_timeout": "5s", `+server, "")
			c, err := net.Dial("tcp", e.app.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			stopsAtOnce(t, e, "one silent connection open")
		})
	}
}
