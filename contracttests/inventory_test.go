package contracttests

import (
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func TestAuthentication(t *testing.T) {
	e := startEnv(t, envOptions{})
	cases := []struct {
		name    string
		headers []string
		status  int
		code    string
	}{
		{"x-api-key", []string{keyAlpha}, 200, ""},
		{"bearer", []string{"Authorization: Bearer demo-key-alpha"}, 200, ""},
		{"bearer lowercase scheme", []string{"Authorization: bearer demo-key-alpha"}, 200, ""},
		{"missing", nil, 401, "missing_api_key"},
		{"empty header", []string{"X-Api-Key: "}, 401, "missing_api_key"},
		{"unknown", []string{"X-Api-Key: nope-not-a-key"}, 401, "invalid_api_key"},
		{"revoked", []string{"X-Api-Key: demo-key-revoked"}, 401, "invalid_api_key"},
		{"expired", []string{"X-Api-Key: demo-key-expired"}, 401, "expired_api_key"},
		{"orphan", []string{"X-Api-Key: demo-key-orphan"}, 404, "dealer_not_found"},
		{"both headers", []string{keyAlpha, "Authorization: Bearer demo-key-alpha"}, 401, "invalid_api_key"},
		{"basic scheme", []string{"Authorization: Basic ZGVtbzprZXk="}, 401, "invalid_api_key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.t = t
			r := e.get("/dealer/REWIND/listing", c.headers...)
			if r.status != c.status || r.code() != c.code {
				t.Fatalf("got %d %q, want %d %q: %s", r.status, r.code(), c.status, c.code, r.body)
			}
			if c.code != "" && strings.Contains(string(r.body), "demo-key") {
				t.Fatal("problem body echoes the key")
			}
		})
	}
}

func TestErrorsAndRequestIDs(t *testing.T) {
	e := startEnv(t, envOptions{})
	r := e.get("/dealer/REWIND/listing", keyAlpha, "X-Request-ID: client-req-42")
	if got := r.header.Get("X-Request-ID"); got != "client-req-42" {
		t.Errorf("well-formed X-Request-ID not echoed: %q", got)
	}
	r = e.get("/dealer/REWIND/listing?page=0", keyAlpha, "X-Request-ID: bad id with spaces")
	if got := r.header.Get("X-Request-ID"); got == "" || strings.Contains(got, " ") {
		t.Errorf("malformed X-Request-ID not replaced: %q", got)
	}
	if r.json["request_id"] != r.header.Get("X-Request-ID") {
		t.Error("request_id differs from header")
	}
	cases := []struct {
		path   string
		status int
		code   string
	}{
		{"/dealer/CARS/listing", 400, "invalid_service"},
		{"/dealer/rewind/listing", 400, "invalid_service"},
		{"/dealer/CARS/details?id_auto=x", 400, "invalid_service"},
		{"/dealer/content/blog/listing", 400, "invalid_content_type"},
		{"/dealer/content/blog/details?slug=a", 400, "invalid_content_type"},
		{"/dealer/REWIND/details?id_auto=123", 400, "invalid_identifier"},
		{"/dealer/NLT/details?id_offerta=abc", 400, "invalid_identifier"},
		{"/dealer/REWIND/details?id_auto=3f2504e0-4f89-41d3-9a0c-0305e82c3301", 404, "vehicle_not_found"},
		{"/dealer/NLT/details?id_offerta=999999999", 404, "offer_not_found"},
		{"/dealer/content/faq/details?slug=does-not-exist", 404, "content_not_found"},
		{"/dealer/nothing/here", 404, "not_found"},
		{"/", 404, "not_found"},
		{"/dealer/REWIND/listing?page=0", 422, "validation_error"},
		{"/dealer/REWIND/details", 422, "validation_error"},
		{"/dealer/content/search?q=a", 422, "validation_error"},
		{"/dealer/content/faq/details", 422, "validation_error"},
	}
	for _, c := range cases {
		r := e.get(c.path, keyAlpha)
		if r.status != c.status || r.code() != c.code {
			t.Errorf("%s: got %d %q, want %d %q", c.path, r.status, r.code(), c.status, c.code)
		}
		if c.code == "validation_error" {
			if errs, _ := r.json["errors"].([]any); len(errs) == 0 {
				t.Errorf("%s: validation_error without errors[]", c.path)
			}
		} else if _, has := r.json["errors"]; has {
			t.Errorf("%s: errors[] on %s", c.path, c.code)
		}
	}
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		r := e.do(m, "/dealer/REWIND/listing", keyAlpha)
		if r.status != 405 || r.header.Get("Allow") != "GET" || r.code() != "method_not_allowed" {
			t.Errorf("%s: got %d %q allow=%q", m, r.status, r.code(), r.header.Get("Allow"))
		}
	}
}

