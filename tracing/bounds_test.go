package tracing

import (
	"context"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestMaxQueueSizeInRangeIdle: OTEL_BSP_MAX_QUEUE_SIZE=16777216 is in the
// range the README documents (above it the value is "taken as not set"),
// but the batch processor allocates its queue up front (a channel of 16 Mi
// span interfaces: 256 MiB of heap, live for the process's life). That is
// more than the soft memory limit the edge sets for its default config
// (cache.MemoryLimitFor(64 MiB L1) = 232 MiB), so the collector runs
// back to back: an idle edge started with this variable used about 1.8
// cores (go_gc_duration_seconds_count 157 in 8 s, heap_inuse 272 MB).
func TestMaxQueueSizeInRangeIdle(t *testing.T) {
	rec := startReceiver(t)
	t.Setenv(EnvBSPMaxQueueSize, queueSizeUnderTest)
	// What cmd/dealer-edge sets for the defaults (cache.MemoryLimitFor of a
	// 64 MiB L1), written out: tracing imports nothing of the project.
	old := debug.SetMemoryLimit(232 << 20)
	defer debug.SetMemoryLimit(old)
	tr, err := New(Config{TracesEndpoint: rec.srv.URL, Sampler: SamplerAlwaysOn}, Options{})
	if err != nil {
		return // refused at start: fine
	}
	defer func() { _ = tr.Shutdown(context.Background()) }()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	gc0 := ms.NumGC
	before, start := cpuTime(t), time.Now()
	// Idle but for a trickle of garbage (about 1 MB/s, as the edge's
	// background probes, metrics scrapes and a few requests make).
	var sink []byte
	for time.Since(start) < time.Second {
		sink = make([]byte, 1024)
		time.Sleep(time.Millisecond)
	}
	_ = sink
	used, wall := cpuTime(t)-before, time.Since(start)
	runtime.ReadMemStats(&ms)
	t.Logf("heap in use %d MiB, %d collections, CPU %v in %v", ms.HeapInuse>>20, ms.NumGC-gc0, used, wall)
	if used > wall/4 {
		t.Errorf("idle tracer with %s=16777216 (in the documented range) used %v of CPU in %v under the edge's default memory limit: its preallocated queue (%d MiB of heap) is above the limit", EnvBSPMaxQueueSize, used, wall, ms.HeapInuse>>20)
	}
}

const queueSizeUnderTest = "16777216" // "2048" passes: 0-1 collections, ~30 ms of CPU
