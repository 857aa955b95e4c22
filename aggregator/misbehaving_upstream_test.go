package aggregator

// Audit (area "upstream"): the public answer when the inventory service
// misbehaves at the HTTP level. A loopback proxy in front of the fake
// services forwards everything but the inventory listing, which it answers
// with hand-made bytes.

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/upstream"
)

type rawMode func(c net.Conn)

// interceptingProxy starts a reverse proxy to the fake whose calls
// intercept answers itself (true) or leaves to the fake (false); it
// returns a newBenchServerVia upstream factory.
func interceptingProxy(t testing.TB, intercept func(w http.ResponseWriter, r *http.Request) bool) func(string) string {
	return func(fakeAddr string) string {
		rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: fakeAddr})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !intercept(w, r) {
				rp.ServeHTTP(w, r)
			}
		})}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
		return ln.Addr().String()
	}
}

// rawProxy forwards to the fake, but answers inventory listings with
// the current mode.
func rawProxy(t *testing.T, mode *atomic.Value, hits *atomic.Int64) func(string) string {
	return interceptingProxy(t, func(w http.ResponseWriter, r *http.Request) bool {
		m, _ := mode.Load().(rawMode)
		if m == nil || !strings.HasPrefix(r.URL.Path, "/inventory/") || !strings.HasSuffix(r.URL.Path, "/vehicles") {
			return false
		}
		hits.Add(1)
		c, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return true
		}
		m(c)
		_ = c.Close()
		return true
	})
}

func rawAnswer(status, hdrs, body string) rawMode {
	return func(c net.Conn) {
		fmt.Fprintf(c, "HTTP/1.1 %s\r\n%sContent-Length: %d\r\n\r\n%s", status, hdrs, len(body), body)
	}
}

const leakyPage = `{"total":1,"items":[{"id_auto":"d3b8b8d4-bf88-4ab6-b912-6b61eb3e51ae","dealer_id":%d,"service":"REWIND","make":"Fiat","model":"Panda","updated_at":"2024-01-02T03:04:05Z","tech_data_dir":"/srv/tech/INTERNAL-DIR","source_ids":{"dms":"INTERNAL-DMS-ID"}}]}`

