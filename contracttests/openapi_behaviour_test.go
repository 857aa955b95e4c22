package contracttests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/dealer-edge/dealer-edge/publicshape"
	"github.com/dealer-edge/dealer-edge/upstream"
)

// specDoc is the served document with a schema compiler over it, for
// checking response header fields (the shared check validates bodies only).
type specDoc struct {
	doc map[string]any
	c   *jsonschema.Compiler
	sch map[string]*jsonschema.Schema
}

func newAuditDoc(t *testing.T) *specDoc {
	t.Helper()
	raw := publicshape.OpenAPI()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource("mem://openapi.json", inst); err != nil {
		t.Fatal(err)
	}
	return &specDoc{doc: m, c: c, sch: map[string]*jsonschema.Schema{}}
}

func (d *specDoc) lookup(ref string) (any, string) {
	var cur any = d.doc
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, _ := cur.(map[string]any)
		cur = m[part]
	}
	return cur, ref
}

// resolve follows $ref, returning the node and its JSON pointer.
func (d *specDoc) resolve(node any, ptr string) (map[string]any, string) {
	for {
		m, _ := node.(map[string]any)
		ref, ok := m["$ref"].(string)
		if !ok {
			return m, ptr
		}
		node, ptr = d.lookup(ref)
		ptr = ptr[1:]
	}
}

