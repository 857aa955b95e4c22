package publicshape

import (
	"encoding/json"
	"math"
	"testing"
)

// checkItemSource fails unless AppendInventoryItemSource writes what
// json.Marshal writes for InventoryItemOf(src), or fails where it does.
func checkItemSource(t *testing.T, src *InventoryItemSource) {
	t.Helper()
	it := InventoryItemOf(src)
	want, wantErr := json.Marshal(&it)
	got, err := AppendInventoryItemSource([]byte("keep"), src)
	switch {
	case wantErr != nil:
		if err != ErrUnsupportedFloat || string(got) != "keep" {
			t.Fatalf("%+v: %q, %v; Marshal fails with %v", src, got, err, wantErr)
		}
	case err != nil || string(got) != "keep"+string(want):
		t.Fatalf("%+v: %v\ngot  %s\nwant keep%s", src, err, got, want)
	}
}

// TestAppendInventoryItemSourceEqualsItem: named cases of what the name,
// upfit and flag shortcuts of AppendInventoryItemSource must get right.
func TestAppendInventoryItemSourceEqualsItem(t *testing.T) {
	iso := UpfitSource{Code: "UPF-ISO", Slug: "furgone-isotermico", Label: "Furgone isotermico", Family: "Trasporto refrigerato"}
	cases := []struct {
		name string
		src  InventoryItemSource
	}{
		{"empty", InventoryItemSource{}},
		{"vehicle", InventoryItemSource{IDAuto: "304b22ef", Service: ServiceRewind, Make: "Fiat", Model: "Doblo", Trim: "Cargo Maxi", CatalogType: CatalogVcom, SalePrice: fp(22790.0), CoverURL: "https://cdn/x.jpg", Media: true, HasVideo: true}},
		{"offer", InventoryItemSource{IDOfferta: 7, Service: ServiceNLT, Make: "Fiat", Model: "Panda", Trim: "1.0 Hybrid"}},
		{"unknown service", InventoryItemSource{Service: "X<y>", Make: "A", Model: "B"}},
		{"names with spaces", InventoryItemSource{Service: ServiceNOS, Make: " Fiat", Model: "Dob  lo", Trim: "Maxi ", Media: true, HasPodcast: true}},
		{"names to escape", InventoryItemSource{Service: ServiceNOS, Make: "Città", Model: `"A&B"`, Trim: "x\u2028y\xff", Media: true, HasPodcast: true, HasVideo: true}},
		{"blank parts", InventoryItemSource{Make: "", Model: " ", Trim: "\t"}},
		{"long name", InventoryItemSource{Make: string(make([]byte, 200)), Model: "M"}},
		{"upfits", InventoryItemSource{Upfits: []UpfitSource{iso, {Code: "U2", Slug: "Gru Idraulica", Label: "Gru <idraulica>"}, {Code: "U3", Label: "altro", DealerAlias: "Su misura", Primary: true}, {Code: "UPF-ISO", Primary: true}, {Code: " "}, {Code: "U5", Slug: "--"}}}},
		{"five upfits", InventoryItemSource{Upfits: []UpfitSource{iso, {Code: "a", Label: "A"}, {Code: "b", Label: "B"}, {Code: "c", Label: "C"}, {Code: "d", Label: "D", Primary: true}}}},
		{"no upfit remains", InventoryItemSource{Upfits: []UpfitSource{{Code: "", Slug: "x"}, {Code: "y", Slug: "!"}}}},
		{"NaN price", InventoryItemSource{SalePrice: fp(math.NaN())}},
		{"small price", InventoryItemSource{SalePrice: fp(1e-7)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkItemSource(t, &c.src) })
	}
}

// TestAppendInventoryListingHead: the head, items and `]}` are what
// AppendInventoryListing writes.
func TestAppendInventoryListingHead(t *testing.T) {
	src := InventoryItemSource{IDAuto: "a", Service: ServiceRewind, Make: "Fiat", Model: "Panda"}
	l := InventoryListing{Service: ServiceRewind, Page: 2, PageSize: 1, Total: 3, HasNext: true, Items: []InventoryItem{InventoryItemOf(&src)}}
	want, err := AppendInventoryListing(nil, &l)
	if err != nil {
		t.Fatal(err)
	}
	got := AppendInventoryListingHead(nil, &l)
	if got, err = AppendInventoryItemSource(got, &src); err != nil {
		t.Fatal(err)
	}
	if got = append(got, ']', '}'); string(got) != string(want) {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func FuzzAppendInventoryItemSource(f *testing.F) {
	f.Add("Fiat", "Doblo", "Cargo Maxi", "UPF-ISO", "furgone-isotermico", "Furgone isotermico", "", "Trasporto", uint16(0x1ff), 22790.0)
	f.Add(" Fiat", "Dob  lo", "Maxi ", "altro", "", "ALTRO", "Su <misura>", " fam ", uint16(0x2aa), 1e21)
	f.Add("Città", "é\"\\", "a\xffb\u00a0", "", "--", "  ", "x", "", uint16(0x155), -0.0)
	f.Fuzz(func(t *testing.T, mk, model, trim, code, slug, label, alias, family string, flags uint16, price float64) {
		on := func(bit int) bool { return flags&(1<<bit) != 0 }
		src := InventoryItemSource{IDAuto: alias, IDOfferta: int64(flags >> 8), Service: [...]string{ServiceRewind, ServiceNOS, ServiceNLT, family}[flags&3],
			Make: mk, Model: model, Trim: trim, CatalogType: family, CoverURL: label, Media: on(2), HasPodcast: on(3), HasVideo: on(4)}
		if on(5) {
			src.SalePrice = &price
		}
		for i := range int(flags>>12) % 7 {
			u := UpfitSource{Code: code, Slug: slug, Label: label, DealerAlias: alias, Family: family, Primary: on(6 + i%4)}
			if on(10) && i%2 == 1 {
				u.Code += "x"
				u.Slug, u.Label = label, slug
			}
			src.Upfits = append(src.Upfits, u)
		}
		checkItemSource(t, &src)
	})
}

// plainWordsByBytes is plainWords one byte at a time: the reference
// FuzzPlainWords holds the word-at-a-time form to.
func plainWordsByBytes(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || !htmlSafe[c] || c == ' ' && (i == 0 || i == len(s)-1 || s[i+1] == ' ') {
			return false
		}
	}
	return true
}

func FuzzPlainWords(f *testing.F) {
	for _, s := range []string{"", "Fiat", " Fiat", "Fiat ", "Cargo Maxi 1.5 BlueHDi", "Cargo Max  1.5", "Cargo M  axi", "1234567 8 1234567", "abcdefg  bcdefgh", "a!b <", "Città", "a b c d e f g h i j", "x\ty"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := plainWords(s), plainWordsByBytes(s); got != want {
			t.Fatalf("plainWords(%q) = %v, want %v", s, got, want)
		}
	})
}
