package contracttests

import (
	"fmt"
	"net/url"
	"reflect"
	"slices"
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
		// A Bearer credential without a token sends no key, as an empty
		// X-Api-Key does (contract 5.5: missing key; typically an unset
		// key variable): missing_api_key under either header.
		{"bearer without token", []string{"Authorization: Bearer"}, 401, "missing_api_key"},
		{"bearer lowercase without token", []string{"Authorization: bearer"}, 401, "missing_api_key"},
		{"bearer token not separated by a space", []string{"Authorization: Bearer\tdemo-key-alpha"}, 401, "invalid_api_key"},
		{"bearer followed by another word", []string{"Authorization: Bearerdemo-key-alpha"}, 401, "invalid_api_key"},
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
			// RFC 6750 3.1: no error code when the request carries no
			// credential, error="invalid_token" when one was refused.
			if c.status == 401 {
				challenge := r.header.Get("WWW-Authenticate")
				if refused := strings.Contains(challenge, `error="invalid_token"`); refused != (c.code != "missing_api_key") {
					t.Errorf("WWW-Authenticate %q for %s", challenge, c.code)
				}
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
		if r.status != 405 || r.header.Get("Allow") != "GET, HEAD" || r.code() != "method_not_allowed" {
			t.Errorf("%s: got %d %q allow=%q", m, r.status, r.code(), r.header.Get("Allow"))
		}
	}
}

func TestInventoryBounds(t *testing.T) {
	e := startEnv(t, envOptions{})
	for _, svc := range []string{"REWIND", "NOS", "NLT"} {
		base := "/dealer/" + svc + "/listing"
		def := e.get(base, keyAlpha)
		total := def.num("total")
		if def.status != 200 || total < 60 {
			t.Fatalf("%s defaults: %d total %d", svc, def.status, total)
		}
		if def.num("page") != 1 || def.num("page_size") != 20 || len(def.items()) != 20 || def.json["has_next"] != true {
			t.Errorf("%s defaults: page %d size %d items %d has_next %v", svc, def.num("page"), def.num("page_size"), len(def.items()), def.json["has_next"])
		}
		ok := []string{"?page=1", "?page=100000", "?page=2147483647", "?q=fiat"}
		if svc != "NLT" {
			ok = append(ok, "?catalog_type=auto", "?catalog_type=vcom", "?catalog_type=vind", "?professional_upfit="+strings.Repeat("a", 80),
				"?catalog_type=vind&professional_upfit=gru", "?catalog_type=vcom&professional_upfit=altro")
		}
		for _, q := range ok {
			if r := e.get(base+q, keyAlpha); r.status != 200 {
				t.Errorf("%s %s: %d %s", svc, q, r.status, r.body)
			}
		}
		for _, q := range []string{"?page=100000", "?page=2147483647"} {
			if r := e.get(base+q, keyAlpha); len(r.items()) != 0 || r.json["has_next"] != false || r.num("total") != total {
				t.Errorf("%s %s: past the end: %.300s", svc, q, r.body)
			}
		}
		// page_size is honoured exactly, page_size=1 included.
		for _, size := range []int{1, 2, 37, 100} {
			r := e.get(fmt.Sprintf("%s?page_size=%d", base, size), keyAlpha)
			if r.status != 200 || len(r.items()) != min(size, total) || r.num("page_size") != size || r.num("total") != total || r.json["has_next"] != (size < total) {
				t.Errorf("%s page_size=%d: %d, %d items, page_size %d, total %d (want %d), has_next %v",
					svc, size, r.status, len(r.items()), r.num("page_size"), r.num("total"), total, r.json["has_next"])
			}
		}
		bad := map[string]string{
			"?page=0": "page", "?page=-1": "page", "?page=x": "page", "?page=2147483648": "page",
			"?page_size=0": "page_size", "?page_size=101": "page_size", "?page_size=1.5": "page_size",
			"?catalog_type=suv": "catalog_type", "?professional_upfit=" + strings.Repeat("a", 81): "professional_upfit",
			"?professional_upfit=": "professional_upfit", "?professional_upfit=Gru": "professional_upfit", "?professional_upfit=a--b": "professional_upfit",
			"?page=1&page=2": "page", "?q=" + strings.Repeat("x", 201): "q",
		}
		if svc == "NLT" {
			// README: catalog_type and professional_upfit are REWIND/NOS only.
			for _, q := range []string{"?catalog_type=auto", "?catalog_type=vcom", "?catalog_type=vind"} {
				bad[q] = "catalog_type"
			}
			bad["?professional_upfit=gru"] = "professional_upfit"
			bad["?professional_upfit=altro"] = "professional_upfit"
		} else {
			// README: professional_upfit with catalog_type=auto is a 422.
			bad["?catalog_type=auto&professional_upfit=gru"] = "professional_upfit"
			bad["?professional_upfit=altro&catalog_type=auto"] = "professional_upfit"
		}
		for q, field := range bad {
			r := e.get(base+q, keyAlpha)
			if r.status != 422 || r.code() != "validation_error" || !slices.Contains(problemFields(r), field) {
				t.Errorf("%s %.60s: got %d %q fields %v, want 422 validation_error on %s", svc, q, r.status, r.code(), problemFields(r), field)
			}
		}
	}
}

