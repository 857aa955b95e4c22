package aggregator

import (
	"bufio"
	"bytes"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestRawFields: what the one line loop of the raw header block readers
// yields (see rawFields for the rules).
func TestRawFields(t *testing.T) {
	for _, c := range []struct {
		name, raw string
		want      []string // name, value, name, value...
	}{
		{"CRLF", "Host: a\r\nX-Api-Key: k\r\n\r\n", []string{"Host", "a", "X-Api-Key", "k"}},
		{"bare LF", "A: 1\nB: 2\n", []string{"A", "1", "B", "2"}},
		{"CRLF and bare LF mixed", "A: 1\r\nB: 2\nC: 3\r\n", []string{"A", "1", "B", "2", "C", "3"}},
		{"only the CR before the LF is dropped", "A: 1\r2\r\nB: 3\r\r\n", []string{"A", "1\r2", "B", "3\r"}},
		{"empty value", "A:\r\nB: \r\nC:\t \r\n", []string{"A", "", "B", "", "C", ""}},
		{"value with inner spaces", "A: x  y\tz\r\n", []string{"A", "x  y\tz"}},
		{"leading and trailing whitespace of the value", "A: \t v w \t\r\nB:v\r\n", []string{"A", "v w", "B", "v"}},
		{"name untrimmed", "A : v\r\nB\t: w\r\n", []string{"A ", "v", "B\t", "w"}},
		{"name case kept", "x-API-key: k\r\n", []string{"x-API-key", "k"}},
		{"value cut at the first colon", "Forwarded: for=\"[2001:db8::1]:80\"\r\n", []string{"Forwarded", "for=\"[2001:db8::1]:80\""}},
		{"obs-fold: the continuation yields nothing", "A: 1\r\n 2\r\n\tX-Api-Key: k\r\nC: 3\r\n", []string{"A", "1", "C", "3"}},
		{"obs-fold of an empty first line", "A:\r\n  2\r\n", []string{"A", ""}},
		{"line without a colon", "junk\r\nA: 1\r\n", []string{"A", "1"}},
		{"empty name", ": v\r\n:\r\nA: 1\r\n", []string{"A", "1"}},
		{"end of the block", "A: 1\r\n\r\n", []string{"A", "1"}},
		{"past an empty line", "A: 1\r\n\r\nB: 2\r\n", []string{"A", "1", "B", "2"}},
		{"last line without LF", "A: 1\r\nB: 2", []string{"A", "1", "B", "2"}},
		{"empty block", "", nil},
		{"only line ends", "\r\n\n\r\n", nil},
		{"a request line yields a name with a space", "GET http://h/ HTTP/1.1\r\nA: 1\r\n", []string{"GET http", "//h/ HTTP/1.1", "A", "1"}},
		{"a request line without a colon yields nothing", "GET /x HTTP/1.1\r\nA: 1\r\n", []string{"A", "1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for k, v := range rawFields([]byte(c.raw)) {
				got = append(got, string(k), string(v))
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("rawFields(%q) = %q, want %q", c.raw, got, c.want)
			}
		})
	}
	t.Run("stops when the loop breaks", func(t *testing.T) {
		n := 0
		for range rawFields([]byte("A: 1\r\nB: 2\r\nC: 3\r\n")) {
			n++
			if n == 2 {
				break
			}
		}
		if n != 2 {
			t.Errorf("%d fields seen, want 2", n)
		}
	})
	t.Run("iterates again from the start", func(t *testing.T) {
		seq := rawFields([]byte("A: 1\r\nB: 2\r\n"))
		for i := range 2 {
			n := 0
			for range seq {
				n++
			}
			if n != 2 {
				t.Errorf("pass %d: %d fields, want 2", i, n)
			}
		}
	})
}

