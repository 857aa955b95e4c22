package main

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// traffic is background load on an edge for the outage tests: a client
// per key, each asking path(key, i) for its i-th request (plain HTTP
// clients, no retries, a deadline far above any Redis budget so that a
// request held on Redis shows as slow, not as an error), pause between
// requests. Every answer must be 200.
type traffic struct {
	stopCh    chan struct{}
	wg        sync.WaitGroup
	stopped   bool
	requests  atomic.Int64
	bad       atomic.Int64
	slowest   atomic.Int64 // nanoseconds
	badSample atomic.Value // string
}

func startTraffic(t *testing.T, base string, keys []string, pause time.Duration, path func(key string, i int) string) *traffic {
	t.Helper()
	tr := &traffic{stopCh: make(chan struct{})}
	client := &http.Client{Timeout: 10 * time.Second}
	for _, key := range keys {
		tr.wg.Add(1)
		go func() {
			defer tr.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-tr.stopCh:
					return
				default:
				}
				req, _ := http.NewRequest("GET", base+path(key, i), nil)
				req.Header.Set("X-Api-Key", key)
				start := time.Now()
				resp, err := client.Do(req)
				d := int64(time.Since(start))
				tr.requests.Add(1)
				for s := tr.slowest.Load(); d > s && !tr.slowest.CompareAndSwap(s, d); s = tr.slowest.Load() {
				}
				if err != nil || resp.StatusCode != 200 {
					tr.bad.Add(1)
					if err != nil {
						tr.badSample.Store(err.Error())
					} else {
						tr.badSample.Store(resp.Status)
					}
				}
				if resp != nil {
					resp.Body.Close()
				}
				time.Sleep(pause)
			}
		}()
	}
	t.Cleanup(tr.stop)
	return tr
}

// stop ends the traffic and waits for its clients (once).
func (tr *traffic) stop() {
	if !tr.stopped {
		tr.stopped = true
		close(tr.stopCh)
		tr.wg.Wait()
	}
}

// check stops the traffic and fails t unless every request answered 200.
func (tr *traffic) check(t *testing.T) {
	t.Helper()
	tr.stop()
	if n := tr.bad.Load(); n != 0 {
		t.Errorf("%d of %d requests did not answer 200 (e.g. %v)", n, tr.requests.Load(), tr.badSample.Load())
	}
}

// waitLong polls cond until it holds or 15 s pass: long enough for the
// cache's and the limiters' Redis probes (0.5 s doubling to 5 s).
func waitLong(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitWithin(t, 15*time.Second, what, cond)
}