func TestInventoryBounds(t *testing.T) {
	e := startEnv(t, envOptions{})
	ok := []string{"", "?page=1", "?page_size=1", "?page_size=100", "?page=100000", "?catalog_type=auto", "?catalog_type=vcom", "?catalog_type=vind", "?professional_upfit=" + strings.Repeat("a", 80)}
	for _, q := range ok {
		if r := e.get("/dealer/REWIND/listing"+q, keyAlpha); r.status != 200 {
			t.Errorf("%s: %d %s", q, r.status, r.body)
		}
	}
	bad := map[string]string{
		"?page=0": "page", "?page=-1": "page", "?page=x": "page", "?page_size=0": "page_size", "?page_size=101": "page_size",
		"?catalog_type=suv": "catalog_type", "?professional_upfit=" + strings.Repeat("a", 81): "professional_upfit",
		"?professional_upfit=": "professional_upfit", "?professional_upfit=Gru": "professional_upfit", "?professional_upfit=a--b": "professional_upfit",
		"?page=1&page=2": "page",
	}
	for q, field := range bad {
		r := e.get("/dealer/REWIND/listing"+q, keyAlpha)
		if r.status != 422 || !strings.Contains(string(r.body), `"field":"`+field+`"`) {
			t.Errorf("%s: got %d %s", q, r.status, r.body)
		}
	}
	if r := e.get("/dealer/NLT/listing?catalog_type=auto", keyAlpha); r.status != 422 {
		t.Errorf("catalog_type on NLT: %d", r.status)
	}
	r := e.get("/dealer/REWIND/listing", keyAlpha)
	if r.num("page") != 1 || r.num("page_size") != 20 || len(r.items()) != 20 {
		t.Errorf("defaults: page %d size %d items %d", r.num("page"), r.num("page_size"), len(r.items()))
	}
}

// walk fetches every page of a listing and returns the ids in order.
func walk(t *testing.T, e *env, path, key, idField string, pageSize int) ([]string, int) {
	t.Helper()
	var ids []string
	total := -1
	for page := 1; page < 1000; page++ {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		r := e.get(fmt.Sprintf("%s%spage=%d&page_size=%d", path, sep, page, pageSize), key)
		if r.status != 200 {
			t.Fatalf("%s page %d: %d %s", path, page, r.status, r.body)
		}
		if total == -1 {
			total = r.num("total")
		} else if r.num("total") != total {
			t.Fatalf("total changed between pages")
		}
		for _, it := range r.items() {
			ids = append(ids, idString(it[idField]))
		}
		hasNext, _ := r.json["has_next"].(bool)
		if want := page*pageSize < total; hasNext != want {
			t.Fatalf("%s page %d: has_next %v, want %v", path, page, hasNext, want)
		}
		if !hasNext {
			break
		}
	}
	return ids, total
}

func TestInventoryPaginationWalk(t *testing.T) {
	e := startEnv(t, envOptions{})
	for _, c := range []struct {
		svc, idField string
		min          int
	}{{"REWIND", "id_auto", 300}, {"NOS", "id_auto", 200}, {"NLT", "id_offerta", 60}} {
		ids, total := walk(t, e, "/dealer/"+c.svc+"/listing", keyAlpha, c.idField, 37)
		if total < c.min || len(ids) != total {
			t.Errorf("%s: total %d, walked %d, want >= %d", c.svc, total, len(ids), c.min)
		}
		seen := map[string]bool{}
		for _, id := range ids {
			if seen[id] {
				t.Errorf("%s: duplicate %s", c.svc, id)
			}
			seen[id] = true
		}
	}
	r := e.get("/dealer/REWIND/listing?page=100000", keyAlpha)
	if len(r.items()) != 0 || r.json["has_next"] != false {
		t.Errorf("page past the end: %s", r.body)
	}
}

