package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// fanout is the floor of row d at one connection: one "hub" at a time, the
// six section calls a cold hub makes (the content types' summary views of
// the dealer), sent concurrently by a bare fasthttp client that reads the
// answers and decodes nothing. Its latency is what the fake upstream and
// the loopback take to produce and move the six answers (about 380 KB) on
// this machine, with no edge work at all. It prints one WRKJSON-shaped
// line (latencies in microseconds) for run.sh to record as target
// "fanout". The client runs wherever run.sh pins it (the edge's core).
func fanout(args []string) error {
	fs := flag.NewFlagSet("fanout", flag.ExitOnError)
	base := fs.String("base", "", "fake upstream base URL (http://127.0.0.1:PORT)")
	dealer := fs.String("dealer", "", "dealer id")
	types := fs.String("types", "faq news glossary guides videos podcasts", "content types, space-separated")
	dur := fs.Duration("d", 6*time.Second, "duration")
	_ = fs.Parse(args)
	if !strings.HasPrefix(*base, "http://127.0.0.1:") || *dealer == "" {
		return errors.New("fanout: -base http://127.0.0.1:PORT and -dealer are required")
	}
	var uris []string
	for _, t := range strings.Fields(*types) {
		uris = append(uris, *base+"/content/v1/dealers/"+*dealer+"/"+t+"?view=summary")
	}
	c := &fasthttp.HostClient{Addr: strings.TrimPrefix(*base, "http://"), MaxConns: 2 * len(uris)}
	var (
		lat   []time.Duration
		bytes int64
		bad   int
	)
	one := func(uri string) (int, error) {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.SetRequestURI(uri)
		if err := c.DoTimeout(req, resp, 10*time.Second); err != nil {
			return 0, err
		}
		if resp.StatusCode() != fasthttp.StatusOK {
			return 0, fmt.Errorf("%s: status %d", uri, resp.StatusCode())
		}
		return len(resp.Body()), nil
	}
	start := time.Now()
	for time.Since(start) < *dur {
		t0 := time.Now()
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			ferr error
		)
		for _, u := range uris {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n, err := one(u)
				mu.Lock()
				defer mu.Unlock()
				bytes += int64(n)
				if err != nil && ferr == nil {
					ferr = err
				}
			}()
		}
		wg.Wait()
		if ferr != nil {
			bad++
			if bad > 10 {
				return fmt.Errorf("fanout: %w", ferr)
			}
			continue
		}
		lat = append(lat, time.Since(t0))
	}
	elapsed := time.Since(start)
	if len(lat) == 0 {
		return errors.New("fanout: no complete fan-out")
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) int64 { return lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds() }
	var sum time.Duration
	for _, l := range lat {
		sum += l
	}
	out, _ := json.Marshal(map[string]any{
		"requests": len(lat), "duration_us": elapsed.Microseconds(), "bytes": bytes,
		"p50_us": pct(0.50), "p90_us": pct(0.90), "p99_us": pct(0.99), "max_us": lat[len(lat)-1].Microseconds(),
		"mean_us": float64(sum.Microseconds()) / float64(len(lat)),
		"non2xx":  bad, "err_connect": 0, "err_read": 0, "err_write": 0, "err_timeout": 0,
	})
	fmt.Fprintf(os.Stdout, "WRKJSON %s\n", out)
	return nil
}