// problemFields returns the errors[].field values of a problem body.
func problemFields(r *resp) []string {
	raw, _ := r.json["errors"].([]any)
	var out []string
	for _, e := range raw {
		m, _ := e.(map[string]any)
		f, _ := m["field"].(string)
		out = append(out, f)
	}
	return out
}

// walkItems fetches every page of a listing (page_size 100) and returns
// all its items in order and the total the edge announced.
func walkItems(t *testing.T, e *env, path, key string) ([]map[string]any, int) {
	t.Helper()
	var items []map[string]any
	total := -1
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	for page := 1; page < 1000; page++ {
		r := e.get(fmt.Sprintf("%s%spage=%d&page_size=100", path, sep, page), key)
		if r.status != 200 {
			t.Fatalf("%s page %d: %d %s", path, page, r.status, r.body)
		}
		if total == -1 {
			total = r.num("total")
		}
		items = append(items, r.items()...)
		if r.json["has_next"] != true {
			break
		}
	}
	return items, total
}

// upfitSlugs returns the professional_upfits[].slug of an item.
func upfitSlugs(it map[string]any) []string {
	var out []string
	ups, _ := it["professional_upfits"].([]any)
	for _, u := range ups {
		m, _ := u.(map[string]any)
		s, _ := m["slug"].(string)
		out = append(out, s)
	}
	return out
}

// matchesInventoryQ applies the contract's q (text search over make,
// model and version): every word of q occurs, case-insensitively, in
// marca, modello or allestimento.
func matchesInventoryQ(it map[string]any, q string) bool {
	fields := []string{}
	for _, f := range []string{"marca", "modello", "allestimento"} {
		s, _ := it[f].(string)
		fields = append(fields, strings.ToLower(s))
	}
	for _, w := range strings.Fields(strings.ToLower(q)) {
		if !slices.ContainsFunc(fields, func(f string) bool { return strings.Contains(f, w) }) {
			return false
		}
	}
	return true
}

