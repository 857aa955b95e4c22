package aggregator

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/cache/ratelimit"
)

func gunzipOrSelf(t *testing.T, a httpAnswer) []byte {
	if a.header.Get("Content-Encoding") != "gzip" {
		return a.body
	}
	zr, err := gzip.NewReader(bytes.NewReader(a.body))
	if err != nil {
		return []byte("BAD GZIP: " + err.Error())
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return []byte("BAD GZIP: " + err.Error())
	}
	return b
}

// TestLentBodiesBulkTierConcurrency: the bulk tier (hot tier tiny) lends
// copies of its values; two dealers, identity and gzip clients at once.
func TestLentBodiesBulkTierConcurrency(t *testing.T) {
	s := newBenchServerWith(t, true, nil, cache.Options{L1MaxBytes: 64 << 20, L1HotBytes: 8 << 10, RedisTimeout: 5 * time.Second})
	base := serveLoopback(t, s)
	keys := []string{"bench-key-000", "bench-key-001"}
	paths := stressListingPaths()
	want := firstBodies(t, base, keys, paths)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	xc := sync.Map{}
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 60 {
				key := keys[(w+i)%2]
				p := paths[(w*7+i)%len(paths)]
				ae := "identity"
				if (w+i/2)%2 == 1 {
					ae = "gzip"
				}
				a := rawDo(t, "GET", base+p, "X-Api-Key", key, "Accept-Encoding", ae)
				xc.Store(a.header.Get("X-Cache"), true)
				if got := gunzipOrSelf(t, a); a.status != 200 || !bytes.Equal(got, want[keyPath{key, p}]) {
					errs <- fmt.Errorf("%s %s %s: %d, X-Cache %q, body %.120s", key, p, ae, a.status, a.header.Get("X-Cache"), got)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	xc.Range(func(k, v any) bool { t.Logf("X-Cache seen: %q", k); return true })
	st := s.cache.(*cache.Cache).Stats()
	t.Logf("bulk hits %d", st.BulkHits)
}

// TestLentBodiesStaleMix: entries going stale every 30 ms (refreshed in the
// background while served), bulk tier, two dealers, identity/gzip, HEAD,
// conditional requests, and a cache-off route in between.
func TestLentBodiesStaleMix(t *testing.T) {
	for _, hot := range []int64{8 << 10, -1} {
		t.Run(fmt.Sprint("hot=", hot), func(t *testing.T) {
			co := cache.Options{RedisTimeout: 5 * time.Second}
			if hot > 0 {
				co.L1MaxBytes, co.L1HotBytes = 64<<20, hot
			} else {
				co.L1MaxBytes = -1
			}
			s := newBenchServerWith(t, true, nil, co)
			st := DefaultSettings()
			st.Limits["bench"] = ratelimit.Limit{Rate: ratelimit.MaxRate, Burst: ratelimit.MaxBurst}
			st.Cache[RouteInventoryListing] = cache.Policy{TTL: 30 * time.Millisecond, StaleWhileRevalidate: time.Minute, StaleIfError: time.Minute}
			delete(st.Cache, RouteContentHub)
			if err := s.UpdateSettings(st); err != nil {
				t.Fatal(err)
			}
			base := serveLoopback(t, s)
			keys := []string{"bench-key-000", "bench-key-001"}
			paths := append(stressListingPaths(), "/dealer/content/hub", "/dealer/content/hub?page_size=1")
			want := firstBodies(t, base, keys, paths)
			var wg sync.WaitGroup
			errs := make(chan error, 64)
			xc := sync.Map{}
			for w := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 80 {
						key := keys[(w+i)%2]
						p := paths[(w*7+i)%len(paths)]
						ae := "identity"
						if (w+i/2)%2 == 1 {
							ae = "gzip"
						}
						method := "GET"
						if i%9 == 4 {
							method = "HEAD"
						}
						hdr := []string{"X-Api-Key", key, "Accept-Encoding", ae}
						if i%7 == 3 {
							hdr = append(hdr, "If-None-Match", `"0000000000000000"`)
						}
						a := rawDo(t, method, base+p, hdr...)
						xc.Store(a.header.Get("X-Cache"), true)
						if method == "HEAD" {
							continue
						}
						if got := gunzipOrSelf(t, a); a.status != 200 || !bytes.Equal(got, want[keyPath{key, p}]) {
							errs <- fmt.Errorf("%s %s %s: %d, X-Cache %q, body %.120s", key, p, ae, a.status, a.header.Get("X-Cache"), got)
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			xc.Range(func(k, v any) bool { t.Logf("X-Cache seen: %q", k); return true })
		})
	}
}

// keyPath names one key's request of one path.
type keyPath struct{ key, path string }

// stressListingPaths are the listing pages the stress tests ask for: two
// pages of each of five page sizes.
func stressListingPaths() []string {
	var paths []string
	for _, ps := range []int{1, 7, 20, 50, 100} {
		for page := 1; page <= 2; page++ {
			paths = append(paths, fmt.Sprintf("/dealer/REWIND/listing?page=%d&page_size=%d", page, ps))
		}
	}
	return paths
}

// firstBodies fetches every path with every key once (identity) and
// returns the bodies, which every later answer must equal.
func firstBodies(t *testing.T, base string, keys, paths []string) map[keyPath][]byte {
	t.Helper()
	want := map[keyPath][]byte{}
	for _, key := range keys {
		for _, p := range paths {
			a := rawDo(t, "GET", base+p, "X-Api-Key", key)
			if a.status != 200 {
				t.Fatalf("%s: %d", p, a.status)
			}
			want[keyPath{key, p}] = a.body
		}
	}
	return want
}
