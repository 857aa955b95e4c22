package fake

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake/corpus"
)

// get serves one GET request through the handler, without a network.
func get(t testing.TB, s *Server, uri string) (int, []byte) {
	t.Helper()
	return do(s, "GET", uri)
}

func do(s *Server, method, uri string) (int, []byte) {
	var req fasthttp.Request
	req.Header.SetMethod(method)
	req.SetRequestURI(uri)
	var ctx fasthttp.RequestCtx
	ctx.Init(&req, nil, nil)
	s.Handler()(&ctx)
	return ctx.Response.StatusCode(), append([]byte(nil), ctx.Response.Body()...)
}

func getJSON(t testing.TB, s *Server, uri string, out any) {
	t.Helper()
	st, body := get(t, s, uri)
	if st != 200 {
		t.Fatalf("%s: status %d: %s", uri, st, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		t.Fatalf("%s: %v", uri, err)
	}
}

func allVehicles(t testing.TB, s *Server, dealer int64, svc string) []upstream.Vehicle {
	t.Helper()
	var pg upstream.VehiclePage
	getJSON(t, s, fmt.Sprintf("/inventory/v1/dealers/%d/vehicles?service=%s&page_size=1000", dealer, svc), &pg)
	if pg.Total != len(pg.Items) {
		t.Fatalf("total %d, items %d", pg.Total, len(pg.Items))
	}
	return pg.Items
}

func allOffers(t testing.TB, s *Server, dealer int64) []upstream.Offer {
	t.Helper()
	var pg upstream.OfferPage
	getJSON(t, s, fmt.Sprintf("/inventory/v1/dealers/%d/offers?page_size=1000", dealer), &pg)
	return pg.Items
}

// dumpURIs lists requests whose answers together cover all generated data.
func dumpURIs(s *Server) []string {
	var uris []string
	for _, k := range keySpecs() {
		uris = append(uris, "/dealers/v1/keys/"+HashKey(k.Key))
	}
	var codes []string
	for c := range s.data.versions {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	for _, c := range codes {
		uris = append(uris, "/catalog/v1/versions/"+c+"/equipment")
	}
	for _, d := range []int64{101, 102, 103} {
		uris = append(uris,
			fmt.Sprintf("/dealers/v1/dealers/%d", d),
			fmt.Sprintf("/inventory/v1/dealers/%d/vehicles?service=REWIND&page_size=1000", d),
			fmt.Sprintf("/inventory/v1/dealers/%d/vehicles?service=NOS&page_size=1000", d),
			fmt.Sprintf("/inventory/v1/dealers/%d/offers?page_size=1000", d))
		var ids []string
		for id := range s.data.dealers[d].vehicles {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			uris = append(uris, fmt.Sprintf("/media/v1/dealers/%d/vehicles/%s", d, id))
		}
	}
	return uris
}

func TestDeterminism(t *testing.T) {
	a, b := NewServer(Options{}), NewServer(Options{Seed: DefaultSeed})
	uris := dumpURIs(a)
	if len(uris) < 800 {
		t.Fatalf("only %d URIs", len(uris))
	}
	for _, u := range uris {
		sa, ba := get(t, a, u)
		sb, bb := get(t, b, u)
		if sa != 200 || sb != 200 || !bytes.Equal(ba, bb) {
			t.Fatalf("%s: %d/%d, identical %v", u, sa, sb, bytes.Equal(ba, bb))
		}
	}
	c := NewServer(Options{Seed: 7})
	_, ba := get(t, a, "/inventory/v1/dealers/101/vehicles?service=REWIND")
	_, bc := get(t, c, "/inventory/v1/dealers/101/vehicles?service=REWIND")
	if bytes.Equal(ba, bc) {
		t.Error("another seed gave the same data")
	}
}

var (
	uuidV4   = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	slugRE   = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	cdnURLRE = regexp.MustCompile(`^https://cdn\.example-dealer-media\.it/`)
)

func TestInventoryData(t *testing.T) {
	s := NewServer(Options{})
	want := map[int64][3]int{101: {330, 215, 64}, 102: {80, 40, 20}, 103: {60, 30, 20}}
	ids := map[string]int64{}
	stats := map[string]int{}
	for d, n := range want {
		for si, svc := range []string{"REWIND", "NOS"} {
			vs := allVehicles(t, s, d, svc)
			if len(vs) != n[si] {
				t.Errorf("%d %s: %d vehicles, want %d", d, svc, len(vs), n[si])
			}
			cats := map[string]int{}
			for i := range vs {
				v := &vs[i]
				cats[v.CatalogType]++
				if other, dup := ids[v.IDAuto]; dup {
					t.Errorf("id %s of %d and %d", v.IDAuto, other, d)
				}
				ids[v.IDAuto] = d
				checkVehicle(t, s, v, d, svc, stats)
			}
			for _, ct := range []string{"auto", "vcom", "vind"} {
				if cats[ct] == 0 {
					t.Errorf("%d %s: no %s vehicles", d, svc, ct)
				}
			}
		}
		offers := allOffers(t, s, d)
		if len(offers) != n[2] {
			t.Errorf("%d: %d offers, want %d", d, len(offers), n[2])
		}
		slugs := map[string]bool{}
		for _, o := range offers {
			if o.DealerID != d || len(o.Quotations) < 4 || !slugRE.MatchString(o.Slug) || slugs[o.Slug] || o.Make == "" || o.Model == "" || o.Version == "" {
				t.Errorf("bad offer %+v", o)
			}
			slugs[o.Slug] = true
			for _, q := range o.Quotations {
				if q.Months < 24 || q.KmPerYear < 10000 || q.MonthlyFee <= 0 || q.SourceRateID == "" {
					t.Errorf("bad quotation %+v", q)
				}
			}
		}
	}
	for _, k := range []string{"no optionals", "optionals", "no packages", "packages", "several upfits", "altro alias", "podcast", "video", "nos priced", "nos unpriced", "upfits vcom", "no upfits vcom"} {
		if stats[k] == 0 {
			t.Errorf("no vehicle with %s", k)
		}
	}
	t.Logf("stats %v", stats)
}

func checkVehicle(t *testing.T, s *Server, v *upstream.Vehicle, d int64, svc string, stats map[string]int) {
	t.Helper()
	if v.DealerID != d || v.Service != svc || !uuidV4.MatchString(v.IDAuto) || v.Make == "" || v.Model == "" || v.Trim == "" {
		t.Errorf("bad vehicle %s %s %s %s", v.IDAuto, v.Make, v.Model, v.Trim)
	}
	if !cdnURLRE.MatchString(v.CoverURL) || len(v.MediaURLs) < 3 || v.UpdatedAt.IsZero() || v.UpdatedAt.Year() < 2024 {
		t.Errorf("%s: cover %q, %d media urls, updated %v", v.IDAuto, v.CoverURL, len(v.MediaURLs), v.UpdatedAt)
	}
	ver := s.data.versions[v.VersionCode]
	if ver == nil {
		t.Fatalf("%s: unknown version %q", v.IDAuto, v.VersionCode)
	}
	inCatalogue := func(code string, items []upstream.EquipmentItem) bool {
		for _, e := range items {
			if e.Code == code {
				return true
			}
		}
		return false
	}
	for _, c := range v.ConfirmedOptionals {
		if !inCatalogue(c, ver.eq.Optionals) {
			t.Errorf("%s: confirmed optional %s not in the version catalogue", v.IDAuto, c)
		}
	}
	if len(v.ConfirmedOptionals) >= len(ver.eq.Optionals) {
		t.Errorf("%s: confirms the whole catalogue", v.IDAuto)
	}
	for _, c := range v.ConfirmedPackages {
		found := false
		for _, p := range ver.eq.Packages {
			found = found || p.Code == c
		}
		if !found {
			t.Errorf("%s: confirmed package %s not in the version catalogue", v.IDAuto, c)
		}
	}
	if len(v.RawVersionOptionals) != len(ver.eq.Optionals) || len(v.SourceIDs) == 0 || len(v.LookupCascade) == 0 ||
		!strings.HasPrefix(v.TechDataDir, "/mnt/techdata/") || v.RenderPayload == nil || v.SEOPayload == nil {
		t.Errorf("%s: internal noise missing", v.IDAuto)
	}
	if svc == "REWIND" && (v.SalePrice == nil || *v.SalePrice <= 0) {
		t.Errorf("%s: REWIND without price", v.IDAuto)
	}
	if svc == "NOS" {
		if v.SalePrice != nil {
			stats["nos priced"]++
		} else {
			stats["nos unpriced"]++
		}
	}
	switch v.CatalogType {
	case "auto":
		if len(v.Upfits) != 0 {
			t.Errorf("%s: car with upfits", v.IDAuto)
		}
	case "vind":
		if len(v.Upfits) == 0 {
			t.Errorf("%s: vind without upfits", v.IDAuto)
		}
	case "vcom":
		if len(v.Upfits) == 0 {
			stats["no upfits vcom"]++
		} else {
			stats["upfits vcom"]++
		}
	}
	if len(v.Upfits) > 0 {
		primaries := 0
		seen := map[string]bool{}
		for _, u := range v.Upfits {
			if u.Primary {
				primaries++
			}
			if !slugRE.MatchString(u.Slug) || seen[u.Slug] || u.Code == "" || u.Label == "" || u.Family == "" || u.SourceID == "" {
				t.Errorf("%s: bad upfit %+v", v.IDAuto, u)
			}
			seen[u.Slug] = true
			if u.Slug == "altro" && u.Label != "Altro" || u.Slug != "altro" && u.DealerAlias != "" {
				t.Errorf("%s: bad alias %+v", v.IDAuto, u)
			}
			if u.DealerAlias != "" {
				stats["altro alias"]++
			}
		}
		if primaries != 1 {
			t.Errorf("%s: %d primary upfits", v.IDAuto, primaries)
		}
		if len(v.Upfits) > 1 {
			stats["several upfits"]++
		}
	}
	if len(v.ConfirmedOptionals) == 0 {
		stats["no optionals"]++
	} else {
		stats["optionals"]++
	}
	if len(v.ConfirmedPackages) == 0 {
		stats["no packages"]++
	} else {
		stats["packages"]++
	}
	var m upstream.Media
	getJSON(t, s, fmt.Sprintf("/media/v1/dealers/%d/vehicles/%s", d, v.IDAuto), &m)
	if (m.Podcast != nil) != v.HasPodcast || (m.Video != nil) != v.HasVideo {
		t.Errorf("%s: media %v/%v, flags %v/%v", v.IDAuto, m.Podcast != nil, m.Video != nil, v.HasPodcast, v.HasVideo)
	}
	if m.Podcast != nil {
		stats["podcast"]++
		if m.Podcast.AudioURL == "" || m.Podcast.TTSVoiceID == "" || m.Podcast.Transcript == "" {
			t.Errorf("%s: podcast %+v", v.IDAuto, m.Podcast)
		}
	}
	if m.Video != nil {
		stats["video"]++
		if m.Video.VideoURL == "" || m.Video.RenderJobID == "" {
			t.Errorf("%s: video %+v", v.IDAuto, m.Video)
		}
	}
}

func TestCatalog(t *testing.T) {
	s := NewServer(Options{})
	for code := range s.data.versions {
		var eq upstream.Equipment
		getJSON(t, s, "/catalog/v1/versions/"+code+"/equipment", &eq)
		if eq.VersionCode != code || len(eq.Standard) < 6 || len(eq.Optionals) < 4 || len(eq.Packages) < 1 || eq.TechDataDir == "" {
			t.Errorf("%s: %d/%d/%d", code, len(eq.Standard), len(eq.Optionals), len(eq.Packages))
		}
		for _, o := range eq.Optionals {
			if o.PriceEUR == nil || o.TechRef == "" {
				t.Errorf("%s: optional %+v", code, o)
			}
		}
	}
	if st, _ := get(t, s, "/catalog/v1/versions/NOPE/equipment"); st != 404 {
		t.Errorf("unknown version: %d", st)
	}
}

func TestKeysAndDealers(t *testing.T) {
	s := NewServer(Options{})
	cases := []struct {
		key     string
		dealer  int64
		status  string
		plan    string
		expired bool
	}{
		{"demo-key-alpha", 101, "active", "default", false},
		{"demo-key-beta", 102, "active", "default", false},
		{"demo-key-gamma", 103, "active", "default", false},
		{"demo-key-expired", 101, "active", "default", true},
		{"demo-key-orphan", 199, "active", "default", false},
		{"demo-key-limited", 101, "active", "limited", false},
		{"demo-key-revoked", 101, "revoked", "default", false},
		{"bench-key-000", 101, "active", "bench", false},
		{"bench-key-001", 102, "active", "bench", false},
		{"bench-key-049", 102, "active", "bench", false},
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			var k upstream.KeyRecord
			getJSON(t, s, "/dealers/v1/keys/"+HashKey(c.key), &k)
			expired := k.ExpiresAt != nil && k.ExpiresAt.Before(now)
			if k.DealerID != c.dealer || k.Status != c.status || k.Plan != c.plan || expired != c.expired || k.KeyID == "" {
				t.Errorf("got %+v", k)
			}
		})
	}
	for _, u := range []string{
		"/dealers/v1/keys/" + HashKey("bench-key-050"),
		"/dealers/v1/keys/" + HashKey("nope"),
		"/dealers/v1/keys/demo-key-alpha", // raw keys are not stored
		"/dealers/v1/keys/",
		"/dealers/v1/dealers/199",
		"/dealers/v1/dealers/abc",
		"/dealers/v1/dealers/-101",
	} {
		if st, _ := get(t, s, u); st != 404 {
			t.Errorf("%s: %d", u, st)
		}
	}
	if st, _ := get(t, s, "/dealers/v1/keys/"+strings.ToUpper(HashKey("demo-key-alpha"))); st != 200 {
		t.Errorf("upper-case hash: %d", st)
	}
	want := map[int64][4]string{
		101: {"Autosalone Alpha S.r.l.", "Alpha Motori", "Milano", "www.alphamotori.it"},
		102: {"Beta Car S.p.A.", "BetaCar", "Roma", "www.betacar.it"},
		103: {"Gamma Veicoli S.r.l.", "Gamma Auto", "Torino", "www.gammaauto.it"},
	}
	for id, w := range want {
		var d upstream.Dealer
		getJSON(t, s, fmt.Sprintf("/dealers/v1/dealers/%d", id), &d)
		if d.ID != id || d.Name != w[0] || d.BrandName != w[1] || d.City != w[2] || d.PrimaryDomain != w[3] || len(d.Province) != 2 ||
			d.CRMSourceID == "" || d.BrowserWidgetSecret == "" || d.BillingAccount == "" {
			t.Errorf("dealer %d: %+v", id, d)
		}
	}
	if len(DemoKeys) != 7 {
		t.Errorf("%d demo keys", len(DemoKeys))
	}
	DemoKeys[0].DealerID = 999 // the fake does not read the exported copy
	defer func() { DemoKeys = demoKeys() }()
	var k upstream.KeyRecord
	getJSON(t, NewServer(Options{}), "/dealers/v1/keys/"+HashKey("demo-key-alpha"), &k)
	if k.DealerID != 101 {
		t.Error("DemoKeys changes the fake")
	}
}

