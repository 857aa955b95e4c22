package upstream_test

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// exactEq compares decoded answers byte for byte (strings), by instant and
// offset (times), nil vs empty told apart for slices.
func exactEq(a, b reflect.Value, path string) string {
	if a.Type() == reflect.TypeFor[time.Time]() {
		x, y := a.Interface().(time.Time), b.Interface().(time.Time)
		_, ox := x.Zone()
		_, oy := y.Zone()
		if !x.Equal(y) || ox != oy || x.IsZero() != y.IsZero() {
			return fmt.Sprintf("%s: %v vs %v", path, x, y)
		}
		return ""
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() != b.IsNil() {
			return path + ": nil mismatch"
		}
		if a.IsNil() {
			return ""
		}
		return exactEq(a.Elem(), b.Elem(), path)
	case reflect.Slice:
		if a.IsNil() != b.IsNil() {
			return fmt.Sprintf("%s: nil %v vs %v", path, a.IsNil(), b.IsNil())
		}
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: len %d vs %d", path, a.Len(), b.Len())
		}
		for i := 0; i < a.Len(); i++ {
			if d := exactEq(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if !a.Type().Field(i).IsExported() {
				continue
			}
			if d := exactEq(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); d != "" {
				return d
			}
		}
	case reflect.Map:
		if a.Len() != 0 || b.Len() != 0 {
			return path + ": map"
		}
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			return fmt.Sprintf("%s: %#v vs %#v", path, a.Interface(), b.Interface())
		}
	}
	return ""
}

type genKind int

const (
	gStr genKind = iota
	gInt
	gFloatPtr
	gFloat
	gBool
	gTime
	gStrs
	gObj
	gList
)

type gfield struct {
	name string
	kind genKind
	sub  []gfield // gObj, gList
}

var (
	gUpfit = []gfield{{"code", gStr, nil}, {"slug", gStr, nil}, {"label", gStr, nil}, {"dealer_alias", gStr, nil}, {"family", gStr, nil}, {"primary", gBool, nil}}
	gAI    = []gfield{{"headline", gStr, nil}, {"description", gStr, nil}, {"highlights", gStrs, nil}}
	gVeh   = []gfield{{"id_auto", gStr, nil}, {"dealer_id", gInt, nil}, {"service", gStr, nil}, {"make", gStr, nil}, {"model", gStr, nil}, {"trim", gStr, nil},
		{"catalog_type", gStr, nil}, {"version_code", gStr, nil}, {"upfits", gList, gUpfit}, {"sale_price_eur", gFloatPtr, nil}, {"cover_url", gStr, nil},
		{"media_urls", gStrs, nil}, {"has_podcast", gBool, nil}, {"has_video", gBool, nil}, {"ai_content", gObj, gAI},
		{"confirmed_optionals", gStrs, nil}, {"confirmed_packages", gStrs, nil}, {"updated_at", gTime, nil}}
	gQuot  = []gfield{{"months", gInt, nil}, {"km_per_year", gInt, nil}, {"monthly_fee_eur", gFloat, nil}}
	gOffer = []gfield{{"id_offerta", gInt, nil}, {"dealer_id", gInt, nil}, {"slug", gStr, nil}, {"make", gStr, nil}, {"model", gStr, nil},
		{"version", gStr, nil}, {"cover_url", gStr, nil}, {"quotations", gList, gQuot}, {"updated_at", gTime, nil}}
	gContent = []gfield{{"id", gInt, nil}, {"type", gStr, nil}, {"dealer_id", gInt, nil}, {"slug", gStr, nil}, {"topic", gStr, nil}, {"category", gStr, nil},
		{"brand", gStr, nil}, {"title", gStr, nil}, {"h1", gStr, nil}, {"meta_description", gStr, nil}, {"excerpt", gStr, nil}, {"body_text", gStr, nil},
		{"url", gStr, nil}, {"updated_at", gTime, nil}, {"source_provider", gStr, nil}, {"override_of", gInt, nil}, {"hidden_for_dealer", gBool, nil},
		{"media_url", gStr, nil}, {"thumbnail_url", gStr, nil}, {"duration_seconds", gInt, nil}, {"transcript", gStr, nil}}
	gOfferListing = []gfield{{"total", gInt, nil}, {"items", gList, []gfield{{"id_offerta", gInt, nil}, {"dealer_id", gInt, nil}, {"slug", gStr, nil}, {"make", gStr, nil}, {"model", gStr, nil},
		{"version", gStr, nil}, {"cover_url", gStr, nil}, {"updated_at", gTime, nil}}}}
	gVehPage     = []gfield{{"total", gInt, nil}, {"items", gList, gVeh}}
	gOfferPage   = []gfield{{"total", gInt, nil}, {"items", gList, gOffer}}
	gContentList = []gfield{{"items", gList, gContent}}
)

