// Package check holds the response checks shared by the black-box suites
// (package contracttests, in process, and contracttests/reliability, on the
// real binaries): validation of a response against the OpenAPI 3.1
// document with a JSON Schema 2020-12 validator (Contract), and the scan
// for internal-only fields and values (InternalLeaks).
package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/dealer-edge/dealer-edge/publicshape"
)

// Contract validates responses against an OpenAPI 3.1 document: the
// operation is found by matching the request path against the document's
// path templates, the response by status (or "NXX", or "default") and
// media type, and the body is validated with the schema found there. It
// is safe for concurrent use.
type Contract struct {
	doc      map[string]any
	compiler *jsonschema.Compiler
	paths    []pathTemplate
	mu       sync.Mutex // guards compiler and schemas
	schemas  map[string]*jsonschema.Schema
}

type pathTemplate struct {
	tpl string
	re  *regexp.Regexp
	lit int // literal characters of tpl (parameters left out)
}

const docURL = "mem://openapi.json"

var paramRe = regexp.MustCompile(`\{[^}]+\}`)

// New compiles an OpenAPI 3.1 document.
func New(doc []byte) (*Contract, error) {
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(docURL, inst); err != nil {
		return nil, err
	}
	ct := &Contract{doc: m, compiler: c, schemas: map[string]*jsonschema.Schema{}}
	paths, _ := m["paths"].(map[string]any)
	for tpl := range paths {
		pat := regexp.QuoteMeta(tpl)
		pat = regexp.MustCompile(`\\\{[^}]+\\\}`).ReplaceAllString(pat, `[^/]+`)
		ct.paths = append(ct.paths, pathTemplate{tpl: tpl, re: regexp.MustCompile("^" + pat + "$"), lit: len(paramRe.ReplaceAllString(tpl, ""))})
	}
	return ct, nil
}

var (
	publicOnce sync.Once
	publicDoc  *Contract
	publicErr  error
)

// Public returns the Contract of publicshape.OpenAPI(), the document the
// edge serves at GET /dealer/openapi.json, compiled once per process.
func Public() (*Contract, error) {
	publicOnce.Do(func() { publicDoc, publicErr = New(publicshape.OpenAPI()) })
	return publicDoc, publicErr
}

func pointerEscape(s string) string {
	s = strings.ReplaceAll(s, "~", "~0")
	return strings.ReplaceAll(s, "/", "~1")
}

// OperationPath returns the template matching path (a URL path, without
// query), preferring templates with more literal characters (so
// /dealer/content/hub beats /dealer/{service}/listing-like templates).
func (c *Contract) OperationPath(path string) (string, bool) {
	best, bestLit := "", -1
	for _, p := range c.paths {
		if p.lit > bestLit && p.re.MatchString(path) {
			best, bestLit = p.tpl, p.lit
		}
	}
	return best, bestLit >= 0
}

func (c *Contract) resolve(node any) (any, string) {
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
func (c *Contract) schemaFor(path string, status int, mediaType string) (*jsonschema.Schema, error) {
	tpl, ok := c.OperationPath(path)
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

// Validate checks one response to GET path (a URL path, without query)
// against the document: status, media type (the Content-Type without
// parameters) and body. A 304 must have no body.
func (c *Contract) Validate(path string, status int, contentType string, body []byte) error {
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

// Check returns what is wrong with one answer to GET target (a request
// target: path with an optional query, e.g. "/dealer/NOS/listing?page=2"):
// the internal-only fields and values it carries (InternalLeaks) and, when
// the path is an operation of the document, its mismatches with the
// document. A path the document does not have must be answered 404. The
// result is empty when the answer is good.
func (c *Contract) Check(target string, status int, contentType string, body []byte) []string {
	bad := InternalLeaks(body)
	path := target
	if u, err := url.ParseRequestURI(target); err == nil {
		path = u.Path
	} else if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	if status == 405 {
		return bad // not an answer of the operation
	}
	if _, ok := c.OperationPath(path); !ok {
		if status != 404 {
			bad = append(bad, fmt.Sprintf("undocumented path %s answered %d", path, status))
		}
		return bad
	}
	if err := c.Validate(path, status, contentType, body); err != nil {
		bad = append(bad, fmt.Sprintf("response %d does not match the OpenAPI document: %v\nbody: %.600s", status, err, body))
	}
	return bad
}
