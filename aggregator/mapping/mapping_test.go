package mapping

import (
	"cmp"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/upstream"
)

func fptr(f float64) *float64 { return &f }

func noisyVehicle() upstream.Vehicle {
	return upstream.Vehicle{
		IDAuto: "3f2504e0-4f89-41d3-9a0c-0305e82c3301", DealerID: 101, Service: "REWIND",
		Make: "Fiat", Model: "Ducato", Trim: "L2H2 Maxi", CatalogType: "vcom", VersionCode: "V1",
		Upfits: []upstream.Upfit{
			{Code: "U1", Slug: "Furgone Isotermico", Label: "Furgone isotermico", Family: "trasporto", SourceID: "src-1", LookupCascade: []string{"jato"}},
			{Code: "U2", Slug: "altro", Label: "altro", DealerAlias: "Allestimento su misura", Family: "altro", Primary: true},
		},
		SalePrice: fptr(25900), HasPodcast: true,
		AIContent:          &upstream.AIContent{Headline: "H", Description: "D", RenderTemplate: "tpl-9", SEOPayload: map[string]any{"robots": "noindex"}, PromptID: "p-1"},
		ConfirmedOptionals: []string{"O2"},
		ConfirmedPackages:  nil,
		SourceIDs:          map[string]string{"dms": "D-1"},
		LookupCascade:      []string{"jato", "eurotax"},
		TechDataDir:        "/mnt/techdata/jato/x",
		RenderPayload:      map[string]any{"layout": "hero"},
		RawVersionOptionals: []upstream.EquipmentItem{
			{Code: "O1", Name: "Gancio traino"}, {Code: "O2", Name: "Navigatore"},
		},
	}
}

func noisyEquipment() upstream.Equipment {
	return upstream.Equipment{
		VersionCode: "V1",
		Standard:    []upstream.EquipmentItem{{Code: "S1", Name: "ABS", Category: "sicurezza", SourceID: "s", TechRef: "/mnt/techdata/abs"}},
		Optionals:   []upstream.EquipmentItem{{Code: "O1", Name: "Gancio traino"}, {Code: "O2", Name: "Navigatore", PriceEUR: fptr(900)}},
		Packages:    []upstream.EquipmentPackage{{Code: "P1", Name: "Comfort", SourceID: "x"}},
		TechDataDir: "/mnt/techdata/v1", LookupCascade: []string{"jato"},
	}
}

// internalNames are JSON names of internal-only fields.
var internalNames = []string{"source_id", "source_ids", "lookup_cascade", "tech_data_dir", "render_payload", "seo_payload", "raw_version_optionals", "render_template", "prompt_id", "tech_ref", "dealer_alias", "version_code", "confirmed_optionals", "dealer_id", "/mnt/techdata", "noindex", "tpl-9"}

func assertClean(t *testing.T, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range internalNames {
		if strings.Contains(string(b), n) {
			t.Errorf("public JSON contains internal %q: %s", n, b)
		}
	}
}

func TestVehicleDetailAllowlist(t *testing.T) {
	d := VehicleDetail(noisyVehicle(), noisyEquipment(), &upstream.Media{Podcast: &upstream.Podcast{Title: "Ep", AudioURL: "https://a/x.mp3", TTSVoiceID: "tts-voice-1", RenderJobID: "render_job_1"}})
	assertClean(t, d)
	if len(d.AccessoriOpzionali) != 1 || d.AccessoriOpzionali[0].Code != "O2" || *d.AccessoriOpzionali[0].PriceEUR != 900 {
		t.Errorf("optionals: %+v (want only the confirmed O2)", d.AccessoriOpzionali)
	}
	if d.Pacchetti == nil || len(d.Pacchetti) != 0 {
		t.Errorf("packages: %+v (want an empty, non-nil list: none confirmed)", d.Pacchetti)
	}
	if !reflect.DeepEqual(d.AccessoriSerie, d.AccessoriSerieJSON) || len(d.AccessoriSerie) != 1 {
		t.Errorf("serie %+v json %+v", d.AccessoriSerie, d.AccessoriSerieJSON)
	}
	if d.Podcast == nil || !d.HasPodcast || d.Video != nil {
		t.Errorf("media: %+v %+v", d.Podcast, d.Video)
	}
	if d.PrimaryProfessionalUpfit == nil || d.PrimaryProfessionalUpfit.Code != "U2" || d.PrimaryProfessionalUpfit.Label != "Altro" ||
		d.PrimaryProfessionalUpfit.DisplayLabel != "Allestimento su misura" || d.PrimaryProfessionalUpfit.Slug != "altro" {
		t.Errorf("primary upfit %+v", d.PrimaryProfessionalUpfit)
	}
	if d.ProfessionalUpfits[0].Slug != "furgone-isotermico" || d.ProfessionalUpfits[0].IsPrimary {
		t.Errorf("first upfit %+v", d.ProfessionalUpfits[0])
	}
	if d.NomeCanonico != "Fiat Ducato L2H2 Maxi" {
		t.Errorf("nome_canonico %q", d.NomeCanonico)
	}
	// Without media the detail still maps, flags from inventory stay.
	d = VehicleDetail(noisyVehicle(), upstream.Equipment{}, nil)
	if d.Podcast != nil || !d.HasPodcast || d.AccessoriSerie == nil || d.AccessoriOpzionali == nil {
		t.Errorf("no media / no equipment: %+v", d)
	}
}

