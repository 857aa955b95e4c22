package publicshape

import (
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestCanonicalSlug(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "", ""},
		{"already canonical", "gru-idraulica", "gru-idraulica"},
		{"upper case and spaces", "Gru Idraulica", "gru-idraulica"},
		{"italian accents", "Attività Città Più Perché Così Però", "attivita-citta-piu-perche-cosi-pero"},
		{"upper-case accents", "ÀÈÉÌÒÙ", "aeeiou"},
		{"acute and circumflex forms", "áíóúâêîôû", "aiouaeiou"},
		{"punctuation runs", "Cassone -- ribaltabile / trilaterale!!", "cassone-ribaltabile-trilaterale"},
		{"leading and trailing separators", "  --Frigo (ATP)--  ", "frigo-atp"},
		{"apostrophe", "Furgone d'epoca", "furgone-d-epoca"},
		{"digits", "Gru 3,5 t", "gru-3-5-t"},
		{"only separators", " -_/ ", ""},
		{"other scripts are separators", "Kühlwagen ñ 冷", "k-hlwagen"},
		{"invalid utf-8 is a separator", "a\xffb", "a-b"},
		{"tabs and newlines", "a\tb\nc", "a-b-c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CanonicalSlug(tt.in)
			if got != tt.want {
				t.Fatalf("CanonicalSlug(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got != "" && !ValidSlug(got) {
				t.Fatalf("CanonicalSlug(%q) = %q is not a valid slug", tt.in, got)
			}
		})
	}
}

