package main

import (
	"net"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestShutdownWithSilentConnection: a connection a client opened and left
// silent does not hold a graceful shutdown. fasthttp counts a new
// connection idle only 5 s after it was accepted: with a shorter
// shutdown_grace the edge waited out the grace and exited 1 ("requests
// still in flight") with none in flight; with the default it took about
// read_timeout to stop.
func TestShutdownWithSilentConnection(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "edge.json")
	writeConfig(t, cfg, `{"watch_interval": "0s", "server": {"shutdown_grace": "2s", "read_timeout": "5s"}}`)
	e := startEdge(t, "--demo", "--config", cfg)
	if r := e.get("/dealer/NOS/listing?page_size=1", "demo-key-alpha"); r.status != 200 {
		t.Fatalf("before the shutdown: %d", r.status)
	}
	c, err := net.Dial("tcp", e.app.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	time.Sleep(100 * time.Millisecond) // accepted, nothing sent
	start := time.Now()
	e.signals <- syscall.SIGTERM
	code := <-e.exit
	took := time.Since(start)
	e.exit <- 0 // for the cleanup
	if code != 0 || took > time.Second {
		t.Fatalf("exit %d after %v with one silent connection open, want 0 at once", code, took)
	}
}
