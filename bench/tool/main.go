// Command tool is the Go side of the nginx-vs-edge benchmark (bench/run.sh):
//
//	tool whoami   -base URL -key KEY                      print the key's dealer id
//	tool warm     -base URL -keys FILE -urls FILE [-compare URL]
//	                                                      GET every key x URL once (fills caches), fail on non-2xx;
//	                                                      with -compare, also through the second base and compare bodies
//	tool get      -url URL [-key KEY] [-o FILE]           one GET, fail on non-2xx (checks a baseline URL; saves a profile)
//	tool stampede -base URL -metrics URL -key KEY -warm PATH -lone PATH -path PATH [-n 100]
//	                                                      N concurrent identical misses; counts upstream calls
//	                                                      from the edge's /metrics (before/after)
//	tool report   -in runs.jsonl -md FILE [-smoke]        the results table (stdout + markdown)
//	tool scaleprep|scalewarm|scaleseq|scalesnap|scalerec   the scale mix (s, u): see scale.go
//	tool fanout   -base URL -dealer ID [-d 6s]             row d's floor: the six section calls of a cold hub
//	                                                      at once, one hub at a time, by a bare fasthttp client
//	tool otlpsink -listen ADDR                            an OTLP/HTTP traces endpoint that counts and drops what
//	                                                      it is sent (POST /v1/traces; GET /stats: JSON counts)
//
// It talks to 127.0.0.1 only (the addresses run.sh passes) and every
// operation is bounded by a timeout. Only the standard library is used,
// and fasthttp's client in fanout (the edge's own client: the floor it
// measures is the edge's).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: tool whoami|warm|get|stampede|report|otlpsink [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "whoami":
		err = whoami(os.Args[2:])
	case "warm":
		err = warm(os.Args[2:])
	case "get":
		err = get(os.Args[2:])
	case "stampede":
		err = stampede(os.Args[2:])
	case "report":
		err = report(os.Args[2:])
	case "fanout":
		err = fanout(os.Args[2:])
	case "scaleprep":
		err = scalePrep(os.Args[2:])
	case "scalewarm":
		err = scaleWarm(os.Args[2:])
	case "scaleseq":
		err = scaleSeq(os.Args[2:])
	case "scalesnap":
		err = scaleSnap(os.Args[2:])
	case "scalerec":
		err = scaleRec(os.Args[2:])
	case "otlpsink":
		err = otlpSink(os.Args[2:])
	default:
		err = fmt.Errorf("unknown subcommand %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench tool:", err)
		os.Exit(1)
	}
}

func client(conns int, timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:               nil,
			MaxIdleConns:        conns,
			MaxIdleConnsPerHost: conns,
			MaxConnsPerHost:     conns,
			DisableCompression:  true,
		},
	}
}

// mustLoopback refuses any target that is not on 127.0.0.1 / localhost.
func mustLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	h := u.Hostname()
	if ip := net.ParseIP(h); (ip != nil && ip.IsLoopback()) || h == "localhost" {
		return nil
	}
	return fmt.Errorf("refusing non-loopback target %q", raw)
}

func fetch(c *http.Client, rawURL, key string, headers ...string) (int, http.Header, []byte, error) {
	if err := mustLoopback(rawURL); err != nil {
		return 0, nil, nil, err
	}
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		return 0, nil, nil, err
	}
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b, err
}

func readLines(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out, nil
}

