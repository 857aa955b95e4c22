package publicshape

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// loadDoc decodes the embedded document.
func loadDoc(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(OpenAPI()))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("OpenAPI() is not valid JSON: %v", err)
	}
	return doc
}

// at walks a path of object keys.
func at(t *testing.T, v any, keys ...string) any {
	t.Helper()
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: not an object", strings.Join(keys, "."))
		}
		if v, ok = m[k]; !ok {
			t.Fatalf("missing %s", strings.Join(keys, "."))
		}
	}
	return v
}

func TestOpenAPIDocument(t *testing.T) {
	doc := loadDoc(t)
	if got := at(t, doc, "openapi"); got != "3.1.0" {
		t.Errorf("openapi = %v", got)
	}
	if got := at(t, doc, "info", "version"); got != ContractVersion {
		t.Errorf("info.version = %v, want %s", got, ContractVersion)
	}
	if got := at(t, doc, "jsonSchemaDialect"); got != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("jsonSchemaDialect = %v", got)
	}

	paths := at(t, doc, "paths").(map[string]any)
	wantPaths := []string{
		"/dealer/{service}/listing", "/dealer/{service}/details",
		"/dealer/content/hub", "/dealer/content/search",
		"/dealer/content/{content_type}/listing", "/dealer/content/{content_type}/details",
		"/dealer/openapi.json",
	}
	for _, p := range wantPaths {
		item, ok := paths[p].(map[string]any)
		if !ok {
			t.Errorf("path %s missing", p)
			continue
		}
		for method := range item {
			if method != "get" && method != "head" {
				t.Errorf("%s documents %s; only GET (and HEAD, GET without the body) is offered", p, method)
			}
		}
		if _, ok := item["get"]; !ok {
			t.Errorf("%s has no GET", p)
		}
		if _, ok := item["head"]; !ok {
			t.Errorf("%s has no HEAD", p)
		}
	}
	if len(paths) != len(wantPaths) {
		t.Errorf("%d paths, want %d", len(paths), len(wantPaths))
	}

	schemas := at(t, doc, "components", "schemas").(map[string]any)
	for _, name := range []string{
		"DealerPublicInventoryListingResponse", "DealerPublicInventoryItem", "DealerPublicProfessionalUpfit",
		"DealerPublicInventoryDetailResponse", "DealerPublicVehicleDetail", "DealerPublicOfferDetail",
		"DealerPublicContentItem", "DealerPublicContentListingResponse", "DealerPublicContentDetailResponse",
		"DealerPublicContentHubResponse", "DealerPublicContentSearchResponse", "DealerMeta", "Problem", "ValidationError",
	} {
		if _, ok := schemas[name]; !ok {
			t.Errorf("schema %s missing", name)
		}
	}
	upfit := at(t, schemas, "DealerPublicProfessionalUpfit").(map[string]any)
	if upfit["additionalProperties"] != false {
		t.Errorf("DealerPublicProfessionalUpfit.additionalProperties = %v, want false", upfit["additionalProperties"])
	}
	req, _ := upfit["required"].([]any)
	if len(req) != 6 {
		t.Errorf("DealerPublicProfessionalUpfit requires %v, want all six fields", req)
	}
	detail := at(t, schemas, "DealerPublicInventoryDetailResponse").(map[string]any)
	if one, _ := detail["oneOf"].([]any); len(one) != 2 {
		t.Errorf("DealerPublicInventoryDetailResponse.oneOf = %v", detail["oneOf"])
	}

	sec := at(t, doc, "components", "securitySchemes").(map[string]any)
	if k := sec["ApiKeyAuth"].(map[string]any); k["type"] != "apiKey" || k["in"] != "header" || k["name"] != "X-Api-Key" {
		t.Errorf("ApiKeyAuth = %v", k)
	}
	if b := sec["BearerAuth"].(map[string]any); b["type"] != "http" || b["scheme"] != "bearer" {
		t.Errorf("BearerAuth = %v", b)
	}
	if got := at(t, doc, "security").([]any); len(got) != 2 {
		t.Errorf("security = %v, want either scheme", got)
	}
}