// checkInventoryQ lists path with q and checks the answer against the
// whole listing all: exactly the matching items, total < all when
// mustFilter; the item with id (if not "") is among them.
func checkInventoryQ(t *testing.T, e *env, path string, all []map[string]any, idField, q, id string) {
	t.Helper()
	want := 0
	for _, it := range all {
		if matchesInventoryQ(it, q) {
			want++
		}
	}
	got, total := walkItems(t, e, path+"?q="+url.QueryEscape(q), keyAlpha)
	if total != want || len(got) != want {
		t.Errorf("%s q=%q: total %d (%d items), want %d of %d", path, q, total, len(got), want, len(all))
	}
	if want == 0 || want >= len(all) {
		t.Errorf("%s q=%q: a bad probe, %d of %d items match", path, q, want, len(all))
	}
	found := id == ""
	for _, it := range got {
		if !matchesInventoryQ(it, q) {
			t.Errorf("%s q=%q returned %v %v %v", path, q, it["marca"], it["modello"], it["allestimento"])
		}
		if idString(it[idField]) == id {
			found = true
		}
	}
	if !found {
		t.Errorf("%s q=%q: the probed item %s is missing", path, q, id)
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
	for _, svc := range []string{"REWIND", "NOS"} {
		base := "/dealer/" + svc + "/listing"
		all, total := walkItems(t, e, base, keyAlpha)
		if len(all) != total || total < 200 {
			t.Fatalf("%s: walked %d of %d", svc, len(all), total)
		}
		// catalog_type: exactly the vehicles of that catalog; the three
		// partition the listing.
		perCat := map[string]int{}
		for _, it := range all {
			perCat[fmt.Sprint(it["catalog_type"])]++
		}
		sum := 0
		for _, ct := range []string{"auto", "vcom", "vind"} {
			got, n := walkItems(t, e, base+"?catalog_type="+ct, keyAlpha)
			if perCat[ct] == 0 || n != perCat[ct] || len(got) != n {
				t.Errorf("%s catalog_type=%s: total %d (%d items), listing has %d", svc, ct, n, len(got), perCat[ct])
			}
			for _, it := range got {
				if it["catalog_type"] != ct {
					t.Errorf("%s catalog_type=%s returned %v", svc, ct, it["catalog_type"])
				}
			}
			sum += n
		}
		if sum != total {
			t.Errorf("%s: catalog_type totals sum to %d of %d", svc, sum, total)
		}
		// Upfits: every vcom/vind item carries a valid selection, cars none.
		perSlug := map[string]int{}
		perCatSlug := map[[2]string]int{}
		for _, it := range all {
			checkUpfits(t, it)
			slugs := upfitSlugs(it)
			if len(slugs) > 0 && it["catalog_type"] == "auto" {
				t.Errorf("%s: car %v with upfits %v", svc, it["id_auto"], slugs)
			}
			for _, s := range slugs {
				perSlug[s]++
				perCatSlug[[2]string{fmt.Sprint(it["catalog_type"]), s}]++
			}
		}
		if len(perSlug) < 3 || perSlug["altro"] == 0 {
			t.Fatalf("%s: upfit slugs %v: want several, including altro", svc, perSlug)
		}
		// professional_upfit: for every slug seen on the service, exactly
		// the vehicles carrying it (total > 0), alone and with catalog_type.
		for slug, n := range perSlug {
			got, tot := walkItems(t, e, base+"?professional_upfit="+slug, keyAlpha)
			if tot == 0 || tot != n || len(got) != n {
				t.Errorf("%s professional_upfit=%s: total %d (%d items), %d vehicles carry it", svc, slug, tot, len(got), n)
			}
			for _, it := range got {
				if !slices.Contains(upfitSlugs(it), slug) {
					t.Errorf("%s professional_upfit=%s returned %v with %v", svc, slug, it["id_auto"], upfitSlugs(it))
				}
			}
			for _, ct := range []string{"vcom", "vind"} {
				got, tot := walkItems(t, e, base+"?catalog_type="+ct+"&professional_upfit="+slug, keyAlpha)
				if want := perCatSlug[[2]string{ct, slug}]; tot != want || len(got) != want {
					t.Errorf("%s catalog_type=%s&professional_upfit=%s: total %d, want %d", svc, ct, slug, tot, want)
				}
				for _, it := range got {
					if it["catalog_type"] != ct || !slices.Contains(upfitSlugs(it), slug) {
						t.Errorf("%s catalog_type=%s&professional_upfit=%s returned %v %v", svc, ct, slug, it["catalog_type"], upfitSlugs(it))
					}
				}
			}
		}
		if r := e.get(base+"?professional_upfit=no-such-upfit", keyAlpha); r.status != 200 || r.num("total") != 0 || len(r.items()) != 0 {
			t.Errorf("%s unknown upfit: %d total %d", svc, r.status, r.num("total"))
		}
		// q over make, model and version (trim): exactly the matching
		// vehicles, each word possibly in a different field.
		probe := all[len(all)/2]
		for _, it := range all {
			if it["catalog_type"] == "vind" {
				probe = it
				break
			}
		}
		id := probe["id_auto"].(string)
		trim, _ := probe["allestimento"].(string)
		if trim == "" {
			t.Fatalf("%s: probe %s without allestimento", svc, id)
		}
		checkInventoryQ(t, e, base, all, "id_auto", "fiat", "")
		checkInventoryQ(t, e, base, all, "id_auto", probe["modello"].(string), id)
		checkInventoryQ(t, e, base, all, "id_auto", trim, id)
		checkInventoryQ(t, e, base, all, "id_auto", probe["marca"].(string)+" "+strings.Fields(trim)[0], id)
		checkInventoryQ(t, e, base, all, "id_auto", "  "+strings.ToUpper(probe["modello"].(string))+"  ", id)
		if r := e.get(base+"?q=zzzznotamake", keyAlpha); r.num("total") != 0 || len(r.items()) != 0 {
			t.Errorf("%s: nonsense q matched %d", svc, r.num("total"))
		}
	}
	// NLT: q over make, model and version of the offers.
	all, total := walkItems(t, e, "/dealer/NLT/listing", keyAlpha)
	if len(all) != total || total < 60 {
		t.Fatalf("NLT: walked %d of %d", len(all), total)
	}
	probe := all[len(all)/2]
	id := idString(probe["id_offerta"])
	version, _ := probe["allestimento"].(string)
	if version == "" {
		t.Fatalf("NLT probe %s without allestimento", id)
	}
	checkInventoryQ(t, e, "/dealer/NLT/listing", all, "id_offerta", probe["marca"].(string), id)
	checkInventoryQ(t, e, "/dealer/NLT/listing", all, "id_offerta", probe["modello"].(string), id)
	checkInventoryQ(t, e, "/dealer/NLT/listing", all, "id_offerta", version, id)
	if r := e.get("/dealer/NLT/listing?q=zzzznotamake", keyAlpha); r.status != 200 || r.num("total") != 0 || len(r.items()) != 0 {
		t.Errorf("NLT: nonsense q: %d total %d", r.status, r.num("total"))
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