var (
	strPool = []string{`""`, `"a"`, `"\u00e8"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\udc00x"`, `"a\/b"`, `"\""`, `"\\"`, `"\b\f\n\r\t"`,
		"\"\xff\"", "\"\xe8a\"", "\"caff\xc3\xa8\"", `"\u0000"`, "\"\x7f\"", `"\u00"`, `"\x"`, "\"\x01\"", `"\uD83D\uDE00"`, `"\ud83d\u0041"`,
		`"\ud800\ud800\udc00"`, "\"\xed\xa0\x80\"", "\"\xc0\xaf\"", "\"\xf4\x90\x80\x80\"", `"\U0041"`, `"\u004G"`, `'a'`, `"abc`, "\"\xe2\x80\xa8\""}
	intPool = []string{`0`, `-0`, `1`, `-1`, `007`, `1.0`, `1e2`, `1E0`, `9223372036854775807`, `9223372036854775808`, `-9223372036854775808`,
		`-9223372036854775809`, `2147483648`, `1.5`, `-`, `+1`, `0x10`, `"1"`, `true`, `1e-0`, `00`, `-00`, `0.`, `.5`, `1e`, `1e+`, `99999999999999999999`}
	floatPool = []string{`0`, `-0`, `-0.0`, `1.5`, `1e400`, `-1e400`, `1e-400`, `4.9e-324`, `2.5e-324`, `1.7976931348623157e308`, `1.7976931348623159e308`,
		`15390E-2`, `1.`, `.5`, `01`, `1e`, `"1"`, `9007199254740993`, `12345678901234567890`, `0.1`, `123456789012345678901234567890e-10`,
		`1E+2`, `1e-2`, `-1.5e3`, `0e0`, `0E-0`, `100000000000000000000000e-23`, `0.000000000000000000000000000000000000001`,
		`1` + strings.Repeat("0", 400), `0.` + strings.Repeat("0", 400) + `1`, `179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497791`}
	boolPool = []string{`true`, `false`, `tru`, `truex`, `"true"`, `1`, `0`}
	timePool = []string{`"2026-01-02T03:04:05Z"`, `"2026-01-02T03:04:05+01:00"`, `"2026-01-02T03:04:05.123456789-07:30"`, `"2026-01-02T03:04:05z"`,
		`"2026-01-02t03:04:05Z"`, `"2026-01-02T03:04:05.Z"`, `"2026-01-02T03:04:05.1234567891Z"`, `"2026-13-02T03:04:05Z"`, `"2026-02-30T03:04:05Z"`,
		`"2026-01-02T24:00:00Z"`, `"2026-01-02T23:59:60Z"`, `"0000-01-01T00:00:00Z"`, `"9999-12-31T23:59:59Z"`, `"2026-01-02T03:04:05+24:00"`,
		`"2026-01-02T03:04:05-00:00"`, `"2026-01-02 03:04:05Z"`, `"2026-01-02T03:04:05"`, `"2026-01-02T03:04:05+0100"`, `"2026-01-02T03:04:05.5,5Z"`,
		`"2026-01-02T3:04:05Z"`, `"\u0032026-01-02T03:04:05Z"`, `""`, `1`, `"2026-01-02T03:04:05+01:60"`, `"+2026-01-02T03:04:05Z"`, `"10000-01-01T00:00:00Z"`}
	wsPool = []string{"", "", "", " ", "\n", "\t", "\r\n ", "\u00a0", "\f", "\v"}
)

func gpick(r *rand.Rand, p []string) string { return p[r.Intn(len(p))] }

func gws(r *rand.Rand, b *strings.Builder) {
	if r.Intn(10) == 0 {
		b.WriteString(gpick(r, wsPool))
	}
}

func gname(r *rand.Rand, n string) string {
	switch r.Intn(30) {
	case 0:
		return `"` + strings.ToUpper(n[:1]) + n[1:] + `"`
	case 1:
		return `"` + n[:len(n)-1] + fmt.Sprintf(`\u%04x`, n[len(n)-1]) + `"`
	case 2:
		return `"` + n + `\u0000"`
	case 3:
		return `"` + n + ` "`
	case 4:
		return `"x` + n + `"`
	case 5:
		return `"` + strings.ReplaceAll(n, "_", "") + `"`
	case 6:
		return `"` + n + "\xff\""
	}
	return `"` + n + `"`
}