// TestOpenAPIParameters checks the bounds of sections 4 and 8.
func TestOpenAPIParameters(t *testing.T) {
	doc := loadDoc(t)
	param := func(path, name string) map[string]any {
		t.Helper()
		for _, p := range at(t, doc, "paths", path, "get", "parameters").([]any) {
			p := resolve(t, doc, p)
			if p["name"] == name {
				return p
			}
		}
		t.Fatalf("%s: no parameter %s", path, name)
		return nil
	}
	schemaOf := func(path, name string) string {
		t.Helper()
		b, _ := json.Marshal(param(path, name)["schema"])
		return string(b)
	}
	tests := []struct{ path, name, want string }{
		{"/dealer/{service}/listing", "service", `{"enum":["REWIND","NOS","NLT"],"type":"string"}`},
		{"/dealer/{service}/listing", "page", `{"default":1,"maximum":2147483647,"minimum":1,"type":"integer"}`},
		{"/dealer/{service}/listing", "q", `{"maxLength":200,"type":"string"}`},
		{"/dealer/{service}/listing", "page_size", `{"default":20,"maximum":100,"minimum":1,"type":"integer"}`},
		{"/dealer/{service}/listing", "catalog_type", `{"enum":["auto","vcom","vind"],"type":"string"}`},
		{"/dealer/{service}/listing", "professional_upfit", `{"maxLength":80,"minLength":1,"pattern":"^[a-z0-9]+(?:-[a-z0-9]+)*$","type":"string"}`},
		{"/dealer/{service}/details", "id_auto", `{"format":"uuid","type":"string"}`},
		{"/dealer/{service}/details", "id_offerta", `{"format":"int64","minimum":1,"type":"integer"}`},
		{"/dealer/content/hub", "page_size", `{"default":5,"maximum":20,"minimum":1,"type":"integer"}`},
		{"/dealer/content/search", "page_size", `{"default":5,"maximum":20,"minimum":1,"type":"integer"}`},
		{"/dealer/content/search", "q", `{"maxLength":200,"minLength":2,"type":"string"}`},
		{"/dealer/content/{content_type}/listing", "content_type", `{"enum":["faq","news","glossary","guides","videos","podcasts"],"type":"string"}`},
		{"/dealer/content/{content_type}/listing", "page", `{"default":1,"maximum":2147483647,"minimum":1,"type":"integer"}`},
		{"/dealer/content/{content_type}/listing", "q", `{"maxLength":200,"type":"string"}`},
		{"/dealer/content/{content_type}/listing", "category", `{"maxLength":1024,"type":"string"}`},
		{"/dealer/content/{content_type}/listing", "topic", `{"maxLength":1024,"type":"string"}`},
		{"/dealer/content/{content_type}/listing", "brand", `{"maxLength":1024,"type":"string"}`},
		{"/dealer/content/{content_type}/listing", "page_size", `{"default":20,"maximum":100,"minimum":1,"type":"integer"}`},
		{"/dealer/content/{content_type}/details", "slug", `{"maxLength":1024,"minLength":1,"type":"string"}`},
	}
	for _, tt := range tests {
		if got := schemaOf(tt.path, tt.name); got != tt.want {
			t.Errorf("%s %s: schema %s, want %s", tt.path, tt.name, got, tt.want)
		}
	}
	for _, r := range []struct{ path, name string }{{"/dealer/content/search", "q"}, {"/dealer/content/{content_type}/details", "slug"}} {
		if param(r.path, r.name)["required"] != true {
			t.Errorf("%s %s is not required", r.path, r.name)
		}
	}
}

