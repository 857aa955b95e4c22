package contracttests

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dealer-edge/dealer-edge/contracttests/check"
	"github.com/dealer-edge/dealer-edge/publicshape"
)

func TestContractDocumentLoads(t *testing.T) {
	c := loadContract(t)
	for _, p := range []string{"/dealer/REWIND/listing", "/dealer/NLT/details", "/dealer/content/hub", "/dealer/content/search", "/dealer/content/faq/listing", "/dealer/content/guides/details", "/dealer/openapi.json"} {
		if _, ok := c.OperationPath(p); !ok {
			t.Errorf("no operation for %s", p)
		}
	}
}

// TestValidatorRejectsWrongResponses proves the validation can fail: each
// deliberately wrong body must be rejected.
func TestValidatorRejectsWrongResponses(t *testing.T) {
	c := loadContract(t)
	good := `{"service":"REWIND","page":1,"page_size":20,"total":0,"has_next":false,"items":[]}`
	if err := c.Validate("/dealer/REWIND/listing", 200, "application/json", []byte(good)); err != nil {
		t.Fatalf("valid listing rejected: %v", err)
	}
	upfit := `{"code":"c","slug":"gru","label":"Gru","display_label":"Gru","family":"f","is_primary":true}`
	item := `{"id_auto":"3f2504e0-4f89-41d3-9a0c-0305e82c3301","service":"REWIND","nome_canonico":"Fiat Ducato","marca":"Fiat","modello":"Ducato","professional_upfits":[%s]}`
	wrong := []struct {
		name, path, body string
		status           int
	}{
		{"missing total", "/dealer/REWIND/listing", `{"service":"REWIND","page":1,"page_size":20,"has_next":false,"items":[]}`, 200},
		{"page 0", "/dealer/REWIND/listing", `{"service":"REWIND","page":0,"page_size":20,"total":0,"has_next":false,"items":[]}`, 200},
		{"page_size 101", "/dealer/REWIND/listing", `{"service":"REWIND","page":1,"page_size":101,"total":0,"has_next":false,"items":[]}`, 200},
		{"bad service", "/dealer/REWIND/listing", `{"service":"CARS","page":1,"page_size":20,"total":0,"has_next":false,"items":[]}`, 200},
		{"upfit extra field", "/dealer/REWIND/listing", `{"service":"REWIND","page":1,"page_size":20,"total":1,"has_next":false,"items":[` + fmt.Sprintf(item, strings.TrimSuffix(upfit, "}")+`,"source_id":"x"}`) + `]}`, 200},
		{"upfit missing field", "/dealer/REWIND/listing", `{"service":"REWIND","page":1,"page_size":20,"total":1,"has_next":false,"items":[` + fmt.Sprintf(item, `{"code":"c"}`) + `]}`, 200},
		{"id_auto not uuid", "/dealer/REWIND/listing", `{"service":"REWIND","page":1,"page_size":20,"total":1,"has_next":false,"items":[{"id_auto":"nope","service":"REWIND","nome_canonico":"x","marca":"x","modello":"x"}]}`, 200},
		{"detail with both", "/dealer/REWIND/details", `{"service":"REWIND","vehicle":{"id_auto":"3f2504e0-4f89-41d3-9a0c-0305e82c3301","marca":"a","modello":"b"},"offer":{"id_offerta":1,"marca":"a","modello":"b"}}`, 200},
		{"detail with none", "/dealer/NLT/details", `{"service":"NLT"}`, 200},
		{"problem without code", "/dealer/REWIND/listing", `{"type":"https://x.example/p","title":"t","status":401}`, 401},
		{"problem status string", "/dealer/REWIND/listing", `{"type":"https://x.example/p","title":"t","status":"401","code":"missing_api_key"}`, 401},
		{"hub wrong content_type", "/dealer/content/hub", `{"content_type":"faq","sections":{}}`, 200},
		{"search size 21", "/dealer/content/search", `{"q":"ab","page_size_per_type":21,"total":0,"by_type":{},"items":[]}`, 200},
		{"content listing bad updated_at", "/dealer/content/faq/listing", `{"content_type":"faq","page":1,"page_size":20,"total":1,"has_next":false,"items":[{"updated_at":"yesterday"}]}`, 200},
	}
	for _, w := range wrong {
		ct := "application/json"
		if w.status >= 400 {
			ct = "application/problem+json"
		}
		if err := c.Validate(w.path, w.status, ct, []byte(w.body)); err == nil {
			t.Errorf("%s: wrong response accepted", w.name)
		}
	}
	if err := c.Validate("/dealer/REWIND/listing", 200, "text/html", []byte(good)); err == nil {
		t.Error("undocumented media type accepted")
	}
}