func TestListingItemsAllowlist(t *testing.T) {
	it := VehicleItem(noisyVehicle())
	assertClean(t, it)
	if it.IDAuto == "" || it.IDOfferta != 0 || it.PrezzoVendita == nil || *it.HasPodcast != true {
		t.Errorf("vehicle item %+v", it)
	}
	o := upstream.Offer{IDOfferta: 7, DealerID: 101, Slug: "s", Make: "Fiat", Model: "500", Version: "Hybrid",
		Quotations:    []upstream.Quotation{{Months: 36, KmPerYear: 15000, MonthlyFee: 299, InternalCost: 150, SourceRateID: "r"}},
		SourceIDs:     map[string]string{"x": "y"},
		LookupCascade: []string{"jato"}, RenderPayload: map[string]any{"a": 1}}
	oi := OfferItem(o)
	assertClean(t, oi)
	if oi.IDAuto != "" || oi.IDOfferta != 7 || oi.Service != "NLT" || oi.PrezzoVendita != nil {
		t.Errorf("offer item %+v", oi)
	}
	od := OfferDetail(o)
	b, _ := json.Marshal(od)
	if strings.Contains(string(b), "internal_cost") || strings.Contains(string(b), "source_rate") || od.Quotazioni[0].MonthlyFee != 299 {
		t.Errorf("offer detail %s", b)
	}
}

func rec(id, dealer int64, slug string, mod func(*upstream.ContentRecord)) upstream.ContentRecord {
	r := upstream.ContentRecord{ID: id, Type: "faq", DealerID: dealer, Slug: slug, Title: slug, BodyText: "body " + slug,
		UpdatedAt: time.Date(2026, 1, 1, 0, 0, int(id), 0, time.UTC), TemplateID: "t", SEOPayload: map[string]any{"robots": "noindex"}}
	if mod != nil {
		mod(&r)
	}
	return r
}

func slugs(recs []upstream.ContentRecord) string {
	var s []string
	for _, r := range recs {
		s = append(s, r.Slug)
	}
	return strings.Join(s, ",")
}

func TestVisibleRules(t *testing.T) {
	raw := []upstream.ContentRecord{
		rec(1, 0, "global-a", nil),
		rec(2, 0, "global-b", nil),
		rec(3, 101, "global-b", func(r *upstream.ContentRecord) { r.OverrideOf = 2; r.BodyText = "override" }),
		rec(4, 0, "global-hidden", func(r *upstream.ContentRecord) { r.HiddenForDealer = true }),
		rec(5, 101, "global-hidden", func(r *upstream.ContentRecord) { r.OverrideOf = 4 }),
		rec(6, 101, "own", nil),
		rec(7, 101, "own-hidden", func(r *upstream.ContentRecord) { r.HiddenForDealer = true }),
		rec(8, 102, "other-dealer", nil),
		rec(9, 102, "global-a", func(r *upstream.ContentRecord) { r.OverrideOf = 1; r.BodyText = "beta's override" }),
	}
	got := Visible(101, "faq", raw, Discovery)
	// Newest first: ids 6, 3(->2), 1.
	if s := slugs(got); s != "own,global-b,global-a" {
		t.Fatalf("visible = %s", s)
	}
	if got[1].ID != 2 || got[1].BodyText != "override" {
		t.Errorf("override: id %d body %q", got[1].ID, got[1].BodyText)
	}
	if got[2].BodyText != "body global-a" {
		t.Errorf("another dealer's override applied: %q", got[2].BodyText)
	}
	if raw[2].ID != 3 {
		t.Error("input modified")
	}
	news := []upstream.ContentRecord{
		rec(1, 101, "editorial", func(r *upstream.ContentRecord) { r.Type = "news"; r.SourceProvider = "dealer_editorial" }),
		rec(2, 0, "wire", func(r *upstream.ContentRecord) { r.Type = "news"; r.SourceProvider = "global_wire" }),
		rec(3, 101, "archive", func(r *upstream.ContentRecord) { r.Type = "news"; r.SourceProvider = "historical_import" }),
	}
	if s := slugs(Visible(101, "news", news, Discovery)); s != "editorial" {
		t.Errorf("news discovery = %s", s)
	}
	if s := slugs(Visible(101, "news", news, BySlug)); s != "archive,wire,editorial" {
		t.Errorf("news by slug = %s", s)
	}
}

