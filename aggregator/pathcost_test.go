package aggregator

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestPathNormalizationCostBounded: a request whose path is a run of
// slashes costs the edge about what a request of the same size with an
// ordinary path costs. fasthttp's server normalises every request path
// while parsing it (URI.parse calls normalizePath before the handler, and
// DisablePathNormalizing exists for clients only), and its duplicate-slash
// and dot-segment loops copy the rest of the path once per occurrence:
// quadratic in the path's length. The edge routes on the raw path and
// never needs the normalised one. Before: an 8 KB path of slashes (the
// default server.max_header_bytes) took hundreds of times the CPU of an
// 8 KB path of letters, before any key check or limit; 64 KB about 0.1 s,
// 1 MiB (the largest max_header_bytes) over 20 s, per request.
func TestPathNormalizationCostBounded(t *testing.T) {
	s := newBenchServer(t, true)
	addr := serveLikeMain(t, s)
	const n = 8000 // request line and headers within the 8 KiB read buffer
	const batch = 30
	send := func(path string) (time.Duration, []int) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
		br := bufio.NewReader(conn)
		var statuses []int
		start := time.Now()
		for i := 0; i < batch; i++ {
			if _, err := conn.Write([]byte("GET " + path + " HTTP/1.1\r\nHost: edge.test\r\n\r\n")); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			statuses = append(statuses, resp.StatusCode)
		}
		return time.Since(start), statuses
	}
	letters := "/" + strings.Repeat("a", n-1)
	slashes := strings.Repeat("/", n)
	send(letters) // warm up
	best := func(path string) (time.Duration, int) {
		d, st := send(path)
		for i := 0; i < 2; i++ {
			if d2, _ := send(path); d2 < d {
				d = d2
			}
		}
		return d, st[0]
	}
	dl, sl := best(letters)
	ds, ss := best(slashes)
	t.Logf("%d requests: %d-byte path of letters %v (status %d), of slashes %v (status %d)", batch, n, dl, sl, ds, ss)
	if sl != 404 || ss != 404 {
		t.Errorf("statuses %d and %d, want 404 not_found for both (no route has either path)", sl, ss)
	}
	if ds > 10*dl+10*time.Millisecond {
		t.Errorf("a path of %d slashes costs %.0fx a path of %d letters (%v against %v for %d requests): path normalisation is quadratic", n, float64(ds)/float64(dl), n, ds, dl, batch)
	}
}