// TestOpenAPIServedIsTheValidatedDocument: GET /dealer/openapi.json serves
// exactly the bytes of publicshape.OpenAPI(), the document every response
// of the black-box suites is validated against (check.Public), so the
// suites validate against what clients read.
func TestOpenAPIServedIsTheValidatedDocument(t *testing.T) {
	e := startEnv(t, envOptions{})
	want := publicshape.OpenAPI()
	if len(want) == 0 {
		t.Fatal("publicshape.OpenAPI() is empty")
	}
	for _, hdr := range []string{"", keyAlpha} { // no key needed; a key changes nothing
		var headers []string
		if hdr != "" {
			headers = append(headers, hdr)
		}
		r := e.get("/dealer/openapi.json", headers...)
		if r.status != 200 {
			t.Fatalf("GET /dealer/openapi.json (%q): %d", hdr, r.status)
		}
		if !bytes.Equal(r.body, want) {
			t.Errorf("GET /dealer/openapi.json (%q): %d bytes differ from publicshape.OpenAPI() (%d bytes); first difference at byte %d", hdr, len(r.body), len(want), firstDiff(r.body, want))
		}
	}
	// The same through the raw client: no transport decoding in between.
	req, err := http.NewRequest("GET", e.base+"/dealer/openapi.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "identity")
	hr, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer hr.Body.Close()
	raw, err := io.ReadAll(hr.Body)
	if err != nil {
		t.Fatal(err)
	}
	if hr.Header.Get("Content-Encoding") != "" || !bytes.Equal(raw, want) {
		t.Errorf("raw GET /dealer/openapi.json: Content-Encoding %q, %d bytes, identical %v", hr.Header.Get("Content-Encoding"), len(raw), bytes.Equal(raw, want))
	}
	// And the validator compiled that same document.
	c, err := check.New(raw)
	if err != nil {
		t.Fatalf("compile the served document: %v", err)
	}
	if _, ok := c.OperationPath("/dealer/content/hub"); !ok {
		t.Error("served document has no hub operation")
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestCheckRejectsLeaksAndMismatches proves the shared check
// (check.Contract.Check, used by the reliability suite on every response
// of the real binaries) can fail: a leak, a body off the document, an
// undocumented path answered 200 are each reported; a good answer is not.
func TestCheckRejectsLeaksAndMismatches(t *testing.T) {
	c := loadContract(t)
	good := `{"service":"REWIND","page":1,"page_size":20,"total":0,"has_next":false,"items":[]}`
	if bad := c.Check("/dealer/REWIND/listing?page=1&page_size=20", 200, "application/json", []byte(good)); len(bad) != 0 {
		t.Errorf("good listing: %q", bad)
	}
	if bad := c.Check("/nope?x=1", 404, "application/problem+json", []byte(`{}`)); len(bad) != 0 {
		t.Errorf("404 of an undocumented path: %q", bad)
	}
	wrong := []struct {
		name, target, body string
		status             int
		want               string
	}{
		{"internal field", "/dealer/REWIND/listing", `{"service":"REWIND","page":1,"page_size":20,"total":0,"has_next":false,"items":[],"meta":{"x":{"render_job_id":"r"}}}`, 200, `internal field "render_job_id" at $.meta.x`},
		{"internal marker", "/dealer/content/faq/listing?q=x", `{"detail":"/mnt/techdata/x"}`, 200, `internal marker "/mnt/techdata"`},
		{"off the document", "/dealer/REWIND/listing?page=2", `{"service":"REWIND","page":0}`, 200, "does not match the OpenAPI document"},
		{"undocumented path", "/dealer/REWIND/other?page=2", `{}`, 200, "undocumented path /dealer/REWIND/other answered 200"},
	}
	for _, w := range wrong {
		bad := c.Check(w.target, w.status, "application/json", []byte(w.body))
		if !strings.Contains(strings.Join(bad, "\n"), w.want) {
			t.Errorf("%s: got %q, want a line with %q", w.name, bad, w.want)
		}
	}
	if leaks := check.InternalLeaks([]byte(`[{"a":[{"dealer_id":1}]}]`)); len(leaks) != 1 || !strings.Contains(leaks[0], `"dealer_id" at $[].a[]`) {
		t.Errorf("InternalLeaks: %q", leaks)
	}
}
