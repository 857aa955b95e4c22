package contracttests

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// TestRepeatedRequestIDIsReplaced: X-Request-ID is a single-valued field.
// Sent on two lines it is one list (RFC 9110 5.3), "a,b", which is no
// well-formed id (README: 1-128 characters of [A-Za-z0-9._:-]), so the edge
// generates one, as it does for a traceparent sent twice; the answer and
// its problem body never carry either line as if it were the request's
// only id. A proxy in front that adds its own line after the client's would
// otherwise find the client's id in the answer and its logs, not its own.
// Before 2026-11-29 the first line was echoed.
func TestRepeatedRequestIDIsReplaced(t *testing.T) {
	e := startEnv(t, envOptions{})
	for _, c := range []struct {
		path   string
		status int
	}{
		{"/dealer/REWIND/listing?page_size=1", 200},
		{"/dealer/REWIND/listing?page=0", 422},
		{"/dealer/content/faq/details?slug=no-such-item", 404},
	} {
		for _, lines := range [][]string{{"client-a", "proxy-b"}, {"same", "same"}, {"", "proxy-b"}} {
			req, err := http.NewRequest("GET", e.base+c.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Api-Key", "demo-key-alpha")
			for _, l := range lines {
				req.Header.Add("X-Request-ID", l)
			}
			hr, err := e.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(hr.Body)
			hr.Body.Close()
			got := hr.Header.Values("X-Request-ID")
			if hr.StatusCode != c.status || len(got) != 1 || got[0] == "" {
				t.Fatalf("%s with X-Request-ID lines %q: %d, X-Request-ID %q", c.path, lines, hr.StatusCode, got)
			}
			for _, l := range lines {
				if got[0] == l {
					t.Errorf("%s with X-Request-ID lines %q: echoed %q", c.path, lines, l)
				}
			}
			if c.status >= 400 {
				var p struct {
					RequestID string `json:"request_id"`
				}
				if err := json.Unmarshal(body, &p); err != nil || p.RequestID != got[0] {
					t.Errorf("%s: problem request_id %q, header %q", c.path, p.RequestID, got[0])
				}
			}
		}
	}
	// One line is still echoed.
	if r := e.get("/dealer/REWIND/listing?page_size=1", keyAlpha, "X-Request-ID: client-a"); r.header.Get("X-Request-ID") != "client-a" {
		t.Errorf("one X-Request-ID line not echoed: %q", r.header.Get("X-Request-ID"))
	}
}
