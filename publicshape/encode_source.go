package publicshape

import (
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// A listing miss maps each upstream record to an InventoryItem and encodes
// the items; most of that work is building the items (their upfits, their
// canonical names) only to read them once. AppendInventoryItemSource
// writes the item straight from what the record publishes, with the same
// rules and the same bytes: InventoryItemOf(src) encoded by
// AppendInventoryListing (TestAppendInventoryItemSourceEqualsItem,
// FuzzAppendInventoryItemSource, and the fake corpus test in
// aggregator/mapping prove it).

// InventoryItemSource is one inventory listing item as the inventory
// service knows it, the only input AppendInventoryItemSource and
// InventoryItemOf read: the record's fields the contract publishes, before
// the rules of the canonical name and of the upfits (2.3) apply.
type InventoryItemSource struct {
	IDAuto      string // vehicles; id_auto is omitted when empty
	IDOfferta   int64  // NLT offers; id_offerta is omitted when 0
	Service     string
	Make        string
	Model       string
	Trim        string // allestimento, omitted when empty
	CatalogType string
	Upfits      []UpfitSource
	SalePrice   *float64
	CoverURL    string
	Media       bool // has_podcast and has_video are published (vehicles)
	HasPodcast  bool
	HasVideo    bool
}

// InventoryItemOf returns the listing item src gives: nome_canonico is
// NomeCanonico of make, model and trim, the upfits are Upfits' of
// src.Upfits, has_podcast and has_video are set when src.Media is.
// AppendInventoryItemSource writes its JSON without building it.
func InventoryItemOf(src *InventoryItemSource) InventoryItem {
	it := InventoryItem{
		IDAuto:       src.IDAuto,
		IDOfferta:    src.IDOfferta,
		Service:      src.Service,
		NomeCanonico: NomeCanonico(src.Make, src.Model, src.Trim),
		Marca:        src.Make,
		Modello:      src.Model,
		Allestimento: src.Trim,
		CatalogType:  KnownCatalogType(src.CatalogType),
		PrezzoVendita: func() *float64 {
			if src.SalePrice == nil {
				return nil
			}
			p := *src.SalePrice
			return &p
		}(),
		CoverURL: src.CoverURL,
	}
	it.ProfessionalUpfits, it.PrimaryProfessionalUpfit = Upfits(src.Upfits)
	if src.Media {
		hp, hv := src.HasPodcast, src.HasVideo
		it.HasPodcast, it.HasVideo = &hp, &hv
	}
	return it
}

// AppendInventoryListingHead appends the JSON of l's envelope up to its
// items, `{"service":...,"has_next":...,"items":[`; the items follow,
// comma-separated (AppendInventoryItemSource), then `]}`. Together they
// write what AppendInventoryListing gives for l with those items (never
// null: l.Items itself is not read).
func AppendInventoryListingHead(dst []byte, l *InventoryListing) []byte {
	dst = append(dst, `{"service":`...)
	dst = appendString(dst, l.Service)
	dst = appendPaging(dst, l.Page, l.PageSize, l.Total, l.HasNext)
	return append(dst, `,"items":[`...)
}

// AppendInventoryItemSource appends the JSON of InventoryItemOf(src) to
// dst, exactly as AppendInventoryListing writes that item, and returns the
// extended buffer; it allocates nothing for a record of up to four upfits
// whose slugs are canonical. It fails only on a NaN or infinite price
// (ErrUnsupportedFloat); dst is then returned as it was given.
func AppendInventoryItemSource(dst []byte, src *InventoryItemSource) ([]byte, error) {
	start := len(dst)
	dst = append(dst, '{')
	if src.IDAuto != "" {
		dst = append(dst, `"id_auto":`...)
		dst = appendString(dst, src.IDAuto)
		dst = append(dst, ',')
	}
	if src.IDOfferta != 0 {
		dst = append(dst, `"id_offerta":`...)
		dst = strconv.AppendInt(dst, src.IDOfferta, 10)
		dst = append(dst, ',')
	}
	switch src.Service { // the three the contract knows, written without a scan
	case ServiceRewind:
		dst = append(dst, `"service":"REWIND","nome_canonico":`...)
	case ServiceNOS:
		dst = append(dst, `"service":"NOS","nome_canonico":`...)
	case ServiceNLT:
		dst = append(dst, `"service":"NLT","nome_canonico":`...)
	default:
		dst = append(dst, `"service":`...)
		dst = appendString(dst, src.Service)
		dst = append(dst, `,"nome_canonico":`...)
	}
	// Make, model and trim are usually plain words: then the name is them
	// joined by spaces, and each is written as it is, scanned once.
	pMake, pModel, pTrim := plainWords(src.Make), plainWords(src.Model), plainWords(src.Trim)
	if pMake && pModel && pTrim {
		dst = append(dst, '"')
		n := len(dst)
		for _, part := range [...]string{src.Make, src.Model, src.Trim} {
			if part == "" {
				continue
			}
			if len(dst) > n {
				dst = append(dst, ' ')
			}
			dst = append(dst, part...)
		}
		dst = append(dst, '"')
	} else {
		var scratch [128]byte // the name's room (AppendNomeCanonico's bound) mostly fits
		name := AppendNomeCanonico(scratch[:0], src.Make, src.Model, src.Trim)
		dst = appendString(dst, unsafe.String(unsafe.SliceData(name), len(name)))
	}
	dst = append(dst, `,"marca":`...)
	dst = appendPlain(dst, src.Make, pMake)
	dst = append(dst, `,"modello":`...)
	dst = appendPlain(dst, src.Model, pModel)
	if src.Trim != "" {
		dst = append(dst, `,"allestimento":`...)
		dst = appendPlain(dst, src.Trim, pTrim)
	}
	switch src.CatalogType { // the three the contract knows, written without a scan
	case "":
	case CatalogAuto:
		dst = append(dst, `,"catalog_type":"auto"`...)
	case CatalogVcom:
		dst = append(dst, `,"catalog_type":"vcom"`...)
	case CatalogVind:
		dst = append(dst, `,"catalog_type":"vind"`...)
	default: // outside the contract's enum: left out (KnownCatalogType)
	}
	if len(src.Upfits) > 0 {
		var small [4]ProfessionalUpfit // on the stack: upfitsInto keeps no reference
		ups, primary := upfitsInto(small[:0], src.Upfits)
		if len(ups) > 0 {
			dst = append(dst, `,"professional_upfits":[`...)
			var ps, pe int
			for i := range ups {
				if i > 0 {
					dst = append(dst, ',')
				}
				s := len(dst)
				dst = appendUpfitFast(dst, &ups[i])
				if i == primary {
					ps, pe = s, len(dst)
				}
			}
			dst = append(dst, `],"primary_professional_upfit":`...)
			// The primary is a copy of one of the items: its bytes are too.
			dst = append(dst, dst[ps:pe]...)
		}
	}
	if src.SalePrice != nil {
		dst = append(dst, `,"prezzo_vendita":`...)
		var ok bool
		if dst, ok = appendFloat(dst, *src.SalePrice); !ok {
			return dst[:start], ErrUnsupportedFloat
		}
	}
	dst = appendOptString(dst, `,"cover_url":`, src.CoverURL)
	if src.Media {
		switch {
		case src.HasPodcast && src.HasVideo:
			dst = append(dst, `,"has_podcast":true,"has_video":true`...)
		case src.HasPodcast:
			dst = append(dst, `,"has_podcast":true,"has_video":false`...)
		case src.HasVideo:
			dst = append(dst, `,"has_podcast":false,"has_video":true`...)
		default:
			dst = append(dst, `,"has_podcast":false,"has_video":false`...)
		}
	}
	return append(dst, '}'), nil
}

// appendUpfitFast is appendUpfit for an upfit upfitsInto made: its slug
// is a valid slug (nothing to escape) and its display_label, when it is
// the label, is written as a copy of the label's bytes.
func appendUpfitFast(dst []byte, u *ProfessionalUpfit) []byte {
	dst = append(dst, `{"code":`...)
	dst = appendString(dst, u.Code)
	dst = append(dst, `,"slug":"`...)
	dst = append(dst, u.Slug...)
	dst = append(dst, `","label":`...)
	ls := len(dst)
	dst = appendString(dst, u.Label)
	le := len(dst)
	dst = append(dst, `,"display_label":`...)
	if u.DisplayLabel == u.Label {
		dst = append(dst, dst[ls:le]...)
	} else {
		dst = appendString(dst, u.DisplayLabel)
	}
	dst = append(dst, `,"family":`...)
	dst = appendString(dst, u.Family)
	if u.IsPrimary {
		return append(dst, `,"is_primary":true}`...)
	}
	return append(dst, `,"is_primary":false}`...)
}

// plainWords reports whether s is written in JSON as it is (every byte is
// htmlSafe) and is its own canonical words (no space at either end, no two
// spaces in a row), so NomeCanonico takes it whole. "" is plain. It looks
// at eight bytes a step, as safePrefix does.
func plainWords(s string) bool {
	const lo, hi, low7 = 0x0101010101010101, 0x8080808080808080, 0x7f7f7f7f7f7f7f7f
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	prevSpace := false // the byte before the word is a space
	i := 0
	for ; i+8 <= len(s); i += 8 {
		t := s[i : i+8]
		x := uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
			uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
		// Any byte that is not htmlSafe (see safePrefix: no false mark
		// without a true one).
		q, e, l, g, a := x^(lo*'"'), x^(lo*'\\'), x^(lo*'<'), x^(lo*'>'), x^(lo*'&')
		if (x|(x-lo*0x20)&^x|(q-lo)&^q|(e-lo)&^e|(l-lo)&^l|(g-lo)&^g|(a-lo)&^a)&hi != 0 {
			return false
		}
		// The high bit of each space, exactly (no carry crosses bytes).
		z := x ^ (lo * ' ')
		sp := ^((z&low7 + low7) | z) & hi
		if sp&(sp>>8) != 0 || prevSpace && sp&0x80 != 0 {
			return false
		}
		prevSpace = sp>>63 != 0
	}
	for ; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || !htmlSafe[c] || c == ' ' && prevSpace {
			return false
		}
		prevSpace = c == ' '
	}
	return true
}

// appendPlain appends s as a JSON string: as it is when plain says it is
// plainWords, else as appendString writes it.
func appendPlain(dst []byte, s string, plain bool) []byte {
	if !plain {
		return appendString(dst, s)
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