func gvalue(r *rand.Rand, b *strings.Builder, f gfield, depth int) {
	if r.Intn(12) == 0 {
		b.WriteString("null")
		return
	}
	if r.Intn(40) == 0 { // a value of another type
		b.WriteString(gpick(r, []string{`{}`, `[]`, `"s"`, `1`, `true`, `[1]`, `{"a":1}`}))
		return
	}
	switch f.kind {
	case gStr:
		b.WriteString(gpick(r, strPool))
	case gInt:
		b.WriteString(gpick(r, intPool))
	case gFloat, gFloatPtr:
		b.WriteString(gpick(r, floatPool))
	case gBool:
		b.WriteString(gpick(r, boolPool))
	case gTime:
		b.WriteString(gpick(r, timePool))
	case gStrs:
		b.WriteByte('[')
		n := r.Intn(4)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			gws(r, b)
			if r.Intn(8) == 0 {
				b.WriteString("null")
			} else {
				b.WriteString(gpick(r, strPool))
			}
			gws(r, b)
		}
		b.WriteByte(']')
	case gObj:
		gobject(r, b, f.sub, depth+1)
	case gList:
		b.WriteByte('[')
		n := r.Intn(3)
		if depth == 0 {
			n = r.Intn(7)
		}
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			gws(r, b)
			if r.Intn(10) == 0 {
				b.WriteString("null")
			} else {
				gobject(r, b, f.sub, depth+1)
			}
			gws(r, b)
		}
		b.WriteByte(']')
	}
}

func gobject(r *rand.Rand, b *strings.Builder, fields []gfield, depth int) {
	b.WriteByte('{')
	n := r.Intn(len(fields) + 3)
	if depth > 0 {
		n = r.Intn(5)
	}
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		gws(r, b)
		if r.Intn(15) == 0 {
			b.WriteString(gpick(r, []string{`"unknown"`, `"a\u0000"`, `""`, `"\ud800"`}))
			gws(r, b)
			b.WriteByte(':')
			gws(r, b)
			b.WriteString(gpick(r, []string{`{"x":[1,{"y":null}]}`, `[[],[{}]]`, `"\ud800"`, `-0.0e-0`, `null`, `true`}))
			continue
		}
		f := fields[r.Intn(len(fields))]
		b.WriteString(gname(r, f.name))
		gws(r, b)
		b.WriteByte(':')
		gws(r, b)
		gvalue(r, b, f, depth)
		gws(r, b)
	}
	b.WriteByte('}')
}

