package reliability

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/contracttests/procs"
)

// Hostile input, sent over raw TCP so that no Go HTTP client normalises it:
// every answer is a 4xx problem (or a closed connection where that is the
// answer), never a 5xx, never a hang, never an internal detail, and the
// edge keeps serving.

// Timeouts of the hostile stack: short, so that the slow-client cases run
// in seconds.
const (
	hostileReadTimeout = time.Second
	hostileIdleTimeout = 2 * time.Second
	hostileMaxHeader   = 4096
	hostileMaxBody     = 1024
	// slack is what a timeout may overrun on a loaded two-core machine.
	slack = 2 * time.Second
	// hostileKey is unlimited (plan bench), so the many requests of the
	// table never meet the rate limiter.
	hostileKey = "bench-key-000"
)

func hostileConfig() map[string]any {
	return map[string]any{
		"server": map[string]any{
			"read_timeout":     hostileReadTimeout.String(),
			"write_timeout":    "2s",
			"idle_timeout":     hostileIdleTimeout.String(),
			"max_header_bytes": hostileMaxHeader,
			"max_request_body": hostileMaxBody,
		},
		"log": map[string]any{"level": "debug", "access_sample": 1, "max_lines_per_sec": 0},
	}
}

// rawResult is what a raw exchange produced.
type rawResult struct {
	resp *http.Response // nil when no answer was read
	body []byte
	// closed: the edge closed or reset the connection before a complete
	// answer was read.
	closed bool
	// err is any other failure: a read deadline (a hang) or garbage.
	err     error
	elapsed time.Duration
	// afterClosed: with rawExchangeThenEOF, the connection ended right
	// after the answer; extra holds whatever came instead.
	afterClosed bool
	extra       []byte
}

// isClosed reports whether err means the peer closed or reset the
// connection.
func isClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// rawExchange writes req on a new connection to addr and reads one answer
// (to a request of method), within timeout.
func rawExchange(addr, method string, req []byte, timeout time.Duration) rawResult {
	return exchange(addr, method, req, timeout, false)
}

// rawExchangeThenEOF is rawExchange that also reads on after the answer:
// the edge must close the connection without answering anything pipelined
// behind the request.
func rawExchangeThenEOF(addr, method string, req []byte, timeout time.Duration) rawResult {
	return exchange(addr, method, req, timeout, true)
}

func exchange(addr, method string, req []byte, timeout time.Duration, readOn bool) rawResult {
	start := time.Now()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return rawResult{err: fmt.Errorf("dial: %w", err)}
	}
	defer c.Close()
	_ = c.SetDeadline(start.Add(timeout))
	// A write error is not final: the edge may have answered and closed
	// before it read everything (an oversized header block).
	_, werr := c.Write(req)
	br := bufio.NewReader(c)
	r := readAnswer(c, br, method, start, werr)
	if readOn && r.resp != nil {
		var err error
		r.extra, err = io.ReadAll(br)
		r.afterClosed = err == nil || isClosed(err)
	}
	return r
}

