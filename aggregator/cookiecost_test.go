package aggregator

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestCookieLinesCostLinear: a header block of many Cookie lines costs
// the edge about what a block of as many other lines of the same size
// costs. serve read the request's headers through fasthttp's
// RequestHeader.All, which first collects the cookies (collectCookies),
// moving each Cookie line out of the header list with a copy of the rest
// of it: quadratic in the number of Cookie lines. The edge reads no
// cookie. With server.max_header_bytes at 64 KiB (the setting allows up to
// 1 MiB) a block of Cookie lines cost about 100 times a block of other
// lines, before any key check or limit; at 1 MiB, seconds a request.
func TestCookieLinesCostLinear(t *testing.T) {
	s := newBenchServer(t, true)
	addr := serveLikeMainBuf(t, s, 64<<10) // server.max_header_bytes: 65536
	const lines = 5000                     // 12 bytes each: the block within 64 KiB
	send := func(line string) (time.Duration, int) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
		br := bufio.NewReader(conn)
		req := "GET /dealer/REWIND/listing HTTP/1.1\r\nHost: edge.test\r\n" + strings.Repeat(line, lines) + "\r\n"
		best, status := time.Hour, 0
		for i := 0; i < 5; i++ {
			start := time.Now()
			if _, err := conn.Write([]byte(req)); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			best, status = min(best, time.Since(start)), resp.StatusCode
		}
		return best, status
	}
	send("X-Cooky: a\r\n")
	dOther, sOther := send("X-Cooky: a\r\n")
	dCookie, sCookie := send("Cookie: a=\r\n")
	t.Logf("%d header lines: other %v (status %d), Cookie %v (status %d)", lines, dOther, sOther, dCookie, sCookie)
	if dCookie > 10*dOther+10*time.Millisecond {
		t.Errorf("%d Cookie lines cost %.0fx as many other lines (%v against %v): the cookies are collected in quadratic time", lines, float64(dCookie)/float64(dOther), dCookie, dOther)
	}
}