func TestListingFilters(t *testing.T) {
	s := NewServer(Options{})
	all := allVehicles(t, s, 101, "REWIND")
	matches := func(v upstream.Vehicle, q, ct, upfit string) bool {
		if ct != "" && v.CatalogType != ct {
			return false
		}
		if upfit != "" {
			found := false
			for _, u := range v.Upfits {
				found = found || u.Slug == upfit
			}
			if !found {
				return false
			}
		}
		text := []string{strings.ToLower(v.Make), strings.ToLower(v.Model), strings.ToLower(v.Trim)}
		return matchWords(strings.Fields(strings.ToLower(q)), text...)
	}
	cases := []struct {
		name, q, ct, upfit string
		wantNone           bool
	}{
		{name: "make", q: "fiat"},
		{name: "case-insensitive", q: "FiAt"},
		{name: "two words", q: "fiat ducato"},
		{name: "words across fields", q: "volkswagen life"},
		{name: "trim word", q: "hybrid"},
		{name: "substring", q: "sprint"},
		{name: "catalog auto", ct: "auto"},
		{name: "catalog vcom", ct: "vcom"},
		{name: "catalog vind", ct: "vind"},
		{name: "upfit", upfit: "furgone-isotermico"},
		{name: "upfit altro", upfit: "altro"},
		{name: "upfit and catalog", ct: "vind", upfit: "gru"},
		{name: "all three", q: "iveco", ct: "vind", upfit: "cassonato"},
		{name: "nonsense", q: "zzzznotamake", wantNone: true},
		{name: "upfit on cars", ct: "auto", upfit: "gru", wantNone: true},
		{name: "unknown catalog", ct: "suv", wantNone: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want []string
			for _, v := range all {
				if matches(v, c.q, c.ct, c.upfit) {
					want = append(want, v.IDAuto)
				}
			}
			var got []string
			total := -1
			for page := 1; page < 100; page++ {
				var pg upstream.VehiclePage
				uri := fmt.Sprintf("/inventory/v1/dealers/101/vehicles?service=REWIND&page=%d&page_size=13&q=%s&catalog_type=%s&upfit=%s",
					page, strings.ReplaceAll(c.q, " ", "+"), c.ct, c.upfit)
				getJSON(t, s, uri, &pg)
				if total == -1 {
					total = pg.Total
				} else if total != pg.Total {
					t.Fatal("total changed between pages")
				}
				for _, v := range pg.Items {
					got = append(got, v.IDAuto)
				}
				if len(pg.Items) < 13 {
					break
				}
			}
			if total != len(want) || strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("total %d, %d items; want %d", total, len(got), len(want))
			}
			if c.wantNone != (total == 0) {
				t.Errorf("total %d", total)
			}
			if !c.wantNone && total == len(all) {
				t.Errorf("filter matched everything")
			}
		})
	}
	// Offers: q over make, model and version.
	offers := allOffers(t, s, 101)
	var pg upstream.OfferPage
	getJSON(t, s, "/inventory/v1/dealers/101/offers?q=FIAT&page_size=1000", &pg)
	n := 0
	for _, o := range offers {
		if strings.EqualFold(o.Make, "fiat") {
			n++
		}
	}
	if pg.Total != n || n == 0 || len(pg.Items) != n {
		t.Errorf("offers q=fiat: %d, want %d", pg.Total, n)
	}
}

