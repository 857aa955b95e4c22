package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/dealer-edge/dealer-edge/publicshape"
)

// TestOpenAPIRefusalHeaders: the listener's refusal answers (429 over
// server.max_conns_per_ip, 503 beyond server.concurrency) are answers on
// the public paths and carry what the OpenAPI document promises for them:
// X-Content-Type-Options: nosniff (info.description: "Every response
// carries X-Content-Type-Options: nosniff"; README: "Every public
// response, problems and the answers to malformed HTTP included"), only
// header fields the document's 429 and 503 responses list, and
// X-Request-ID if the document marks it required there. Before 2026-11-27
// they lacked nosniff and the document required an X-Request-ID they
// cannot have (the request was not read).
func TestOpenAPIRefusalHeaders(t *testing.T) {
	var doc struct {
		Components struct {
			Headers map[string]struct {
				Required bool `json:"required"`
			} `json:"headers"`
			Responses map[string]struct {
				Headers map[string]any `json:"headers"`
			} `json:"responses"`
		} `json:"components"`
	}
	if err := json.Unmarshal(publicshape.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		answer []byte
		resp   string // the document's response of that status
	}{
		{"429 per address", tooManyConns(""), "TooManyRequests"},
		{"503 concurrency", overloaded(""), "ServiceUnavailable"},
	} {
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(tc.answer)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options: nosniff missing (headers %v)", tc.name, resp.Header)
		}
		if resp.Header.Get("Retry-After") != "" {
			if _, ok := doc.Components.Responses[tc.resp].Headers["Retry-After"]; !ok {
				t.Errorf("%s: sends Retry-After: %s, which the document's %s response does not list", tc.name, resp.Header.Get("Retry-After"), tc.resp)
			}
		}
		if ref, _ := doc.Components.Responses[tc.resp].Headers["X-Request-ID"].(map[string]any)["$ref"].(string); resp.Header.Get("X-Request-ID") == "" &&
			doc.Components.Headers[ref[strings.LastIndexByte(ref, '/')+1:]].Required {
			t.Errorf("%s: X-Request-ID missing, which the document's %s response marks required", tc.name, tc.resp)
		}
	}
}