// TestRawFieldReaders: the three readers of the raw block find a field
// by its whole name, in any ASCII case, and never in a continuation line.
func TestRawFieldReaders(t *testing.T) {
	for _, c := range []struct {
		name, raw string
		te, cl    bool   // hasRawHeader transfer-encoding, content-length
		fwd, xff  string // forwardingFields, joined with "|"
		apiKeys   int    // readRaw
	}{
		{"none", "Host: a\r\n\r\n", false, false, "", "", 0},
		{"both framing headers", "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n", true, true, "", "", 0},
		{"any case", "TRANSFER-ENCODING: chunked\r\ncontent-length: 4\r\nx-forwarded-for: 1.2.3.4\r\nX-API-KEY: k\r\n", true, true, "", "1.2.3.4", 1},
		{"prefix of a longer name", "Transfer-Encoding-X: chunked\r\nContent-Lengths: 4\r\nForwarded-X: for=1.2.3.4\r\nX-Api-Keys: k\r\n", false, false, "", "", 0},
		{"space before the colon", "Transfer-Encoding : chunked\r\nForwarded : for=1.2.3.4\r\nX-Api-Key : k\r\n", false, false, "", "", 0},
		{"continuation lines", "X-Note: a\r\n Transfer-Encoding: chunked\r\n\tForwarded: for=1.2.3.4\r\n X-Api-Key: k\r\n", false, false, "", "", 0},
		{"Unicode folding is no match", "Tranſfer-Encoding: chunked\r\nX-Api-\u212aey: k\r\n", false, false, "", "", 0},
		{"every forwarding line, in order", "Forwarded: for=1.1.1.1\r\nX-Forwarded-For: 2.2.2.2\r\nforwarded:  for=3.3.3.3 \r\n", false, false, "for=1.1.1.1|for=3.3.3.3", "2.2.2.2", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw := []byte(c.raw)
			if te, cl := hasRawHeader(raw, "transfer-encoding"), hasRawHeader(raw, "content-length"); te != c.te || cl != c.cl {
				t.Errorf("hasRawHeader transfer-encoding %v, content-length %v; want %v, %v", te, cl, c.te, c.cl)
			}
			fwd, xff := forwardingFields(raw)
			if f, x := string(bytes.Join(fwd, []byte("|"))), string(bytes.Join(xff, []byte("|"))); f != c.fwd || x != c.xff {
				t.Errorf("forwardingFields %q, %q; want %q, %q", f, x, c.fwd, c.xff)
			}
			var h reqHeaders
			h.readRaw(raw)
			if h.apiKeys != c.apiKeys {
				t.Errorf("readRaw found %d API keys, want %d", h.apiKeys, c.apiKeys)
			}
		})
	}
}

// TestRawFieldsNoAllocation: the iterator and its readers allocate
// nothing of their own (forwardingFields only its result slices).
func TestRawFieldsNoAllocation(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	raw := []byte("Host: edge\r\nX-Api-Key: k\r\nAuthorization: Bearer b\r\nX-Request-ID: r\r\n" +
		"traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\nIf-None-Match: \"e\"\r\n" +
		"Accept-Encoding: gzip\r\nTransfer-Encoding: chunked\r\nX-Note: a\r\n b\r\n\r\n")
	var h reqHeaders
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"rawFields", func() {
			for range rawFields(raw) {
			}
		}},
		{"readRaw", func() { h.readRaw(raw) }},
		{"hasRawHeader", func() { _ = hasRawHeader(raw, "content-length") }},
		{"forwardingFields without forwarding lines", func() { _, _ = forwardingFields(raw) }},
	} {
		if n := testing.AllocsPerRun(100, c.f); n != 0 {
			t.Errorf("%s: %.1f allocations, want 0", c.name, n)
		}
	}
}