// TestPublicAnswerOnMisbehavingInventory: every misbehaviour of the
// inventory service is a 503 service_unavailable problem (contract 7),
// within the service timeout, with nothing of the service in the body or
// headers; the breaker counts the failures as documented.
func TestPublicAnswerOnMisbehavingInventory(t *testing.T) {
	var gzBody bytes.Buffer
	zw := gzip.NewWriter(&gzBody)
	fmt.Fprintf(zw, leakyPage, 101)
	_ = zw.Close()
	leakHdrs := "X-Internal-Host: inv-7.prod.internal\r\nSet-Cookie: upstream_session=s3cr3t\r\nServer: inventory-svc/1.4\r\nRetry-After: 30\r\nContent-Type: application/json\r\n"
	cases := []struct {
		name string
		mode rawMode
		ok   bool
	}{
		{"slow drip", func(c net.Conn) {
			msg := "HTTP/1.1 200 OK\r\n" + leakHdrs + "Content-Length: 500\r\n\r\n{\"total\":1,"
			for i := 0; i < len(msg); i++ {
				if _, err := c.Write([]byte{msg[i]}); err != nil {
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		}, false},
		{"gzip unasked", func(c net.Conn) {
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\n%sContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n", leakHdrs, gzBody.Len())
			c.Write(gzBody.Bytes())
		}, false},
		{"500 with internal error body", rawAnswer("500 Internal Server Error", leakHdrs, `{"error":"pq: connection to 10.20.30.40:5432 refused"}`), false},
		{"429 Retry-After", rawAnswer("429 Too Many Requests", leakHdrs, `{"error":"slow down"}`), false},
		{"503 Retry-After", rawAnswer("503 Service Unavailable", leakHdrs, `{"error":"maintenance"}`), false},
		{"302 redirect", rawAnswer("302 Found", "Location: http://169.254.169.254/\r\n"+leakHdrs, ""), false},
		{"close without answering", func(c net.Conn) {}, false},
		{"reset mid-body", func(c net.Conn) {
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\n%sContent-Length: 5000\r\n\r\n{\"total\":1,\"items\":[", leakHdrs)
			time.Sleep(10 * time.Millisecond)
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetLinger(0)
			}
		}, false},
		{"invalid JSON in internal field", rawAnswer("200 OK", leakHdrs, strings.Replace(fmt.Sprintf(leakyPage, 101), `"/srv/tech/INTERNAL-DIR"`, `/srv/tech/INTERNAL-DIR`, 1)), false},
		{"HTTP/1.0 body until close", func(c net.Conn) {
			fmt.Fprintf(c, "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n"+leakyPage, 101)
		}, true},
		{"chunked with trailer", func(c net.Conn) {
			b := fmt.Sprintf(leakyPage, 101)
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nTrailer: X-Internal-Host\r\n\r\n%x\r\n%s\r\n0\r\nX-Internal-Host: inv-7.prod.internal\r\n\r\n", len(b), b)
		}, true},
		{"103 then 200, wrong content type", func(c net.Conn) {
			b := fmt.Sprintf(leakyPage, 101)
			fmt.Fprintf(c, "HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(b), b)
		}, true},
	}
	leaks := []string{"internal", "INTERNAL", "10.20.30.40", "169.254", "s3cr3t", "inventory-svc", "upstream", "status 5", "decode", "timeout after", "tcp4"}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A fresh edge per case (fresh breakers), a miss every time.
			var mode atomic.Value
			var hits atomic.Int64
			s := newBenchServerVia(t, true, nil, cache.Options{}, rawProxy(t, &mode, &hits))
			base := serveLoopback(t, s)
			up := s.backend.(*upstream.Client)
			uri := fmt.Sprintf("%s/dealer/REWIND/listing?page=%d", base, 100+i)
			// Warm the key and profile with the normal path.
			mode.Store(rawMode(nil))
			if a := rawDo(t, "GET", base+"/dealer/NOS/listing", "X-Api-Key", "demo-key-alpha"); a.status != 200 {
				t.Fatalf("warm-up %d %s", a.status, a.body)
			}
			mode.Store(c.mode)
			before := hits.Load()
			start := time.Now()
			a := rawDo(t, "GET", uri, "X-Api-Key", "demo-key-alpha")
			el := time.Since(start)
			mode.Store(rawMode(nil))
			t.Logf("%d in %v, %d upstream hits, breakers %v: %s", a.status, el.Round(time.Millisecond), hits.Load()-before, up.BreakerStates()["inventory"], a.body)
			if el > upstream.DefaultTimeout+400*time.Millisecond {
				t.Errorf("answered after %v (service timeout %v)", el, upstream.DefaultTimeout)
			}
			if c.ok {
				if a.status != 200 {
					t.Errorf("status %d, want 200", a.status)
				}
			} else {
				var p struct {
					Status int    `json:"status"`
					Code   string `json:"code"`
				}
				_ = json.Unmarshal(a.body, &p)
				if a.status != 503 || p.Status != 503 || p.Code != "service_unavailable" || a.header.Get("Content-Type") != "application/problem+json" {
					t.Errorf("%d %q %s, want a 503 service_unavailable problem", a.status, a.header.Get("Content-Type"), a.body)
				}
			}
			for _, l := range leaks {
				if bytes.Contains(a.body, []byte(l)) {
					t.Errorf("body leaks %q: %s", l, a.body)
				}
				for k, vs := range a.header {
					for _, v := range vs {
						if strings.Contains(k+": "+v, l) {
							t.Errorf("header leaks %q: %s: %s", l, k, v)
						}
					}
				}
			}
			if a.header.Get("Set-Cookie") != "" || a.header.Get("Retry-After") == "30" || a.header.Get("Server") == "inventory-svc/1.4" {
				t.Errorf("upstream header passed through: %v", a.header)
			}
		})
	}
}
