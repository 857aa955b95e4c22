package contracttests

import (
	"context"
	"net/url"
	"reflect"
	"testing"

	"github.com/dealer-edge/dealer-edge/aggregator"
	"github.com/dealer-edge/dealer-edge/upstream"
)

// profileOverride is the real upstream client with the dealers service's
// profile of every dealer passed through edit: a profile with fields the
// fake always fills left empty or malformed.
type profileOverride struct {
	*upstream.Client
	edit func(*upstream.Dealer)
}

func (b profileOverride) Dealer(ctx context.Context, id int64) (upstream.Dealer, error) {
	d, err := b.Client.Dealer(ctx, id)
	if err == nil {
		b.edit(&d)
	}
	return d, err
}

// TestDealerMetaLeavesOutUnknownValues: a meta.dealer field the dealers
// service has no value for is left out, not published as "" (contract 2.8
// gives every field a meaning an empty string does not have), and province
// is published only as what 2.8 says it is, an Italian two-letter province
// code, in capitals: "mi" is "MI", "Milano" or "M1" is left out. Before
// 2026-11-29 every field went out as the service gave it: "province":"",
// "brand_name":"", "province":"Milano".
func TestDealerMetaLeavesOutUnknownValues(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*upstream.Dealer)
		want map[string]any
	}{
		{"empty fields", func(d *upstream.Dealer) { d.BrandName, d.City, d.Province, d.PrimaryDomain = "", " ", "", "" },
			map[string]any{"id": 101.0, "name": "Autosalone Alpha S.r.l."}},
		{"province in lower case", func(d *upstream.Dealer) { d.Province = " mi " },
			map[string]any{"id": 101.0, "name": "Autosalone Alpha S.r.l.", "brand_name": "Alpha Motori", "city": "Milano", "province": "MI", "primary_domain": "www.alphamotori.it"}},
		{"province spelled out", func(d *upstream.Dealer) { d.Province, d.Name = "Milano", "" },
			map[string]any{"id": 101.0, "brand_name": "Alpha Motori", "city": "Milano", "primary_domain": "www.alphamotori.it"}},
		{"white space around values", func(d *upstream.Dealer) {
			d.Name, d.City, d.PrimaryDomain = " Autosalone Alpha S.r.l.\t", " Milano ", "www.alphamotori.it\n"
		},
			map[string]any{"id": 101.0, "name": "Autosalone Alpha S.r.l.", "brand_name": "Alpha Motori", "city": "Milano", "province": "MI", "primary_domain": "www.alphamotori.it"}},
		{"province not letters", func(d *upstream.Dealer) { d.Province = "M1" },
			map[string]any{"id": 101.0, "name": "Autosalone Alpha S.r.l.", "brand_name": "Alpha Motori", "city": "Milano", "primary_domain": "www.alphamotori.it"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := startEnv(t, envOptions{backend: func(up *upstream.Client) aggregator.Backend {
				return profileOverride{Client: up, edit: c.edit}
			}})
			check := func(where string, r *resp) {
				t.Helper()
				meta, _ := r.json["meta"].(map[string]any)
				got, _ := meta["dealer"].(map[string]any)
				if r.status != 200 || !reflect.DeepEqual(got, c.want) {
					t.Errorf("%s: %d meta.dealer %v, want %v", where, r.status, got, c.want)
				}
			}
			l := e.get("/dealer/content/faq/listing?page_size=1", keyAlpha)
			check("faq listing", l)
			if len(l.items()) == 0 {
				t.Fatal("faq listing empty")
			}
			check("faq details", e.get("/dealer/content/faq/details?slug="+url.QueryEscape(l.items()[0]["slug"].(string)), keyAlpha))
			check("hub", e.get("/dealer/content/hub?page_size=1", keyAlpha))
			check("search", e.get("/dealer/content/search?q=auto&page_size=1", keyAlpha))
		})
	}
}
