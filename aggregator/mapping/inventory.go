package mapping

import (
	"strings"
	"time"
	"unsafe"

	"github.com/dealer-edge/dealer-edge/publicshape"
	"github.com/dealer-edge/dealer-edge/upstream"
)

func upfits(src []upstream.Upfit) ([]publicshape.ProfessionalUpfit, *publicshape.ProfessionalUpfit) {
	if len(src) == 0 {
		return nil, nil
	}
	var small [4]publicshape.UpfitSource // on the stack: Upfits keeps no reference to its input
	in := small[:0]
	if len(src) > len(small) {
		in = make([]publicshape.UpfitSource, 0, len(src))
	}
	for _, u := range src {
		in = append(in, upfitSource(&u))
	}
	return publicshape.Upfits(in)
}

// itemScalars holds the values a listing item points to: one allocation
// per item instead of one per pointer.
type itemScalars struct {
	hasPodcast, hasVideo bool
	price                float64
}

// VehicleItem maps a vehicle record to a public inventory listing item.
func VehicleItem(v upstream.Vehicle) publicshape.InventoryItem {
	return vehicleItem(&v, new(itemScalars), publicshape.NomeCanonico(v.Make, v.Model, v.Trim))
}

// VehicleItems appends to dst the listing items of vs, each what
// VehicleItem gives for it; the values the items point to share one
// allocation, and so do their names.
func VehicleItems(dst []publicshape.InventoryItem, vs []upstream.Vehicle) []publicshape.InventoryItem {
	scs := make([]itemScalars, len(vs))
	room := 0
	for i := range vs {
		room += len(vs[i].Make) + len(vs[i].Model) + len(vs[i].Trim) + 2
	}
	// Never grown (AppendNomeCanonico stays within its room), so the
	// names cut from it stay valid.
	names := make([]byte, 0, room)
	for i := range vs {
		v := &vs[i]
		n := len(names)
		names = publicshape.AppendNomeCanonico(names, v.Make, v.Model, v.Trim)
		dst = append(dst, vehicleItem(v, &scs[i], unsafe.String(unsafe.SliceData(names[n:]), len(names)-n)))
	}
	return dst
}

func vehicleItem(v *upstream.Vehicle, sc *itemScalars, name string) publicshape.InventoryItem {
	ups, primary := upfits(v.Upfits)
	*sc = itemScalars{hasPodcast: v.HasPodcast, hasVideo: v.HasVideo}
	it := publicshape.InventoryItem{
		IDAuto:                   v.IDAuto,
		Service:                  v.Service,
		NomeCanonico:             name,
		Marca:                    v.Make,
		Modello:                  v.Model,
		Allestimento:             v.Trim,
		CatalogType:              publicshape.KnownCatalogType(v.CatalogType),
		ProfessionalUpfits:       ups,
		PrimaryProfessionalUpfit: primary,
		CoverURL:                 publicshape.PublicURL(v.CoverURL),
		HasPodcast:               &sc.hasPodcast,
		HasVideo:                 &sc.hasVideo,
	}
	if v.SalePrice != nil {
		sc.price = *v.SalePrice
		it.PrezzoVendita = &sc.price
	}
	return it
}

// AppendVehicleListing appends to dst the JSON of the listing l (its
// envelope; l.Items is not read) with the listing items of vs, and returns
// the extended buffer: the bytes publicshape.AppendInventoryListing gives
// for l with Items = VehicleItems of vs (never null), written straight
// from the records through vehicleSource, without building the items
// (TestListingFusedOverCorpus, FuzzAppendVehicleListing). It fails only on
// a NaN or infinite price; dst is then returned as it was given.
func AppendVehicleListing(dst []byte, l *publicshape.InventoryListing, vs []upstream.Vehicle) ([]byte, error) {
	start := len(dst)
	dst = publicshape.AppendInventoryListingHead(dst, l)
	// One for the page, on the stack (the encoder keeps no reference to
	// it), grown past eight upfits only by a vehicle that has more.
	var upsRoom [8]publicshape.UpfitSource
	ups := upsRoom[:0]
	for i := range vs {
		if i > 0 {
			dst = append(dst, ',')
		}
		src := vehicleSource(&vs[i], ups[:0])
		ups = src.Upfits[:0]
		var err error
		if dst, err = publicshape.AppendInventoryItemSource(dst, &src); err != nil {
			return dst[:start], err
		}
	}
	return append(dst, ']', '}'), nil
}