// TestOpenAPIResponses checks that every data endpoint documents the
// contract's statuses with the right media types, and every problem code
// of ProblemFor is in the Problem schema.
func TestOpenAPIResponses(t *testing.T) {
	doc := loadDoc(t)
	for path, item := range at(t, doc, "paths").(map[string]any) {
		responses := at(t, item, "get", "responses").(map[string]any)
		want := []string{"200", "304", "400", "401", "404", "422", "429", "500", "503", "default"}
		if path == "/dealer/openapi.json" {
			want = []string{"200", "304", "default"}
		}
		for _, code := range want {
			r, ok := responses[code]
			if !ok {
				t.Errorf("%s: no response %s", path, code)
				continue
			}
			resp := resolve(t, doc, r)
			content, _ := resp["content"].(map[string]any)
			switch {
			case code == "200":
				if _, ok := content["application/json"]; !ok {
					t.Errorf("%s 200: no application/json", path)
				}
			case code == "304":
				if content != nil {
					t.Errorf("%s 304 has content", path)
				}
			default:
				if _, ok := content["application/problem+json"]; !ok {
					t.Errorf("%s %s: no application/problem+json", path, code)
				}
			}
			headers, _ := resp["headers"].(map[string]any)
			if _, ok := headers["X-Request-ID"]; !ok {
				t.Errorf("%s %s: no X-Request-ID header", path, code)
			}
			if code == "429" {
				if _, ok := headers["Retry-After"]; !ok {
					t.Errorf("%s 429: no Retry-After header", path)
				}
			}
			if code == "200" && path != "/dealer/openapi.json" {
				for _, h := range []string{"ETag", "Cache-Control", "X-Cache", "RateLimit-Policy", "RateLimit"} {
					if _, ok := headers[h]; !ok {
						t.Errorf("%s 200: no %s header", path, h)
					}
				}
			}
			// Every answer of a guides or glossary route carries them
			// (only a 400 invalid_content_type names no such type).
			deprecable := strings.HasPrefix(path, "/dealer/content/{content_type}/") && code != "400" && code != "default"
			for _, h := range []string{"Deprecation", "Sunset", "Link"} {
				if _, ok := headers[h]; ok != deprecable {
					t.Errorf("%s %s: %s header documented = %v", path, code, h, ok)
				}
			}
		}
	}
	codes := at(t, doc, "components", "schemas", "Problem", "properties", "code", "enum").([]any)
	for _, p := range Problems() {
		if !slices.Contains(codes, any(p.Code)) {
			t.Errorf("problem code %s missing from the Problem schema", p.Code)
		}
	}
	if len(codes) != len(Problems()) {
		t.Errorf("Problem schema lists %d codes, ProblemFor knows %d", len(codes), len(Problems()))
	}
}

// TestOpenAPIHeadMirrorsGet: every path documents HEAD as its GET without
// the body: the same parameters and security, every GET status with the
// same header fields, and no content.
func TestOpenAPIHeadMirrorsGet(t *testing.T) {
	doc := loadDoc(t)
	for path, item := range at(t, doc, "paths").(map[string]any) {
		get := at(t, item, "get").(map[string]any)
		head, ok := item.(map[string]any)["head"].(map[string]any)
		if !ok {
			t.Errorf("%s: no head operation", path)
			continue
		}
		if !reflect.DeepEqual(get["parameters"], head["parameters"]) || !reflect.DeepEqual(get["security"], head["security"]) {
			t.Errorf("%s: HEAD parameters or security differ from GET", path)
		}
		gr := at(t, get, "responses").(map[string]any)
		hr := at(t, head, "responses").(map[string]any)
		if len(gr) != len(hr) {
			t.Errorf("%s: GET documents %d statuses, HEAD %d", path, len(gr), len(hr))
		}
		for code, r := range gr {
			h, ok := hr[code]
			if !ok {
				t.Errorf("%s: HEAD has no %s", path, code)
				continue
			}
			hm := resolve(t, doc, h)
			if _, has := hm["content"]; has {
				t.Errorf("%s HEAD %s documents a body", path, code)
			}
			if !reflect.DeepEqual(resolve(t, doc, r)["headers"], hm["headers"]) {
				t.Errorf("%s HEAD %s: header fields differ from GET", path, code)
			}
		}
	}
}

// TestOpenAPIRefsResolve checks that every $ref points into the document.
func TestOpenAPIRefsResolve(t *testing.T) {
	doc := loadDoc(t)
	var walk func(v any, where string)
	walk = func(v any, where string) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				if !strings.HasPrefix(ref, "#/components/") {
					t.Errorf("%s: $ref %s outside components", where, ref)
				} else if lookup(doc, ref) == nil {
					t.Errorf("%s: $ref %s does not resolve", where, ref)
				}
			}
			for k, e := range v {
				walk(e, where+"/"+k)
			}
		case []any:
			for _, e := range v {
				walk(e, where+"/[]")
			}
		}
	}
	walk(doc, "#")
}

