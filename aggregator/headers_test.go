package aggregator

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

func TestReqHeadersRead(t *testing.T) {
	for _, normalise := range []bool{true, false} {
		var h fasthttp.RequestHeader
		h.DisableNormalizing()
		if normalise {
			h.EnableNormalizing()
		}
		raw := "GET /x HTTP/1.1\r\nHost: a\r\nx-api-key: k1\r\nAUTHORIZATION: Bearer b\r\nX-Api-Key: k2\r\n" +
			"x-request-id: r1\r\nX-Request-ID: r2\r\nTraceparent: tp\r\nTRACESTATE: ts\r\ntracestate: ts2\r\nif-none-match: \"e\"\r\n" +
			"Accept-Encoding: gzip\r\nAccept-Encoding: br\r\nContent-Length: 0\r\nX-Other: y\r\n\r\n"
		if err := h.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
			t.Fatal(err)
		}
		var rh reqHeaders
		rh.requestID = []byte("stale") // read starts from zero
		rh.read(&h)
		got := []string{string(rh.apiKey), string(rh.authorization), string(rh.requestID), string(rh.traceparent), string(rh.ifNoneMatch), string(rh.acceptEncoding), string(rh.tracestate)}
		want := []string{"k1", "Bearer b", "r1", "tp", `"e"`, "gzip,br", "ts,ts2"} // list fields (tracestate, If-None-Match, Accept-Encoding) join their lines
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("normalise %v: field %d = %q, want %q", normalise, i, got[i], want[i])
			}
		}
		if rh.apiKeys != 2 || rh.authorizations != 1 || !rh.contentLength {
			t.Errorf("normalise %v: counts %d %d, content-length %v", normalise, rh.apiKeys, rh.authorizations, rh.contentLength)
		}
	}
	var empty fasthttp.RequestHeader
	var rh reqHeaders
	rh.read(&empty)
	if rh.apiKey != nil || rh.authorization != nil || rh.requestID != nil || rh.traceparent != nil || rh.tracestate != nil ||
		rh.ifNoneMatch != nil || rh.acceptEncoding != nil || rh.apiKeys != 0 || rh.authorizations != 0 || rh.contentLength {
		t.Errorf("empty header: %+v", rh)
	}
}

// FuzzReqHeadersMatchPeek: the one-pass reader finds what fasthttp's own
// lookups find (the first value, the number of values) for any header
// block fasthttp accepts; for the list fields (tracestate, If-None-Match,
// Accept-Encoding) every line's value, joined with commas, as PeekAll
// finds them (RFC 9110 5.3; empty members are no members).
func FuzzReqHeadersMatchPeek(f *testing.F) {
	f.Add("X-Api-Key: a\r\nAuthorization: Bearer b\r\nX-Api-Key: c\r\n")
	f.Add("x-request-id: r\r\ntraceparent: t\r\ntracestate: a=b\r\nIF-NONE-MATCH: \"e\"\r\naccept-encoding: gzip\r\nContent-Length: 0\r\n")
	f.Add("Accept-Encoding:\r\nX-Api-Key:\r\nAuthorization: \r\n")
	f.Add("tracestate: a=1\r\ntracestate: b=2\r\nIf-None-Match: \"x\"\r\nIf-None-Match:\r\nIf-None-Match: \"y\"\r\n")
	f.Add("Accept-Encoding: *\r\nAccept-Encoding:\r\naccept-encoding: gzip;q=0\r\n")
	f.Fuzz(func(t *testing.T, block string) {
		var h fasthttp.RequestHeader
		if err := h.Read(bufio.NewReader(strings.NewReader("GET / HTTP/1.1\r\nHost: x\r\n" + block + "\r\n"))); err != nil {
			return
		}
		var rh reqHeaders
		rh.read(&h)
		for _, c := range []struct {
			name string
			got  []byte
		}{
			{"X-Api-Key", rh.apiKey}, {"Authorization", rh.authorization}, {"X-Request-ID", rh.requestID},
			{"traceparent", rh.traceparent}, {"tracestate", rh.tracestate}, {"If-None-Match", rh.ifNoneMatch}, {"Accept-Encoding", rh.acceptEncoding},
		} {
			want := h.Peek(c.name)
			if c.name == "tracestate" || c.name == "If-None-Match" || c.name == "Accept-Encoding" {
				if listMembers(c.got) != listMembers(bytes.Join(h.PeekAll(c.name), []byte(","))) {
					t.Fatalf("%s: one pass %q, PeekAll %q", c.name, c.got, h.PeekAll(c.name))
				}
				continue
			}
			if string(c.got) != string(want) {
				t.Fatalf("%s: one pass %q, Peek %q", c.name, c.got, want)
			}
		}
		if rh.apiKeys != len(h.PeekAll("X-Api-Key")) || rh.authorizations != len(h.PeekAll("Authorization")) {
			t.Fatalf("counts %d %d, PeekAll %d %d", rh.apiKeys, rh.authorizations, len(h.PeekAll("X-Api-Key")), len(h.PeekAll("Authorization")))
		}
		if rh.contentLength != (len(h.Peek("Content-Length")) > 0) {
			t.Fatalf("content-length %v, Peek %q", rh.contentLength, h.Peek("Content-Length"))
		}
	})
}

