package publicshape

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strconv"
	"testing"
)

func fp(f float64) *float64 { return &f }
func bp(b bool) *bool       { return &b }

// checkListing fails unless AppendInventoryListing gives exactly what
// json.Marshal gives for l, errors included, and leaves the prefix of the
// buffer it appends to untouched.
func checkListing(t *testing.T, l *InventoryListing) {
	t.Helper()
	want, werr := json.Marshal(l)
	prefix := []byte("prefix")
	got, gerr := AppendInventoryListing(prefix, l)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("error %v, json.Marshal: %v (%#v)", gerr, werr, l)
	}
	if string(got[:len(prefix)]) != "prefix" {
		t.Fatalf("prefix overwritten: %q", got)
	}
	if werr != nil {
		if !errors.Is(gerr, ErrUnsupportedFloat) || len(got) != len(prefix) {
			t.Fatalf("error %v, %q appended", gerr, got[len(prefix):])
		}
		return
	}
	if g := string(got[len(prefix):]); g != string(want) {
		t.Fatalf("encoding differs\ngot  %s\nwant %s", g, want)
	}
}

// TestAppendInventoryListingEqualsMarshal: the corner cases of every field,
// one by one (the fake corpus is compared in aggregator/mapping).
func TestAppendInventoryListingEqualsMarshal(t *testing.T) {
	up := ProfessionalUpfit{Code: "UPF-ISO", Slug: "furgone-isotermico", Label: "Furgone isotermico", DisplayLabel: "Furgone <isotermico> & co", Family: "T", IsPrimary: true}
	full := InventoryItem{
		IDAuto: "d3b8b8d4", IDOfferta: 7, Service: "REWIND", NomeCanonico: "Fiat Doblo Cargo", Marca: "Fiat", Modello: "Doblo", Allestimento: "Cargo",
		CatalogType: "vcom", ProfessionalUpfits: []ProfessionalUpfit{up, {}}, PrimaryProfessionalUpfit: &up, PrezzoVendita: fp(22790),
		CoverURL: "https://cdn.example/x.jpg?a=1&b=2", HasPodcast: bp(true), HasVideo: bp(false),
	}
	cases := []struct {
		name string
		l    InventoryListing
	}{
		{"zero", InventoryListing{}},
		{"nil items", InventoryListing{Service: "NOS", Page: 1, PageSize: 20}},
		{"empty items", InventoryListing{Service: "NOS", Page: 1, PageSize: 20, Items: []InventoryItem{}}},
		{"zero item", InventoryListing{Items: []InventoryItem{{}}}},
		{"full item", InventoryListing{Service: "REWIND", Page: 3, PageSize: 100, Total: 330, HasNext: true, Items: []InventoryItem{full, full}}},
		{"offer item", InventoryListing{Service: "NLT", Items: []InventoryItem{{IDOfferta: -101018, Service: "NLT", Marca: "BMW", Modello: "Serie 1"}}}},
		{"negative numbers", InventoryListing{Page: -1, PageSize: math.MinInt64, Total: math.MaxInt64}},
		{"empty upfits", InventoryListing{Items: []InventoryItem{{ProfessionalUpfits: []ProfessionalUpfit{}, HasPodcast: bp(false)}}}},
		{"escapes", InventoryListing{Service: "\"\\/\b\f\n\r\t\x00\x01\x1f\x7f", Items: []InventoryItem{{Marca: "<script>&amp;</script>", Modello: "a\u2028b\u2029c\u2027", NomeCanonico: "Citroën ë-C4 ✓ 冷 😀"}}}},
		{"invalid utf-8", InventoryListing{Service: "a\xffb\xc3", Items: []InventoryItem{{Marca: "\xed\xa0\x80", Modello: "\xe2\x80", NomeCanonico: "\xf0\x9f\x98"}}}},
	}
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 22790, -22790, 999999999999999, 1e15, 4503599627370497, 9007199254740992, 9007199254740993, 12345.67, 1e-6, 9.99e-7, 1e-7, 1.5e-300, 5e-324, 1e20, 1e21, 123456789e13, -1e21, 1e100, math.MaxFloat64, math.SmallestNonzeroFloat64, 1.0 / 3} {
		cases = append(cases, struct {
			name string
			l    InventoryListing
		}{"price " + strconv.FormatFloat(f, 'g', -1, 64), InventoryListing{Items: []InventoryItem{{PrezzoVendita: fp(f)}}}})
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		cases = append(cases, struct {
			name string
			l    InventoryListing
		}{"unsupported price " + strconv.FormatFloat(f, 'g', -1, 64), InventoryListing{Items: []InventoryItem{{}, {PrezzoVendita: fp(f)}}}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkListing(t, &c.l) })
	}
}

// TestAppendInventoryListingKnowsEveryField: the hand-written encoder
// writes the fields these lists name, in this order; a field added to one
// of the types fails here until the encoder (and the lists) learn it.
func TestAppendInventoryListingKnowsEveryField(t *testing.T) {
	cases := []struct {
		typ  reflect.Type
		tags []string
	}{
		{reflect.TypeFor[InventoryListing](), []string{"service", "page", "page_size", "total", "has_next", "items"}},
		{reflect.TypeFor[InventoryItem](), []string{"id_auto,omitempty", "id_offerta,omitempty", "service", "nome_canonico", "marca", "modello", "allestimento,omitempty", "catalog_type,omitempty", "professional_upfits,omitempty", "primary_professional_upfit,omitempty", "prezzo_vendita,omitempty", "cover_url,omitempty", "has_podcast,omitempty", "has_video,omitempty"}},
		{reflect.TypeFor[ProfessionalUpfit](), []string{"code", "slug", "label", "display_label", "family", "is_primary"}},
	}
	for _, c := range cases {
		var tags []string
		for f := range c.typ.Fields() {
			tags = append(tags, f.Tag.Get("json"))
		}
		if !reflect.DeepEqual(tags, c.tags) {
			t.Errorf("%s has the fields %q, the encoder writes %q", c.typ, tags, c.tags)
		}
	}
}

