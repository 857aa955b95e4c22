package contracttests

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// TestServedDocPartialCoding: the served OpenAPI document (the
// machine-readable contract, GET /dealer/openapi.json) tells clients how
// content codings are used; what it says about degraded answers
// (X-Edge-Partial: true) must be what the edge does with them.
func TestServedDocPartialCoding(t *testing.T) {
	e := startEnv(t, envOptions{})
	doc := e.get("/dealer/openapi.json")
	var d struct {
		Info struct {
			Description string `json:"description"`
		} `json:"info"`
	}
	if err := json.Unmarshal(doc.body, &d); err != nil {
		t.Fatal(err)
	}
	promisesPlain := strings.Contains(d.Info.Description, "a degraded answer (X-Edge-Partial: true) goes out plain")

	l := e.get("/dealer/REWIND/listing?page_size=1", keyAlpha)
	id := l.items()[0]["id_auto"].(string)
	e.fake.SetDown(upstream.SvcMedia, true)
	defer e.fake.SetDown(upstream.SvcMedia, false)
	r := e.get("/dealer/REWIND/details?id_auto="+id, keyAlpha, "Accept-Encoding: gzip")
	if r.status != 200 || r.header.Get("X-Edge-Partial") != "true" {
		t.Fatalf("media down: %d X-Edge-Partial=%q, want a degraded 200", r.status, r.header.Get("X-Edge-Partial"))
	}
	coded := r.header.Get("Content-Encoding") == "gzip"
	if promisesPlain && coded {
		t.Errorf("served OpenAPI info.description promises %q, but the degraded answer went out Content-Encoding: gzip (ETag %s, %d bytes on the wire)",
			"a degraded answer (X-Edge-Partial: true) goes out plain", r.header.Get("ETag"), r.wire)
	}
}