// listMembers is a comma-separated list's non-empty members, trimmed and
// joined with one comma: the list it means.
func listMembers(b []byte) string {
	var out []string
	for _, m := range strings.Split(string(b), ",") {
		if m = strings.Trim(m, " \t"); m != "" {
			out = append(out, m)
		}
	}
	return strings.Join(out, ",")
}

// FuzzReadRawMatchesRead: the reader of a chunked request's header block
// (readRaw, which leaves the trailer out) finds what read finds in the
// parsed headers for any header block fasthttp accepts without a trailer.
// Folded (obs-fold) lines are left out: fasthttp unfolds them where
// readRaw skips the continuation (a folded key is refused on both paths).
func FuzzReadRawMatchesRead(f *testing.F) {
	f.Add("X-Api-Key: a\r\nAuthorization: Bearer b\r\nX-Api-Key: c\r\n")
	f.Add("x-request-id: r\r\ntraceparent: t\r\ntracestate: a=b\r\ntracestate: c=d\r\nIF-NONE-MATCH: \"e\"\r\naccept-encoding: gzip\r\n")
	f.Fuzz(func(t *testing.T, block string) {
		if strings.Contains(block, "\n ") || strings.Contains(block, "\n\t") || strings.HasPrefix(block, " ") || strings.HasPrefix(block, "\t") || hasBareLF([]byte(block)) {
			return
		}
		var h fasthttp.RequestHeader
		if err := h.Read(bufio.NewReader(strings.NewReader("GET / HTTP/1.1\r\nHost: x\r\n" + block + "\r\n"))); err != nil {
			return
		}
		var a, b reqHeaders
		a.read(&h)
		b.readRaw(h.RawHeaders())
		for _, c := range []struct {
			name   string
			x, y   []byte
			isList bool
		}{
			{"X-Api-Key", a.apiKey, b.apiKey, false}, {"Authorization", a.authorization, b.authorization, false},
			{"X-Request-ID", a.requestID, b.requestID, false}, {"traceparent", a.traceparent, b.traceparent, false},
			{"tracestate", a.tracestate, b.tracestate, true}, {"If-None-Match", a.ifNoneMatch, b.ifNoneMatch, true},
			{"Accept-Encoding", a.acceptEncoding, b.acceptEncoding, false},
		} {
			if string(c.x) != string(c.y) && !(c.isList && listMembers(c.x) == listMembers(c.y)) {
				t.Fatalf("%s: read %q, readRaw %q", c.name, c.x, c.y)
			}
		}
		if a.apiKeys != b.apiKeys || a.authorizations != b.authorizations || a.contentLength != b.contentLength {
			t.Fatalf("counts read %d %d %v, readRaw %d %d %v", a.apiKeys, a.authorizations, a.contentLength, b.apiKeys, b.authorizations, b.contentLength)
		}
	})
}