func readAnswer(c net.Conn, br *bufio.Reader, method string, start time.Time, werr error) rawResult {
	var r rawResult
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err == nil {
		r.resp = resp
		r.body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	r.elapsed = time.Since(start)
	switch {
	case err == nil:
	case isTimeout(err):
		r.err = fmt.Errorf("no complete answer within the deadline (hang): %w", err)
	case isClosed(err) && r.resp == nil:
		r.closed = true
	default:
		if werr != nil {
			err = fmt.Errorf("%w (write: %v)", err, werr)
		}
		r.err = err
	}
	return r
}

// internalDetail matches what an answer must never show: Go error strings,
// panics, stack traces, file paths.
var internalDetail = regexp.MustCompile(`(?i)fasthttp|runtime|panic|goroutine|\.go:\d|/work/|/root/|/home/|/tmp/|/usr/|buffer size|error when|stack|upstream |dial tcp|connection refused|\bEOF\b|127\.0\.0\.1`)

// generatedID is the form of request ids the edge makes itself.
var generatedID = regexp.MustCompile(`^[0-9a-f]{16}-[0-9a-f]{16}$`)

// checkAnswer applies the rules every hostile answer obeys: no 5xx, a
// problem+json body of the right shape for 4xx, nothing internal, no
// injected header; it returns the violations.
func checkAnswer(r rawResult, sentKeys ...string) []string {
	var bad []string
	resp := r.resp
	if resp.StatusCode >= 500 {
		bad = append(bad, fmt.Sprintf("5xx answer %d", resp.StatusCode))
	}
	if len(resp.Header.Values("Set-Cookie")) > 0 || resp.Header.Get("X-Evil") != "" || resp.Header.Get("X-Injected") != "" {
		bad = append(bad, fmt.Sprintf("injected header in the answer: %v", resp.Header))
	}
	rid := resp.Header.Get("X-Request-Id")
	if rid == "" || len(resp.Header.Values("X-Request-Id")) != 1 {
		bad = append(bad, fmt.Sprintf("X-Request-Id %q", resp.Header.Values("X-Request-Id")))
	}
	if resp.StatusCode >= 400 && internalDetail.Match(r.body) {
		bad = append(bad, fmt.Sprintf("error body shows an internal detail (%q): %s", internalDetail.Find(r.body), r.body))
	}
	for _, k := range append(sentKeys, hostileKey, "demo-key-") {
		if strings.Contains(string(r.body), k) {
			bad = append(bad, "body echoes the API key")
		}
	}
	if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		bad = append(bad, fmt.Sprintf("%d without X-Content-Type-Options: nosniff", resp.StatusCode))
	}
	if resp.Request != nil && resp.Request.Method == "HEAD" {
		if len(r.body) > 0 {
			bad = append(bad, fmt.Sprintf("HEAD answered with a body of %d bytes", len(r.body)))
		}
		return bad // no body to check
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case resp.StatusCode == 200:
		if ct != "application/json" || !json.Valid(r.body) {
			bad = append(bad, fmt.Sprintf("200 with Content-Type %q, body %.200q", ct, r.body))
		}
	case resp.StatusCode >= 400:
		if ct != "application/problem+json" {
			bad = append(bad, fmt.Sprintf("error with Content-Type %q", ct))
		}
		var p struct {
			Type      string `json:"type"`
			Title     string `json:"title"`
			Status    int    `json:"status"`
			Code      string `json:"code"`
			RequestID string `json:"request_id"`
		}
		if err := json.Unmarshal(r.body, &p); err != nil {
			bad = append(bad, fmt.Sprintf("problem body is not JSON: %v: %.300q", err, r.body))
			break
		}
		if p.Title == "" || p.Code == "" || p.Status != resp.StatusCode || !strings.HasSuffix(p.Type, "/problems/"+p.Code) {
			bad = append(bad, fmt.Sprintf("problem shape: %s", r.body))
		}
		if p.RequestID != rid {
			bad = append(bad, fmt.Sprintf("problem request_id %q, header %q", p.RequestID, rid))
		}
		if resp.StatusCode == 405 && resp.Header.Get("Allow") != "GET, HEAD" {
			bad = append(bad, fmt.Sprintf("405 with Allow %q", resp.Header.Get("Allow")))
		}
	}
	return bad
}

// problemCode returns the code of a problem body, "" if none.
func problemCode(body []byte) string {
	var p struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(body, &p)
	return p.Code
}

// hostileCase is one row of the table.
type hostileCase struct {
	name string
	req  string
	// method is the request's method as far as reading the answer goes
	// ("HEAD" answers carry no body); default GET.
	method string
	want   int    // status wanted; 0: see wantAny
	also   []int  // other acceptable statuses
	code   string // problem code wanted (when the answer is a problem)
	// closeOK: a closed connection without an answer is acceptable.
	closeOK bool
	// check is an extra rule on the answer.
	check func(resp *http.Response, body []byte) error
	// closeAfter: the edge must close the connection after its answer,
	// leaving what was pipelined behind the request unanswered.
	closeAfter bool
}

// get builds a GET request for target with the bench key and extra header
// lines (each ending in CRLF), closing the connection after the answer.
func get(target string, extra ...string) string {
	return "GET " + target + " HTTP/1.1\r\nHost: edge.test\r\nX-Api-Key: " + hostileKey + "\r\n" + strings.Join(extra, "") + "Connection: close\r\n\r\n"
}

// keepAlive drops the Connection: close of a request built by get.
func keepAlive(req string) string { return strings.Replace(req, "Connection: close\r\n", "", 1) }

// noKey builds a GET request without an API key.
func noKey(target string, extra ...string) string {
	return "GET " + target + " HTTP/1.1\r\nHost: edge.test\r\n" + strings.Join(extra, "") + "Connection: close\r\n\r\n"
}

func method(m, target string, extra ...string) string {
	return m + " " + target + " HTTP/1.1\r\nHost: edge.test\r\nX-Api-Key: " + hostileKey + "\r\n" + strings.Join(extra, "") + "Connection: close\r\n\r\n"
}

// headLikeGet: a HEAD answer announces the body GET would send
// (Content-Length, Content-Type, ETag) and the rate-limit state.
func headLikeGet(resp *http.Response, _ []byte) error {
	if resp.ContentLength <= 0 || resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("ETag") == "" || resp.Header.Get("RateLimit") == "" {
		return fmt.Errorf("HEAD: Content-Length %d, Content-Type %q, ETag %q, RateLimit %q", resp.ContentLength, resp.Header.Get("Content-Type"), resp.Header.Get("ETag"), resp.Header.Get("RateLimit"))
	}
	return nil
}