// TestContentLengthBesideTransferEncodingRefused: hasRawHeader's caller.
// A request with both framing headers, in any order and case, is 400 and
// its connection closed (RFC 9112 6.1); one with Transfer-Encoding only
// is answered.
func TestContentLengthBesideTransferEncodingRefused(t *testing.T) {
	s := newBenchServer(t, true)
	addr := serveLikeMain(t, s)
	for _, c := range []struct {
		name, hdrs string
		status     int
	}{
		{"Content-Length then Transfer-Encoding", "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", http.StatusBadRequest},
		{"Transfer-Encoding then Content-Length", "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", http.StatusBadRequest},
		{"lower case", "transfer-encoding: chunked\r\ncontent-length: 5\r\n", http.StatusBadRequest},
		{"Transfer-Encoding only", "Transfer-Encoding: chunked\r\nConnection: close\r\n", http.StatusOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := "GET /dealer/REWIND/listing?page_size=1 HTTP/1.1\r\nHost: edge.test\r\nX-Api-Key: demo-key-alpha\r\n" +
				c.hdrs + "\r\n0\r\n\r\n"
			resps, bodies, _ := rawExchange(t, addr, req, "GET")
			if resps[0].StatusCode != c.status {
				t.Fatalf("status %d, want %d: %.120s", resps[0].StatusCode, c.status, bodies[0])
			}
			if c.status == http.StatusBadRequest && (!strings.Contains(string(bodies[0]), `"bad_request"`) || !resps[0].Close) {
				t.Errorf("body %.120s, closed %v; want bad_request and the connection closed", bodies[0], resps[0].Close)
			}
		})
	}
}

// FuzzRawFieldsMatchAllInOrder: for any header block fasthttp accepts
// without a bare LF (the edge refuses those), rawFields yields the fields
// fasthttp's own in-order reading of the same RawHeaders yields (the
// fields the readers stand for): the same names in the same order, the
// same values, except that a folded field's value is its first line only
// (a prefix of fasthttp's, which joins the lines). forwardingFields finds
// what PeekAll finds, as clientAddr's fallback for a request built in
// process does.
func FuzzRawFieldsMatchAllInOrder(f *testing.F) {
	f.Add("X-Api-Key: a\r\nAuthorization: Bearer b\r\nX-Api-Key: c\r\n")
	f.Add("Forwarded: for=1.2.3.4\r\nX-Forwarded-For: 5.6.7.8, 9.9.9.9\r\nforwarded:  for=\"[2001:db8::1]:80\" \r\n")
	f.Add("X-Note: a\r\n b\r\n\tc\r\nA:\r\n 2\r\nContent-Length: 0\r\n")
	f.Add("Transfer-Encoding: chunked\r\nContent-Length: 4\r\nCookie: a=b\r\nConnection: close\r\n")
	f.Add(" 0\r\n")
	f.Fuzz(func(t *testing.T, block string) {
		if hasBareLF([]byte(block)) {
			return
		}
		var h fasthttp.RequestHeader
		if err := h.Read(bufio.NewReader(strings.NewReader("GET / HTTP/1.1\r\nHost: x\r\n" + block + "\r\n"))); err != nil {
			return
		}
		// A block that starts with SP or HT folds onto the Host line.
		folded := strings.Contains(block, "\n ") || strings.Contains(block, "\n\t") ||
			strings.HasPrefix(block, " ") || strings.HasPrefix(block, "\t")
		if !folded {
			fwd, xff := forwardingFields(h.RawHeaders())
			pf := slices.Clone(h.PeekAll("Forwarded"))
			px := h.PeekAll("X-Forwarded-For")
			if !slices.EqualFunc(fwd, pf, bytes.Equal) || !slices.EqualFunc(xff, px, bytes.Equal) {
				t.Fatalf("forwardingFields %q %q, PeekAll %q %q", fwd, xff, pf, px)
			}
		}
		// AllInOrder normalises names in place in RawHeaders (and may
		// write a folded line's join there): read a copy first.
		var got [][2]string
		for k, v := range rawFields(bytes.Clone(h.RawHeaders())) {
			got = append(got, [2]string{string(k), string(v)})
		}
		var want [][2]string
		for k, v := range h.AllInOrder() {
			want = append(want, [2]string{string(k), string(v)})
		}
		if len(got) != len(want) {
			t.Fatalf("rawFields %q, AllInOrder %q", got, want)
		}
		for i := range got {
			g, w := got[i], want[i]
			if !strings.EqualFold(g[0], w[0]) {
				t.Fatalf("field %d: name %q, AllInOrder %q", i, g[0], w[0])
			}
			if g[1] != w[1] && !(folded && strings.HasPrefix(w[1], g[1])) {
				t.Fatalf("field %d (%s): value %q, AllInOrder %q", i, g[0], g[1], w[1])
			}
		}
	})
}