// vehicleSource is the allowlist of a vehicle's listing item: the fields
// of v that vehicleItem publishes, and nothing else. Its upfits are
// appended to ups (lent by the caller, so a page reuses one).
func vehicleSource(v *upstream.Vehicle, ups []publicshape.UpfitSource) publicshape.InventoryItemSource {
	for _, u := range v.Upfits {
		ups = append(ups, upfitSource(&u))
	}
	return publicshape.InventoryItemSource{
		IDAuto:      v.IDAuto,
		Service:     v.Service,
		Make:        v.Make,
		Model:       v.Model,
		Trim:        v.Trim,
		CatalogType: publicshape.KnownCatalogType(v.CatalogType),
		Upfits:      ups,
		SalePrice:   v.SalePrice,
		CoverURL:    publicshape.PublicURL(v.CoverURL),
		Media:       true,
		HasPodcast:  v.HasPodcast,
		HasVideo:    v.HasVideo,
	}
}

// AppendOfferListing is AppendVehicleListing for NLT offers: the bytes
// publicshape.AppendInventoryListing gives for l with Items = OfferItems
// of os, written through offerSource.
func AppendOfferListing(dst []byte, l *publicshape.InventoryListing, os []upstream.Offer) []byte {
	dst = publicshape.AppendInventoryListingHead(dst, l)
	for i := range os {
		if i > 0 {
			dst = append(dst, ',')
		}
		src := offerSource(&os[i])
		dst, _ = publicshape.AppendInventoryItemSource(dst, &src) // no price: never fails
	}
	return append(dst, ']', '}')
}

// offerSource is the allowlist of an offer's listing item: the fields of
// o that offerItem publishes, and nothing else.
func offerSource(o *upstream.Offer) publicshape.InventoryItemSource {
	return publicshape.InventoryItemSource{
		IDOfferta: o.IDOfferta,
		Service:   publicshape.ServiceNLT,
		Make:      o.Make,
		Model:     o.Model,
		Trim:      o.Version,
		CoverURL:  publicshape.PublicURL(o.CoverURL),
	}
}

// OfferItem maps an NLT offer record to a public inventory listing item.
func OfferItem(o upstream.Offer) publicshape.InventoryItem {
	return offerItem(&o, publicshape.NomeCanonico(o.Make, o.Model, o.Version))
}

// OfferItems appends to dst the listing items of os, each what OfferItem
// gives for it; their names share one allocation.
func OfferItems(dst []publicshape.InventoryItem, os []upstream.Offer) []publicshape.InventoryItem {
	room := 0
	for i := range os {
		room += len(os[i].Make) + len(os[i].Model) + len(os[i].Version) + 2
	}
	names := make([]byte, 0, room) // never grown: see VehicleItems
	for i := range os {
		o := &os[i]
		n := len(names)
		names = publicshape.AppendNomeCanonico(names, o.Make, o.Model, o.Version)
		dst = append(dst, offerItem(o, unsafe.String(unsafe.SliceData(names[n:]), len(names)-n)))
	}
	return dst
}

func offerItem(o *upstream.Offer, name string) publicshape.InventoryItem {
	return publicshape.InventoryItem{
		IDOfferta:    o.IDOfferta,
		Service:      publicshape.ServiceNLT,
		NomeCanonico: name,
		Marca:        o.Make,
		Modello:      o.Model,
		Allestimento: o.Version,
		CoverURL:     publicshape.PublicURL(o.CoverURL),
	}
}

func equipment(items []upstream.EquipmentItem) []publicshape.Equipment {
	out := make([]publicshape.Equipment, 0, len(items))
	for _, e := range items {
		out = append(out, publicshape.Equipment{Code: e.Code, Name: e.Name, Category: e.Category, PriceEUR: copyFloat(e.PriceEUR)})
	}
	return out
}