// TestVisibleOrderEqualsStableSort holds VisibleOrder's sort (update times
// taken out of the records, the index as the last key) to its definition: a
// stable sort of the visible records by UpdatedAt, newest first, then slug.
// The records share times to the second, to the nanosecond and in other
// zones, and slugs, so every key decides somewhere.
// TestVisibleOrderTiesAsPublished: two items updated within the same
// second, which a client sees with the same updated_at (published in whole
// seconds), are in slug order whatever their sub-second times (they were
// ordered by those: found by an audit).
func TestVisibleOrderTiesAsPublished(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 10, 0, time.UTC)
	recs := []upstream.ContentRecord{
		{ID: 1, Type: "faq", DealerID: 101, Slug: "sub-a", UpdatedAt: at.Add(200 * time.Millisecond)},
		{ID: 2, Type: "faq", DealerID: 101, Slug: "sub-b", UpdatedAt: at.Add(700 * time.Millisecond)},
		{ID: 3, Type: "faq", DealerID: 101, Slug: "later", UpdatedAt: at.Add(time.Second)},
	}
	if got := VisibleOrder(101, "faq", recs, Discovery); !slices.Equal(got, []int32{2, 0, 1}) {
		t.Errorf("order %v, want [2 0 1] (later, then sub-a and sub-b by slug)", got)
	}
}

func TestVisibleOrderEqualsStableSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rome := time.FixedZone("CET", 3600)
	for round := range 300 {
		n := rng.IntN(80)
		recs := make([]upstream.ContentRecord, n)
		for i := range recs {
			at := time.Date(2026, 1, 1, 0, 0, rng.IntN(6), rng.IntN(3)*500, time.UTC)
			if rng.IntN(3) == 0 {
				at = at.In(rome)
			}
			dealer := []int64{0, 101, 102}[rng.IntN(3)]
			recs[i] = upstream.ContentRecord{ID: int64(i + 1), Type: "faq", DealerID: dealer,
				Slug: string(rune('a' + rng.IntN(4))), UpdatedAt: at, HiddenForDealer: rng.IntN(10) == 0}
			if dealer == 101 && rng.IntN(4) == 0 {
				recs[i].OverrideOf = int64(rng.IntN(n) + 1)
			}
		}
		got := VisibleOrder(101, "faq", recs, Discovery)
		// The reference: the indices VisibleOrder keeps, stably sorted as
		// the records were before (the update time in whole seconds, as
		// updated_at is published, then the slug).
		ref := slices.Clone(got)
		slices.Sort(ref)
		slices.SortStableFunc(ref, func(a, b int32) int {
			if c := cmp.Compare(recs[b].UpdatedAt.Unix(), recs[a].UpdatedAt.Unix()); c != 0 {
				return c
			}
			return strings.Compare(recs[a].Slug, recs[b].Slug)
		})
		if !slices.Equal(got, ref) {
			t.Fatalf("round %d: order %v, stable sort %v", round, got, ref)
		}
	}
}

func TestContentItemForms(t *testing.T) {
	r := rec(1, 0, "a", func(r *upstream.ContentRecord) {
		r.BodyText = strings.Repeat("parola ", 100)
		r.SourceProvider = "dealer_editorial"
		r.BodyHTML = "<p>x</p>"
		r.Transcript = "t"
	})
	l := ContentItem(r, "faq", ListingForm)
	assertClean(t, l)
	if l.BodyText != "" || l.BodyTextPreview == "" || len([]rune(l.BodyTextPreview)) > PreviewRunes+1 || l.SourceProvider != "" || l.ContentType != "" {
		t.Errorf("listing form %+v", l)
	}
	d := ContentItem(r, "news", DetailForm)
	if d.BodyText != r.BodyText || d.BodyTextPreview != "" || d.SourceProvider != "dealer_editorial" || d.Transcript != "t" {
		t.Errorf("detail form %+v", d)
	}
	s := ContentItem(r, "guides", SearchForm)
	if s.ContentType != "guides" || s.BodyTextPreview == "" {
		t.Errorf("search form %+v", s)
	}
	if strings.Contains(d.BodyText, "<p>") {
		t.Error("html body leaked")
	}
}