func TestPaginationAndOrder(t *testing.T) {
	s := NewServer(Options{})
	for _, svc := range []string{"REWIND", "NOS"} {
		all := allVehicles(t, s, 101, svc)
		for i := 1; i < len(all); i++ {
			a, b := all[i-1], all[i]
			if a.UpdatedAt.Before(b.UpdatedAt) || a.UpdatedAt.Equal(b.UpdatedAt) && a.IDAuto >= b.IDAuto {
				t.Fatalf("%s: not ordered at %d", svc, i)
			}
		}
		var walked []upstream.Vehicle
		for page := 1; ; page++ {
			var pg upstream.VehiclePage
			getJSON(t, s, fmt.Sprintf("/inventory/v1/dealers/101/vehicles?service=%s&page=%d&page_size=37", svc, page), &pg)
			if pg.Total != len(all) {
				t.Fatalf("total %d", pg.Total)
			}
			if len(pg.Items) == 0 {
				break
			}
			walked = append(walked, pg.Items...)
		}
		if len(walked) != len(all) {
			t.Fatalf("%s: walked %d of %d", svc, len(walked), len(all))
		}
		for i := range all {
			if walked[i].IDAuto != all[i].IDAuto {
				t.Fatalf("%s: page walk differs at %d", svc, i)
			}
		}
	}
	offers := allOffers(t, s, 101)
	for i := 1; i < len(offers); i++ {
		a, b := offers[i-1], offers[i]
		if a.UpdatedAt.Before(b.UpdatedAt) || a.UpdatedAt.Equal(b.UpdatedAt) && a.IDOfferta >= b.IDOfferta {
			t.Fatalf("offers not ordered at %d", i)
		}
	}
	cases := []struct {
		uri    string
		status int
		items  int
		total  int
	}{
		{"/inventory/v1/dealers/101/vehicles?service=REWIND", 200, 20, 330},
		{"/inventory/v1/dealers/101/vehicles?service=REWIND&page=17", 200, 10, 330},
		{"/inventory/v1/dealers/101/vehicles?service=REWIND&page=18", 200, 0, 330},
		{"/inventory/v1/dealers/101/vehicles?service=REWIND&page=9223372036854775807&page_size=1000", 200, 0, 330},
		{"/inventory/v1/dealers/101/vehicles?service=REWIND&page=9223372036854775807&q=fiat", 200, 0, -1},
		{"/inventory/v1/dealers/101/offers", 200, 20, 64},
		{"/inventory/v1/dealers/101/offers?page=4&page_size=20", 200, 4, 64},
		{"/inventory/v1/dealers/101/offers?page=99", 200, 0, 64},
		{"/inventory/v1/dealers/101/vehicles?service=REWIND&page=0", 400, 0, 0},
		{"/inventory/v1/dealers/101/vehicles?service=REWIND&page=x", 400, 0, 0},
		{"/inventory/v1/dealers/101/vehicles?service=REWIND&page_size=0", 400, 0, 0},
		{"/inventory/v1/dealers/101/vehicles?service=REWIND&page_size=1001", 400, 0, 0},
		{"/inventory/v1/dealers/101/vehicles", 400, 0, 0},
		{"/inventory/v1/dealers/101/vehicles?service=NLT", 400, 0, 0},
		{"/inventory/v1/dealers/199/vehicles?service=REWIND", 404, 0, 0},
		{"/inventory/v1/dealers/199/offers", 404, 0, 0},
	}
	for _, c := range cases {
		st, body := get(t, s, c.uri)
		if st != c.status {
			t.Errorf("%s: status %d: %s", c.uri, st, body)
			continue
		}
		if st != 200 {
			continue
		}
		var pg struct {
			Total int               `json:"total"`
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(body, &pg); err != nil {
			t.Fatal(err)
		}
		if len(pg.Items) != c.items || c.total >= 0 && pg.Total != c.total {
			t.Errorf("%s: total %d, %d items", c.uri, pg.Total, len(pg.Items))
		}
	}
}

func TestDetails(t *testing.T) {
	s := NewServer(Options{})
	alpha := allVehicles(t, s, 101, "REWIND")[:5]
	beta := allVehicles(t, s, 102, "NOS")[:5]
	for _, v := range alpha {
		var got upstream.Vehicle
		getJSON(t, s, "/inventory/v1/dealers/101/vehicles/"+v.IDAuto+"?service=REWIND", &got)
		if got.IDAuto != v.IDAuto || got.VersionCode != v.VersionCode {
			t.Errorf("detail differs from listing")
		}
		for _, u := range []string{
			"/inventory/v1/dealers/101/vehicles/" + strings.ToUpper(v.IDAuto),
			"/inventory/v1/dealers/101/vehicles/" + v.IDAuto,
		} {
			if st, _ := get(t, s, u); st != 200 {
				t.Errorf("%s: %d", u, st)
			}
		}
		for _, u := range []string{
			"/inventory/v1/dealers/101/vehicles/" + v.IDAuto + "?service=NOS",
			"/inventory/v1/dealers/102/vehicles/" + v.IDAuto,
			"/media/v1/dealers/102/vehicles/" + v.IDAuto,
		} {
			if st, _ := get(t, s, u); st != 404 {
				t.Errorf("%s: %d", u, st)
			}
		}
	}
	for _, v := range beta {
		if st, _ := get(t, s, "/inventory/v1/dealers/101/vehicles/"+v.IDAuto); st != 404 {
			t.Errorf("alpha reads a beta vehicle: %d", st)
		}
	}
	for _, o := range allOffers(t, s, 102)[:5] {
		var got upstream.Offer
		getJSON(t, s, fmt.Sprintf("/inventory/v1/dealers/102/offers/%d", o.IDOfferta), &got)
		if got.IDOfferta != o.IDOfferta || got.Slug != o.Slug {
			t.Errorf("offer detail differs")
		}
		if st, _ := get(t, s, fmt.Sprintf("/inventory/v1/dealers/101/offers/%d", o.IDOfferta)); st != 404 {
			t.Errorf("alpha reads a beta offer: %d", st)
		}
	}
	for _, u := range []string{
		"/inventory/v1/dealers/101/offers/abc",
		"/inventory/v1/dealers/101/offers/999999999",
		"/inventory/v1/dealers/101/vehicles/3f2504e0-4f89-41d3-9a0c-0305e82c3301",
		"/inventory/v1/dealers/101/vehicles/a%2Fb",
		"/inventory/v1/dealers/101/things",
		"/inventory/v1/dealers/101/vehicles/x/y",
		"/inventory/v2/dealers/101/offers",
		"/nothing/v1/x",
		"/",
	} {
		if st, _ := get(t, s, u); st != 404 {
			t.Errorf("%s: %d", u, st)
		}
	}
	if st, _ := do(s, "POST", "/inventory/v1/dealers/101/offers"); st != 405 {
		t.Errorf("POST: %d", st)
	}
}

func TestContent(t *testing.T) {
	s := NewServer(Options{})
	for _, ct := range upstream.ContentTypes {
		var got struct {
			Items []upstream.ContentRecord `json:"items"`
		}
		getJSON(t, s, "/content/v1/dealers/101/"+ct, &got)
		want := corpus.Filter(corpus.Records(101, ct), upstream.ContentFilter{})
		wb, _ := json.Marshal(want)
		gb, _ := json.Marshal(got.Items)
		if len(want) == 0 || !bytes.Equal(wb, gb) {
			t.Errorf("%s: %d records, want %d equal to the corpus", ct, len(got.Items), len(want))
		}
	}
	// Filters pass through unchanged.
	recs := corpus.Records(102, upstream.ContentFAQ)
	cat := ""
	for _, r := range recs {
		if r.Category != "" {
			cat = r.Category
			break
		}
	}
	f := upstream.ContentFilter{Q: "auto", Category: cat}
	want := corpus.Filter(recs, f)
	var got struct {
		Items []upstream.ContentRecord `json:"items"`
	}
	getJSON(t, s, "/content/v1/dealers/102/faq?q=auto&category="+strings.ReplaceAll(cat, " ", "%20"), &got)
	if len(got.Items) != len(want) {
		t.Errorf("filtered: %d, want %d", len(got.Items), len(want))
	}
	st, body := get(t, s, "/content/v1/dealers/101/faq?q=zzzznothing")
	if st != 200 || string(body) != `{"items":[]}` {
		t.Errorf("no match: %d %s", st, body)
	}
	for _, u := range []string{"/content/v1/dealers/101/blog", "/content/v1/dealers/199/faq", "/content/v1/dealers/101", "/content/v1/dealers/x/faq"} {
		if st, _ := get(t, s, u); st != 404 {
			t.Errorf("%s: %d", u, st)
		}
	}
}

func TestFaults(t *testing.T) {
	s := NewServer(Options{})
	key := "/dealers/v1/keys/" + HashKey("demo-key-alpha")
	inv := "/inventory/v1/dealers/101/offers?page_size=1"

	s.SetDown(upstream.SvcInventory, true)
	if st, _ := get(t, s, inv); st != 503 {
		t.Errorf("down: %d", st)
	}
	if st, _ := get(t, s, key); st != 200 {
		t.Errorf("dealers affected by inventory down: %d", st)
	}
	s.SetDown(upstream.SvcInventory, false)

	s.SetFailRate("", 1)
	for _, u := range []string{key, inv, "/catalog/v1/versions/x/equipment"} {
		if st, _ := get(t, s, u); st != 500 {
			t.Errorf("fail rate 1: %s: %d", u, st)
		}
	}
	s.SetFailRate("", 0.5)
	fails := 0
	for i := 0; i < 200; i++ {
		if st, _ := get(t, s, key); st == 500 {
			fails++
		}
	}
	if fails < 60 || fails > 140 {
		t.Errorf("fail rate 0.5: %d of 200", fails)
	}
	s.SetFailRate("", 0)
	s.SetFailRate(upstream.SvcDealers, 7) // clamped to 1
	if st, _ := get(t, s, key); st != 500 {
		t.Errorf("clamped: %d", st)
	}
	s.SetFailRate(upstream.SvcDealers, -1)
	if st, _ := get(t, s, key); st != 200 {
		t.Errorf("clamped: %d", st)
	}

	s.SetLatency(upstream.SvcCatalog, 40*time.Millisecond)
	start := time.Now()
	get(t, s, key)
	if d := time.Since(start); d > 30*time.Millisecond {
		t.Errorf("latency leaked to dealers: %v", d)
	}
	start = time.Now()
	get(t, s, "/catalog/v1/versions/x/equipment")
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Errorf("latency not applied: %v", d)
	}
	s.SetLatency("", 0)

	s.ResetCalls()
	for i := 0; i < 3; i++ {
		get(t, s, inv)
	}
	get(t, s, key)
	get(t, s, "/nothing/v1/x")
	if s.Calls(upstream.SvcInventory) != 3 || s.Calls(upstream.SvcDealers) != 1 || s.Calls(upstream.SvcMedia) != 0 || s.Calls("nothing") != 0 {
		t.Errorf("calls %d %d", s.Calls(upstream.SvcInventory), s.Calls(upstream.SvcDealers))
	}
	s.SetDown("", true)
	get(t, s, "/media/v1/dealers/101/vehicles/x")
	if s.Calls(upstream.SvcMedia) != 1 {
		t.Error("faulted calls not counted")
	}
	s.ResetCalls()
	if s.Calls(upstream.SvcInventory) != 0 {
		t.Error("ResetCalls")
	}

	o := NewServer(Options{Latency: 30 * time.Millisecond, FailRate: 1})
	start = time.Now()
	if st, _ := get(t, o, key); st != 500 || time.Since(start) < 30*time.Millisecond {
		t.Errorf("options: %d after %v", st, time.Since(start))
	}
}