func esc(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1") }

// responseHeaders returns the documented header fields of the response of
// method (get/head) on the template for status, with JSON pointers.
func (d *specDoc) responseHeaders(tpl, method string, status int) (map[string]map[string]any, map[string]string, bool) {
	op, _ := d.doc["paths"].(map[string]any)[tpl].(map[string]any)
	o, _ := op[method].(map[string]any)
	rs, _ := o["responses"].(map[string]any)
	code := strconv.Itoa(status)
	r, ok := rs[code]
	if !ok {
		code = "default"
		r = rs[code]
	}
	base := "/paths/" + esc(tpl) + "/" + method + "/responses/" + code
	rm, ptr := d.resolve(r, base)
	hs, _ := rm["headers"].(map[string]any)
	out := map[string]map[string]any{}
	ptrs := map[string]string{}
	for name, h := range hs {
		hm, hp := d.resolve(h, ptr+"/headers/"+esc(name))
		out[strings.ToLower(name)] = hm
		ptrs[strings.ToLower(name)] = hp + "/schema"
	}
	return out, ptrs, rm != nil
}

func (d *specDoc) schema(ptr string) (*jsonschema.Schema, error) {
	if s, ok := d.sch[ptr]; ok {
		return s, nil
	}
	s, err := d.c.Compile("mem://openapi.json#" + ptr)
	if err != nil {
		return nil, err
	}
	d.sch[ptr] = s
	return s, nil
}

// watched are the response header fields whose presence the document
// should describe.
var watched = []string{"X-Request-ID", "ETag", "Cache-Control", "Vary", "X-Cache", "X-Edge-Partial", "RateLimit-Policy", "RateLimit", "Retry-After", "Deprecation", "Sunset", "Link", "WWW-Authenticate", "Allow"}

type crawlResp struct {
	status int
	header http.Header
	body   []byte
}

func doRequest(t *testing.T, e *env, method, target string, headers ...string) crawlResp {
	t.Helper()
	req, err := http.NewRequest(method, e.base+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	hr, err := e.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer hr.Body.Close()
	b, _ := io.ReadAll(hr.Body)
	return crawlResp{hr.StatusCode, hr.Header, b}
}

// checkHeaders compares one response's header fields with the document:
// documented required fields present, documented fields valid against
// their schema, watched fields sent but undocumented.
func (d *specDoc) checkHeaders(e *env, method, target string, r crawlResp) []string {
	u, _ := url.Parse(target)
	tpl, ok := e.contract.OperationPath(u.Path)
	if !ok {
		return nil
	}
	hs, ptrs, ok := d.responseHeaders(tpl, strings.ToLower(method), r.status)
	if !ok {
		return []string{fmt.Sprintf("%s %s: status %d not documented", method, target, r.status)}
	}
	var bad []string
	for name, h := range hs {
		v := r.header.Get(name)
		if v == "" {
			if h["required"] == true {
				bad = append(bad, fmt.Sprintf("%s %s -> %d: documented required header %s missing", method, target, r.status, name))
			}
			continue
		}
		s, err := d.schema(ptrs[name])
		if err != nil {
			bad = append(bad, fmt.Sprintf("compile %s: %v", ptrs[name], err))
			continue
		}
		var inst any = v
		if sm, _ := d.resolve(h["schema"], ""); sm["type"] == "integer" {
			n, err := strconv.Atoi(v)
			if err != nil {
				bad = append(bad, fmt.Sprintf("%s %s -> %d: header %s=%q is not an integer", method, target, r.status, name, v))
				continue
			}
			inst = n
		}
		if err := s.Validate(inst); err != nil {
			bad = append(bad, fmt.Sprintf("%s %s -> %d: header %s=%q off its schema: %v", method, target, r.status, name, v, err))
		}
	}
	for _, w := range watched {
		if r.header.Get(w) != "" {
			if _, ok := hs[strings.ToLower(w)]; !ok {
				bad = append(bad, fmt.Sprintf("%s %s -> %d: sends %s (%q), not documented for this response", method, target, r.status, w, r.header.Get(w)))
			}
		}
	}
	return bad
}

// TestOpenAPIResponseHeaders: every response of the demo edge (every
// endpoint, three dealers, the failure statuses it can produce, HEAD and
// 304 included) has the header fields the document describes for it:
// required ones present, each valid against its schema, no watched field
// undocumented. Before 2026-11-27 WWW-Authenticate, Allow, X-Edge-Partial
// on 304 and Retry-After on 503 were undocumented.
func TestOpenAPIResponseHeaders(t *testing.T) {
	e := startEnv(t, envOptions{})
	d := newAuditDoc(t)
	type rq struct {
		method, target string
		hdr            []string
	}
	var reqs []rq
	add := func(method, target string, hdr ...string) { reqs = append(reqs, rq{method, target, hdr}) }
	for _, key := range []string{keyAlpha, keyBeta, keyGamma} {
		for _, svc := range []string{"REWIND", "NOS", "NLT"} {
			l := e.get("/dealer/"+svc+"/listing?page_size=3", key)
			add("GET", "/dealer/"+svc+"/listing?page_size=3", key)
			for _, it := range l.items() {
				if id, ok := it["id_auto"].(string); ok {
					add("GET", "/dealer/"+svc+"/details?id_auto="+id, key)
				}
				if id, ok := it["id_offerta"].(float64); ok {
					add("GET", "/dealer/"+svc+"/details?id_offerta="+strconv.FormatInt(int64(id), 10), key)
				}
			}
		}
		add("GET", "/dealer/content/hub", key)
		add("GET", "/dealer/content/search?q=auto", key)
		for _, ct := range upstream.ContentTypes {
			l := e.get("/dealer/content/"+ct+"/listing?page_size=2", key)
			add("GET", "/dealer/content/"+ct+"/listing?page_size=2", key)
			for _, it := range l.items() {
				add("GET", "/dealer/content/"+ct+"/details?slug="+url.QueryEscape(it["slug"].(string)), key)
			}
			add("GET", "/dealer/content/"+ct+"/details?slug=no-such-slug", key) // 404
			add("GET", "/dealer/content/"+ct+"/listing?page=0", key)            // 422
		}
	}
	// Failures.
	add("GET", "/dealer/REWIND/listing")                                                        // 401 missing
	add("GET", "/dealer/REWIND/listing", "X-Api-Key: nope")                                     // 401 invalid
	add("GET", "/dealer/REWIND/listing", "X-Api-Key: demo-key-expired")                         // 401 expired
	add("GET", "/dealer/REWIND/listing", "X-Api-Key: demo-key-orphan")                          // 404 dealer
	add("GET", "/dealer/CARS/listing", keyAlpha)                                                // 400
	add("GET", "/dealer/content/blog/listing", keyAlpha)                                        // 400
	add("GET", "/dealer/REWIND/details?id_auto=nope", keyAlpha)                                 // 400
	add("GET", "/dealer/REWIND/details?id_auto=3f2504e0-4f89-41d3-9a0c-0305e82c3301", keyAlpha) // 404
	add("GET", "/dealer/NLT/details?id_offerta=999999", keyAlpha)                               // 404
	add("GET", "/dealer/content/search?q=a", keyAlpha)                                          // 422
	add("POST", "/dealer/REWIND/listing", keyAlpha)                                             // 405
	add("DELETE", "/dealer/openapi.json")                                                       // 405
	add("GET", "/dealer/openapi.json")
	add("GET", "/dealer/openapi.json", "Accept-Encoding: gzip")

	var bad []string
	for _, r := range reqs {
		resp := doRequest(t, e, r.method, r.target, r.hdr...)
		m := r.method
		if m != "GET" && m != "HEAD" {
			m = "GET" // a 405 is answered on the operation's path; the document puts it under default
		}
		bad = append(bad, d.checkHeaders(e, m, r.target, resp)...)
		if r.method == "GET" && resp.status == 200 {
			// HEAD and the 304 of the same request.
			h := doRequest(t, e, "HEAD", r.target, r.hdr...)
			bad = append(bad, d.checkHeaders(e, "HEAD", r.target, h)...)
			if et := resp.header.Get("ETag"); et != "" {
				nm := doRequest(t, e, "GET", r.target, append(append([]string(nil), r.hdr...), "If-None-Match: "+et)...)
				bad = append(bad, d.checkHeaders(e, "GET", r.target, nm)...)
			}
		}
	}
	// 503: the content service down, uncached search.
	e.fake.SetDown(upstream.SvcContent, true)
	r := doRequest(t, e, "GET", "/dealer/content/search?q=zzzz", keyAlpha)
	bad = append(bad, d.checkHeaders(e, "GET", "/dealer/content/search?q=zzzz", r)...)
	r = doRequest(t, e, "GET", "/dealer/content/guides/details?slug=zzz", keyAlpha)
	bad = append(bad, d.checkHeaders(e, "GET", "/dealer/content/guides/details?slug=zzz", r)...)
	e.fake.SetDown(upstream.SvcContent, false)
	// 429 of a key.
	for i := 0; i < 40; i++ {
		r := doRequest(t, e, "GET", "/dealer/NOS/listing", keyLimited)
		if r.status == 429 {
			bad = append(bad, d.checkHeaders(e, "GET", "/dealer/NOS/listing", r)...)
			break
		}
	}
	seen := map[string]bool{}
	var uniq []string
	for _, b := range bad {
		// One line per kind: drop the target's query.
		k := b
		if !seen[k] {
			seen[k] = true
			uniq = append(uniq, k)
		}
	}
	sort.Strings(uniq)
	for _, b := range uniq {
		t.Error(b)
	}
	t.Logf("%d requests checked", len(reqs))
}

// paramSchema compiles the documented schema of query parameter name of
// GET tpl.
func (d *specDoc) paramSchema(t *testing.T, tpl, name string) (*jsonschema.Schema, map[string]any) {
	t.Helper()
	op, _ := d.doc["paths"].(map[string]any)[tpl].(map[string]any)
	get, _ := op["get"].(map[string]any)
	for i, p := range get["parameters"].([]any) {
		pm, ptr := d.resolve(p, "/paths/"+esc(tpl)+"/get/parameters/"+strconv.Itoa(i))
		if pm["name"] == name && pm["in"] == "query" {
			s, err := d.schema(ptr + "/schema")
			if err != nil {
				t.Fatal(err)
			}
			sm, _ := pm["schema"].(map[string]any)
			return s, sm
		}
	}
	t.Fatalf("%s: no query parameter %s", tpl, name)
	return nil, nil
}

// TestOpenAPIParamBounds: every bound the edge enforces on a query
// parameter is in the document, so a value the documented schema accepts
// is not refused (422 validation_error or 400 invalid_identifier). Before
// 2026-11-27 page's maximum, q's, category/topic/brand's and slug's
// lengths and id_offerta's minimum were undocumented.
func TestOpenAPIParamBounds(t *testing.T) {
	e := startEnv(t, envOptions{})
	d := newAuditDoc(t)
	long := func(n int) string { return strings.Repeat("a", n) }
	cases := []struct {
		target, tpl, param, value string
		typed                     any // the value as the schema sees it
	}{
		{"/dealer/REWIND/listing", "/dealer/{service}/listing", "page", "2147483648", int64(2147483648)},
		{"/dealer/REWIND/listing", "/dealer/{service}/listing", "q", long(201), long(201)},
		{"/dealer/content/faq/listing", "/dealer/content/{content_type}/listing", "q", long(201), long(201)},
		{"/dealer/content/search", "/dealer/content/search", "q", long(201), long(201)},
		{"/dealer/content/faq/listing", "/dealer/content/{content_type}/listing", "category", long(1025), long(1025)},
		{"/dealer/content/guides/listing", "/dealer/content/{content_type}/listing", "topic", long(1025), long(1025)},
		{"/dealer/content/news/listing", "/dealer/content/{content_type}/listing", "brand", long(1025), long(1025)},
		{"/dealer/content/faq/details", "/dealer/content/{content_type}/details", "slug", long(1025), long(1025)},
		{"/dealer/content/faq/details", "/dealer/content/{content_type}/details", "slug", strings.Repeat("è", 513), strings.Repeat("è", 513)},
		{"/dealer/NLT/details", "/dealer/{service}/details", "id_offerta", "0", int64(0)},
		{"/dealer/NLT/details", "/dealer/{service}/details", "id_offerta", "-5", int64(-5)},
	}
	for _, c := range cases {
		s, _ := d.paramSchema(t, c.tpl, c.param)
		if err := s.Validate(c.typed); err != nil {
			continue // the document already says the value is out of bounds
		}
		r := doRequest(t, e, "GET", c.target+"?"+c.param+"="+url.QueryEscape(c.value), keyAlpha)
		var p struct {
			Code   string `json:"code"`
			Detail string `json:"detail"`
			Errors []struct{ Field, Message string }
		}
		_ = json.Unmarshal(r.body, &p)
		if r.status == 422 || (r.status == 400 && p.Code == "invalid_identifier") {
			msg := p.Detail
			if len(p.Errors) > 0 {
				msg = p.Errors[0].Field + ": " + p.Errors[0].Message
			}
			v := c.value
			if len(v) > 12 {
				v = v[:12] + fmt.Sprintf("...(%d bytes)", len(c.value))
			}
			t.Errorf("GET %s?%s=%s: the document's schema for %s accepts it, but the edge refuses it with %d %s (%s)", c.target, c.param, v, c.param, r.status, p.Code, msg)
		}
	}
}

// TestOpenAPICrawlBodies: every page, detail and content item of the
// three demo dealers, with filters, has a body valid against the
// document (e.get checks every answer with the shared validator).
func TestOpenAPICrawlBodies(t *testing.T) {
	e := startEnv(t, envOptions{})
	n := 0
	for _, key := range []string{keyAlpha, keyBeta, keyGamma} {
		for _, svc := range []string{"REWIND", "NOS", "NLT"} {
			for _, ct := range []string{"", "auto", "vcom", "vind"} {
				if svc == "NLT" && ct != "" {
					continue
				}
				slugs := map[string]bool{}
				for page := 1; ; page++ {
					tgt := "/dealer/" + svc + "/listing?page_size=100&page=" + strconv.Itoa(page)
					if ct != "" {
						tgt += "&catalog_type=" + ct
					}
					l := e.get(tgt, key, "Accept-Encoding: gzip")
					n++
					for _, it := range l.items() {
						if ct == "" {
							if id, ok := it["id_auto"].(string); ok {
								e.get("/dealer/"+svc+"/details?id_auto="+strings.ToUpper(id), key)
								n++
							}
							if id, ok := it["id_offerta"].(float64); ok {
								e.get("/dealer/"+svc+"/details?id_offerta="+strconv.FormatInt(int64(id), 10), key)
								n++
							}
						}
						ups, _ := it["professional_upfits"].([]any)
						for _, u := range ups {
							slugs[u.(map[string]any)["slug"].(string)] = true
						}
						if m, ok := it["marca"].(string); ok && page == 1 {
							e.get("/dealer/"+svc+"/listing?q="+url.QueryEscape(m), key)
							n++
						}
					}
					if l.json["has_next"] != true {
						break
					}
				}
				for s := range slugs {
					filter := ct
					if filter == "" || filter == "auto" {
						filter = "vind"
					}
					e.get("/dealer/"+svc+"/listing?professional_upfit="+s+"&catalog_type="+filter, key)
					n++
				}
			}
		}
		for ps := 1; ps <= 20; ps += 19 {
			e.get("/dealer/content/hub?page_size="+strconv.Itoa(ps), key)
			for _, q := range []string{"auto", "noleggio", "di", "xx", "elettrica ibrida", "àè"} {
				e.get("/dealer/content/search?page_size="+strconv.Itoa(ps)+"&q="+url.QueryEscape(q), key)
				n++
			}
		}
		for _, ct := range upstream.ContentTypes {
			for page := 1; ; page++ {
				l := e.get("/dealer/content/"+ct+"/listing?page_size=100&page="+strconv.Itoa(page), key)
				n++
				for _, it := range l.items() {
					s, _ := it["slug"].(string)
					e.get("/dealer/content/"+ct+"/details?slug="+url.QueryEscape(s), key)
					n++
					for _, f := range []string{"category", "topic", "brand"} {
						if v, ok := it[f].(string); ok && v != "" {
							e.get("/dealer/content/"+ct+"/listing?"+f+"="+url.QueryEscape(v), key)
							n++
						}
					}
				}
				if l.json["has_next"] != true {
					break
				}
			}
		}
	}
	t.Logf("%d responses validated", n)
}

// TestOpenAPIPartialHeaders: a degraded vehicle detail (media down) and
// its conditional revalidation (304) have the header fields the document
// describes for them, X-Edge-Partial included.
func TestOpenAPIPartialHeaders(t *testing.T) {
	e := startEnv(t, envOptions{})
	d := newAuditDoc(t)
	l := e.get("/dealer/REWIND/listing?page_size=1", keyAlpha)
	id := l.items()[0]["id_auto"].(string)
	e.fake.SetDown(upstream.SvcMedia, true)
	defer e.fake.SetDown(upstream.SvcMedia, false)
	tgt := "/dealer/REWIND/details?id_auto=" + id
	r := doRequest(t, e, "GET", tgt, keyAlpha)
	if r.header.Get("X-Edge-Partial") != "true" {
		t.Fatalf("media down: %d %v, want X-Edge-Partial: true", r.status, r.header)
	}
	var bad []string
	bad = append(bad, d.checkHeaders(e, "GET", tgt, r)...)
	nm := doRequest(t, e, "GET", tgt, keyAlpha, "If-None-Match: "+r.header.Get("ETag"))
	t.Logf("revalidation: %d X-Edge-Partial=%q Cache-Control=%q", nm.status, nm.header.Get("X-Edge-Partial"), nm.header.Get("Cache-Control"))
	bad = append(bad, d.checkHeaders(e, "GET", tgt, nm)...)
	for _, b := range bad {
		t.Error(b)
	}
}