// TestDecodersVsReflection: structured random bodies with public
// fields only (so the reflection decoder type-checks nothing the field
// decoders skip), duplicates, nulls, escapes and adversarial scalars; every
// decoder must accept exactly what the reflection decoder accepts and give
// exactly its result.
func TestDecodersVsReflection(t *testing.T) {
	shapes := []struct {
		fields []gfield
		mk     func() any
	}{
		{gVehPage, func() any { return new(upstream.VehiclePage) }},
		{gVeh, func() any { return new(upstream.Vehicle) }},
		{gOfferPage, func() any { return new(upstream.OfferPage) }},
		{gOffer, func() any { return new(upstream.Offer) }},
		{gContentList, func() any { return new(upstream.ContentList) }},
	}
	r := rand.New(rand.NewSource(int64(time.Now().Nanosecond())))
	fails, accepted := 0, 0
	defer func() { t.Logf("accepted %d", accepted) }()
	seen := map[string]bool{}
	for iter := 0; iter < 400000 && fails < 40; iter++ {
		sh := shapes[r.Intn(len(shapes))]
		var b strings.Builder
		if r.Intn(2) == 0 {
			b.WriteString(strings.Repeat(" ", 2048+r.Intn(64)))
		}
		gws(r, &b)
		gobject(r, &b, sh.fields, 0)
		gws(r, &b)
		body := []byte(b.String())
		want := sh.mk()
		rerr := upstream.DecodeReflect(body, want)
		clearInternal(want)
		try := func(name string, got any, err error) {
			if (err == nil) != (rerr == nil) {
				key := name + fmt.Sprint(err == nil)
				if !seen[key] || fails < 10 {
					t.Errorf("%s %T %q: error %v, reflection %v", name, got, body, err, rerr)
					fails++
				}
				seen[key] = true
				return
			}
			if err != nil {
				return
			}
			if d := exactEq(reflect.ValueOf(got), reflect.ValueOf(want), ""); d != "" {
				t.Errorf("%s %T %q: %s", name, got, body, d)
				fails++
			}
		}
		if rerr == nil {
			accepted++
		}
		got := sh.mk()
		_, err := upstream.DecodeFields(body, got)
		try("scanner", got, err)
		got = sh.mk()
		_, err = upstream.DecodeFieldReader(body, got)
		try("fieldreader", got, err)
		if _, ok := got.(*upstream.ContentList); ok {
			var picked []int32
			recs, err := upstream.DecodeContentPage(body, func(keys []upstream.ContentRecord) []int32 {
				var idx []int32
				for i := range keys {
					if r.Intn(3) > 0 {
						idx = append(idx, int32(i))
					}
				}
				r.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
				picked = idx
				return idx
			})
			if err == nil && rerr == nil {
				w := want.(*upstream.ContentList)
				var sel []upstream.ContentRecord
				for _, i := range picked {
					sel = append(sel, w.Items[i])
				}
				if d := exactEq(reflect.ValueOf(recs), reflect.ValueOf(sel), ""); d != "" && !(len(recs) == 0 && len(sel) == 0) {
					t.Errorf("contentpage picked %q: %s", body, d)
					fails++
				}
				recs = w.Items
			}
			if len(recs) == 0 {
				recs = want.(*upstream.ContentList).Items
			}
			try("contentpage", &upstream.ContentList{Items: recs}, err)
		}
	}
}

// TestReusedPages: one pooled page with ReuseStrings decoded again
// and again (the listing fill's use), each time against the reflection
// decoder; bodies padded past the stop map's threshold half the time.
func TestReusedPages(t *testing.T) {
	r := rand.New(rand.NewSource(int64(time.Now().Nanosecond())))
	var vp upstream.VehiclePage
	vp.ReuseStrings()
	var op upstream.OfferPage
	op.ReuseStrings()
	fails, accepted := 0, 0
	for iter := 0; iter < 300000 && fails < 20; iter++ {
		var b strings.Builder
		if r.Intn(2) == 0 {
			b.WriteString(strings.Repeat(" ", 2048+r.Intn(64)))
		}
		offers := r.Intn(2) == 0
		if offers {
			gobject(r, &b, gOfferListing, 0)
		} else {
			gobject(r, &b, gVehPage, 0)
		}
		body := []byte(b.String())
		in := append([]byte(nil), body...)
		if offers {
			var want upstream.OfferPage
			rerr := upstream.DecodeReflect(body, &want)
			clearInternal(&want)
			for i := range want.Items {
				want.Items[i].Quotations = nil
			}
			op.Total, op.Items = 0, op.Items[:0]
			_, err := upstream.DecodeFields(in, (*upstream.OfferListing)(&op))
			clear(in)
			if (err == nil) != (rerr == nil) {
				t.Errorf("offers %q: err %v, reflection %v", body, err, rerr)
				fails++
				continue
			}
			if err != nil {
				continue
			}
			accepted++
			got := op
			if len(got.Items) == 0 && want.Items != nil {
				got.Items = want.Items
			}
			if len(want.Items) == 0 {
				got.Items = want.Items
			}
			if d := exactEq(reflect.ValueOf(got), reflect.ValueOf(want), ""); d != "" {
				t.Errorf("offers %q: %s", body, d)
				fails++
			}
			continue
		}
		var want upstream.VehiclePage
		rerr := upstream.DecodeReflect(body, &want)
		clearInternal(&want)
		vp.Total, vp.Items = 0, vp.Items[:0]
		_, err := upstream.DecodeFields(in, &vp)
		clear(in)
		if (err == nil) != (rerr == nil) {
			t.Errorf("vehicles %q: err %v, reflection %v", body, err, rerr)
			fails++
			continue
		}
		if err != nil {
			continue
		}
		accepted++
		got := vp
		if len(want.Items) == 0 {
			got.Items = want.Items
		}
		if d := exactEq(reflect.ValueOf(got), reflect.ValueOf(want), ""); d != "" {
			t.Errorf("vehicles %q: %s", body, d)
			fails++
		}
	}
	t.Logf("accepted %d", accepted)
}