func lookup(doc map[string]any, ref string) map[string]any {
	var cur any = doc
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]
	}
	m, _ := cur.(map[string]any)
	return m
}

func resolve(t *testing.T, doc map[string]any, v any) map[string]any {
	t.Helper()
	m, _ := v.(map[string]any)
	for m != nil {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		if m = lookup(doc, ref); m == nil {
			t.Fatalf("$ref %s does not resolve", ref)
		}
	}
	return m
}

// schemaTypes are the public Go types and the schema that describes each.
var schemaTypes = []struct {
	typ    any
	schema string
}{
	{InventoryListing{}, "DealerPublicInventoryListingResponse"},
	{InventoryItem{}, "DealerPublicInventoryItem"},
	{ProfessionalUpfit{}, "DealerPublicProfessionalUpfit"},
	{InventoryDetail{}, "DealerPublicInventoryDetailResponse"},
	{VehicleDetail{}, "DealerPublicVehicleDetail"},
	{OfferDetail{}, "DealerPublicOfferDetail"},
	{Quotation{}, "DealerPublicQuotation"},
	{Equipment{}, "DealerPublicEquipment"},
	{Package{}, "DealerPublicEquipmentPackage"},
	{AIContent{}, "DealerPublicAIContent"},
	{Podcast{}, "DealerPublicPodcast"},
	{Video{}, "DealerPublicVideo"},
	{ContentItem{}, "DealerPublicContentItem"},
	{DealerMeta{}, "DealerMeta"},
	{Meta{}, "DealerPublicMeta"},
	{Deprecation{}, "DealerPublicDeprecation"},
	{ContentListing{}, "DealerPublicContentListingResponse"},
	{ContentDetail{}, "DealerPublicContentDetailResponse"},
	{ContentHub{}, "DealerPublicContentHubResponse"},
	{ContentSearch{}, "DealerPublicContentSearchResponse"},
	{Problem{}, "Problem"},
	{FieldError{}, "ValidationError"},
}

type jsonField struct {
	name      string
	omitEmpty bool
	typ       reflect.Type
}

// jsonFields lists the JSON members encoding/json writes for t,
// flattening untagged embedded structs.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		out = append(out, jsonField{name: name, omitEmpty: strings.Contains(opts, "omitempty"), typ: f.Type})
	}
	return out
}

// schemaProps merges properties and required names of a schema and of the
// schemas its allOf refers to.
func schemaProps(t *testing.T, doc map[string]any, s map[string]any, props map[string]any, required map[string]bool) {
	for k, v := range s["properties"].(map[string]any) {
		props[k] = v
	}
	for _, r := range asSlice(s["required"]) {
		required[r.(string)] = true
	}
	for _, sub := range asSlice(s["allOf"]) {
		schemaProps(t, doc, resolve(t, doc, sub), props, required)
	}
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

// jsonTypes returns the JSON types a schema admits (empty: unconstrained)
// and every schema name it refers to, transitively.
func jsonTypes(doc map[string]any, v any, refs map[string]bool) map[string]bool {
	types := map[string]bool{}
	m, ok := v.(map[string]any)
	if !ok {
		return types
	}
	if ref, ok := m["$ref"].(string); ok {
		name := ref[strings.LastIndexByte(ref, '/')+1:]
		if refs[name] {
			return types
		}
		refs[name] = true
		return jsonTypes(doc, lookup(doc, ref), refs)
	}
	switch tv := m["type"].(type) {
	case string:
		types[tv] = true
	case []any:
		for _, e := range tv {
			types[e.(string)] = true
		}
	}
	switch m["const"].(type) {
	case bool:
		types["boolean"] = true
	case string:
		types["string"] = true
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		for _, sub := range asSlice(m[key]) {
			for k := range jsonTypes(doc, sub, refs) {
				types[k] = true
			}
		}
	}
	for _, sub := range asSlice(m["allOf"]) {
		for k := range jsonTypes(doc, sub, refs) {
			types[k] = true
		}
	}
	for _, key := range []string{"items", "additionalProperties"} {
		if sub, ok := m[key].(map[string]any); ok {
			jsonTypes(doc, sub, refs)
		}
	}
	if p, ok := m["properties"].(map[string]any); ok {
		for _, sub := range p {
			jsonTypes(doc, sub, refs)
		}
	}
	return types
}

// goJSONType is the JSON type encoding/json produces for t (pointers
// aside), and the element struct type whose schema must be referenced.
func goJSONType(t reflect.Type) (string, reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string", nil
	case reflect.Bool:
		return "boolean", nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer", nil
	case reflect.Float32, reflect.Float64:
		return "number", nil
	case reflect.Slice, reflect.Array:
		_, elem := goJSONType(t.Elem())
		if elem == nil && t.Elem().Kind() == reflect.Struct {
			elem = t.Elem()
		}
		return "array", elem
	case reflect.Map:
		_, elem := goJSONType(t.Elem())
		if elem == nil && t.Elem().Kind() == reflect.Struct {
			elem = t.Elem()
		}
		return "object", elem
	case reflect.Struct:
		return "object", t
	}
	return "", nil
}