// FuzzAppendInventoryListing: on random listings (strings of any bytes,
// any numbers, any presence of the optional fields), the hand-written
// encoder gives exactly what json.Marshal gives.
func FuzzAppendInventoryListing(f *testing.F) {
	f.Add("REWIND", "Fiat", "Doblo <Cargo> & \u2028", "https://x/y?a=1&b=2", "\xff\x00", int64(3), int64(101018), 22790.5, uint16(0xffff), uint8(3))
	f.Add("", "", "", "", "", int64(0), int64(0), 0.0, uint16(0), uint8(0))
	f.Add("NLT", "Citroën", "ë-C4", "\"\\\n", "\u2029", int64(-1), int64(-7), 1e21, uint16(0x5555), uint8(1))
	f.Add("NOS", "a", "b", "c", "d", int64(1), int64(1), 1e-7, uint16(0xaaaa), uint8(2))
	f.Fuzz(func(t *testing.T, s1, s2, s3, s4, s5 string, n1, n2 int64, price float64, mask uint16, items uint8) {
		strs := []string{s1, s2, s3, s4, s5}
		pick := func(i int) string { return strs[i%len(strs)] }
		on := func(bit int) bool { return mask&(1<<bit) != 0 }
		l := InventoryListing{Service: s1, Page: int(n1), PageSize: int(n2), Total: int(n1 ^ n2), HasNext: on(0)}
		if on(1) {
			l.Items = []InventoryItem{}
		}
		for i := 0; i < int(items%4); i++ {
			it := InventoryItem{Service: pick(i), NomeCanonico: pick(i + 1), Marca: pick(i + 2), Modello: pick(i + 3)}
			if on(2 + i) {
				it.IDAuto = pick(i + 4)
			}
			if on(3 + i) {
				it.IDOfferta = n2
			}
			if on(4 + i) {
				it.Allestimento = pick(i + 2)
			}
			if on(5 + i) {
				it.CatalogType = pick(i + 1)
			}
			if on(6 + i) {
				it.ProfessionalUpfits = []ProfessionalUpfit{}
				for j := 0; j < int(n1&3); j++ {
					it.ProfessionalUpfits = append(it.ProfessionalUpfits, ProfessionalUpfit{pick(j), pick(j + 1), pick(j + 2), pick(j + 3), pick(j + 4), on(j)})
				}
			}
			if on(7 + i) {
				it.PrimaryProfessionalUpfit = &ProfessionalUpfit{pick(i + 3), pick(i), pick(i + 1), pick(i + 4), pick(i + 2), on(8)}
			}
			if on(8 + i) {
				p := price
				if i > 0 {
					p = price * float64(n1)
				}
				it.PrezzoVendita = &p
			}
			if on(9 + i) {
				it.CoverURL = pick(i + 3)
			}
			if on(10 + i) {
				it.HasPodcast = bp(on(11))
			}
			if on(11 + i) {
				it.HasVideo = bp(on(12))
			}
			l.Items = append(l.Items, it)
		}
		checkListing(t, &l)
	})
}

// BenchmarkAppendInventoryListing compares the hand-written encoder with
// json.Marshal on a listing of 20 items shaped like the fake's.
func BenchmarkAppendInventoryListing(b *testing.B) {
	up := ProfessionalUpfit{Code: "UPF-ISO", Slug: "furgone-isotermico", Label: "Furgone isotermico", DisplayLabel: "Furgone isotermico", Family: "Trasporto refrigerato", IsPrimary: true}
	l := InventoryListing{Service: "REWIND", Page: 1, PageSize: 20, Total: 330, HasNext: true}
	for i := range 20 {
		it := InventoryItem{IDAuto: "304b22ef-aeab-4381-ab25-ff3745fb4c70", Service: "REWIND", NomeCanonico: "Fiat Doblo Cargo Maxi 1.5 BlueHDi 130 CV", Marca: "Fiat", Modello: "Doblo",
			Allestimento: "Cargo Maxi 1.5 BlueHDi 130 CV", CatalogType: "vcom", PrezzoVendita: fp(22790 + float64(i)), CoverURL: "https://cdn.example-dealer-media.it/dealers/101/vehicles/304b22ef-aeab-4381-ab25-ff3745fb4c70/cover.jpg",
			HasPodcast: bp(false), HasVideo: bp(i%2 == 0)}
		if i%3 == 0 {
			it.ProfessionalUpfits, it.PrimaryProfessionalUpfit = []ProfessionalUpfit{up}, &up
		}
		l.Items = append(l.Items, it)
	}
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			var err error
			if buf, err = AppendInventoryListing(buf[:0], &l); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(int64(len(buf)))
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(&l); err != nil {
				b.Fatal(err)
			}
		}
	})
}
