package contracttests

import (
	"encoding/json"
	"fmt"
	"net/url"
	"testing"

	"github.com/dealer-edge/dealer-edge/contracttests/check"
	"github.com/dealer-edge/dealer-edge/publicshape"
)

// strictContract is the served OpenAPI document with every named object
// schema closed (unevaluatedProperties: false): a response that validates
// against it carries no field the document does not name. The contract
// lets objects carry further fields (2.13: their names not shown); the
// edge publishes by allowlist, and the document names every field it
// publishes, so a field missing from the document is a field published by
// mistake or left undocumented. DealerPublicDeprecation is left open: it
// is only ever a part (allOf) of the listing and detail envelopes, which
// are closed themselves.
func strictContract(t testing.TB) *check.Contract {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(publicshape.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	closed := 0
	for name, s := range schemas {
		m, _ := s.(map[string]any)
		if _, props := m["properties"]; !props || name == "DealerPublicDeprecation" {
			continue
		}
		if _, has := m["additionalProperties"]; has {
			continue
		}
		m["unevaluatedProperties"] = false
		closed++
	}
	if closed < 15 {
		t.Fatalf("closed only %d schemas", closed)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	c, err := check.New(b)
	if err != nil {
		t.Fatalf("strict document: %v", err)
	}
	return c
}

// TestEveryPublishedFieldIsDocumented: every field of every answer of a
// walk over the whole API (every page of every listing of two dealers,
// every inventory detail of one page, content details of every type, hubs,
// searches and problems) is named by the OpenAPI document.
func TestEveryPublishedFieldIsDocumented(t *testing.T) {
	e := startEnv(t, envOptions{})
	strict := strictContract(t)
	checked := 0
	get := func(target, key string) *resp {
		t.Helper()
		r := e.get(target, key)
		u, _ := url.Parse(target)
		if r.status != 304 {
			if err := strict.Validate(u.Path, r.status, r.header.Get("Content-Type"), r.body); err != nil {
				t.Errorf("%s: a field the document does not name: %v\nbody: %.400s", target, err, r.body)
			}
			checked++
		}
		return r
	}
	// The strict document refuses what the served one allows.
	if err := strict.Validate("/dealer/REWIND/listing", 200, "application/json", []byte(`{"service":"REWIND","page":1,"page_size":1,"total":0,"has_next":false,"items":[],"extra":1}`)); err == nil {
		t.Fatal("strict document accepts an undocumented field")
	}
	if err := strict.Validate("/dealer/NLT/listing", 200, "application/json", []byte(`{"service":"NLT","page":1,"page_size":1,"total":1,"has_next":false,"items":[{"id_offerta":1,"service":"NLT","nome_canonico":"a b","marca":"a","modello":"b","source_id":"x"}]}`)); err == nil {
		t.Fatal("strict document accepts an undocumented field of an item")
	}
	for _, key := range []string{keyAlpha, keyGamma} {
		for _, svc := range []string{"REWIND", "NOS", "NLT"} {
			for page := 1; ; page++ {
				r := get(fmt.Sprintf("/dealer/%s/listing?page_size=100&page=%d", svc, page), key)
				if page == 1 {
					for _, it := range r.items()[:min(10, len(r.items()))] {
						if svc == "NLT" {
							get(fmt.Sprintf("/dealer/NLT/details?id_offerta=%v", it["id_offerta"]), key)
						} else {
							get(fmt.Sprintf("/dealer/%s/details?id_auto=%v", svc, it["id_auto"]), key)
						}
					}
				}
				if r.json["has_next"] != true {
					break
				}
			}
		}
		for _, ct := range contentTypes {
			r := get("/dealer/content/"+ct+"/listing?page_size=100", key)
			for _, it := range r.items()[:min(10, len(r.items()))] {
				slug, _ := it["slug"].(string)
				get("/dealer/content/"+ct+"/details?slug="+url.QueryEscape(slug), key)
			}
			get("/dealer/content/"+ct+"/listing?page_size=5&q=auto", key)
		}
		get("/dealer/content/news/listing?brand=fiat", key)
		get("/dealer/content/faq/listing?category=permuta", key)
		get("/dealer/content/guides/listing?topic=noleggio", key)
		get("/dealer/content/hub?page_size=20", key)
		get("/dealer/content/search?q=noleggio&page_size=20", key)
		get("/dealer/REWIND/listing?page=0", key)
		get("/dealer/CARS/listing", key)
		get("/dealer/content/faq/details?slug=no-such-item", key)
	}
	get("/dealer/REWIND/listing", "X-Api-Key: demo-key-expired")
	get("/dealer/REWIND/listing", "X-Api-Key: demo-key-orphan")
	t.Logf("%d answers checked against the closed document", checked)
}