// TestWithClient runs the upstream client against the fake on loopback.
func TestWithClient(t *testing.T) {
	s := NewServer(Options{})
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if addr != s.Addr() || !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("addr %q / %q", addr, s.Addr())
	}
	if _, err := s.Start("127.0.0.1:0"); err == nil {
		t.Error("second Start succeeded")
	}
	c, err := upstream.New(upstream.Options{BaseURL: "http://" + addr, Breaker: upstream.BreakerSettings{ConsecutiveFailures: 2, OpenFor: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	k, err := c.LookupKey(ctx, HashKey("demo-key-gamma"))
	if err != nil || k.DealerID != 103 {
		t.Fatalf("key: %+v %v", k, err)
	}
	if _, err := c.Dealer(ctx, 199); !errors.Is(err, upstream.ErrNotFound) {
		t.Errorf("dealer 199: %v", err)
	}
	pg, err := c.ListVehicles(ctx, 101, upstream.VehicleQuery{Service: "NOS", PageSize: 5, Q: "iveco daily", CatalogType: "vind"})
	if err != nil || pg.Total == 0 || len(pg.Items) == 0 {
		t.Fatalf("list: %d %v", pg.Total, err)
	}
	v, err := c.Vehicle(ctx, 101, "NOS", pg.Items[0].IDAuto)
	if err != nil || v.IDAuto != pg.Items[0].IDAuto {
		t.Fatalf("vehicle: %v", err)
	}
	if _, err := c.Equipment(ctx, 101, v.VersionCode); err != nil {
		t.Errorf("equipment: %v", err)
	}
	if _, err := c.VehicleMedia(ctx, 101, v.IDAuto); err != nil {
		t.Errorf("media: %v", err)
	}
	op, err := c.ListOffers(ctx, 102, upstream.OfferQuery{Page: 2, PageSize: 3})
	if err != nil || op.Total != 20 || len(op.Items) != 3 {
		t.Fatalf("offers: %d %v", op.Total, err)
	}
	if _, err := c.Offer(ctx, 102, op.Items[0].IDOfferta); err != nil {
		t.Errorf("offer: %v", err)
	}
	recs, err := c.Content(ctx, 101, upstream.ContentNews, upstream.ContentFilter{})
	if err != nil || len(recs) == 0 {
		t.Errorf("content: %d %v", len(recs), err)
	}
	if _, err := c.Content(ctx, 101, "blog", upstream.ContentFilter{}); !errors.Is(err, upstream.ErrNotFound) {
		t.Errorf("content blog: %v", err)
	}

	// An outage opens the breaker; calls stop reaching the fake.
	s.SetDown(upstream.SvcMedia, true)
	for i := 0; i < 2; i++ {
		if _, err := c.VehicleMedia(ctx, 101, v.IDAuto); !errors.Is(err, upstream.ErrUnavailable) {
			t.Fatalf("down: %v", err)
		}
	}
	before := s.Calls(upstream.SvcMedia)
	if _, err := c.VehicleMedia(ctx, 101, v.IDAuto); !errors.Is(err, upstream.ErrCircuitOpen) {
		t.Errorf("breaker: %v", err)
	}
	if s.Calls(upstream.SvcMedia) != before {
		t.Error("open breaker reached the fake")
	}

	// Close ends pending latencies promptly.
	s.SetLatency("", 10*time.Second)
	go func() {
		time.Sleep(50 * time.Millisecond)
		s.Close()
	}()
	start := time.Now()
	_, _ = c.Dealer(ctx, 101)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("close took %v", d)
	}
}

func BenchmarkListVehicles(b *testing.B) {
	s := NewServer(Options{})
	h := s.Handler()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var req fasthttp.Request
		req.SetRequestURI("/inventory/v1/dealers/101/vehicles?service=REWIND&page=2&page_size=20&q=fiat")
		var ctx fasthttp.RequestCtx
		for pb.Next() {
			ctx.Init(&req, nil, nil)
			h(&ctx)
		}
	})
}