func TestValidSlug(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"a", true},
		{"0", true},
		{"gru-idraulica", true},
		{"a-b-c-1-2", true},
		{"", false},
		{"-", false},
		{"-a", false},
		{"a-", false},
		{"a--b", false},
		{"A", false},
		{"a b", false},
		{"a_b", false},
		{"città", false},
		{"a\x00", false},
	}
	for _, tt := range tests {
		if got := ValidSlug(tt.in); got != tt.want {
			t.Errorf("ValidSlug(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestValidSlugDoesNotAllocate(t *testing.T) {
	s := strings.Repeat("abc-", 20) + "z"
	if n := testing.AllocsPerRun(100, func() { _ = ValidSlug(s) }); n != 0 {
		t.Fatalf("ValidSlug allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = CanonicalSlug(s) }); n != 0 {
		t.Fatalf("CanonicalSlug of a canonical slug allocates %v times", n)
	}
}

func TestUpfits(t *testing.T) {
	gru := ProfessionalUpfit{Code: "G1", Slug: "gru-idraulica", Label: "Gru idraulica", DisplayLabel: "Gru idraulica", Family: "sollevamento"}
	frigo := ProfessionalUpfit{Code: "F1", Slug: "frigo", Label: "Frigo", DisplayLabel: "Frigo", Family: "temperatura"}
	altro := ProfessionalUpfit{Code: "Z9", Slug: "altro", Label: "Altro", DisplayLabel: "Altro", Family: "altro"}
	primary := func(u ProfessionalUpfit) ProfessionalUpfit { u.IsPrimary = true; return u }
	with := func(u ProfessionalUpfit, f func(*ProfessionalUpfit)) ProfessionalUpfit { f(&u); return u }

	tests := []struct {
		name string
		in   []UpfitSource
		want []ProfessionalUpfit
	}{
		{"nil", nil, nil},
		{"empty", []UpfitSource{}, nil},
		{
			"slug from label, first becomes primary",
			[]UpfitSource{
				{Code: "G1", Label: "Gru idraulica", Family: "sollevamento"},
				{Code: "F1", Slug: "Frigo", Label: "Frigo", Family: "temperatura"},
			},
			[]ProfessionalUpfit{primary(gru), frigo},
		},
		{
			"flagged primary kept",
			[]UpfitSource{
				{Code: "G1", Label: "Gru idraulica", Family: "sollevamento"},
				{Code: "F1", Label: "Frigo", Family: "temperatura", Primary: true},
			},
			[]ProfessionalUpfit{gru, primary(frigo)},
		},
		{
			"only the first flagged primary stays primary",
			[]UpfitSource{
				{Code: "G1", Label: "Gru idraulica", Family: "sollevamento", Primary: true},
				{Code: "F1", Label: "Frigo", Family: "temperatura", Primary: true},
			},
			[]ProfessionalUpfit{primary(gru), frigo},
		},
		{
			"altro with dealer alias is one facet",
			[]UpfitSource{
				{Code: "Z9", Slug: "altro-personalizzato", Label: "ALTRO", DealerAlias: "Allestimento Rossi", Family: "altro"},
			},
			[]ProfessionalUpfit{primary(with(altro, func(u *ProfessionalUpfit) { u.DisplayLabel = "Allestimento Rossi" }))},
		},
		{
			"altro without alias",
			[]UpfitSource{{Code: "Z9", Label: " altro ", DealerAlias: "  ", Family: "altro"}},
			[]ProfessionalUpfit{primary(altro)},
		},
		{
			"alias ignored for other labels",
			[]UpfitSource{{Code: "F1", Label: "Frigo", DealerAlias: "Cella", Family: "temperatura"}},
			[]ProfessionalUpfit{primary(frigo)},
		},
		{
			"dedupe by code, first wins, primary flag carried",
			[]UpfitSource{
				{Code: "G1", Label: "Gru idraulica", Family: "sollevamento"},
				{Code: "F1", Label: "Frigo", Family: "temperatura"},
				{Code: "G1", Label: "Gru diversa", Family: "x", Primary: true},
			},
			[]ProfessionalUpfit{primary(gru), frigo},
		},
		{
			"sources without code or slug are dropped",
			[]UpfitSource{
				{Code: "", Label: "Senza codice", Primary: true},
				{Code: "X1", Slug: "--", Label: "!!"},
				{Code: "F1", Label: "Frigo", Family: "temperatura"},
			},
			[]ProfessionalUpfit{primary(frigo)},
		},
		{
			"all dropped",
			[]UpfitSource{{Code: " ", Label: "x"}},
			nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, p := Upfits(tt.in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Upfits = %+v\nwant     %+v", got, tt.want)
			}
			if len(got) == 0 {
				if got != nil || p != nil {
					t.Fatalf("empty result must be (nil, nil), got (%#v, %v)", got, p)
				}
				return
			}
			n := 0
			for _, u := range got {
				if u.IsPrimary {
					n++
					if p == nil || *p != u {
						t.Fatalf("primary pointer %+v, want %+v", p, u)
					}
				}
				if !ValidSlug(u.Slug) {
					t.Fatalf("invalid slug %q", u.Slug)
				}
			}
			if n != 1 {
				t.Fatalf("%d primary items, want 1", n)
			}
			for i := range got {
				if &got[i] == p {
					t.Fatal("primary pointer aliases the slice")
				}
			}
		})
	}
}

func TestNomeCanonico(t *testing.T) {
	tests := []struct{ marca, modello, allestimento, want string }{
		{"Fiat", "Ducato", "Maxi 35", "Fiat Ducato Maxi 35"},
		{" Fiat ", "  Ducato", "", "Fiat Ducato"},
		{"Alfa  Romeo", "Giulia\t", "2.2 \n Veloce", "Alfa Romeo Giulia 2.2 Veloce"},
		{"", "Panda", "", "Panda"},
		{"", "", "", ""},
		// unicode.IsSpace beyond ASCII separates words too; a byte that
		// is no valid rune (or a rune's continuation) does not.
		{"Fiat\u00a0Ducato", "\u2000Maxi\u0085", "\u3000", "Fiat Ducato Maxi"},
		{"a\xf0\u2000b", "\xe2\x80", "c\xe2\x80\x80\x80d", "a\xf0 b \xe2\x80 c \x80d"},
		{"Città", "Süd\u00a0Ost", "", "Città Süd Ost"},
	}
	for _, tt := range tests {
		if got := NomeCanonico(tt.marca, tt.modello, tt.allestimento); got != tt.want {
			t.Errorf("NomeCanonico(%q, %q, %q) = %q, want %q", tt.marca, tt.modello, tt.allestimento, got, tt.want)
		}
		if got := string(AppendNomeCanonico([]byte("x"), tt.marca, tt.modello, tt.allestimento)); got != "x"+tt.want {
			t.Errorf("AppendNomeCanonico(%q, %q, %q) = %q, want %q", tt.marca, tt.modello, tt.allestimento, got, "x"+tt.want)
		}
	}
}

// FuzzAppendNomeCanonico: AppendNomeCanonico appends what NomeCanonico
// returns, within the room it promises.
func FuzzAppendNomeCanonico(f *testing.F) {
	f.Add("Alfa  Romeo", "Giulia\t", "2.2 \n Veloce")
	f.Add("", "\u00a0Panda\u2028", "a\xffb")
	f.Fuzz(func(t *testing.T, marca, modello, allestimento string) {
		want := NomeCanonico(marca, modello, allestimento)
		got := AppendNomeCanonico([]byte("x"), marca, modello, allestimento)
		if string(got) != "x"+want {
			t.Fatalf("AppendNomeCanonico = %q, want %q", got[1:], want)
		}
		if len(got)-1 > len(marca)+len(modello)+len(allestimento)+2 {
			t.Fatalf("%d bytes, beyond the room promised", len(got)-1)
		}
	})
}

func TestPreview(t *testing.T) {
	tests := []struct {
		name string
		body string
		max  int
		want string
	}{
		{"empty", "", 10, ""},
		{"short unchanged", "Ciao mondo", 20, "Ciao mondo"},
		{"exact length", "Ciao mondo", 10, "Ciao mondo"},
		{"whitespace collapsed", "  Ciao \n\t mondo  ", 20, "Ciao mondo"},
		{"nbsp is white space", "Ciao\u00a0mondo", 20, "Ciao mondo"},
		{"cut at boundary before max", "Ciao mondo bello", 12, "Ciao mondo…"},
		{"cut where the space falls at max", "Ciao mondo bello", 11, "Ciao mondo…"},
		{"cut where the word ends at max", "Ciao mondo bello", 10, "Ciao mondo…"},
		{"cut inside second word", "Ciao mondo bello", 7, "Ciao…"},
		{"long single word hard cut", "Supercalifragilistico", 5, "Super…"},
		{"multibyte runes counted as runes", "àèìòù àèìòù", 8, "àèìòù…"},
		{"multibyte hard cut", "ààààààà", 3, "ààà…"},
		{"trailing space only", "abc   ", 3, "abc"},
		{"max zero", "abc", 0, ""},
		{"max negative", "abc", -1, ""},
		{"invalid utf-8 replaced", "a\xffb", 10, "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Preview(tt.body, tt.max)
			if got != tt.want {
				t.Fatalf("Preview(%q, %d) = %q, want %q", tt.body, tt.max, got, tt.want)
			}
			if tt.max > 0 && utf8.RuneCountInString(got) > tt.max+1 {
				t.Fatalf("Preview(%q, %d) has %d runes", tt.body, tt.max, utf8.RuneCountInString(got))
			}
		})
	}
}

func TestContentTypes(t *testing.T) {
	for _, ct := range []string{"faq", "news", "glossary", "guides", "videos", "podcasts"} {
		if !IsContentType(ct) {
			t.Errorf("IsContentType(%q) = false", ct)
		}
		if got, want := IsDeprecatedType(ct), ct == "guides" || ct == "glossary"; got != want {
			t.Errorf("IsDeprecatedType(%q) = %v, want %v", ct, got, want)
		}
	}
	for _, ct := range []string{"", "hub", "FAQ", "guide", "blog"} {
		if IsContentType(ct) || IsDeprecatedType(ct) {
			t.Errorf("%q accepted", ct)
		}
	}
}

func TestDeprecationPolicy(t *testing.T) {
	p := DeprecationPolicy{
		Deprecation:  time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		Sunset:       time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC),
		SuccessorURL: "https://editorial.example/",
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	dep, sun, link := p.Headers()
	if dep != "@1735689600" {
		t.Errorf("Deprecation = %q", dep)
	}
	if sun != "Thu, 31 Dec 2026 23:59:59 GMT" { // 31 Dec 2026 is a Thursday
		t.Errorf("Sunset = %q", sun)
	}
	if want := `<https://editorial.example/>; rel="successor-version", <https://editorial.example/>; rel="sunset"`; link != want {
		t.Errorf("Link = %q, want %q", link, want)
	}
	if got, want := p.Fields(), (Deprecation{Deprecated: true, Deprecation: dep, Sunset: sun, SuccessorVersion: "https://editorial.example/"}); got != want {
		t.Errorf("Fields = %+v, want %+v", got, want)
	}

	// A non-UTC sunset is written in GMT, in net/http's layout.
	rome := time.FixedZone("CET", 3600)
	q := p
	q.Sunset = time.Date(2027, 1, 1, 0, 59, 59, 0, rome)
	q.SunsetInfoURL = "https://editorial.example/sunset"
	_, sun, link = q.Headers()
	if want := q.Sunset.UTC().Format(http.TimeFormat); sun != want || sun != "Thu, 31 Dec 2026 23:59:59 GMT" {
		t.Errorf("Sunset = %q, want %q", sun, want)
	}
	if !strings.HasSuffix(link, `<https://editorial.example/sunset>; rel="sunset"`) {
		t.Errorf("Link = %q", link)
	}
	if _, err := time.Parse(time.RFC1123, sun); err != nil {
		t.Errorf("Sunset %q is not RFC 1123: %v", sun, err)
	}
}

func TestDeprecationPolicyValidate(t *testing.T) {
	ok := DeprecationPolicy{
		Deprecation:  time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		Sunset:       time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		SuccessorURL: "http://editorial.example/path?x=1",
	}
	tests := []struct {
		name    string
		mutate  func(*DeprecationPolicy)
		wantErr string // substring; "" means valid
	}{
		{"valid", func(*DeprecationPolicy) {}, ""},
		{"valid with sunset info", func(p *DeprecationPolicy) { p.SunsetInfoURL = "https://x.example/s" }, ""},
		{"zero", func(p *DeprecationPolicy) { *p = DeprecationPolicy{} }, "deprecation: not set"},
		{"no sunset", func(p *DeprecationPolicy) { p.Sunset = time.Time{} }, "sunset: not set"},
		{"before epoch", func(p *DeprecationPolicy) { p.Deprecation = time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC) }, "before 1970"},
		{"sunset equal", func(p *DeprecationPolicy) { p.Sunset = p.Deprecation }, "sunset: must be after deprecation"},
		{"sunset before", func(p *DeprecationPolicy) { p.Sunset = p.Deprecation.Add(-time.Second) }, "sunset: must be after deprecation"},
		{"no successor", func(p *DeprecationPolicy) { p.SuccessorURL = "" }, "successor_url: not set"},
		{"relative successor", func(p *DeprecationPolicy) { p.SuccessorURL = "/guides" }, "successor_url: must be an absolute"},
		{"ftp successor", func(p *DeprecationPolicy) { p.SuccessorURL = "ftp://x.example/" }, "successor_url: must be an absolute"},
		{"no host", func(p *DeprecationPolicy) { p.SuccessorURL = "https:///x" }, "successor_url: must be an absolute"},
		{"breaks Link header", func(p *DeprecationPolicy) { p.SuccessorURL = "https://x.example/>; rel=x" }, "successor_url: contains"},
		{"bad sunset info", func(p *DeprecationPolicy) { p.SunsetInfoURL = "mailto:a@b" }, "sunset_info_url: must be an absolute"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ok
			tt.mutate(&p)
			err := p.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestProblemTypeURI(t *testing.T) {
	tests := []struct{ base, code, want string }{
		{"https://docs.example/problems", "rate_limited", "https://docs.example/problems/rate_limited"},
		{"https://docs.example/problems/", "rate_limited", "https://docs.example/problems/rate_limited"},
		{"", "not_found", DefaultProblemBase + "/not_found"},
	}
	for _, tt := range tests {
		if got := ProblemTypeURI(tt.base, tt.code); got != tt.want {
			t.Errorf("ProblemTypeURI(%q, %q) = %q, want %q", tt.base, tt.code, got, tt.want)
		}
	}
}

func TestProblemFor(t *testing.T) {
	want := map[string]int{
		"invalid_service": 400, "invalid_content_type": 400, "invalid_identifier": 400,
		"missing_api_key": 401, "invalid_api_key": 401, "expired_api_key": 401,
		"dealer_not_found": 404, "vehicle_not_found": 404, "offer_not_found": 404, "content_not_found": 404,
		"not_found": 404, "method_not_allowed": 405, "precondition_failed": 412, "validation_error": 422, "rate_limited": 429,
		"internal_error": 500, "service_unavailable": 503,
		"bad_request": 400, "request_timeout": 408, "request_too_large": 413, "uri_too_long": 414, "request_header_too_large": 431,
	}
	for code, status := range want {
		st, title, ok := ProblemFor(code)
		if !ok || st != status || title == "" {
			t.Errorf("ProblemFor(%q) = %d, %q, %v; want %d", code, st, title, ok, status)
		}
	}
	if st, title, _ := ProblemFor("invalid_service"); st != 400 || title != "Invalid service" {
		t.Errorf("invalid_service: %d %q", st, title)
	}
	if _, _, ok := ProblemFor("nope"); ok {
		t.Error("unknown code found")
	}
	all := Problems()
	if len(all) != len(want) {
		t.Errorf("Problems has %d codes, want %d", len(all), len(want))
	}
	seen := map[string]bool{}
	for _, p := range all {
		if seen[p.Code] {
			t.Errorf("duplicate code %q", p.Code)
		}
		seen[p.Code] = true
	}
	all[0].Status = 999
	if st, _, _ := ProblemFor(all[0].Code); st == 999 {
		t.Error("Problems returned the table itself")
	}
}

func BenchmarkValidSlug(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = ValidSlug("allestimento-frigorifero-atp-frc")
	}
}

// BenchmarkPreview: a body whose white space must be collapsed (the
// general path) and one in the form of the content service's summaries,
// plain text with single spaces up to the cut (previewPlain).
func BenchmarkPreview(b *testing.B) {
	for _, c := range []struct{ name, body string }{
		{"collapsing", strings.Repeat("Il furgone è pronto per la consegna, con   garanzia e tagliando.\n", 40)},
		{"plain", "Sì. Dalla scheda del veicolo si può bloccare l'auto con un acconto rimborsabile: il veicolo resta " +
			"riservato per sette giorni, il tempo necessario per vederlo dal vivo, provarlo e definire la formula di " +
			"pagamento. Se decidi di non procedere, l'acconto viene restituito per intero.\n\nPrima della firma ogni v"},
		// The content service's summaries: paragraphs apart by a blank line
		// before the cut.
		{"paragraphs", "Tutte le auto usate vendute a privati hanno la garanzia legale di conformità.\n\nDi dodici mesi " +
			"prevista dal Codice del Consumo, estendibile a ventiquattro con la garanzia convenzionale del " +
			"concessionario.\n\nLa garanzia copre i difetti di conformità presenti al momento della consegna: guasti " +
			"a motore, cambio, differenziale, centraline."},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = Preview(c.body, 240)
			}
		})
	}
}

