package contracttests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// contract validates responses against an OpenAPI 3.1 document: the
// operation is found by matching the request path against the document's
// path templates, the response by status (or "default") and media type,
// and the body is validated with the schema found there.
type contract struct {
	doc      map[string]any
	compiler *jsonschema.Compiler
	paths    []pathTemplate
	mu       sync.Mutex
	schemas  map[string]*jsonschema.Schema
}

type pathTemplate struct {
	tpl string
	re  *regexp.Regexp
}

const docURL = "mem://openapi.json"

func newContract(raw []byte) (*contract, error) {
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(docURL, inst); err != nil {
		return nil, err
	}
	ct := &contract{doc: doc, compiler: c, schemas: map[string]*jsonschema.Schema{}}
	paths, _ := doc["paths"].(map[string]any)
	for tpl := range paths {
		pat := regexp.QuoteMeta(tpl)
		pat = regexp.MustCompile(`\\\{[^}]+\\\}`).ReplaceAllString(pat, `[^/]+`)
		ct.paths = append(ct.paths, pathTemplate{tpl: tpl, re: regexp.MustCompile("^" + pat + "$")})
	}
	return ct, nil
}

func pointerEscape(s string) string {
	s = strings.ReplaceAll(s, "~", "~0")
	return strings.ReplaceAll(s, "/", "~1")
}

// operationPath returns the template matching path, preferring templates
// with more literal characters (so /dealer/content/hub beats
// /dealer/{service}/listing-like templates).
func (c *contract) operationPath(path string) (string, bool) {
	best, bestLit := "", -1
	for _, p := range c.paths {
		if p.re.MatchString(path) {
			lit := len(regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(p.tpl, ""))
			if lit > bestLit {
				best, bestLit = p.tpl, lit
			}
		}
	}
	return best, bestLit >= 0
}

func (c *contract) resolve(node any) (any, string) {
	m, ok := node.(map[string]any)
	if !ok {
		return node, ""
	}
	ref, ok := m["$ref"].(string)
	if !ok || !strings.HasPrefix(ref, "#/") {
		return node, ""
	}
	var cur any = c.doc
	for _, part := range strings.Split(ref[2:], "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		cm, ok := cur.(map[string]any)
		if !ok {
			return nil, ref
		}
		cur = cm[part]
	}
	return cur, ref[1:]
}

// schemaFor returns the compiled schema of the response to GET path with
// status and media type, or an error saying why the document has none.
func (c *contract) schemaFor(path string, status int, mediaType string) (*jsonschema.Schema, error) {
	tpl, ok := c.operationPath(path)
	if !ok {
		return nil, fmt.Errorf("no path of the document matches %s", path)
	}
	ptr := "/paths/" + pointerEscape(tpl) + "/get/responses"
	op, _ := c.doc["paths"].(map[string]any)[tpl].(map[string]any)
	get, _ := op["get"].(map[string]any)
	responses, _ := get["responses"].(map[string]any)
	code := strconv.Itoa(status)
	resp, ok := responses[code]
	if !ok {
		code = fmt.Sprintf("%dXX", status/100)
		if resp, ok = responses[code]; !ok {
			code = "default"
			if resp, ok = responses[code]; !ok {
				return nil, fmt.Errorf("%s documents no response %d", tpl, status)
			}
		}
	}
	ptr += "/" + code
	resolved, refPtr := c.resolve(resp)
	if refPtr != "" {
		ptr = refPtr
	}
	rm, _ := resolved.(map[string]any)
	content, _ := rm["content"].(map[string]any)
	if _, ok := content[mediaType]; !ok {
		return nil, fmt.Errorf("%s response %s documents no media type %s", tpl, code, mediaType)
	}
	ptr += "/content/" + pointerEscape(mediaType) + "/schema"
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.schemas[ptr]; ok {
		return s, nil
	}
	s, err := c.compiler.Compile(docURL + "#" + ptr)
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", ptr, err)
	}
	c.schemas[ptr] = s
	return s, nil
}

// validate checks one response against the document.
func (c *contract) validate(path string, status int, contentType string, body []byte) error {
	mt := contentType
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = strings.TrimSpace(mt[:i])
	}
	if status == 304 {
		if len(body) != 0 {
			return fmt.Errorf("304 with a body")
		}
		return nil
	}
	s, err := c.schemaFor(path, status, mt)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("body is not JSON: %w", err)
	}
	return s.Validate(inst)
}

func TestContractDocumentLoads(t *testing.T) {
	c := loadContract(t)
	for _, p := range []string{"/dealer/REWIND/listing", "/dealer/NLT/details", "/dealer/content/hub", "/dealer/content/search", "/dealer/content/faq/listing", "/dealer/content/guides/details", "/dealer/openapi.json"} {
		if _, ok := c.operationPath(p); !ok {
			t.Errorf("no operation for %s", p)
		}
	}
}

// TestValidatorRejectsWrongResponses proves the validation can fail: each
// deliberately wrong body must be rejected.
func TestValidatorRejectsWrongResponses(t *testing.T) {
	c := loadContract(t)
	good := `{"service":"REWIND","page":1,"page_size":20,"total":0,"has_next":false,"items":[]}`
	if err := c.validate("/dealer/REWIND/listing", 200, "application/json", []byte(good)); err != nil {
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
		if err := c.validate(w.path, w.status, ct, []byte(w.body)); err == nil {
			t.Errorf("%s: wrong response accepted", w.name)
		}
	}
	if err := c.validate("/dealer/REWIND/listing", 200, "text/html", []byte(good)); err == nil {
		t.Error("undocumented media type accepted")
	}
}