// TestDemoKeysFile keeps configs/demo-keys.json (the documented list of
// demo keys) equal to the keys the fake serves.
func TestDemoKeysFile(t *testing.T) {
	b, err := os.ReadFile("../../configs/demo-keys.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Keys []struct {
			Key         string `json:"key"`
			DealerID    int64  `json:"dealer_id"`
			Description string `json:"description"`
		} `json:"keys"`
		BenchKeys struct {
			First string `json:"first"`
			Last  string `json:"last"`
		} `json:"bench_keys"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Keys) != len(DemoKeys) {
		t.Fatalf("configs/demo-keys.json lists %d keys, the fake has %d", len(doc.Keys), len(DemoKeys))
	}
	for i, k := range DemoKeys {
		got := doc.Keys[i]
		if got.Key != k.Key || got.DealerID != k.DealerID || got.Description != k.Description {
			t.Errorf("key %d: file %+v, fake %+v", i, got, k)
		}
	}
	if doc.BenchKeys.First != BenchKey(0) || doc.BenchKeys.Last != BenchKey(BenchKeys-1) {
		t.Errorf("bench keys %+v", doc.BenchKeys)
	}
}

// TestVehicleSummaryView: the listing's summary view has the same vehicles,
// totals and listing fields as the full view, without the detail-only
// fields and the rendering payloads; an unknown view is 400.
func TestVehicleSummaryView(t *testing.T) {
	s := NewServer(Options{})
	get := func(uri string) (int, upstream.VehiclePage, []byte) {
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI(uri)
		s.Handler()(&ctx)
		var p upstream.VehiclePage
		_ = json.Unmarshal(ctx.Response.Body(), &p)
		return ctx.Response.StatusCode(), p, append([]byte(nil), ctx.Response.Body()...)
	}
	for _, q := range []string{"service=REWIND&page=2&page_size=7", "service=NOS&catalog_type=vind&page_size=50", "service=REWIND&q=fiat"} {
		st1, full, fb := get("/inventory/v1/dealers/101/vehicles?" + q)
		st2, sum, sb := get("/inventory/v1/dealers/101/vehicles?" + q + "&view=summary")
		if st1 != 200 || st2 != 200 || full.Total != sum.Total || len(full.Items) != len(sum.Items) || len(full.Items) == 0 {
			t.Fatalf("%s: full %d/%d items %d, summary %d/%d items %d", q, st1, full.Total, len(full.Items), st2, sum.Total, len(sum.Items))
		}
		if len(sb)*3 > len(fb) {
			t.Errorf("%s: summary %d bytes, full %d: not much smaller", q, len(sb), len(fb))
		}
		for i := range full.Items {
			want := upstream.VehicleSummary(full.Items[i])
			wb, _ := json.Marshal(want)
			gb, _ := json.Marshal(sum.Items[i])
			if !bytes.Equal(wb, gb) {
				t.Fatalf("%s item %d: summary %s, want %s", q, i, gb, wb)
			}
			if len(sum.Items[i].SourceIDs) == 0 || sum.Items[i].TechDataDir == "" {
				t.Errorf("%s item %d: the summary lost the small internal fields the boundary tests rely on", q, i)
			}
		}
	}
	if st, _, _ := get("/inventory/v1/dealers/101/vehicles?service=REWIND&view=nope"); st != 400 {
		t.Errorf("unknown view: %d", st)
	}
}

// TestContentSummaryView: the content summary view has the same records in
// the same order as the full view, each as upstream.ContentSummary makes
// it, in far fewer bytes; filters still match the whole text; an unknown
// view is 400.
func TestContentSummaryView(t *testing.T) {
	s := NewServer(Options{})
	get := func(uri string) (int, []upstream.ContentRecord, []byte) {
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI(uri)
		s.Handler()(&ctx)
		var l struct {
			Items []upstream.ContentRecord `json:"items"`
		}
		_ = json.Unmarshal(ctx.Response.Body(), &l)
		return ctx.Response.StatusCode(), l.Items, append([]byte(nil), ctx.Response.Body()...)
	}
	for _, path := range []string{"101/news", "101/faq", "102/videos", "101/guides?q=garanzia", "103/podcasts"} {
		base := "/content/v1/dealers/" + path
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		st1, full, fb := get(base)
		st2, sum, sb := get(base + sep + "view=summary")
		if st1 != 200 || st2 != 200 || len(full) != len(sum) || len(full) == 0 {
			t.Fatalf("%s: full %d (%d records), summary %d (%d records)", path, st1, len(full), st2, len(sum))
		}
		if len(sb)*2 > len(fb) {
			t.Errorf("%s: summary %d bytes, full %d: not much smaller", path, len(sb), len(fb))
		}
		for i := range full {
			wb, _ := json.Marshal(upstream.ContentSummary(full[i]))
			gb, _ := json.Marshal(sum[i])
			if !bytes.Equal(wb, gb) {
				t.Fatalf("%s record %d: summary %s, want %s", path, i, gb, wb)
			}
			if sum[i].BodyHTML != "" || sum[i].RenderPayload != nil || sum[i].SEOPayload != nil || sum[i].Transcript != "" {
				t.Fatalf("%s record %d: detail-only fields in the summary", path, i)
			}
			if sum[i].SourceID == "" && full[i].SourceID != "" {
				t.Errorf("%s record %d: the summary lost the small internal fields the boundary tests rely on", path, i)
			}
		}
	}
	if st, _, _ := get("/content/v1/dealers/101/faq?view=nope"); st != 400 {
		t.Errorf("unknown view: %d", st)
	}
}

// TestListVehiclesInto decodes pages of several sizes into one reused page:
// each equals what ListVehicles returns, with nothing left over from the
// larger pages decoded into it before.
func TestListVehiclesInto(t *testing.T) {
	s := NewServer(Options{})
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := upstream.New(upstream.Options{BaseURL: "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	var page upstream.VehiclePage
	for _, q := range []upstream.VehicleQuery{
		{Service: "REWIND", Page: 1, PageSize: 100},
		{Service: "REWIND", Page: 2, PageSize: 5},
		{Service: "NOS", Page: 1, PageSize: 20, Q: "iveco daily"},
		{Service: "REWIND", Page: 1000, PageSize: 20}, // past the end: no items
		{Service: "REWIND", Page: 1, PageSize: 20},
	} {
		want, err := c.ListVehicles(ctx, 101, q)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.ListVehiclesInto(ctx, 101, q, &page); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(page, want) {
			t.Fatalf("%+v: ListVehiclesInto %d items (total %d), ListVehicles %d (total %d)", q, len(page.Items), page.Total, len(want.Items), want.Total)
		}
		if q.PageSize == 100 && cap(page.Items) < 100 {
			t.Fatalf("cap %d after a page of 100", cap(page.Items))
		}
	}
}

// TestFleetDealers: Options.FleetDealers adds dealers 1001 .. with Alpha's
// inventory sizes, records of their own, and one active key each; without
// it neither exists.
func TestFleetDealers(t *testing.T) {
	s := NewServer(Options{FleetDealers: 3})
	plain := NewServer(Options{})
	firstIDs := map[string]int64{}
	for i := 0; i < 3; i++ {
		id := FleetDealerID(i)
		var k upstream.KeyRecord
		getJSON(t, s, "/dealers/v1/keys/"+HashKey(FleetKey(i)), &k)
		if k.DealerID != id || k.Status != upstream.KeyActive || k.Plan != PlanBench {
			t.Errorf("%s: %+v", FleetKey(i), k)
		}
		var d upstream.Dealer
		getJSON(t, s, fmt.Sprintf("/dealers/v1/dealers/%d", id), &d)
		if d.ID != id || d.Name == "" {
			t.Errorf("dealer %d: %+v", id, d)
		}
		for svc, want := range map[string]int{"REWIND": 330, "NOS": 215} {
			var page struct {
				Total int                `json:"total"`
				Items []upstream.Vehicle `json:"items"`
			}
			getJSON(t, s, fmt.Sprintf("/inventory/v1/dealers/%d/vehicles?service=%s&page=1&page_size=1&view=summary", id, svc), &page)
			if page.Total != want || len(page.Items) != 1 {
				t.Fatalf("dealer %d %s: total %d, %d items", id, svc, page.Total, len(page.Items))
			}
			if other, dup := firstIDs[page.Items[0].IDAuto]; dup {
				t.Errorf("dealer %d shares vehicle %s with dealer %d", id, page.Items[0].IDAuto, other)
			}
			firstIDs[page.Items[0].IDAuto] = id
		}
		if st, _ := get(t, plain, fmt.Sprintf("/dealers/v1/dealers/%d", id)); st != 404 {
			t.Errorf("dealer %d without FleetDealers: %d", id, st)
		}
		if st, _ := get(t, plain, "/dealers/v1/keys/"+HashKey(FleetKey(i))); st != 404 {
			t.Errorf("%s without FleetDealers: %d", FleetKey(i), st)
		}
	}
	if st, _ := get(t, s, "/dealers/v1/keys/"+HashKey(FleetKey(3))); st != 404 {
		t.Errorf("%s of 3 fleet dealers: %d", FleetKey(3), st)
	}
}