func TestInventoryFilters(t *testing.T) {
	e := startEnv(t, envOptions{})
	for _, ct := range []string{"auto", "vcom", "vind"} {
		r := e.get("/dealer/REWIND/listing?page_size=100&catalog_type="+ct, keyAlpha)
		if r.num("total") == 0 {
			t.Errorf("no %s vehicles", ct)
		}
		for _, it := range r.items() {
			if it["catalog_type"] != ct {
				t.Errorf("catalog_type=%s returned %v", ct, it["catalog_type"])
			}
		}
	}
	// Upfits: every vcom/vind item carries a valid selection; collect slugs.
	slugs := map[string]bool{}
	for _, svc := range []string{"REWIND", "NOS"} {
		for _, ct := range []string{"vcom", "vind"} {
			r := e.get("/dealer/"+svc+"/listing?page_size=100&catalog_type="+ct, keyAlpha)
			for _, it := range r.items() {
				checkUpfits(t, it)
				ups, _ := it["professional_upfits"].([]any)
				for _, u := range ups {
					slugs[u.(map[string]any)["slug"].(string)] = true
				}
			}
		}
	}
	if len(slugs) < 3 || !slugs["altro"] {
		t.Fatalf("upfit slugs %v: want several, including altro", keys(slugs))
	}
	for slug := range slugs {
		r := e.get("/dealer/REWIND/listing?page_size=100&professional_upfit="+slug, keyAlpha)
		for _, it := range r.items() {
			found := false
			for _, u := range it["professional_upfits"].([]any) {
				if u.(map[string]any)["slug"] == slug {
					found = true
				}
			}
			if !found {
				t.Errorf("professional_upfit=%s returned an item without it", slug)
			}
		}
	}
	// q: every returned item matches every word.
	r := e.get("/dealer/REWIND/listing?page_size=100&q=fiat", keyAlpha)
	if r.num("total") == 0 {
		t.Fatal("q=fiat found nothing")
	}
	for _, it := range r.items() {
		text := strings.ToLower(fmt.Sprint(it["marca"], " ", it["modello"], " ", it["allestimento"]))
		if !strings.Contains(text, "fiat") {
			t.Errorf("q=fiat returned %s", text)
		}
	}
	all := e.get("/dealer/REWIND/listing", keyAlpha).num("total")
	if r.num("total") >= all {
		t.Errorf("q did not filter: %d of %d", r.num("total"), all)
	}
	if r := e.get("/dealer/REWIND/listing?q=zzzznotamake", keyAlpha); r.num("total") != 0 || len(r.items()) != 0 {
		t.Errorf("nonsense q matched %d", r.num("total"))
	}
	if r := e.get("/dealer/NLT/listing?q="+url.QueryEscape("fiat"), keyAlpha); r.status != 200 {
		t.Errorf("NLT q: %d", r.status)
	}
}

func checkUpfits(t *testing.T, it map[string]any) {
	t.Helper()
	ups, _ := it["professional_upfits"].([]any)
	if len(ups) == 0 {
		return
	}
	primaries := 0
	var primary map[string]any
	for _, u := range ups {
		m := u.(map[string]any)
		if m["is_primary"] == true {
			primaries++
			primary = m
		}
		if m["label"] == "Altro" && m["slug"] != "altro" {
			t.Errorf("Altro with slug %v", m["slug"])
		}
		if strings.EqualFold(fmt.Sprint(m["label"]), "altro") && m["label"] != "Altro" {
			t.Errorf("Altro label not canonical: %v", m["label"])
		}
	}
	if primaries != 1 {
		t.Errorf("%d primary upfits", primaries)
	}
	if !reflect.DeepEqual(it["primary_professional_upfit"], primary) {
		t.Errorf("primary_professional_upfit %v != primary item %v", it["primary_professional_upfit"], primary)
	}
}

