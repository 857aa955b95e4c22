package aggregator

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// lfGet sends one GET with the bench key and returns status and body.
func lfGet(t *testing.T, addr, target string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+addr+target, nil)
	req.Header.Set("X-Api-Key", "bench-key-000")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b)
}

// TestLongFilterValueKeepsBreakerClosed (review): the edge accepts a category filter
// of up to 1,024 characters (maxFilterLen, "past any value the content
// service publishes") beside a q, and passes both to the content service
// in the call's URL, percent-encoded: 1,024 "è" are 6 KiB there. A
// validated request within server.max_header_bytes must not be a 5xx, and
// one client's requests must not open the faq breaker for every dealer
// (the class of the README's tracestate fix of 2026-11-27).
func TestLongFilterValueKeepsBreakerClosed(t *testing.T) {
	srv := newBenchServer(t, true)
	addr := serveLikeMain(t, srv)
	cat := strings.Repeat("%C3%A8", 1024) // 1,024 characters
	target := "/dealer/content/faq/listing?q=auto&category=" + cat
	code, body := lfGet(t, addr, target)
	if code >= 500 {
		t.Errorf("%d-byte target, category of 1,024 characters: %d %.200s", len(target), code, body)
	}
	for i := 0; i < 5; i++ {
		lfGet(t, addr, "/dealer/content/faq/listing?q=auto"+strings.Repeat("x", i)+"&category="+cat)
	}
	if cs, ok := srv.backend.(*upstream.Client); ok {
		if st := cs.ContentBreakerStates()["faq"]; st != "closed" {
			t.Errorf("after 6 such requests from one client the faq breaker is %q", st)
		}
	}
	// Another client's ordinary search of the same type.
	if code, body := lfGet(t, addr, "/dealer/content/faq/listing?q=permuta"); code != 200 {
		t.Errorf("an ordinary faq listing with q after them: %d %.200s", code, body)
	}
}