// notEchoed: the answer's request id is the edge's own, not id (sent in
// a header block the edge does not trust).
func notEchoed(id string) func(*http.Response, []byte) error {
	return func(resp *http.Response, _ []byte) error {
		if got := resp.Header.Get("X-Request-Id"); got == id || !generatedID.MatchString(got) {
			return fmt.Errorf("X-Request-Id %q, want one the edge generated", got)
		}
		return nil
	}
}

func echoesRequestID(want string) func(*http.Response, []byte) error {
	return func(resp *http.Response, _ []byte) error {
		if got := resp.Header.Get("X-Request-Id"); got != want {
			return fmt.Errorf("X-Request-Id %q, want %q", got, want)
		}
		return nil
	}
}

// generatesRequestID: the client's X-Request-ID was refused and the edge
// made one.
func generatesRequestID(resp *http.Response, _ []byte) error {
	if got := resp.Header.Get("X-Request-Id"); !generatedID.MatchString(got) {
		return fmt.Errorf("X-Request-Id %q is not a generated id", got)
	}
	return nil
}

const validTraceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

func hostileCases() []hostileCase {
	pad := func(n int) string { return strings.Repeat("a", n) }
	var manyHeaders strings.Builder
	for i := range 200 {
		fmt.Fprintf(&manyHeaders, "X-H%d: v\r\n", i)
	}
	cs := []hostileCase{
		// Sizes.
		{name: "header block just under max_header_bytes", req: get("/dealer/REWIND/listing?page_size=1", "X-Pad: "+pad(hostileMaxHeader-400)+"\r\n"), want: 200},
		{name: "header over max_header_bytes", req: get("/dealer/REWIND/listing", "X-Pad: "+pad(hostileMaxHeader+2000)+"\r\n"), want: 431, also: []int{400}, code: "request_header_too_large", closeOK: true},
		{name: "huge header (64 KiB)", req: get("/dealer/REWIND/listing", "X-Pad: "+pad(64<<10)+"\r\n"), want: 431, also: []int{400}, code: "request_header_too_large", closeOK: true},
		{name: "request line over max_header_bytes", req: get("/dealer/REWIND/listing?q=" + pad(hostileMaxHeader+2000)), want: 414, also: []int{400}, code: "uri_too_long", closeOK: true},
		{name: "200 small headers", req: get("/dealer/REWIND/listing?page_size=1", manyHeaders.String()), want: 200},
		{name: "q of 201 characters", req: get("/dealer/content/search?q=" + pad(201)), want: 422, code: "validation_error"},
		{name: "page beyond int64", req: get("/dealer/REWIND/listing?page=99999999999999999999999"), want: 422, code: "validation_error"},

		// Invalid UTF-8 and encoded control characters in parameters.
		{name: "q percent-encoded invalid UTF-8 (%ff%fe)", req: get("/dealer/REWIND/listing?q=%ff%fe"), want: 422, code: "validation_error"},
		{name: "q raw invalid UTF-8 bytes", req: get("/dealer/REWIND/listing?q=\xff\xfe"), want: 422, code: "validation_error"},
		{name: "search q invalid UTF-8", req: get("/dealer/content/search?q=ab%ff"), want: 422, code: "validation_error"},
		{name: "category/brand invalid UTF-8", req: get("/dealer/content/news/listing?category=%ff&brand=\xfe"), want: 422, code: "validation_error"},
		{name: "slug invalid UTF-8", req: get("/dealer/content/faq/details?slug=%ff"), want: 422, code: "validation_error"},
		{name: "page invalid UTF-8", req: get("/dealer/REWIND/listing?page=%ff"), want: 422, code: "validation_error"},
		{name: "q encoded NUL", req: get("/dealer/REWIND/listing?q=ab%00cd"), want: 422, code: "validation_error"},
		{name: "q encoded CR LF", req: get("/dealer/REWIND/listing?q=a%0d%0aSet-Cookie:%20x=1"), want: 422, code: "validation_error"},
		{name: "q overlong UTF-8 slash (%c0%af)", req: get("/dealer/REWIND/listing?q=%c0%af%c0%af"), want: 422, code: "validation_error"},
		{name: "slug encoded NUL", req: get("/dealer/content/faq/details?slug=a%00b"), want: 404, also: []int{422}},
		{name: "slug traversal ..%2F..%2Fetc%2Fpasswd", req: get("/dealer/content/faq/details?slug=..%2F..%2Fetc%2Fpasswd"), want: 404, code: "content_not_found"},
		{name: "id_auto traversal", req: get("/dealer/REWIND/details?id_auto=..%2F..%2Fadmin"), want: 400, code: "invalid_identifier"},
		{name: "id_offerta with encoded slash", req: get("/dealer/NLT/details?id_offerta=1%2F..%2F2"), want: 400, code: "invalid_identifier"},

		// Duplicate parameters.
		{name: "duplicate page", req: get("/dealer/REWIND/listing?page=1&page=2"), want: 422, code: "validation_error"},
		{name: "duplicate q (search)", req: get("/dealer/content/search?q=ab&q=cd"), want: 422, code: "validation_error"},
		{name: "duplicate id_auto", req: get("/dealer/REWIND/details?id_auto=d3b8b8d4-bf88-4ab6-b912-6b61eb3e51ae&id_auto=d3b8b8d4-bf88-4ab6-b912-6b61eb3e51ae"), want: 422, code: "validation_error"},

		// Path tricks.
		{name: "%2F inside a path value", req: get("/dealer/RE%2FWIND/listing"), want: 400, code: "invalid_service"},
		{name: "%2F as a separator", req: get("/dealer/REWIND%2Flisting"), want: 404, code: "not_found"},
		{name: "double encoding %252F", req: get("/dealer/REWIND%252Flisting"), want: 404, code: "not_found"},
		{name: "encoded NUL in path value", req: get("/dealer/REWIND%00/listing"), want: 400, code: "invalid_service"},
		{name: "overlong UTF-8 in path value", req: get("/dealer/%c0%af/listing"), want: 400, code: "invalid_service"},
		{name: "raw invalid UTF-8 in path value", req: get("/dealer/\xff\xfe/listing"), want: 400, code: "invalid_service"},
		{name: "encoded letter in path value (%52EWIND)", req: get("/dealer/%52EWIND/listing"), want: 400, code: "invalid_service"},
		{name: "invalid UTF-8 content type", req: get("/dealer/content/%ff/listing"), want: 400, code: "invalid_content_type"},
		{name: "traversal /dealer/../admin", req: get("/dealer/../admin"), want: 404, code: "not_found"},
		{name: "traversal /dealer/REWIND/../NOS/listing", req: get("/dealer/REWIND/../NOS/listing"), want: 404, code: "not_found"},
		{name: "dot segment /dealer/./REWIND/listing", req: get("/dealer/./REWIND/listing"), want: 404, code: "not_found"},
		{name: "double slash //dealer", req: get("//dealer/REWIND/listing"), want: 404, code: "not_found"},
		{name: "encoded dots /dealer/%2e%2e/", req: get("/dealer/%2e%2e/REWIND/listing"), want: 404, code: "not_found"},
		{name: "backslashes", req: get(`/dealer\REWIND\listing`), want: 404, code: "not_found"},
		{name: "matrix parameter ;x=1", req: get("/dealer/REWIND/listing;x=1"), want: 404, code: "not_found"},
		{name: "admin path on the public port", req: get("/admin/purge?dealer_id=101"), want: 404, code: "not_found"},
		{name: "metrics path on the public port", req: get("/metrics"), want: 404, code: "not_found"},
		{name: "asterisk target", req: get("*"), want: 404, code: "not_found"},
		{name: "target without leading slash", req: get("dealer/REWIND/listing"), want: 400, code: "bad_request"},

		// Bodies and framing.
		{name: "GET with a small body (tolerated)", req: get("/dealer/REWIND/listing?page_size=1", "Content-Length: 5\r\n") + "hello", want: 200},
		{name: "GET with a body over max_request_body", req: get("/dealer/REWIND/listing?page_size=1", fmt.Sprintf("Content-Length: %d\r\n", hostileMaxBody+1000)) + pad(hostileMaxBody+1000), want: 413, code: "request_too_large", closeOK: true},
		{name: "GET declaring a 100 MB body it never sends", req: get("/dealer/REWIND/listing?page_size=1", "Content-Length: 100000000\r\n"), want: 413, code: "request_too_large", closeOK: true},
		{name: "lying Content-Length (100, sends 3)", req: get("/dealer/REWIND/listing?page_size=1", "Content-Length: 100\r\n") + "abc", want: 408, code: "request_timeout", closeOK: true},
		{name: "chunked body on GET", req: get("/dealer/REWIND/listing?page_size=1", "Transfer-Encoding: chunked\r\n") + "5\r\nhello\r\n0\r\n\r\n", want: 200},
		{name: "chunked body over max_request_body", req: get("/dealer/REWIND/listing?page_size=1", "Transfer-Encoding: chunked\r\n") + fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", 2*hostileMaxBody, pad(2*hostileMaxBody)), want: 413, code: "request_too_large", closeOK: true},
		{name: "bad chunk size", req: get("/dealer/REWIND/listing?page_size=1", "Transfer-Encoding: chunked\r\n") + "zz\r\nhello\r\n0\r\n\r\n", want: 400, code: "bad_request", closeOK: true},
		{name: "unsupported Transfer-Encoding gzip, chunked", req: get("/dealer/REWIND/listing?page_size=1", "Transfer-Encoding: gzip, chunked\r\n") + "0\r\n\r\n", want: 400, code: "bad_request", closeOK: true},
		{name: "Content-Length and Transfer-Encoding together", req: get("/dealer/REWIND/listing?page_size=1", "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n") + "0\r\n\r\n", want: 400, code: "bad_request"},
		{name: "Transfer-Encoding then Content-Length, pipelined request behind", req: keepAlive(get("/dealer/REWIND/listing?page_size=1", "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n")) + "0\r\n\r\n" + keepAlive(get("/dealer/openapi.json")), want: 400, code: "bad_request", closeAfter: true},
		{name: "oversized body, pipelined request behind", req: keepAlive(get("/dealer/REWIND/listing?page_size=1", fmt.Sprintf("Content-Length: %d\r\n", 2*hostileMaxBody))) + pad(2*hostileMaxBody) + keepAlive(get("/dealer/openapi.json")), want: 413, code: "request_too_large", closeOK: true, closeAfter: true},
		{name: "two different Content-Length", req: get("/dealer/REWIND/listing?page_size=1", "Content-Length: 0\r\nContent-Length: 5\r\n") + "hello", want: 400, code: "bad_request", closeOK: true},
		{name: "negative Content-Length", req: get("/dealer/REWIND/listing?page_size=1", "Content-Length: -1\r\n"), want: 400, code: "bad_request", closeOK: true},

		// Protocol versions and request-target forms.
		{name: "HTTP/1.0 without Host", req: "GET /dealer/REWIND/listing?page_size=1 HTTP/1.0\r\nX-Api-Key: " + hostileKey + "\r\n\r\n", want: 200},
		{name: "HTTP/1.1 without Host", req: "GET /dealer/REWIND/listing?page_size=1 HTTP/1.1\r\nX-Api-Key: " + hostileKey + "\r\nConnection: close\r\n\r\n", want: 400, code: "bad_request", closeOK: true},
		{name: "absolute-form target of another host", req: get("http://evil.example/dealer/REWIND/listing?page_size=1"), want: 200},
		{name: "absolute-form target with traversal", req: get("http://evil.example/../dealer/REWIND/listing"), want: 404, code: "not_found"},
		{name: "HTTP/0.9 request line", req: "GET /dealer/REWIND/listing\r\n\r\n", want: 400, code: "bad_request", closeOK: true},
		{name: "unknown version HTTP/9.9", req: strings.Replace(get("/dealer/REWIND/listing?page_size=1"), "HTTP/1.1", "HTTP/9.9", 1), want: 200, also: []int{400}},
		{name: "HTTP/2 preface on HTTP/1", req: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", want: 405, also: []int{400}, closeOK: true},
		{name: "TLS ClientHello on plain HTTP", req: "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", want: 400, code: "bad_request", closeOK: true},
		{name: "space before header colon", req: noKey("/dealer/REWIND/listing", "X-Api-Key : "+hostileKey+"\r\n"), want: 400, code: "bad_request", closeOK: true},

		// Header injection.
		{name: "CR in X-Request-ID", req: get("/dealer/REWIND/listing?page_size=1", "X-Request-ID: abc\rSet-Cookie: x=1\r\n"), want: 400, code: "bad_request", closeOK: true},
		{name: "bare LF in X-Request-ID", req: get("/dealer/REWIND/listing?page_size=1", "X-Request-ID: abc\nSet-Cookie: x=1\r\n"), want: 400, code: "bad_request", check: notEchoed("abc")},
		{name: "CR in traceparent", req: get("/dealer/REWIND/listing?page_size=1", "traceparent: "+validTraceparent+"\rX-Injected: 1\r\n"), want: 400, code: "bad_request", closeOK: true},
		{name: "bare LF in traceparent", req: get("/dealer/REWIND/listing?page_size=1", "traceparent: "+validTraceparent+"\nX-Evil: 1\r\n"), want: 400, code: "bad_request"},
		{name: "percent-encoded CRLF in traceparent", req: get("/dealer/REWIND/listing?page_size=1", "traceparent: 00-%0d%0aX-Evil:%201\r\n"), want: 200},
		{name: "folded X-Request-ID (obs-fold)", req: get("/dealer/REWIND/listing?page_size=1", "X-Request-ID: abc\r\n def\r\n"), want: 400, code: "bad_request", check: notEchoed("abc")},
		{name: "X-Request-ID with markup", req: get("/dealer/REWIND/listing?page_size=1", "X-Request-ID: <script>alert(1)</script>\r\n"), want: 200, check: generatesRequestID},
		{name: "X-Request-ID of 129 characters", req: get("/dealer/REWIND/listing?page_size=1", "X-Request-ID: "+pad(129)+"\r\n"), want: 200, check: generatesRequestID},
		{name: "valid X-Request-ID on an error is echoed", req: get("/dealer/nope", "X-Request-ID: client-id.1:2_3\r\n"), want: 404, code: "not_found", check: echoesRequestID("client-id.1:2_3")},

		// API keys.
		{name: "NUL byte in X-Api-Key", req: noKey("/dealer/REWIND/listing", "X-Api-Key: demo-key-alpha\x00x\r\n"), want: 400, code: "bad_request", closeOK: true},
		{name: "NUL byte in Bearer token", req: noKey("/dealer/REWIND/listing", "Authorization: Bearer demo-key-alpha\x00\r\n"), want: 400, code: "bad_request", closeOK: true},
		{name: "byte 0xff in X-Api-Key", req: noKey("/dealer/REWIND/listing", "X-Api-Key: demo-key-\xffalpha\r\n"), want: 401, code: "invalid_api_key"},
		{name: "tab in X-Api-Key", req: noKey("/dealer/REWIND/listing", "X-Api-Key: demo-key\talpha\r\n"), want: 401, code: "invalid_api_key"},
		{name: "X-Api-Key of 257 bytes", req: noKey("/dealer/REWIND/listing", "X-Api-Key: "+pad(257)+"\r\n"), want: 401, code: "invalid_api_key"},
		{name: "X-Api-Key of 3000 bytes", req: noKey("/dealer/REWIND/listing", "X-Api-Key: "+pad(3000)+"\r\n"), want: 401, code: "invalid_api_key"},
		{name: "Bearer token of 300 bytes", req: noKey("/dealer/REWIND/listing", "Authorization: Bearer "+pad(300)+"\r\n"), want: 401, code: "invalid_api_key"},
		{name: "Basic instead of Bearer", req: noKey("/dealer/REWIND/listing", "Authorization: Basic ZGVtbzprZXk=\r\n"), want: 401, code: "invalid_api_key"},
		{name: "X-Api-Key and Authorization together", req: get("/dealer/REWIND/listing", "Authorization: Bearer "+hostileKey+"\r\n"), want: 401, code: "invalid_api_key"},
		{name: "X-Api-Key twice (two dealers)", req: get("/dealer/REWIND/listing", "X-Api-Key: demo-key-beta\r\n"), want: 401, code: "invalid_api_key"},
		{name: "Authorization twice", req: noKey("/dealer/REWIND/listing", "Authorization: Bearer "+hostileKey+"\r\nAuthorization: Bearer demo-key-beta\r\n"), want: 401, code: "invalid_api_key"},
		{name: "no key", req: noKey("/dealer/REWIND/listing"), want: 401, code: "missing_api_key"},
	}
	// Methods other than GET.
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT", "PROPFIND", "get"} {
		cs = append(cs, hostileCase{name: m + " /dealer/REWIND/listing", req: method(m, "/dealer/REWIND/listing", "Content-Length: 0\r\n"), want: 405, code: "method_not_allowed"})
	}
	cs = append(cs,
		hostileCase{name: "HEAD /dealer/REWIND/listing", req: method("HEAD", "/dealer/REWIND/listing"), method: "HEAD", want: 200, check: headLikeGet},
		hostileCase{name: "HEAD without a key", req: "HEAD /dealer/REWIND/listing HTTP/1.1\r\nHost: edge.test\r\nConnection: close\r\n\r\n", method: "HEAD", want: 401},
		hostileCase{name: "OPTIONS *", req: method("OPTIONS", "*"), want: 405, code: "method_not_allowed"},
		hostileCase{name: "CONNECT authority-form", req: "CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\nConnection: close\r\n\r\n", want: 405, code: "method_not_allowed", closeOK: true},
		hostileCase{name: "POST with a body over max_request_body", req: method("POST", "/dealer/REWIND/listing", fmt.Sprintf("Content-Length: %d\r\n", 2*hostileMaxBody)) + pad(2*hostileMaxBody), want: 413, also: []int{405}, closeOK: true},
	)
	return cs
}

// TestHostileRequests sends the table over raw TCP, one connection per
// case, and checks each answer, that the edge still serves a 200 after
// each, that it never answered 5xx, and that its log stayed JSON lines
// without any API key.
func TestHostileRequests(t *testing.T) {
	s := startStack(t, hostileConfig())
	addr := strings.TrimPrefix(s.edge.Base, "http://")
	alive := func(t *testing.T, after string) {
		t.Helper()
		r := rawExchange(addr, "GET", []byte(get("/dealer/NOS/listing?page_size=1")), 5*time.Second)
		if r.resp == nil || r.resp.StatusCode != 200 {
			t.Fatalf("after %s the edge no longer serves: %+v err %v (exit code %d)\nstderr:\n%s", after, r.resp, r.err, s.edge.Wait(100*time.Millisecond), tail(s.edge.Stderr.String()))
		}
	}
	alive(t, "start")
	for _, c := range hostileCases() {
		t.Run(c.name, func(t *testing.T) {
			m := c.method
			if m == "" {
				m = "GET"
			}
			exchange := rawExchange
			if c.closeAfter {
				exchange = rawExchangeThenEOF
			}
			r := exchange(addr, m, []byte(c.req), hostileReadTimeout+slack+2*time.Second)
			switch {
			case r.err != nil:
				t.Errorf("%v (after %v)", r.err, r.elapsed.Round(time.Millisecond))
			case r.closed:
				if !c.closeOK {
					t.Errorf("connection closed without an answer, want %d", c.want)
				}
			default:
				if r.resp.StatusCode != c.want && !contains(c.also, r.resp.StatusCode) {
					t.Errorf("status %d, want %d %v: %.300s", r.resp.StatusCode, c.want, c.also, r.body)
				}
				if c.code != "" && r.resp.StatusCode >= 400 && m != "HEAD" {
					if got := problemCode(r.body); got != c.code && r.resp.StatusCode == c.want {
						t.Errorf("problem code %q, want %q: %s", got, c.code, r.body)
					}
				}
				for _, v := range checkAnswer(r) {
					t.Error(v)
				}
				if c.check != nil {
					if err := c.check(r.resp, r.body); err != nil {
						t.Error(err)
					}
				}
				if c.closeAfter && (!r.afterClosed || len(r.extra) > 0) {
					t.Errorf("connection not closed after the %d answer; then got %.200q", r.resp.StatusCode, r.extra)
				}
			}
			alive(t, c.name)
		})
	}
	checkEdgeLog(t, s.edge)
	if v, _ := s.edge.Metric("edge_requests_total", `status="5`); v != 0 {
		t.Errorf("edge_requests_total counts %v 5xx answers", v)
	}
}

// TestHostileMalformedKeysNotLookedUp: keys the edge can reject by their
// form (too long, non-printable bytes) never reach the dealers service.
func TestHostileMalformedKeysNotLookedUp(t *testing.T) {
	s := startStack(t, hostileConfig())
	addr := strings.TrimPrefix(s.edge.Base, "http://")
	// Key lookups only: the key index's background sync calls the dealers
	// service too.
	before := s.fake.Calls()["dealers:key_lookups"]
	for _, k := range []string{strings.Repeat("k", 257), strings.Repeat("k", 3000), "demo-key-\xffalpha", "demo-key\talpha", "demo key alpha"} {
		for _, h := range []string{"X-Api-Key: ", "Authorization: Bearer "} {
			r := rawExchange(addr, "GET", []byte(noKey("/dealer/REWIND/listing", h+k+"\r\n")), 5*time.Second)
			if r.resp == nil || r.resp.StatusCode != 401 || problemCode(r.body) != "invalid_api_key" {
				t.Errorf("%s%.20q...: %+v %v, want 401 invalid_api_key", h, k, r.resp, r.err)
			}
		}
	}
	if after := s.fake.Calls()["dealers:key_lookups"]; after != before {
		t.Errorf("dealers service asked %d times for keys rejected by form", after-before)
	}
}

// TestHostileSlowClients: slow-loris and idle clients are disconnected on
// time (server.read_timeout, server.idle_timeout), a client that is slow
// but within the budget is served, and the edge keeps serving.
func TestHostileSlowClients(t *testing.T) {
	s := startStack(t, hostileConfig())
	addr := strings.TrimPrefix(s.edge.Base, "http://")
	req := get("/dealer/REWIND/listing?page_size=1", "X-Pad: "+strings.Repeat("p", 200)+"\r\n")

	t.Run("group", func(t *testing.T) {
		t.Run("slowloris headers byte by byte", func(t *testing.T) {
			t.Parallel()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			start := time.Now()
			// The reader reports when the edge answers or closes.
			done := make(chan rawResult, 1)
			go func() {
				_ = c.SetReadDeadline(start.Add(hostileReadTimeout + slack + 3*time.Second))
				r := readAnswer(c, bufio.NewReader(c), "GET", start, nil)
				if r.resp != nil {
					// Whatever was answered, the connection must close next.
					_, err := c.Read(make([]byte, 1))
					if !isClosed(err) {
						r.err = fmt.Errorf("connection still open after the %d answer: %v", r.resp.StatusCode, err)
					}
					r.elapsed = time.Since(start)
				}
				done <- r
			}()
			var r rawResult
			sent := 0
		loop:
			for sent < len(req) {
				select {
				case r = <-done:
					break loop
				case <-time.After(200 * time.Millisecond):
				}
				if _, err := c.Write([]byte{req[sent]}); err != nil {
					r = <-done
					break
				}
				sent++
			}
			if sent == len(req) {
				t.Fatalf("sent the whole request (%d bytes) over %v without being cut off", sent, time.Since(start))
			}
			if r.err != nil {
				t.Fatalf("after %d bytes: %v", sent, r.err)
			}
			if r.elapsed > hostileReadTimeout+slack {
				t.Errorf("disconnected after %v, want within read_timeout %v + %v", r.elapsed.Round(time.Millisecond), hostileReadTimeout, slack)
			}
			if r.resp != nil {
				if r.resp.StatusCode != 408 {
					t.Errorf("answer %d, want 408 or a closed connection", r.resp.StatusCode)
				}
				for _, v := range checkAnswer(r) {
					t.Error(v)
				}
			}
			t.Logf("slowloris cut off after %d bytes, %v (answer: %v)", sent, r.elapsed.Round(time.Millisecond), statusOf(r))
		})
		t.Run("slow but within read_timeout is served", func(t *testing.T) {
			t.Parallel()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			start := time.Now()
			_ = c.SetDeadline(start.Add(10 * time.Second))
			third := len(req) / 3
			for i, part := range []string{req[:third], req[third : 2*third], req[2*third:]} {
				if i > 0 {
					time.Sleep(hostileReadTimeout / 4)
				}
				if _, err := c.Write([]byte(part)); err != nil {
					t.Fatal(err)
				}
			}
			r := readAnswer(c, bufio.NewReader(c), "GET", start, nil)
			if r.resp == nil || r.resp.StatusCode != 200 {
				t.Fatalf("answer %v %v, want 200", statusOf(r), r.err)
			}
		})
		t.Run("idle keep-alive connection closed after idle_timeout", func(t *testing.T) {
			t.Parallel()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			keepAlive := strings.Replace(req, "Connection: close\r\n", "", 1)
			_ = c.SetDeadline(time.Now().Add(hostileIdleTimeout + slack + 5*time.Second))
			br := bufio.NewReader(c)
			// Two requests on one connection, the second after an idle
			// pause shorter than idle_timeout: keep-alive works.
			for i := range 2 {
				if i == 1 {
					time.Sleep(hostileIdleTimeout / 2)
				}
				if _, err := c.Write([]byte(keepAlive)); err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				r := readAnswer(c, br, "GET", time.Now(), nil)
				if r.resp == nil || r.resp.StatusCode != 200 {
					t.Fatalf("request %d: %v %v", i, statusOf(r), r.err)
				}
			}
			idle := time.Now()
			_, err = br.ReadByte()
			waited := time.Since(idle)
			if !isClosed(err) {
				t.Fatalf("idle connection: %v after %v, want closed", err, waited.Round(time.Millisecond))
			}
			if waited > hostileIdleTimeout+slack || waited < hostileIdleTimeout/2 {
				t.Errorf("idle connection closed after %v, want about idle_timeout %v", waited.Round(time.Millisecond), hostileIdleTimeout)
			}
		})
		t.Run("silent connection", func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			r := rawExchange(addr, "GET", nil, hostileIdleTimeout+slack+3*time.Second)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.elapsed > max(hostileReadTimeout, hostileIdleTimeout)+slack {
				t.Errorf("silent connection closed after %v", time.Since(start).Round(time.Millisecond))
			}
			if r.resp != nil {
				for _, v := range checkAnswer(r) {
					t.Error(v)
				}
			}
		})
		t.Run("headers stop halfway", func(t *testing.T) {
			t.Parallel()
			r := rawExchange(addr, "GET", []byte(req[:len(req)/2]), hostileReadTimeout+slack+3*time.Second)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.elapsed > hostileReadTimeout+slack {
				t.Errorf("half request cut off after %v, want within read_timeout + %v", r.elapsed.Round(time.Millisecond), slack)
			}
			if r.resp != nil {
				if r.resp.StatusCode != 408 {
					t.Errorf("answer %d, want 408 or a closed connection", r.resp.StatusCode)
				}
				for _, v := range checkAnswer(r) {
					t.Error(v)
				}
			}
		})
	})
	r := rawExchange(addr, "GET", []byte(req), 5*time.Second)
	if r.resp == nil || r.resp.StatusCode != 200 {
		t.Fatalf("after the slow clients: %v %v", statusOf(r), r.err)
	}
	checkEdgeLog(t, s.edge)
}

func statusOf(r rawResult) string {
	switch {
	case r.resp != nil:
		return fmt.Sprint(r.resp.StatusCode)
	case r.closed:
		return "closed"
	case r.err != nil:
		return "error"
	}
	return "none"
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func tail(s string) string {
	if len(s) > 4096 {
		return s[len(s)-4096:]
	}
	return s
}

// checkEdgeLog: the edge's standard error is JSON lines only (the README's
// log format; a Go panic, a library's own log line or a stack trace would
// break it), and no line carries an API key.
func checkEdgeLog(t *testing.T, e *procs.Edge) {
	t.Helper()
	bad := 0
	for i, line := range strings.Split(e.Stderr.String(), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil || m["msg"] == nil {
			if bad++; bad <= 5 {
				t.Errorf("edge stderr line %d is not a JSON log line: %.300q", i+1, redact(line))
			}
		}
	}
	if bad > 5 {
		t.Errorf("... %d non-JSON lines in all", bad)
	}
	for _, leak := range findSecrets(e.Stderr.String(), suiteSecrets()) {
		t.Errorf("edge stderr: %s", leak)
	}
}
