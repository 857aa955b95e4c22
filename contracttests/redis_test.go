package contracttests

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

func sharedFake(t *testing.T) *fake.Server {
	t.Helper()
	fk := fake.NewServer(fake.Options{})
	if _, err := fk.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fk.Close)
	return fk
}

// TestTwoEdgesShareRedis: two edge instances on one real redis-server share
// cached responses (L2) and a purge on one reaches the other at once.
func TestTwoEdgesShareRedis(t *testing.T) {
	rs := redistest.Start(t)
	fk := sharedFake(t)
	a := startEnv(t, envOptions{redisAddrs: []string{rs.Addr}, fake: fk})
	b := startEnv(t, envOptions{redisAddrs: []string{rs.Addr}, fake: fk})
	path := "/dealer/NOS/listing?page=2&page_size=7"
	a.get(path, keyAlpha)
	b.get(path, keyAlpha) // key resolution on b
	calls := fk.Calls(upstream.SvcInventory)
	if r := b.get(path, keyAlpha); r.header.Get("X-Cache") != "HIT" {
		t.Fatalf("b: X-Cache %q", r.header.Get("X-Cache"))
	}
	if r := b.get("/dealer/NOS/listing?page=3&page_size=7", keyAlpha); r.header.Get("X-Cache") != "MISS" {
		t.Fatalf("b new url: %q", r.header.Get("X-Cache"))
	}
	if r := a.get("/dealer/NOS/listing?page_size=7&page=3", keyAlpha); r.header.Get("X-Cache") != "HIT" {
		t.Errorf("a did not get b's entry through Redis: %q", r.header.Get("X-Cache"))
	}
	if got := fk.Calls(upstream.SvcInventory) - calls; got != 1 {
		t.Errorf("upstream inventory calls %d, want 1", got)
	}
	if err := a.cache.PurgeDealer(context.Background(), 101); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		r := b.get(path, keyAlpha)
		if r.header.Get("X-Cache") == "MISS" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("purge on a did not reach b's L1: %q", r.header.Get("X-Cache"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Another dealer's entries survive the purge.
	b.get(path, keyBeta)
	if r := b.get(path, keyBeta); r.header.Get("X-Cache") != "HIT" {
		t.Errorf("beta after alpha purge: %q", r.header.Get("X-Cache"))
	}
}

// TestRedisKilledAndRestarted: clients see no failed request while Redis
// dies and comes back; the shared rate limit and L2 work again after.
func TestRedisKilledAndRestarted(t *testing.T) {
	rs := redistest.Start(t)
	e := startEnv(t, envOptions{redisAddrs: []string{rs.Addr}})
	paths := []string{"/dealer/REWIND/listing", "/dealer/NOS/listing?page=2", "/dealer/content/faq/listing", "/dealer/content/hub"}
	for _, p := range paths {
		e.get(p, keyAlpha)
	}
	var ok, failed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			client := &http.Client{Timeout: 5 * time.Second}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest("GET", e.base+paths[(i+w)%len(paths)], nil)
				req.Header.Set("X-Api-Key", "demo-key-alpha")
				resp, err := client.Do(req)
				if err != nil || resp.StatusCode != 200 {
					failed.Add(1)
					if resp != nil {
						resp.Body.Close()
					}
					continue
				}
				resp.Body.Close()
				ok.Add(1)
			}
		}(w)
	}
	time.Sleep(500 * time.Millisecond)
	rs.Stop()
	time.Sleep(time.Second)
	rs.Restart()
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	wg.Wait()
	if failed.Load() != 0 || ok.Load() < 100 {
		t.Fatalf("%d ok, %d failed across the Redis outage", ok.Load(), failed.Load())
	}
	// Both return to Redis by themselves (the limiter retries once a
	// second, the cache probes with backoff): poll with a deadline, keeping
	// requests flowing, rather than assume a scheduling of a loaded machine.
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := e.limiter.Stats()
		if e.cache.RedisHealthy() && !st.FallbackActive {
			if st.FallbackActivations == 0 {
				t.Error("the limiter never fell back while Redis was down")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not back on Redis 10s after the restart: cache healthy %v, limiter fallback active %v", e.cache.RedisHealthy(), st.FallbackActive)
		}
		e.get(paths[0], keyAlpha)
		time.Sleep(100 * time.Millisecond)
	}
}

// TestEdgeOnRedisCluster: the whole edge on a real three-master cluster.
func TestEdgeOnRedisCluster(t *testing.T) {
	cl := redistest.StartCluster(t)
	fk := sharedFake(t)
	a := startEnv(t, envOptions{redisAddrs: cl.Addrs(), fake: fk})
	b := startEnv(t, envOptions{redisAddrs: cl.Addrs(), fake: fk})
	for _, key := range []string{keyAlpha, keyBeta, keyGamma} {
		a.get("/dealer/REWIND/listing?page_size=3", key)
		b.get("/dealer/REWIND/listing?page_size=4", key)
		if r := b.get("/dealer/REWIND/listing?page_size=3", key); r.header.Get("X-Cache") != "HIT" {
			t.Errorf("%s: L2 through the cluster: %q", key, r.header.Get("X-Cache"))
		}
	}
	if err := a.cache.PurgeDealer(context.Background(), 102); err != nil {
		t.Fatal(err)
	}
	// The purge reaches b through the cluster (pub/sub, or the generation
	// poll): Beta's entry is gone there, Alpha's and Gamma's are not.
	deadline := time.Now().Add(3 * time.Second)
	for b.get("/dealer/REWIND/listing?page_size=3", keyBeta).header.Get("X-Cache") != "MISS" {
		if time.Now().After(deadline) {
			t.Fatal("the purge of dealer 102 on a did not reach b through the cluster")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, key := range []string{keyAlpha, keyGamma} {
		if r := b.get("/dealer/REWIND/listing?page_size=3", key); r.header.Get("X-Cache") != "HIT" {
			t.Errorf("%s: purge of another dealer dropped this entry: %q", key, r.header.Get("X-Cache"))
		}
	}
	// The limited key's limit holds across both edges on the cluster.
	admitted := 0
	for i := 0; i < 15; i++ {
		e := a
		if i%2 == 1 {
			e = b
		}
		if r := e.get("/dealer/NLT/listing", keyLimited); r.status == 200 {
			admitted++
		}
	}
	if admitted < 10 || admitted > 12 {
		t.Errorf("limited key admitted %d of 15 across two edges (burst 10)", admitted)
	}
}