func copyFloat(f *float64) *float64 {
	if f == nil {
		return nil
	}
	v := *f
	return &v
}

func copyStrings(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return append([]string(nil), s...)
}

// rfc3339 formats t in UTC, as RFC 3339 wants a four-digit year: a time
// that is one in its own offset but leaves years 0000-9999 in UTC (an
// upstream "9999-12-31T23:30:00-01:00") is clamped to the nearest second
// that is one, instead of "10000-01-01T00:30:00Z" (found by an audit).
//
// It writes the digits itself (what Format(time.RFC3339) writes for a
// whole second in UTC, TestRFC3339EqualsFormat): every item mapped on a
// miss has an updated_at, and Format was about an eighth of a cold hub's
// assembly (aggregator's BenchmarkHubAssembly profile).
func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	var b [len("2006-01-02T15:04:05Z")]byte
	return string(appendRFC3339(b[:0], t))
}

// appendRFC3339 appends t as rfc3339 writes it (t not zero).
func appendRFC3339(dst []byte, t time.Time) []byte {
	u := time.Unix(publishedUnix(t), 0).UTC()
	year, month, day := u.Date()
	hour, minute, second := u.Clock()
	var b [len("2006-01-02T15:04:05Z")]byte
	b[0], b[1], b[2], b[3] = byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10)
	b[4], b[7], b[10], b[13], b[16], b[19] = '-', '-', 'T', ':', ':', 'Z'
	put2 := func(i, v int) { b[i], b[i+1] = byte('0'+v/10), byte('0'+v%10) }
	put2(5, int(month))
	put2(8, day)
	put2(11, hour)
	put2(14, minute)
	put2(17, second)
	return append(dst, b[:]...)
}

// The first and last seconds RFC 3339 can write (years 0000-9999, UTC).
var (
	firstRFC3339 = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	lastRFC3339  = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()
)

// publishedUnix is t as rfc3339 publishes it, in Unix seconds: clamped to
// years 0000-9999 in UTC. Orders that clients see by time compare this,
// so items shown with the same time tie.
func publishedUnix(t time.Time) int64 {
	return min(max(t.Unix(), firstRFC3339), lastRFC3339)
}

// VehicleDetail maps a vehicle, the equipment of its exact catalog version
// and its media (media may be nil when the media service could not answer)
// to the public vehicle detail.
//
// accessori_opzionali and pacchetti hold only what is confirmed for this
// vehicle, looked up in the version catalogue by code; the raw catalogue is
// never a fallback, so an empty confirmation list gives an empty array.
// accessori_serie_json is the deprecated alias and always equals
// accessori_serie.
func VehicleDetail(v upstream.Vehicle, eq upstream.Equipment, media *upstream.Media) publicshape.VehicleDetail {
	ups, primary := upfits(v.Upfits)
	d := publicshape.VehicleDetail{
		IDAuto:                   v.IDAuto,
		Marca:                    v.Make,
		Modello:                  v.Model,
		Allestimento:             v.Trim,
		NomeCanonico:             publicshape.NomeCanonico(v.Make, v.Model, v.Trim),
		CatalogType:              publicshape.KnownCatalogType(v.CatalogType),
		ProfessionalUpfits:       ups,
		PrimaryProfessionalUpfit: primary,
		PrezzoVendita:            copyFloat(v.SalePrice),
		CoverURL:                 publicshape.PublicURL(v.CoverURL),
		MediaURLs:                copyStrings(publicshape.PublicURLs(v.MediaURLs)),
		AccessoriSerie:           equipment(eq.Standard),
		AccessoriOpzionali:       confirmedOptionals(eq.Optionals, v.ConfirmedOptionals),
		Pacchetti:                confirmedPackages(eq.Packages, v.ConfirmedPackages),
		HasPodcast:               v.HasPodcast,
		HasVideo:                 v.HasVideo,
	}
	d.AccessoriSerieJSON = d.AccessoriSerie
	if a := v.AIContent; a != nil {
		d.AIContent = &publicshape.AIContent{Headline: a.Headline, Description: a.Description, Highlights: copyStrings(a.Highlights)}
	}
	if media != nil {
		if p := media.Podcast; p != nil {
			d.Podcast = &publicshape.Podcast{Title: p.Title, AudioURL: publicshape.PublicURL(p.AudioURL), DurationSeconds: max(p.DurationSeconds, 0), Transcript: p.Transcript, PublishedAt: rfc3339(p.PublishedAt)}
			d.HasPodcast = true
		}
		if vd := media.Video; vd != nil {
			d.Video = &publicshape.Video{Title: vd.Title, VideoURL: publicshape.PublicURL(vd.VideoURL), ThumbnailURL: publicshape.PublicURL(vd.ThumbnailURL), DurationSeconds: max(vd.DurationSeconds, 0), PublishedAt: rfc3339(vd.PublishedAt)}
			d.HasVideo = true
		}
	}
	return d
}