// TestSchemasMatchStructs keeps the document and the Go types in
// agreement: every member the edge can encode is documented with its JSON
// type (and, for nested objects, the schema of their Go type); every
// documented property is a member of the struct; a required property is
// never omitempty.
func TestSchemasMatchStructs(t *testing.T) {
	doc := loadDoc(t)
	schemaName := map[reflect.Type]string{}
	for _, st := range schemaTypes {
		schemaName[reflect.TypeOf(st.typ)] = st.schema
	}
	for _, st := range schemaTypes {
		typ := reflect.TypeOf(st.typ)
		t.Run(st.schema, func(t *testing.T) {
			s := lookup(doc, "#/components/schemas/"+st.schema)
			if s == nil {
				t.Fatalf("schema %s missing", st.schema)
			}
			props, required := map[string]any{}, map[string]bool{}
			schemaProps(t, doc, s, props, required)
			fields := jsonFields(typ)
			seen := map[string]bool{}
			for _, f := range fields {
				seen[f.name] = true
				p, ok := props[f.name]
				if !ok {
					t.Errorf("%s.%s (%s) is not documented", typ.Name(), f.name, f.typ)
					continue
				}
				want, elem := goJSONType(f.typ)
				refs := map[string]bool{}
				types := jsonTypes(doc, p, refs)
				if len(types) > 0 && !types[want] {
					t.Errorf("%s: Go type %s encodes as %s, schema admits %v", f.name, f.typ, want, keys(types))
				}
				if elem != nil {
					name, ok := schemaName[elem]
					if !ok {
						t.Errorf("%s: Go type %s has no schema in schemaTypes", f.name, elem)
					} else if !refs[name] {
						t.Errorf("%s: schema does not refer to %s (refers to %v)", f.name, name, keys(refs))
					}
				}
				if required[f.name] && f.omitEmpty {
					t.Errorf("%s is required but omitempty", f.name)
				}
			}
			for name := range props {
				if !seen[name] {
					t.Errorf("property %s is documented but %s has no such member", name, typ.Name())
				}
			}
			for name := range required {
				if !seen[name] {
					t.Errorf("required %s is not a member of %s", name, typ.Name())
				}
			}
		})
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestEncodedZeroValuesHaveNoNull guards the arrays and objects the schema
// requires: a struct built with empty (not nil) slices and maps encodes
// without null, which the schema would reject.
func TestEncodedZeroValuesHaveNoNull(t *testing.T) {
	for _, v := range []any{
		InventoryListing{Items: []InventoryItem{}},
		ContentListing{Items: []ContentItem{}},
		ContentSearch{ByType: map[string]int{}, Items: []ContentItem{}},
		ContentHub{Sections: map[string]ContentListing{}},
		VehicleDetail{AccessoriSerie: []Equipment{}, AccessoriOpzionali: []Equipment{}, Pacchetti: []Package{}, AccessoriSerieJSON: []Equipment{}},
		OfferDetail{Quotazioni: []Quotation{}},
		InventoryDetail{},
		ContentDetail{},
		Problem{},
	} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("null")) {
			t.Errorf("%T encodes a null: %s", v, b)
		}
	}
}
