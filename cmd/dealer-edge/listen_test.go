package main

import (
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/configs"
	"github.com/dealer-edge/dealer-edge/listener"
	"github.com/redis/go-redis/v9"
)

func TestConcurrencyBelowTheFDLimit(t *testing.T) {
	def := configs.Default() // 5 services x 256 upstream connections
	withConc := func(n int) *configs.Config { c := configs.Default(); c.Server.Concurrency = n; return c }
	for _, tc := range []struct {
		name   string
		cfg    *configs.Config
		limit  uint64
		want   int
		source string
	}{
		{"limit minus reserve", def, 65536, 65536 - (5*256 + 10*runtime.GOMAXPROCS(0) + redis.DefaultPipelinePoolSize + 1 + adminConcurrency + listener.MaxLingering + 64), "derived"},
		{"capped at fasthttp's default", def, 1 << 30, maxConcurrency, "derived"},
		{"small limit: half of it", def, 1024, 512, "derived"},
		{"tiny limit: half of it", def, 256, 128, "derived"},
		{"no limit known", def, 0, maxConcurrency, "no file-descriptor limit"},
		{"configured", withConc(1000), 1 << 20, 1000, "configured"},
		{"configured above the limit", withConc(5000), 256, 5000, "configured above"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, note := concurrency(tc.cfg, tc.limit, 5, redisServers{})
			if got != tc.want || !strings.HasPrefix(note, tc.source) {
				t.Fatalf("concurrency = %d (%s), want %d (%s...)", got, note, tc.want, tc.source)
			}
			if tc.cfg.Server.Concurrency == 0 && tc.limit > 0 && uint64(got) >= tc.limit {
				t.Fatalf("derived concurrency %d not below the limit %d", got, tc.limit)
			}
		})
	}
}

// TestDeadListenerEndsTheProcess: a public listener that stops for good
// (here: its socket closed under the server) takes readiness down and
// ends run with status 1, so an orchestrator restarts the edge.
func TestDeadListenerEndsTheProcess(t *testing.T) {
	stderr := &syncBuffer{}
	ready := make(chan *app, 1)
	exit := make(chan int, 1)
	sigs := make(chan os.Signal, 4)
	go func() {
		exit <- run([]string{"--demo", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"}, io.Discard, stderr, &hooks{ready: ready, signals: sigs})
	}()
	var a *app
	select {
	case a = <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("edge did not start")
	}
	if !a.isReady() {
		t.Fatal("not ready after start")
	}
	_ = a.public.Retry.Listener.Close() // the raw TCP socket
	select {
	case code := <-exit:
		if code != 1 {
			t.Fatalf("exit status %d, want 1", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("edge kept running with a dead public listener")
	}
	if a.isReady() {
		t.Error("still ready with a dead public listener")
	}
	if !strings.Contains(stderr.String(), `"msg":"listener stopped; shutting down to be restarted","listener":"public"`) {
		t.Errorf("no log line for the dead listener:\n%s", stderr.String())
	}
}