func TestRanked(t *testing.T) {
	recs := []upstream.ContentRecord{
		{Slug: "a", Title: "Manutenzione", BodyText: "noleggio"},
		{Slug: "b", Title: "Noleggio a lungo termine"},
		{Slug: "c", Title: "Altro", BodyText: "NOLEGGIO"},
	}
	var ptrs []*upstream.ContentRecord
	for i := range recs {
		ptrs = append(ptrs, &recs[i])
	}
	var got []upstream.ContentRecord
	for _, r := range Ranked(ptrs, "noleggio") {
		got = append(got, *r)
	}
	if s := slugs(got); s != "b,a,c" {
		t.Errorf("ranked = %s", s)
	}
}

func BenchmarkVisibleOrder(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	recs := make([]upstream.ContentRecord, 60)
	for i := range recs {
		recs[i] = upstream.ContentRecord{ID: int64(i + 1), Type: "faq", DealerID: []int64{0, 101}[rng.IntN(2)],
			Slug:      "slug-" + strings.Repeat("x", rng.IntN(20)),
			UpdatedAt: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.Int64N(int64(400 * 24 * time.Hour))))}
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = VisibleOrder(101, "faq", recs, Discovery)
	}
}

// TestVisibleFirstEqualsOrder holds VisibleFirst (a bounded heap, then a
// sort of the k it kept) to VisibleOrder, a filter and a cut to k, on
// random records with many equal keys (update times to the second and
// below, slugs, zones), every k from 0 to past n, with and without a
// filter.
func TestVisibleFirstEqualsOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	rome := time.FixedZone("CET", 3600)
	for round := range 400 {
		n := rng.IntN(120)
		recs := make([]upstream.ContentRecord, n)
		for i := range recs {
			at := time.Date(2026, 1, 1, 0, 0, rng.IntN(5), rng.IntN(3)*500, time.UTC)
			if rng.IntN(3) == 0 {
				at = at.In(rome)
			}
			dealer := []int64{0, 101, 102}[rng.IntN(3)]
			recs[i] = upstream.ContentRecord{ID: int64(i + 1), Type: "faq", DealerID: dealer,
				Slug: string(rune('a' + rng.IntN(3))), Category: []string{"x", "y"}[rng.IntN(2)],
				UpdatedAt: at, HiddenForDealer: rng.IntN(10) == 0}
			if dealer == 101 && rng.IntN(4) == 0 {
				recs[i].OverrideOf = int64(rng.IntN(n) + 1)
			}
		}
		for _, keep := range []func(*upstream.ContentRecord) bool{nil, func(r *upstream.ContentRecord) bool { return r.Category == "x" }} {
			want := VisibleOrder(101, "faq", recs, Discovery)
			if keep != nil {
				want = slices.DeleteFunc(want, func(i int32) bool { return !keep(&recs[i]) })
			}
			for k := 0; k <= len(want)+2; k++ {
				got, total := VisibleFirst(101, "faq", recs, Discovery, k, keep)
				if total != len(want) || !slices.Equal(got, want[:min(k, len(want))]) {
					t.Fatalf("round %d, k %d, filtered %v: first %v of %d, want %v of %d", round, k, keep != nil, got, total, want[:min(k, len(want))], len(want))
				}
			}
		}
	}
}

// BenchmarkVisibleFirst: a hub section's cut (the first 5 of about 100
// records) by VisibleFirst and by VisibleOrder, which sorts them all.
func BenchmarkVisibleFirst(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	recs := make([]upstream.ContentRecord, 100)
	for i := range recs {
		recs[i] = upstream.ContentRecord{ID: int64(i + 1), Type: "faq", DealerID: []int64{0, 101}[rng.IntN(2)],
			Slug:      "slug-" + strings.Repeat("x", rng.IntN(20)),
			UpdatedAt: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.Int64N(int64(400 * 24 * time.Hour))))}
	}
	b.Run("first5", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = VisibleFirst(101, "faq", recs, Discovery, 5, nil)
		}
	})
	b.Run("order", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = VisibleOrder(101, "faq", recs, Discovery)[:5]
		}
	})
}