func TestInventoryDetails(t *testing.T) {
	e := startEnv(t, envOptions{})
	checked := 0
	for _, svc := range []string{"REWIND", "NOS"} {
		for _, ct := range []string{"auto", "vcom", "vind"} {
			r := e.get("/dealer/"+svc+"/listing?page_size=5&catalog_type="+ct, keyAlpha)
			for _, it := range r.items() {
				d := e.get("/dealer/"+svc+"/details?id_auto="+it["id_auto"].(string), keyAlpha)
				if d.status != 200 {
					t.Fatalf("details: %d %s", d.status, d.body)
				}
				v, _ := d.json["vehicle"].(map[string]any)
				if d.json["service"] != svc || v == nil || d.json["offer"] != nil {
					t.Fatalf("envelope: %s", d.body)
				}
				if v["id_auto"] != it["id_auto"] || v["marca"] != it["marca"] {
					t.Errorf("detail differs from listing item")
				}
				if !reflect.DeepEqual(v["accessori_serie"], v["accessori_serie_json"]) {
					t.Errorf("accessori_serie_json != accessori_serie")
				}
				checkUpfits(t, v)
				checked++
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d details checked", checked)
	}
	// Upper-case UUIDs are the same vehicle.
	r := e.get("/dealer/REWIND/listing?page_size=1", keyAlpha)
	id := r.items()[0]["id_auto"].(string)
	if d := e.get("/dealer/REWIND/details?id_auto="+strings.ToUpper(id), keyAlpha); d.status != 200 {
		t.Errorf("upper-case id_auto: %d", d.status)
	}
	// A REWIND vehicle is not a NOS vehicle.
	if d := e.get("/dealer/NOS/details?id_auto="+id, keyAlpha); d.status != 404 || d.code() != "vehicle_not_found" {
		t.Errorf("REWIND id under NOS: %d %s", d.status, d.code())
	}
	// NLT offers.
	o := e.get("/dealer/NLT/listing?page_size=3", keyAlpha)
	for _, it := range o.items() {
		if _, has := it["id_auto"]; has {
			t.Error("NLT item with id_auto")
		}
		d := e.get(fmt.Sprintf("/dealer/NLT/details?id_offerta=%d", int64(it["id_offerta"].(float64))), keyAlpha)
		off, _ := d.json["offer"].(map[string]any)
		if d.status != 200 || off == nil || d.json["vehicle"] != nil {
			t.Fatalf("offer detail: %d %s", d.status, d.body)
		}
		if qs, _ := off["quotazioni"].([]any); len(qs) == 0 {
			t.Error("offer without quotazioni")
		}
	}
	// Mutually exclusive identifiers.
	if d := e.get("/dealer/NLT/details?id_offerta=1&id_auto="+id, keyAlpha); d.status != 422 {
		t.Errorf("both identifiers: %d", d.status)
	}
}

// TestConfirmedEquipmentOnly: optionals and packages are a subset of the
// version catalogue confirmed for the vehicle; some vehicles have none.
func TestConfirmedEquipmentOnly(t *testing.T) {
	e := startEnv(t, envOptions{})
	r := e.get("/dealer/REWIND/listing?page_size=60", keyAlpha)
	emptyOpt, withOpt := 0, 0
	for _, it := range r.items() {
		d := e.get("/dealer/REWIND/details?id_auto="+it["id_auto"].(string), keyAlpha)
		v := d.json["vehicle"].(map[string]any)
		opts, _ := v["accessori_opzionali"].([]any)
		serie, _ := v["accessori_serie"].([]any)
		if len(serie) == 0 {
			t.Errorf("vehicle without standard equipment")
		}
		if len(opts) == 0 {
			emptyOpt++
		} else {
			withOpt++
		}
	}
	if emptyOpt == 0 || withOpt == 0 {
		t.Errorf("want vehicles with and without confirmed optionals, got %d/%d", withOpt, emptyOpt)
	}
}

func TestDealerIsolationInventory(t *testing.T) {
	e := startEnv(t, envOptions{})
	pairs := [][2]string{{keyAlpha, keyBeta}, {keyBeta, keyAlpha}, {keyGamma, keyAlpha}}
	for _, p := range pairs {
		own, other := p[0], p[1]
		for _, svc := range []string{"REWIND", "NOS"} {
			r := e.get("/dealer/"+svc+"/listing?page_size=10", other)
			for _, it := range r.items() {
				d := e.get("/dealer/"+svc+"/details?id_auto="+it["id_auto"].(string), own)
				if d.status != 404 || d.code() != "vehicle_not_found" {
					t.Errorf("%s read a vehicle of %s: %d", own, other, d.status)
				}
			}
		}
		r := e.get("/dealer/NLT/listing?page_size=10", other)
		for _, it := range r.items() {
			d := e.get(fmt.Sprintf("/dealer/NLT/details?id_offerta=%d", int64(it["id_offerta"].(float64))), own)
			if d.status != 404 || d.code() != "offer_not_found" {
				t.Errorf("%s read an offer of %s: %d", own, other, d.status)
			}
		}
	}
	// Listings of two dealers share no ids.
	a, _ := walk(t, e, "/dealer/REWIND/listing", keyAlpha, "id_auto", 100)
	b, _ := walk(t, e, "/dealer/REWIND/listing", keyBeta, "id_auto", 100)
	seen := map[string]bool{}
	for _, id := range a {
		seen[id] = true
	}
	for _, id := range b {
		if seen[id] {
			t.Errorf("id %s in both dealers' listings", id)
		}
	}
}

func idString(v any) string {
	if f, ok := v.(float64); ok {
		return fmt.Sprintf("%d", int64(f))
	}
	return fmt.Sprint(v)
}
