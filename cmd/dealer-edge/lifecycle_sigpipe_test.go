package main

import (
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestLogReaderGoneDoesNotKill: the edge writes its JSON logs to
// standard error. When the process reading them goes away (a log shipper
// or `| tee` restarted, a container runtime's log pipe broken), the next
// log line is a write to a broken pipe on fd 2, and a Go program that does
// not handle SIGPIPE is killed by it: no drain, no "stopped" line, every
// in-flight request cut. The edge must keep serving (and stop cleanly on
// SIGTERM).
func TestLogReaderGoneDoesNotKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd, base := runEdgeBinary(t, pw)
	pw.Close()
	pr.Close() // the log reader goes away
	get := func() error {
		req, _ := http.NewRequest("GET", base+"/dealer/REWIND/listing?page_size=1", nil)
		req.Header.Set("X-Api-Key", "demo-key-alpha") // an access line is written
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	_ = get()
	time.Sleep(200 * time.Millisecond)
	if err := get(); err != nil {
		t.Errorf("the edge stopped serving once its log reader went away: %v", err)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit: %v (want 0 after SIGTERM)", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
}