func BenchmarkAppendString(b *testing.B) {
	s := "La garanzia copre i difetti di conformità presenti al momento della consegna: guasti a motore, " +
		"cambio, differenziale, centraline. È estendibile a ventiquattro mesi con la garanzia convenzionale " +
		"del concessionario, che può includere l'assistenza stradale e l'auto di cortesia."
	buf := make([]byte, 0, 1024)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = appendString(buf[:0], s)
	}
}

// upfitsReference is Upfits as it was first written (with UpfitSlug's
// rules applied through it): the reference FuzzUpfitsEqualsReference holds
// upfitsInto, which the listing encoder and Upfits share, to.
func upfitsReference(src []UpfitSource) ([]ProfessionalUpfit, *ProfessionalUpfit) {
	if len(src) == 0 {
		return nil, nil
	}
	out := make([]ProfessionalUpfit, 0, len(src))
	for i := range src {
		s := &src[i]
		code := strings.TrimSpace(s.Code)
		if code == "" {
			continue
		}
		if j := slices.IndexFunc(out, func(u ProfessionalUpfit) bool { return u.Code == code }); j >= 0 {
			out[j].IsPrimary = out[j].IsPrimary || s.Primary
			continue
		}
		u := ProfessionalUpfit{Code: code, Family: strings.TrimSpace(s.Family), IsPrimary: s.Primary}
		label := strings.TrimSpace(s.Label)
		if strings.EqualFold(label, AltroLabel) {
			u.Slug = altroSlug
		} else if u.Slug = CanonicalSlug(s.Slug); u.Slug == "" {
			u.Slug = CanonicalSlug(label)
		}
		if u.Slug == altroSlug && strings.EqualFold(label, AltroLabel) {
			u.Label = AltroLabel
			u.DisplayLabel = AltroLabel
			if alias := strings.TrimSpace(s.DealerAlias); alias != "" {
				u.DisplayLabel = alias
			}
		} else {
			if u.Slug == "" {
				continue
			}
			u.Label, u.DisplayLabel = label, label
		}
		out = append(out, u)
	}
	if len(out) == 0 {
		return nil, nil
	}
	primary := -1
	for i := range out {
		if out[i].IsPrimary && primary < 0 {
			primary = i
			continue
		}
		out[i].IsPrimary = false
	}
	if primary < 0 {
		primary = 0
		out[0].IsPrimary = true
	}
	p := out[primary]
	return out, &p
}