// whoami prints the dealer id of a key, read from meta.dealer.id of the hub.
func whoami(args []string) error {
	fs := flag.NewFlagSet("whoami", flag.ExitOnError)
	base := fs.String("base", "", "edge base URL")
	key := fs.String("key", "", "API key")
	_ = fs.Parse(args)
	st, _, body, err := fetch(client(1, 10*time.Second), *base+"/dealer/content/hub?page_size=1", *key)
	if err != nil {
		return err
	}
	if st != 200 {
		return fmt.Errorf("whoami: status %d: %.300s", st, body)
	}
	var v struct {
		Meta struct {
			Dealer struct {
				ID int64 `json:"id"`
			} `json:"dealer"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(body, &v); err != nil || v.Meta.Dealer.ID == 0 {
		return fmt.Errorf("whoami: no meta.dealer.id in %.300s", body)
	}
	fmt.Println(v.Meta.Dealer.ID)
	return nil
}

func get(args []string) error {
	fs := flag.NewFlagSet("get", flag.ExitOnError)
	u := fs.String("url", "", "URL")
	key := fs.String("key", "", "API key (optional)")
	o := fs.String("o", "", "write the body to this file")
	timeout := fs.Duration("timeout", 10*time.Second, "request timeout")
	gz := fs.Bool("gzip", false, "send Accept-Encoding: gzip and require a gzip-coded answer")
	wantCached := fs.Bool("want-cached", false, "require an answer from the cache: X-Cache HIT or STALE (edge), X-Nginx-Cache HIT, STALE or UPDATING (nginx)")
	_ = fs.Parse(args)
	var hdr []string
	if *gz {
		hdr = append(hdr, "Accept-Encoding: gzip")
	}
	st, h, body, err := fetch(client(1, *timeout), *u, *key, hdr...)
	if err != nil {
		return err
	}
	if st < 200 || st > 299 {
		return fmt.Errorf("GET %s: status %d: %.300s", *u, st, body)
	}
	if *gz && h.Get("Content-Encoding") != "gzip" {
		return fmt.Errorf("GET %s: asked for gzip, got Content-Encoding %q", *u, h.Get("Content-Encoding"))
	}
	if *wantCached {
		// nginx passes the edge's X-Cache of the time it filled its own
		// cache through: when X-Nginx-Cache is there, it is the one that
		// says where this answer came from.
		status, cached := h.Get("X-Cache"), map[string]bool{"HIT": true, "STALE": true}
		if ng := h.Get("X-Nginx-Cache"); ng != "" {
			status, cached = ng, map[string]bool{"HIT": true, "STALE": true, "UPDATING": true}
		}
		if !cached[status] {
			return fmt.Errorf("GET %s: not answered from the cache (X-Cache %q, X-Nginx-Cache %q)", *u, h.Get("X-Cache"), h.Get("X-Nginx-Cache"))
		}
	}
	if *o != "" {
		if err := os.WriteFile(*o, body, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("GET %s: %d, %d bytes\n", *u, st, len(body))
	return nil
}

// warm requests every (key, URL) pair once; all must answer 2xx.
func warm(args []string) error {
	fs := flag.NewFlagSet("warm", flag.ExitOnError)
	base := fs.String("base", "", "base URL")
	cmp := fs.String("compare", "", "second base URL; bodies are compared with -base's")
	keysF := fs.String("keys", "", "file of API keys")
	urlsF := fs.String("urls", "", "file of paths")
	workers := fs.Int("workers", 32, "concurrent requests")
	timeout := fs.Duration("timeout", 120*time.Second, "overall limit")
	_ = fs.Parse(args)
	keys, err := readLines(*keysF)
	if err != nil {
		return err
	}
	paths, err := readLines(*urlsF)
	if err != nil {
		return err
	}
	type job struct{ key, path string }
	jobs := make(chan job)
	c := client(*workers, 10*time.Second)
	var failed, mismatched, done atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	deadline := time.Now().Add(*timeout)
	for w := 0; w < *workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				st, _, b1, err := fetch(c, *base+j.path, j.key)
				if err == nil && (st < 200 || st > 299) {
					err = fmt.Errorf("status %d: %.200s", st, b1)
				}
				if err == nil && *cmp != "" {
					var st2 int
					var b2 []byte
					st2, _, b2, err = fetch(c, *cmp+j.path, j.key)
					if err == nil && (st2 < 200 || st2 > 299) {
						err = fmt.Errorf("status %d from %s: %.200s", st2, *cmp, b2)
					}
					if err == nil && !bytes.Equal(b1, b2) {
						mismatched.Add(1)
					}
				}
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Sprintf("%s (key %s): %v", j.path, j.key, err))
				}
				done.Add(1)
			}
		}()
	}
	// Same order as wrk/mix.lua: URL-major, key-minor.
feed:
	for _, p := range paths {
		for _, k := range keys {
			if time.Now().After(deadline) {
				break feed
			}
			jobs <- job{k, p}
		}
	}
	close(jobs)
	wg.Wait()
	total := int64(len(keys) * len(paths))
	fmt.Printf("warm %s: %d/%d requests, %d failed", *base, done.Load(), total, failed.Load())
	if *cmp != "" {
		fmt.Printf(", %d bodies differ from %s", mismatched.Load(), *cmp)
	}
	fmt.Println()
	if f := failed.Load(); f > 0 {
		return fmt.Errorf("warm: %d requests failed; first: %v", f, firstErr.Load())
	}
	if done.Load() < total {
		return fmt.Errorf("warm: timed out after %d of %d requests", done.Load(), total)
	}
	return nil
}

// upstreamCalls sums the edge's upstream request counter(s) in a
// Prometheus text exposition. found is false when no such metric exists.
func upstreamCalls(c *http.Client, metricsURL string) (total float64, bySvc map[string]float64, name string, found bool, err error) {
	st, _, body, err := fetch(c, metricsURL, "")
	if err != nil {
		return 0, nil, "", false, err
	}
	if st != 200 {
		return 0, nil, "", false, fmt.Errorf("metrics: status %d", st)
	}
	bySvc = map[string]float64{}
	// Prefer the documented counter; otherwise any *_total counter with
	// "upstream" in its name that is not about breakers or durations.
	pick := func(n string) bool { return n == "edge_upstream_requests_total" }
	if !bytes.Contains(body, []byte("edge_upstream_requests_total")) {
		pick = func(n string) bool {
			return strings.Contains(n, "upstream") && strings.HasSuffix(n, "_total") &&
				!strings.Contains(n, "breaker") && !strings.Contains(n, "duration") && !strings.Contains(n, "bucket")
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		n, labels := line, ""
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			n = line[:i]
			if line[i] == '{' {
				if j := strings.LastIndexByte(line, '}'); j > i {
					labels = line[i+1 : j]
				}
			}
		}
		if !pick(n) {
			continue
		}
		f := strings.Fields(line[strings.LastIndexByte(line, '}')+1:])
		if len(f) == 0 {
			continue
		}
		v, perr := strconv.ParseFloat(f[0], 64)
		if perr != nil {
			continue
		}
		found, name = true, n
		total += v
		svc := "all"
		for _, l := range strings.Split(labels, ",") {
			if k, val, ok := strings.Cut(l, "="); ok && strings.TrimSpace(k) == "service" {
				svc = strings.Trim(val, `"`)
			}
		}
		bySvc[svc] += v
	}
	return total, bySvc, name, found, sc.Err()
}

