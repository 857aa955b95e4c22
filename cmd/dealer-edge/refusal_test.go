package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// TestRefusalAnswers: the answers the listener sends to a connection it
// refuses are whole HTTP responses a client parses: the contract's problem
// body with its code, status and title, Retry-After, Connection: close,
// and a Content-Length that matches.
func TestRefusalAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer []byte
		status int
		code   string
	}{
		{"per address", tooManyConns("https://problems.example/p/"), 429, "rate_limited"},
		{"concurrency", overloaded("https://problems.example/p/"), 503, "service_unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(tc.answer)), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/problem+json" ||
				resp.Header.Get("Retry-After") != "1" || !resp.Close {
				t.Fatalf("status %d, headers %v", resp.StatusCode, resp.Header)
			}
			var p struct {
				Type, Title, Code, Detail string
				Status                    int
			}
			if err := json.Unmarshal(body, &p); err != nil {
				t.Fatalf("body %s: %v", body, err)
			}
			if p.Code != tc.code || p.Status != tc.status || p.Type != "https://problems.example/p/"+tc.code || p.Title == "" || p.Detail == "" {
				t.Fatalf("problem %+v", p)
			}
		})
	}
}
