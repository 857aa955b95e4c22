package publicshape

import (
	"strings"
	"testing"
	"unicode"
)

// TestOpenAPIHeadOperationIDs: every HEAD operation is named after its
// GET operation as headContentHub is after getContentHub: "head", then a
// word boundary (an upper-case letter), then a tail of the GET's id
// (client generators turn these names into SDK methods). Before
// 2026-11-27 three were cut inside a word (headtInventory, headrchContent,
// headtContent).
func TestOpenAPIHeadOperationIDs(t *testing.T) {
	doc := loadDoc(t)
	for path, item := range at(t, doc, "paths").(map[string]any) {
		get := at(t, item, "get", "operationId").(string)
		head := at(t, item, "head", "operationId").(string)
		rest, ok := strings.CutPrefix(head, "head")
		whole := rest != "" && strings.EqualFold(rest, get) // head + the GET id capitalised
		if !ok || rest == "" || !unicode.IsUpper(rune(rest[0])) || !(whole || strings.HasSuffix(get, rest)) {
			t.Errorf("%s: HEAD operationId %q is not head+<a word-aligned tail of %q>", path, head, get)
		}
	}
}

// TestOpenAPIDocumentHeadNoRateLimit: the description of HEAD
// /dealer/openapi.json promises the RateLimit fields only if its
// responses document them (the document is served without a key, so
// without RateLimit fields). Before 2026-11-27 it promised "the RateLimit
// fields" and "the same rate-limit cost" that no response documented.
func TestOpenAPIDocumentHeadNoRateLimit(t *testing.T) {
	doc := loadDoc(t)
	desc := at(t, doc, "paths", "/dealer/openapi.json", "head", "description").(string)
	if strings.Contains(desc, "RateLimit") {
		for code, r := range at(t, doc, "paths", "/dealer/openapi.json", "head", "responses").(map[string]any) {
			hs, _ := resolve(t, doc, r)["headers"].(map[string]any)
			if _, ok := hs["RateLimit"]; !ok {
				t.Errorf("HEAD /dealer/openapi.json description promises the RateLimit fields; response %s documents none: %q", code, desc)
				break
			}
		}
	}
}