func confirmedOptionals(catalogue []upstream.EquipmentItem, confirmed []string) []publicshape.Equipment {
	out := make([]publicshape.Equipment, 0, len(confirmed))
	for _, code := range confirmed {
		for _, e := range catalogue {
			if e.Code == code {
				out = append(out, publicshape.Equipment{Code: e.Code, Name: e.Name, Category: e.Category, PriceEUR: copyFloat(e.PriceEUR)})
				break
			}
		}
	}
	return out
}

func confirmedPackages(catalogue []upstream.EquipmentPackage, confirmed []string) []publicshape.Package {
	out := make([]publicshape.Package, 0, len(confirmed))
	for _, code := range confirmed {
		for _, p := range catalogue {
			if p.Code == code {
				out = append(out, publicshape.Package{Code: p.Code, Name: p.Name, PriceEUR: copyFloat(p.PriceEUR), Contents: copyStrings(p.Contents)})
				break
			}
		}
	}
	return out
}

// OfferDetail maps an NLT offer record to the public offer detail.
func OfferDetail(o upstream.Offer) publicshape.OfferDetail {
	d := publicshape.OfferDetail{
		IDOfferta:  o.IDOfferta,
		Slug:       o.Slug,
		Marca:      o.Make,
		Modello:    o.Model,
		Versione:   o.Version,
		CoverURL:   publicshape.PublicURL(o.CoverURL),
		Quotazioni: make([]publicshape.Quotation, 0, len(o.Quotations)),
	}
	for _, q := range o.Quotations {
		d.Quotazioni = append(d.Quotazioni, publicshape.Quotation{Months: q.Months, KmPerYear: q.KmPerYear, MonthlyFee: q.MonthlyFee})
	}
	return d
}

// DealerMeta maps a dealer profile to meta.dealer. A field the profile
// has no value for (empty, or white space only) is left out, and province
// is published only as a two-letter code (publicshape.ProvinceCode).
func DealerMeta(d upstream.Dealer) *publicshape.Meta {
	return &publicshape.Meta{Dealer: &publicshape.DealerMeta{
		ID: d.ID, Name: known(d.Name), BrandName: known(d.BrandName), City: known(d.City),
		Province: publicshape.ProvinceCode(d.Province), PrimaryDomain: known(d.PrimaryDomain),
	}}
}

// known is s without the white space around it, or "" (left out) when
// nothing else is left: a value stored as " Milano " is published as
// "Milano" (TestDealerMetaLeavesOutUnknownValues).
func known(s string) string {
	return strings.TrimSpace(s)
}

// upfitSource is the allowlist of an upfit: the fields of u that the
// public upfit rules read, and nothing else.
func upfitSource(u *upstream.Upfit) publicshape.UpfitSource {
	return publicshape.UpfitSource{
		Code:        u.Code,
		Slug:        u.Slug,
		Label:       u.Label,
		DealerAlias: u.DealerAlias,
		Family:      u.Family,
		Primary:     u.Primary,
	}
}