func FuzzUpfitsEqualsReference(f *testing.F) {
	f.Add("UPF-ISO", "furgone-isotermico", "Furgone isotermico", "", "Trasporto", "U2", "altro", " ALTRO ", "Su misura", uint8(0x15))
	f.Add(" ", "--", "Gru Idraulica", "x", "", "U2", "", "altrö", "", uint8(0x2a))
	f.Add("A", "Città", "", "", "f", "A", "ſ", "AltrO", " ", uint8(0xff))
	f.Fuzz(func(t *testing.T, code1, slug1, label1, alias1, family, code2, slug2, label2, alias2 string, flags uint8) {
		src := []UpfitSource{
			{Code: code1, Slug: slug1, Label: label1, DealerAlias: alias1, Family: family, Primary: flags&1 != 0},
			{Code: code2, Slug: slug2, Label: label2, DealerAlias: alias2, Family: family, Primary: flags&2 != 0},
			{Code: code1, Slug: slug2, Label: label2, Primary: flags&4 != 0},
			{Code: code2 + "x", Slug: slug1, Label: label1, DealerAlias: alias2, Primary: flags&8 != 0},
			{Code: code1 + "y", Slug: label2, Label: slug2, Family: alias1, Primary: flags&16 != 0},
		}[:1+int(flags>>5)%5]
		ups, p := Upfits(src)
		wantUps, wantP := upfitsReference(src)
		if !reflect.DeepEqual(ups, wantUps) || !reflect.DeepEqual(p, wantP) {
			t.Fatalf("Upfits(%+v) = %+v, %+v; reference %+v, %+v", src, ups, p, wantUps, wantP)
		}
	})
}

// TestProvinceCode: meta.dealer.province is published only as contract
// 2.8 defines it, an Italian two-letter province code, in capitals.
func TestProvinceCode(t *testing.T) {
	for in, want := range map[string]string{
		"MI": "MI", "mi": "MI", " Rm\t": "RM", "tO": "TO",
		"": "", " ": "", "M": "", "Milano": "", "M1": "", "M-": "", "MIL": "",
		"M\u00cc": "", "\u00e0a": "", "@A": "", "[A": "", "`a": "", "{a": "", "M\x00": "",
	} {
		if got := ProvinceCode(in); got != want {
			t.Errorf("ProvinceCode(%q) = %q, want %q", in, got, want)
		}
	}
}