// backgroundSvc is the service the edge calls on a timer of its own (the
// key index's sync), not for a request.
const backgroundSvc = "dealers"

func diff(a, b map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range b {
		if d := v - a[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// StampedeResult is one stampede measurement (a line of runs.jsonl).
type StampedeResult struct {
	Kind        string             `json:"kind"`
	Target      string             `json:"target"`
	N           int                `json:"n"`
	OK          int                `json:"ok"`
	Statuses    map[string]int     `json:"statuses"`
	XCache      map[string]int     `json:"x_cache"`
	P50us       int64              `json:"p50_us"`
	P99us       int64              `json:"p99_us"`
	MaxUs       int64              `json:"max_us"`
	Pending     bool               `json:"pending"`
	Metric      string             `json:"metric,omitempty"`
	Calls       float64            `json:"calls"`
	LoneCalls   float64            `json:"lone_calls"`
	CallsBySvc  map[string]float64 `json:"calls_by_service,omitempty"`
	LoneBySvc   map[string]float64 `json:"lone_calls_by_service,omitempty"`
	Error       string             `json:"error,omitempty"`
	Description string             `json:"description"`
}

// stampede: warm the key (auth) with one path, measure what one lone miss
// costs upstream with another, then fire n identical requests for a third
// path at once over pre-opened connections and count the upstream calls.
func stampede(args []string) error {
	fs := flag.NewFlagSet("stampede", flag.ExitOnError)
	base := fs.String("base", "", "base URL (edge or nginx)")
	metrics := fs.String("metrics", "", "the edge's /metrics URL (the edge that calls the upstream)")
	key := fs.String("key", "", "API key")
	warmP := fs.String("warm", "", "path requested first (resolves the key)")
	loneP := fs.String("lone", "", "path of the lone miss (upstream calls of one miss)")
	path := fs.String("path", "", "path of the stampede")
	n := fs.Int("n", 100, "concurrent identical requests")
	target := fs.String("target", "edge", "label")
	_ = fs.Parse(args)
	res := StampedeResult{Kind: "stampede", Target: *target, N: *n, Statuses: map[string]int{}, XCache: map[string]int{},
		Description: fmt.Sprintf("%d concurrent GET %s", *n, *path)}
	out := func() error {
		b, _ := json.Marshal(res)
		fmt.Println(string(b))
		if res.Error != "" {
			return errors.New(res.Error)
		}
		return nil
	}
	c := client(4, 15*time.Second)
	if st, _, b, err := fetch(c, *base+*warmP, *key); err != nil || st != 200 {
		res.Error = fmt.Sprintf("warm request: status %d err %v: %.200s", st, err, b)
		return out()
	}
	m0, s0, name, found, merr := upstreamCalls(c, *metrics)
	res.Pending = merr != nil || !found
	res.Metric = name
	if st, _, b, err := fetch(c, *base+*loneP, *key); err != nil || st != 200 {
		res.Error = fmt.Sprintf("lone miss: status %d err %v: %.200s", st, err, b)
		return out()
	}
	time.Sleep(300 * time.Millisecond)
	var m1, m2, m3 float64
	var s2, s3 map[string]float64
	if !res.Pending {
		var s1 map[string]float64
		m1, s1, _, _, _ = upstreamCalls(c, *metrics)
		// The key index's sync calls the dealers service on its own clock
		// (auth.index_interval), whatever the requests: one that lands in a
		// window is not a call of the miss (the warm request resolved the
		// key), so neither count holds it.
		res.LoneBySvc = diff(s0, s1)
		res.LoneCalls = m1 - m0 - res.LoneBySvc[backgroundSvc]
	}

	// Pre-open n connections, then release all requests at once.
	u, err := url.Parse(*base)
	if err != nil {
		return err
	}
	if err := mustLoopback(*base); err != nil {
		return err
	}
	conns := make([]net.Conn, *n)
	for i := range conns {
		cn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
		if err != nil {
			res.Error = "dial: " + err.Error()
			return out()
		}
		defer cn.Close()
		conns[i] = cn
	}
	raw := []byte("GET " + *path + " HTTP/1.1\r\nHost: " + u.Host + "\r\nX-Api-Key: " + *key + "\r\nAccept: application/json\r\n\r\n")
	if !res.Pending {
		m2, s2, _, _, _ = upstreamCalls(c, *metrics)
	}
	type r struct {
		status int
		xc     string
		lat    time.Duration
		err    error
	}
	results := make([]r, *n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, cn := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			t0 := time.Now()
			_ = cn.SetDeadline(t0.Add(15 * time.Second))
			if _, err := cn.Write(raw); err != nil {
				results[i].err = err
				return
			}
			resp, err := http.ReadResponse(bufio.NewReader(cn), nil)
			if err != nil {
				results[i].err = err
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			results[i] = r{status: resp.StatusCode, xc: resp.Header.Get("X-Cache"), lat: time.Since(t0)}
		}()
	}
	close(start)
	wg.Wait()
	time.Sleep(500 * time.Millisecond) // let any background fill land in the counter
	if !res.Pending {
		m3, s3, _, _, _ = upstreamCalls(c, *metrics)
		res.CallsBySvc = diff(s2, s3)
		res.Calls = m3 - m2 - res.CallsBySvc[backgroundSvc]
	}
	var lats []int64
	for _, x := range results {
		if x.err != nil {
			res.Statuses["error"]++
			continue
		}
		res.Statuses[strconv.Itoa(x.status)]++
		if x.status >= 200 && x.status <= 299 {
			res.OK++
		}
		xc := x.xc
		if xc == "" {
			xc = "none"
		}
		res.XCache[xc]++
		lats = append(lats, x.lat.Microseconds())
	}
	if len(lats) > 0 {
		sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
		res.P50us = lats[len(lats)*50/100]
		res.P99us = lats[min(len(lats)-1, len(lats)*99/100)]
		res.MaxUs = lats[len(lats)-1]
	}
	if res.OK != *n {
		res.Error = fmt.Sprintf("stampede: %d of %d responses were 2xx (%v)", res.OK, *n, res.Statuses)
	}
	return out()
}

// otlpSink serves an OTLP/HTTP traces endpoint for the tracing scenario:
// every export is read and answered 200 with an empty
// ExportTraceServiceResponse (an empty protobuf message is zero bytes), so
// the edge's exporter works as against a collector; GET /stats returns the
// exports and bytes received. It runs until killed.
func otlpSink(args []string) error {
	fs := flag.NewFlagSet("otlpsink", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address")
	_ = fs.Parse(args)
	var exports, bytesIn atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, io.LimitReader(r.Body, 64<<20))
		exports.Add(1)
		bytesIn.Add(n)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"exports":%d,"bytes":%d}`+"\n", exports.Load(), bytesIn.Load())
	})
	srv := &http.Server{Addr: *listen, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return srv.ListenAndServe()
}
